// IR types, builders and modules: what a Python trace builds, verifies and compiles.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "../jit/compiler.hpp"
#include "bind.hpp"
#include "flyrt/builder.hpp"
#include "flyrt/target.hpp"
#include "flyrt/value_ranges.hpp"
#include "flyrt/verifier.hpp"

namespace py = pybind11;

namespace flyrt::python
{

void bind_ir(py::module_& m)
{
    py::enum_<ir::scalar>(m, "Scalar")
        .value("i1", ir::scalar::i1)
        .value("i8", ir::scalar::i8)
        .value("i16", ir::scalar::i16)
        .value("i32", ir::scalar::i32)
        .value("i64", ir::scalar::i64)
        .value("u8", ir::scalar::u8)
        .value("u16", ir::scalar::u16)
        .value("u32", ir::scalar::u32)
        .value("u64", ir::scalar::u64)
        .value("f16", ir::scalar::f16)
        .value("bf16", ir::scalar::bf16)
        .value("f32", ir::scalar::f32)
        .value("f64", ir::scalar::f64)
        .value("ptr", ir::scalar::ptr);
    py::enum_<ir::arith>(m, "Arith")
        .value("add", ir::arith::add)
        .value("sub", ir::arith::sub)
        .value("mul", ir::arith::mul)
        .value("div", ir::arith::div)
        .value("rem", ir::arith::rem)
        .value("bit_and", ir::arith::bit_and)
        .value("bit_or", ir::arith::bit_or)
        .value("bit_xor", ir::arith::bit_xor)
        .value("shl", ir::arith::shl)
        .value("shr", ir::arith::shr)
        .value("min", ir::arith::min)
        .value("max", ir::arith::max)
        .value("pow", ir::arith::pow)
        .value("neg", ir::arith::neg)
        .value("bit_not", ir::arith::bit_not)
        .value("abs", ir::arith::abs)
        .value("exp", ir::arith::exp)
        .value("exp2", ir::arith::exp2)
        .value("log", ir::arith::log)
        .value("log2", ir::arith::log2)
        .value("sqrt", ir::arith::sqrt)
        .value("rsqrt", ir::arith::rsqrt)
        .value("floor", ir::arith::floor)
        .value("ceil", ir::arith::ceil)
        .value("sin", ir::arith::sin)
        .value("cos", ir::arith::cos)
        .value("tanh", ir::arith::tanh)
        .value("erf", ir::arith::erf)
        .value("exp2_approx", ir::arith::exp2_approx);
    py::enum_<ir::predicate>(m, "Predicate")
        .value("eq", ir::predicate::eq)
        .value("ne", ir::predicate::ne)
        .value("lt", ir::predicate::lt)
        .value("le", ir::predicate::le)
        .value("gt", ir::predicate::gt)
        .value("ge", ir::predicate::ge);
    py::enum_<ir::mma_layout>(m, "MMALayout")
        .value("warp", ir::mma_layout::warp)
        .value("wave", ir::mma_layout::wave);
    py::enum_<ir::fp8_format>(m, "FP8Format")
        .value("none", ir::fp8_format::none)
        .value("e4m3fnuz", ir::fp8_format::e4m3fnuz)
        .value("e4m3fn", ir::fp8_format::e4m3fn);
    py::enum_<ir::special_register>(m, "Special")
        .value("thread_idx", ir::special_register::thread_idx)
        .value("block_idx", ir::special_register::block_idx)
        .value("block_dim", ir::special_register::block_dim)
        .value("grid_dim", ir::special_register::grid_dim);
    py::enum_<ir::atomic_op>(m, "AtomicOp")
        .value("add", ir::atomic_op::add)
        .value("sub", ir::atomic_op::sub)
        .value("min", ir::atomic_op::min)
        .value("max", ir::atomic_op::max)
        .value("bit_and", ir::atomic_op::bit_and)
        .value("bit_or", ir::atomic_op::bit_or)
        .value("bit_xor", ir::atomic_op::bit_xor)
        .value("xchg", ir::atomic_op::xchg)
        .value("cas", ir::atomic_op::cas);
    py::enum_<ir::memory_scope>(m, "MemoryScope")
        .value("block", ir::memory_scope::block)
        .value("device", ir::memory_scope::device)
        .value("system", ir::memory_scope::system);
    py::enum_<ir::memory_order>(m, "MemoryOrder")
        .value("relaxed", ir::memory_order::relaxed)
        .value("acquire", ir::memory_order::acquire)
        .value("release", ir::memory_order::release)
        .value("acq_rel", ir::memory_order::acq_rel)
        .value("seq_cst", ir::memory_order::seq_cst);
    py::enum_<ir::address_space>(m, "AddressSpace")
        .value("global_", ir::address_space::global)
        .value("shared", ir::address_space::shared);

    py::class_<ir::type>(m, "Type")
        .def(py::init(
                 [](ir::scalar kind, ir::scalar pointee, ir::address_space space, int lanes)
                 {
                     ir::type t{kind, pointee, space};
                     t.lanes = static_cast<std::uint8_t>(lanes);
                     return t;
                 }),
             py::arg("kind"),
             py::arg("pointee") = ir::scalar::i8,
             py::arg("space") = ir::address_space::global,
             py::arg("lanes") = 1)
        .def_readonly("kind", &ir::type::kind)
        .def_readonly("pointee", &ir::type::pointee)
        .def_readonly("space", &ir::type::space)
        .def_property_readonly("lanes", [](const ir::type& t) { return int(t.lanes); })
        .def("__eq__", [](const ir::type& a, const ir::type& b) { return a == b; })
        .def("__hash__", [](const ir::type& t) { return py::hash(py::str(ir::to_string(t))); })
        .def("__repr__", [](const ir::type& t) { return ir::to_string(t); });

    py::class_<ir::op>(m, "Op");

    py::class_<ir::function_builder>(m, "FunctionBuilder")
        .def_property_readonly("parameters", &ir::function_builder::parameters)
        .def("type_of", &ir::function_builder::type_of)
        .def("constant_int", &ir::function_builder::constant_int)
        .def("constant_float", &ir::function_builder::constant_float)
        .def("special", &ir::function_builder::special)
        .def("unary", &ir::function_builder::unary)
        .def("binary", &ir::function_builder::binary)
        .def("compare", &ir::function_builder::compare)
        .def("select", &ir::function_builder::select)
        .def("fma", &ir::function_builder::fma)
        .def("cast", &ir::function_builder::cast)
        .def("decode_fp8", &ir::function_builder::decode_fp8)
        .def("bitcast", &ir::function_builder::bitcast)
        .def("load", &ir::function_builder::load)
        .def("store",
             &ir::function_builder::store,
             py::arg("ptr"),
             py::arg("offset"),
             py::arg("value"),
             py::arg("line"),
             py::arg("align") = 0)
        .def("launch", &ir::function_builder::launch)
        .def("report", &ir::function_builder::report)
        .def("print", &ir::function_builder::print)
        .def("barrier", &ir::function_builder::barrier)
        .def("wait_for_prior_grids", &ir::function_builder::wait_for_prior_grids)
        .def("launch_dependents", &ir::function_builder::launch_dependents)
        .def("shuffle", &ir::function_builder::shuffle)
        .def("mma",
             &ir::function_builder::mma,
             py::arg("a"),
             py::arg("b"),
             py::arg("c"),
             py::arg("line"),
             py::arg("fp8") = ir::fp8_format::none,
             py::arg("layout") = ir::mma_layout::warp)
        .def("atomic",
             [](ir::function_builder& b,
                ir::atomic_op kind,
                ir::value_id ptr,
                ir::value_id offset,
                ir::value_id value,
                ir::memory_scope scope,
                ir::memory_order order,
                int line) { return b.atomic(kind, ptr, offset, value, {scope, order}, line); })
        .def("atomic_cas",
             [](ir::function_builder& b,
                ir::value_id ptr,
                ir::value_id offset,
                ir::value_id compare,
                ir::value_id value,
                ir::memory_scope scope,
                ir::memory_order order,
                int line) { return b.atomic_cas(ptr, offset, compare, value, {scope, order}, line); })
        .def("fence",
             [](ir::function_builder& b, ir::memory_scope scope, ir::memory_order order, int line)
             { b.fence({scope, order}, line); })
        .def("async_copy", &ir::function_builder::async_copy)
        .def("async_commit", &ir::function_builder::async_commit)
        .def("async_wait", &ir::function_builder::async_wait)
        .def("matrix_load", &ir::function_builder::matrix_load)
        .def("shared", &ir::function_builder::shared)
        .def("dynamic_shared", &ir::function_builder::dynamic_shared)
        .def("load_vector",
             &ir::function_builder::load_vector,
             py::arg("ptr"),
             py::arg("offset"),
             py::arg("lanes"),
             py::arg("line"),
             py::arg("align") = 0)
        .def("extract", &ir::function_builder::extract)
        .def("insert", &ir::function_builder::insert)
        .def("broadcast", &ir::function_builder::broadcast)
        .def("reduce", &ir::function_builder::reduce)
        .def("begin_if", &ir::function_builder::begin_if, py::return_value_policy::reference)
        .def("begin_for", &ir::function_builder::begin_for, py::return_value_policy::reference)
        .def("begin_while", &ir::function_builder::begin_while, py::return_value_policy::reference)
        .def("region_arguments", &ir::function_builder::region_arguments)
        .def("enter", &ir::function_builder::enter)
        .def("leave", &ir::function_builder::leave)
        .def("yield_", &ir::function_builder::yield)
        .def("condition", &ir::function_builder::condition)
        .def("finish", &ir::function_builder::finish)
        .def("discard", &ir::function_builder::discard)
        .def("set_file", &ir::function_builder::set_file)
        .def_property_readonly("depth", &ir::function_builder::depth);

    py::class_<ir::module_builder>(m, "Module")
        .def(py::init<std::string>())
        .def(
            "add_function",
            [](ir::module_builder& b,
               const std::string& name,
               const std::string& kind,
               const std::vector<ir::type>& types,
               const std::vector<std::string>& names,
               const std::string& file,
               int line,
               const std::array<std::int32_t, 3>& known_block_size,
               int min_blocks_per_sm) -> ir::function_builder&
            {
                if (kind != "host" && kind != "kernel")
                {
                    throw py::value_error("function kind must be 'host' or 'kernel'");
                }
                return b.add_function(name,
                                      kind == "host" ? ir::function_kind::host : ir::function_kind::kernel,
                                      types,
                                      names,
                                      ir::location{file, line},
                                      known_block_size,
                                      min_blocks_per_sm);
            },
            py::arg("name"),
            py::arg("kind"),
            py::arg("types"),
            py::arg("names"),
            py::arg("file"),
            py::arg("line"),
            py::arg("known_block_size"),
            py::arg("min_blocks_per_sm") = 0,
            py::return_value_policy::reference_internal)
        .def("__str__", [](const ir::module_builder& b) { return ir::print(b.built()); })
        .def(
            "verify",
            [](const ir::module_builder& b, const target& t) -> py::object
            {
                try
                {
                    ir::verify(b.built(), t);
                    return py::none();
                }
                catch (const ir::verify_error& e)
                {
                    return py::make_tuple(e.what(), e.loc.file, e.loc.line);
                }
            },
            py::arg("target"),
            "None when the module is well formed for the target, else (message, file, line).")
        .def(
            "compile",
            [](ir::module_builder& b, const target& t, bool want_llvm_ir)
            {
                std::string llvm_ir;
                std::string payload;
                {
                    py::gil_scoped_release unlocked;
                    for (const auto& f : b.built().functions)
                    {
                        ir::fold_decided_values(*f); // bounds checks the ranges prove, say
                    }
                    payload = jit::compile(b.built(), t, want_llvm_ir ? &llvm_ir : nullptr);
                }
                return py::make_tuple(py::bytes(payload), llvm_ir);
            },
            py::arg("target"),
            py::arg("llvm_ir") = false,
            "The compiled payload for the target (and the optimized LLVM IR when asked).");
}

} // namespace flyrt::python
