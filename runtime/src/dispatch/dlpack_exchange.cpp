#include "dlpack_exchange.hpp"

namespace flyrt::dispatch
{

// DLPack 1.2's DLPackExchangeAPI, field for field. The functions flyrt does
// not call keep their places as untyped pointers.
struct dlpack_exchange::table
{
    struct
    {
        std::uint32_t major;
        std::uint32_t minor;
    } version;
    const void* previous; // an older table of the same library
    void* allocate_tensor;
    void* managed_tensor_from_object;
    void* managed_tensor_to_object;
    int (*tensor_from_object)(void* object, DLTensor* out); // may be null
    int (*current_work_stream)(DLDeviceType device, std::int32_t index, void** stream);
};

namespace
{
constexpr std::uint32_t supported_major = 1;
constexpr const char* capsule_name = "dlpack_exchange_api";
} // namespace

dlpack_exchange dlpack_exchange::of(PyTypeObject* type)
{
    PyObject* capsule =
        PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), "__dlpack_c_exchange_api__");
    if (capsule == nullptr)
    {
        PyErr_Clear(); // a torch before 2.10
        return dlpack_exchange(nullptr);
    }
    const auto* found = static_cast<const table*>(PyCapsule_GetPointer(capsule, capsule_name));
    Py_DECREF(capsule);
    if (found == nullptr)
    {
        PyErr_Clear(); // not a capsule of that name
        return dlpack_exchange(nullptr);
    }
    if (found->version.major != supported_major || found->tensor_from_object == nullptr ||
        found->current_work_stream == nullptr)
    {
        return dlpack_exchange(nullptr);
    }
    return dlpack_exchange(found);
}

bool dlpack_exchange::describe(PyObject* tensor, DLTensor& out) const
{
    if (m_table->tensor_from_object(tensor, &out) != 0)
    {
        PyErr_Clear();
        return false;
    }
    return true;
}

std::optional<std::int64_t> dlpack_exchange::current_stream(DLDeviceType device, int index) const
{
    void* stream = nullptr;
    if (m_table->current_work_stream(device, index, &stream) != 0)
    {
        PyErr_Clear();
        return std::nullopt;
    }
    return reinterpret_cast<std::int64_t>(stream);
}

} // namespace flyrt::dispatch
