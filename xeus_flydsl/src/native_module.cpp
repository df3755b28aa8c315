#include "native_module.hpp"

#include <pybind11/stl.h>
#include <pybind11_json/pybind11_json.hpp>

#include "cell_files.hpp"
#include "interpreter.hpp"

namespace py = pybind11;

namespace xflydsl
{

void define_native_module(py::module_& m)
{
    m.doc() = "Publishing, stdin and comms of the running xflydsl kernel.";

    m.def(
        "stream_write",
        [](const std::string& name, const std::string& text)
        { interpreter::current().output().write(name, text); },
        py::arg("name"),
        py::arg("text"));
    m.def("stream_flush", [] { interpreter::current().output().flush(); });

    m.def(
        "display_data",
        [](const py::object& data, const py::object& metadata, const py::object& transient, bool update)
        { interpreter::current().publish_display(data, metadata, transient, update); },
        py::arg("data"),
        py::arg("metadata"),
        py::arg("transient"),
        py::arg("update"));
    m.def("publish_execution_result",
          [](int execution_count, const py::object& data, const py::object& metadata)
          {
              nl::json md = metadata.is_none() ? nl::json::object() : nl::json(metadata);
              interpreter::current().publish_result(execution_count, data, std::move(md));
          });
    m.def("publish_execution_error",
          [](const std::string& ename, const std::string& evalue, const std::vector<std::string>& traceback)
          { interpreter::current().publish_error(ename, evalue, traceback); });
    m.def(
        "clear_output",
        [](bool wait) { interpreter::current().publish_clear_output(wait); },
        py::arg("wait") = false);

    m.def(
        "input_request",
        [](const std::string& prompt, bool password)
        { return interpreter::current().read_stdin(prompt, password); },
        py::arg("prompt"),
        py::arg("password"));

    m.def("cell_file",
          &xflydsl::cell_file,
          py::arg("code"),
          "The file name cells with this text compile under.");

    py::class_<xflydsl::native_comm>(m, "NativeComm")
        .def("open", &xflydsl::native_comm::open)
        .def("send", &xflydsl::native_comm::send)
        .def("close", &xflydsl::native_comm::close)
        .def("on_message", &xflydsl::native_comm::on_message)
        .def("on_close", &xflydsl::native_comm::on_close)
        .def_property_readonly("comm_id", &xflydsl::native_comm::id);
    m.def(
        "Comm",
        [](const std::string& target_name, const std::string& comm_id)
        { return interpreter::current().comms().make_comm(target_name, comm_id); },
        py::arg("target_name"),
        py::arg("comm_id"));
    m.def("register_comm_target",
          [](const std::string& target_name, py::object on_open)
          { interpreter::current().comms().register_target(target_name, std::move(on_open)); });
    m.def("unregister_comm_target",
          [](const std::string& target_name)
          { interpreter::current().comms().unregister_target(target_name); });
}

} // namespace xflydsl
