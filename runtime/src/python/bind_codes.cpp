// _core.codes: the numbers C++ and Python both speak, so that Python
// copies none: each set a dict from its C++ name to its code, and the
// default stream's handle.
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "../dispatch/argument_binding.hpp"
#include "../dispatch/dtype_codes.hpp"
#include "../dispatch/specialization_key.hpp"
#include "../dispatch/target_choice.hpp"
#include "../dispatch/tensor_view.hpp"
#include "bind.hpp"

namespace py = pybind11;

namespace flyrt::python
{
namespace
{

template <typename Code> py::dict codes_of(std::initializer_list<std::pair<const char*, Code>> named)
{
    py::dict out;
    for (const auto& [name, code] : named)
    {
        out[name] = static_cast<std::int64_t>(code);
    }
    return out;
}

} // namespace

void bind_codes(py::module_& m)
{
    using namespace dispatch;
    py::module_ codes = m.def_submodule(
        "codes",
        "The codes C++ and Python share: each set a dict from its name to its code; default_stream an int.");
    // a launch's stream operand for the stream the launcher call runs on
    codes.attr("default_stream") = ir::default_stream;
    // "auto" as FLYDSL_TARGET spells it (C++'s `automatic`)
    codes.attr("targets") = codes_of<target_choice>({{"auto", target_choice::automatic},
                                                     {"cpu", target_choice::cpu},
                                                     {"cuda", target_choice::cuda},
                                                     {"hip", target_choice::hip}});
    codes.attr("key_tags") = codes_of<key_tag>({{"tensor", tag_tensor},
                                                {"scalar", tag_scalar},
                                                {"const_int", tag_const_int},
                                                {"const_object", tag_const_object},
                                                {"const_bool", tag_const_bool},
                                                {"stream", tag_stream}});
    codes.attr("param_kinds") = codes_of<param_kind>({{"tensor", param_kind::tensor},
                                                      {"scalar", param_kind::scalar},
                                                      {"constexpr", param_kind::constexpr_},
                                                      {"stream", param_kind::stream}});
    codes.attr("scalar_classes") = codes_of<scalar_class>({{"automatic", scalar_class::automatic},
                                                           {"boolean", scalar_class::boolean},
                                                           {"int32", scalar_class::int32},
                                                           {"int64", scalar_class::int64},
                                                           {"float32", scalar_class::float32},
                                                           {"float64", scalar_class::float64}});
    // key codes of FP8 tensors, by format (the others' are _core.Scalar's)
    codes.attr("fp8_dtypes") = codes_of<std::int64_t>({{"e4m3fnuz", fp8_dtype_code(ir::fp8_format::e4m3fnuz)},
                                                       {"e4m3fn", fp8_dtype_code(ir::fp8_format::e4m3fn)}});
    // DLPack's device types (kDLCPU, kDLCUDA, kDLROCM)
    codes.attr("device_types") = codes_of<device_type>(
        {{"host", device_type::host}, {"cuda", device_type::cuda}, {"rocm", device_type::rocm}});
}

} // namespace flyrt::python
