// Python comms (the `comm` package, ipywidgets) on top of xeus's comm manager.
//
// Each Python comm owns a `native_comm`, which owns the `xeus::xcomm` that
// xeus routes the client's comm_msg / comm_close to. Comm messages are
// published through the iopub gate like all other output.
#pragma once

#include <memory>
#include <set>
#include <string>

#include <pybind11/pybind11.h>
#include <xeus/xcomm.hpp>

#include "iopub_gate.hpp"

namespace xflydsl
{

class native_comm
{
public:
    native_comm(xeus::xcomm comm, iopub_gate& gate);

    void open(const pybind11::object& data, const pybind11::object& metadata, const pybind11::list& buffers);
    void send(const pybind11::object& data, const pybind11::object& metadata, const pybind11::list& buffers);
    void close(const pybind11::object& data, const pybind11::object& metadata, const pybind11::list& buffers);

    // Python callbacks taking the message as a dict.
    void on_message(pybind11::object callback);
    void on_close(pybind11::object callback);

    std::string id() const;

private:
    xeus::xcomm m_comm;
    iopub_gate& m_gate;
};

class comm_bridge
{
public:
    comm_bridge(xeus::xcomm_manager& manager, iopub_gate& gate);

    // A comm the kernel opens towards target `target_name` on the client.
    std::unique_ptr<native_comm> make_comm(const std::string& target_name, const std::string& id);

    // `on_open(native_comm, msg)` runs when the client opens a comm to it.
    void register_target(const std::string& target_name, pybind11::object on_open);
    void unregister_target(const std::string& target_name);

private:
    xeus::xtarget& target(const std::string& target_name);

    xeus::xcomm_manager& m_manager;
    iopub_gate& m_gate;
    std::set<std::string> m_targets;
};

// The message a comm handler receives, as ipykernel would hand it over.
pybind11::dict message_to_python(const xeus::xmessage& message);

} // namespace xflydsl
