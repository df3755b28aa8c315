#include "ipython_history.hpp"

#include <pybind11_json/pybind11_json.hpp>

namespace py = pybind11;

namespace xflydsl
{

void ipython_history::attach(py::object facade)
{
    m_facade = std::move(facade);
}

void ipython_history::configure_impl() {}

void ipython_history::store_inputs_impl(int, int, const std::string&, const std::string&)
{
    // IPython stores each cell itself when it runs with store_history.
}

nl::json ipython_history::ask(const char* method, const py::tuple& args) const
{
    try
    {
        return m_facade.attr(method)(*args);
    }
    catch (py::error_already_set& error)
    {
        return nl::json{{"status", "error"},
                        {"ename", "HistoryError"},
                        {"evalue", error.what()},
                        {"history", nl::json::array()}};
    }
}

nl::json ipython_history::get_tail_impl(int n, bool raw, bool output) const
{
    py::gil_scoped_acquire gil;
    return ask("history_tail", py::make_tuple(n, raw, output));
}

nl::json ipython_history::get_range_impl(int session, int start, int stop, bool raw, bool output) const
{
    py::gil_scoped_acquire gil;
    return ask("history_range", py::make_tuple(session, start, stop, raw, output));
}

nl::json
ipython_history::search_impl(const std::string& pattern, bool raw, bool output, int n, bool unique) const
{
    py::gil_scoped_acquire gil;
    return ask("history_search", py::make_tuple(pattern, raw, output, n, unique));
}

} // namespace xflydsl
