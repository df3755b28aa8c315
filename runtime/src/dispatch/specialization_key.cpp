#include "specialization_key.hpp"

namespace flyrt::dispatch
{

void raise_foreign_byte_order(const std::string& name, bool big_endian)
{
    throw pybind11::value_error("argument '" + name + "': its bytes are " + (big_endian ? "big" : "little") +
                                "-endian, not this machine's order: pass " + name + ".astype(" + name +
                                ".dtype.newbyteorder('='))");
}

void raise_partial_element_strides(const std::string& name)
{
    throw pybind11::value_error("argument '" + name +
                                "': strides that are not a multiple of the element size are not supported");
}

void raise_not_a_scalar(const std::string& name, PyObject* value)
{
    throw pybind11::type_error("argument '" + name + "' must be a bool, int or float, not " +
                               std::string(Py_TYPE(value)->tp_name));
}

void raise_float_for_integer(const std::string& name)
{
    throw pybind11::type_error("argument '" + name + "' is an integer parameter; got a float");
}

void raise_does_not_fit(const std::string& name, PyObject* value, bool int32)
{
    throw pybind11::value_error("argument '" + name + "' = " + pybind11::str(value).cast<std::string>() +
                                " does not fit in " + (int32 ? "Int32" : "Int64"));
}

} // namespace flyrt::dispatch
