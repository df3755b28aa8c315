#include "environment_watch.hpp"

#include "dict_watch.hpp"

namespace py = pybind11;

namespace flyrt::dispatch
{
namespace
{

struct watched_environment
{
    py::object data; // os.environ._data
    dict_watch watch;
};

// Never destroyed: it holds Python objects, which must not be released after
// the interpreter has finished. Set once, at import, before any call.
watched_environment* g_environment = nullptr;

} // namespace

void watch_environment()
{
    if (g_environment != nullptr)
    {
        return;
    }
    py::object data = py::getattr(py::module_::import("os").attr("environ"), "_data", py::none());
    if (PyDict_Check(data.ptr()))
    {
        g_environment = new watched_environment{data, dict_watch(data)};
    }
}

bool environment_changed()
{
    if (g_environment == nullptr)
    {
        return true;
    }
    if (!g_environment->watch.changed())
    {
        return false;
    }
    g_environment->watch = dict_watch(g_environment->data);
    return true;
}

} // namespace flyrt::dispatch
