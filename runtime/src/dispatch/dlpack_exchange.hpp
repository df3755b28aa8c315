// A tensor library's DLPack C exchange table (DLPack 1.2's DLPackExchangeAPI,
// which torch puts on torch.Tensor from 2.10 as `__dlpack_c_exchange_api__`):
// one C call describes a tensor, borrowed, where reading its attributes
// through Python costs 40-80 ns each, seven a tensor (most of a launch's
// time above the driver's on a GPU). Debian's dlpack headers (0.6) declare
// DLTensor, whose layout 1.x kept, but not the table: declared here as the
// specification lays it out.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <optional>

#include <dlpack/dlpack.h>

namespace flyrt::dispatch
{

class dlpack_exchange
{
public:
    dlpack_exchange() = default; // none

    // The table `type` carries, or none (no attribute, another major
    // version, or no borrowed-description function in it).
    static dlpack_exchange of(PyTypeObject* type);

    explicit operator bool() const { return m_table != nullptr; }

    // Fills `out` with views of the tensor's own shape and strides (valid
    // while it lives and is not resized). False, with no Python error left
    // set, for a tensor the library cannot describe (no storage, a device
    // DLPack has no number for): its attributes tell the caller why.
    bool describe(PyObject* tensor, DLTensor& out) const;

    // The stream the library calls current on a device, as a driver handle.
    std::optional<std::int64_t> current_stream(DLDeviceType device, int index) const;

private:
    struct table;
    explicit dlpack_exchange(const table* t) : m_table(t) {}
    const table* m_table = nullptr; // the library's, alive for the process
};

} // namespace flyrt::dispatch
