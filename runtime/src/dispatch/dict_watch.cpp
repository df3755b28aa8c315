#include "dict_watch.hpp"

#include <stdexcept>
#include <unordered_map>

namespace py = pybind11;

namespace flyrt::dispatch
{

#if PY_VERSION_HEX >= 0x030C0000
namespace
{

// One dict watcher for the process (CPython allows 8 per interpreter) and a
// mutation counter per watched dict, shared with the dict_watch objects that
// read it. Runs with the GIL held.
class mutation_counters
{
public:
    static mutation_counters& instance()
    {
        static mutation_counters* counters = new mutation_counters(); // as long-lived as its watcher
        return *counters;
    }

    std::shared_ptr<const std::uint64_t> of(PyObject* dict)
    {
        auto& counter = m_counters[dict];
        if (!counter)
        {
            if (PyDict_Watch(m_watcher, dict) != 0)
            {
                m_counters.erase(dict);
                throw py::error_already_set();
            }
            counter = std::make_shared<std::uint64_t>(0);
        }
        return counter;
    }

private:
    mutation_counters() : m_watcher(PyDict_AddWatcher(&on_event))
    {
        if (m_watcher < 0)
        {
            throw py::error_already_set();
        }
    }

    static int on_event(PyDict_WatchEvent event, PyObject* dict, PyObject*, PyObject*)
    {
        auto& counters = instance().m_counters;
        const auto found = counters.find(dict);
        if (found != counters.end())
        {
            ++*found->second;
            if (event == PyDict_EVENT_DEALLOCATED)
            {
                counters.erase(found); // a new dict may get this address
            }
        }
        return 0;
    }

    int m_watcher;
    std::unordered_map<PyObject*, std::shared_ptr<std::uint64_t>> m_counters;
};

} // namespace
#endif

#if PY_VERSION_HEX >= 0x030D0000 && PY_VERSION_HEX < 0x030D0100
namespace
{

bool uses_inline_values(PyObject* dict)
{
    return reinterpret_cast<PyDictObject*>(dict)->ma_values != nullptr;
}

std::vector<std::pair<py::object, py::object>> items_of(PyObject* dict)
{
    std::vector<std::pair<py::object, py::object>> items;
    Py_ssize_t position = 0;
    PyObject* key = nullptr;
    PyObject* value = nullptr;
    while (PyDict_Next(dict, &position, &key, &value))
    {
        items.emplace_back(py::reinterpret_borrow<py::object>(key),
                           py::reinterpret_borrow<py::object>(value));
    }
    return items;
}

} // namespace
#endif

dict_watch::dict_watch(const py::handle& dict) : m_dict(py::reinterpret_borrow<py::object>(dict))
{
    if (!PyDict_Check(dict.ptr()))
    {
        throw py::type_error("dict_watch needs a dict");
    }
#if PY_VERSION_HEX >= 0x030C0000
    m_mutations = mutation_counters::instance().of(dict.ptr());
    m_seen = *m_mutations;
#else
    m_seen = reinterpret_cast<PyDictObject*>(dict.ptr())->ma_version_tag;
#endif
#if PY_VERSION_HEX >= 0x030D0000 && PY_VERSION_HEX < 0x030D0100
    if (uses_inline_values(dict.ptr()))
    {
        m_items = items_of(dict.ptr());
    }
#endif
}

bool dict_watch::changed() const
{
#if PY_VERSION_HEX >= 0x030C0000
    if (*m_mutations != m_seen)
    {
        return true;
    }
#else
    if (reinterpret_cast<PyDictObject*>(m_dict.ptr())->ma_version_tag != m_seen)
    {
        return true;
    }
#endif
#if PY_VERSION_HEX >= 0x030D0000 && PY_VERSION_HEX < 0x030D0100
    if (m_items)
    {
        Py_ssize_t position = 0;
        PyObject* key = nullptr;
        PyObject* value = nullptr;
        std::size_t i = 0;
        for (; PyDict_Next(m_dict.ptr(), &position, &key, &value); ++i)
        {
            if (i == m_items->size() || key != (*m_items)[i].first.ptr() ||
                value != (*m_items)[i].second.ptr())
            {
                return true;
            }
        }
        return i != m_items->size();
    }
#endif
    return false;
}

} // namespace flyrt::dispatch
