#include "comm_bridge.hpp"

#include <utility>

#include <pybind11_json/pybind11_json.hpp>

namespace py = pybind11;

namespace xflydsl
{
namespace
{

xeus::buffer_sequence to_buffers(const py::list& buffers)
{
    xeus::buffer_sequence result;
    for (const auto& item : buffers)
    {
        const std::string bytes = py::bytes(py::reinterpret_borrow<py::object>(item));
        result.emplace_back(bytes.begin(), bytes.end());
    }
    return result;
}

nl::json to_json(const py::object& value)
{
    return value.is_none() ? nl::json::object() : nl::json(value);
}

// A handler called by xeus on the shell thread, which does not hold the GIL.
xeus::xcomm::handler_type python_handler(py::object callback)
{
    auto shared = std::make_shared<py::object>(std::move(callback));
    return [shared](xeus::xmessage message)
    {
        py::gil_scoped_acquire gil;
        try
        {
            (*shared)(message_to_python(message));
        }
        catch (py::error_already_set& error)
        {
            error.restore();
            PyErr_Print();
        }
    };
}

} // namespace

py::dict message_to_python(const xeus::xmessage& message)
{
    py::list buffers;
    for (const auto& buffer : message.buffers())
    {
        buffers.append(py::memoryview(py::bytes(buffer.data(), buffer.size())));
    }
    py::dict result;
    result["header"] = pyjson::from_json(message.header());
    result["parent_header"] = pyjson::from_json(message.parent_header());
    result["metadata"] = pyjson::from_json(message.metadata());
    result["content"] = pyjson::from_json(message.content());
    result["buffers"] = buffers;
    return result;
}

native_comm::native_comm(xeus::xcomm comm, iopub_gate& gate) : m_comm(std::move(comm)), m_gate(gate) {}

void native_comm::open(const py::object& data, const py::object& metadata, const py::list& buffers)
{
    auto publish = [this, d = to_json(data), m = to_json(metadata), b = to_buffers(buffers)]() mutable
    { m_comm.open(std::move(m), std::move(d), std::move(b)); };
    m_gate.run_or_defer(std::move(publish));
}

void native_comm::send(const py::object& data, const py::object& metadata, const py::list& buffers)
{
    auto publish = [this, d = to_json(data), m = to_json(metadata), b = to_buffers(buffers)]() mutable
    { m_comm.send(std::move(m), std::move(d), std::move(b)); };
    m_gate.run_or_defer(std::move(publish));
}

void native_comm::close(const py::object& data, const py::object& metadata, const py::list& buffers)
{
    auto publish = [this, d = to_json(data), m = to_json(metadata), b = to_buffers(buffers)]() mutable
    { m_comm.close(std::move(m), std::move(d), std::move(b)); };
    m_gate.run_or_defer(std::move(publish));
}

void native_comm::on_message(py::object callback)
{
    m_comm.on_message(python_handler(std::move(callback)));
}

void native_comm::on_close(py::object callback)
{
    m_comm.on_close(python_handler(std::move(callback)));
}

std::string native_comm::id() const
{
    return m_comm.id().c_str();
}

comm_bridge::comm_bridge(xeus::xcomm_manager& manager, iopub_gate& gate) : m_manager(manager), m_gate(gate) {}

xeus::xtarget& comm_bridge::target(const std::string& target_name)
{
    if (m_targets.insert(target_name).second)
    {
        // A target the client serves (e.g. jupyter.widget): xeus still needs
        // an xtarget to route its messages; comm_open from the client to it
        // has nobody to answer on this side.
        m_manager.register_comm_target(target_name, [](xeus::xcomm&&, xeus::xmessage) {});
    }
    return *m_manager.target(target_name);
}

std::unique_ptr<native_comm> comm_bridge::make_comm(const std::string& target_name, const std::string& id)
{
    return std::make_unique<native_comm>(xeus::xcomm(&target(target_name), xeus::xguid(id.c_str())), m_gate);
}

void comm_bridge::register_target(const std::string& target_name, py::object on_open)
{
    m_targets.insert(target_name);
    auto callback = std::make_shared<py::object>(std::move(on_open));
    iopub_gate& gate = m_gate;
    m_manager.register_comm_target(
        target_name,
        [callback, &gate](xeus::xcomm&& comm, xeus::xmessage message)
        {
            py::gil_scoped_acquire gil;
            try
            {
                auto wrapped = std::make_unique<native_comm>(std::move(comm), gate);
                (*callback)(py::cast(std::move(wrapped)), message_to_python(message));
            }
            catch (py::error_already_set& error)
            {
                error.restore();
                PyErr_Print();
            }
        });
}

void comm_bridge::unregister_target(const std::string& target_name)
{
    m_targets.erase(target_name);
    m_manager.unregister_comm_target(target_name);
}

} // namespace xflydsl
