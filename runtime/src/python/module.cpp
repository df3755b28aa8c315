// flyrt._core: the IR builder, verifier, compiler, loader and launcher
// dispatch, as the Python side of flyrt sees them.
#define PY_ARRAY_UNIQUE_SYMBOL flyrt_numpy_api
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <array>

#include <numpy/arrayobject.h>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "../dispatch/dispatch_settings.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../dispatch/tensor_view.hpp"
#include "../jit/amdgpu_machine.hpp"
#include "../jit/amdgpu_metadata.hpp"
#include "../jit/code_bundle.hpp"
#include "../jit/compiler.hpp"
#include "../jit/jit_engine.hpp"
#include "../jit/nvptx_machine.hpp"
#include "../launch/blocking.hpp"
#include "../launch/compile_only.hpp"
#include "../launch/cpu/cpu_launch.hpp"
#include "../launch/cuda/cuda_driver.hpp"
#include "../launch/cuda/cuda_kernel.hpp"
#include "../launch/hip/hip_driver.hpp"
#include "../launch/hip/hip_kernel.hpp"
#include "../launch/hip/kernel_arguments.hpp"
#include "../launch/launch_status.hpp"
#include "flyrt/builder.hpp"
#include "flyrt/target.hpp"
#include "flyrt/value_ranges.hpp"
#include "flyrt/verifier.hpp"

namespace py = pybind11;
using namespace flyrt;

namespace
{

// The module a Python trace builds, plus the builders of its functions.
struct module_handle
{
    ir::module module;
    std::vector<std::unique_ptr<ir::function_builder>> builders;
};

ir::function_builder& add_function(module_handle& m,
                                   const std::string& name,
                                   const std::string& kind,
                                   const std::vector<ir::type>& types,
                                   const std::vector<std::string>& names,
                                   const std::string& file,
                                   int line,
                                   const std::array<std::int32_t, 3>& known_block_size,
                                   int min_blocks_per_sm)
{
    if (kind != "host" && kind != "kernel")
    {
        throw py::value_error("function kind must be 'host' or 'kernel'");
    }
    const auto k = kind == "host" ? ir::function_kind::host : ir::function_kind::kernel;
    m.builders.push_back(
        std::make_unique<ir::function_builder>(m.module, name, k, types, names, ir::location{file, line}));
    m.builders.back()->fn().known_block_size = known_block_size;
    m.builders.back()->fn().min_blocks_per_sm = min_blocks_per_sm;
    return *m.builders.back();
}

// (kernel name, PTX text or AMD code object bytes) of each device image.
py::list device_code_list(const std::vector<std::pair<std::string, std::string>>& images)
{
    py::list out;
    for (const auto& [kernel, code] : images)
    {
        const bool elf = code.rfind("\x7f"
                                    "ELF",
                                    0) == 0;
        out.append(py::make_tuple(kernel, elf ? py::object(py::bytes(code)) : py::object(py::str(code))));
    }
    return out;
}

// A device image loaded where its target runs it (in compile-only mode: nowhere).
std::unique_ptr<launch::device_kernel>
load_kernel(const jit::device_image& image, const target& kernels, int device)
{
    if (launch::compile_only())
    {
        return std::make_unique<launch::compiled_only_kernel>(
            image, kernels.max_threads_per_block, kernels.max_shared_bytes);
    }
    switch (kernels.kind)
    {
    case target_kind::nvptx:
        return std::make_unique<launch::cuda::cuda_kernel>(image, device);
    case target_kind::amdgpu:
        return std::make_unique<launch::hip::hip_kernel>(image, device);
    case target_kind::cpu:
        break;
    }
    throw std::runtime_error("device images for a target without a GPU runtime");
}

// Loads a compile's payload: its device images on `device` (GPU targets),
// its host code into the JIT.
std::shared_ptr<dispatch::artifact>
load_artifact(const py::bytes& payload, const std::string& entry, const target& kernels, int device)
{
    auto result = std::make_shared<dispatch::artifact>();
    const std::string bytes = payload;
    {
        py::gil_scoped_release unlocked;
        const jit::compiled_code code = jit::unpack(bytes);
        for (const jit::device_image& image : code.images)
        {
            result->kernels.push_back(load_kernel(image, kernels, device));
            result->kernel_table.push_back(result->kernels.back().get());
            result->device_code.emplace_back(image.kernel, image.code);
        }
        result->code = std::make_shared<jit::loaded_object>(code.host_objects);
        result->entry = reinterpret_cast<decltype(result->entry)>(result->code->address(entry));
    }
    return result;
}

py::list code_object_kernels(const py::bytes& code_object)
{
    py::list out;
    for (const jit::code_object_kernel& k : jit::read_code_object(std::string(code_object)))
    {
        py::list arguments;
        for (const jit::kernel_argument& a : k.arguments)
        {
            arguments.append(
                py::dict(py::arg("offset") = a.offset, py::arg("size") = a.size, py::arg("kind") = a.kind));
        }
        py::dict kernel;
        kernel["name"] = k.name;
        kernel["arguments"] = arguments;
        kernel["kernarg_bytes"] = k.kernarg_bytes;
        kernel["group_segment_bytes"] = k.group_segment_bytes;
        kernel["private_segment_bytes"] = k.private_segment_bytes;
        kernel["sgprs"] = k.sgprs;
        kernel["vgprs"] = k.vgprs;
        kernel["agprs"] = k.agprs;
        kernel["sgpr_spills"] = k.sgpr_spills;
        kernel["vgpr_spills"] = k.vgpr_spills;
        kernel["wavefront_size"] = k.wavefront_size;
        out.append(kernel);
    }
    return out;
}

py::dict device_description(int ordinal)
{
    const launch::cuda::device_info info = launch::cuda::device(ordinal);
    py::dict out;
    out["name"] = info.name;
    out["major"] = info.major;
    out["minor"] = info.minor;
    out["multiprocessors"] = info.multiprocessors;
    out["max_threads_per_block"] = info.max_threads_per_block;
    out["max_shared_per_block"] = info.max_shared_per_block;
    out["l2_bytes"] = info.l2_bytes;
    return out;
}

dispatch::param_spec make_param(const py::tuple& spec)
{
    dispatch::param_spec p;
    p.name = spec[0].cast<std::string>();
    p.kind = static_cast<dispatch::param_kind>(spec[1].cast<int>());
    p.scalar_type = static_cast<dispatch::scalar_class>(spec[2].cast<int>());
    if (spec[3].cast<bool>())
    {
        p.default_value = spec[4];
    }
    return p;
}

// Calling a launcher goes straight to the dispatcher through tp_call,
// skipping pybind11's overload machinery: this is the cache-hit path.
PyObject* call_launcher(PyObject* self, PyObject* args, PyObject* kwargs)
{
    try
    {
        auto* d = py::handle(self).cast<dispatch::dispatcher*>();
        return d->call(args, kwargs).release().ptr();
    }
    catch (py::error_already_set& error)
    {
        error.restore();
    }
    catch (py::builtin_exception& error)
    {
        error.set_error();
    }
    catch (const std::exception& error)
    {
        PyErr_SetString(PyExc_RuntimeError, error.what());
    }
    return nullptr;
}

void install_call_slot(PyHeapTypeObject* type)
{
    type->ht_type.tp_call = call_launcher;
}

// Around a long CPU launch: the GIL, when this thread holds it, goes to the
// other Python threads (comm handlers, the user's) until the launch returns.
void* release_gil()
{
    return PyGILState_Check() ? PyEval_SaveThread() : nullptr;
}

void reacquire_gil(void* released)
{
    if (released != nullptr)
    {
        PyEval_RestoreThread(static_cast<PyThreadState*>(released));
    }
}

// Between pieces of a long CPU launch, or while a GPU launch's report is
// awaited (the thread perhaps without the GIL): runs
// Python's signal handlers, so Ctrl-C raises KeyboardInterrupt there, left
// set for the dispatcher to raise once the launch has stopped.
bool python_interrupted()
{
    py::gil_scoped_acquire gil;
    return PyErr_CheckSignals() != 0;
}

// Waits for `stream` (a stream argument as launchers take one; None: torch's
// current stream) on device `ordinal` with the GIL released; Ctrl-C
// (KeyboardInterrupt) ends the wait, the GPU's work going on.
void cuda_synchronize(int ordinal, const py::object& stream)
{
    launch::cuda::use_device(ordinal); // no driver or no such device: says so before torch is asked
    const std::optional<std::int64_t> handle = dispatch::stream_handle(stream.ptr(), "stream");
    const std::int64_t raw = handle ? *handle : dispatch::torch_current_stream(ordinal);
    bool finished = false;
    {
        py::gil_scoped_release unlocked;
        finished = launch::cuda::synchronize(ordinal, raw, &python_interrupted);
    }
    if (!finished)
    {
        throw py::error_already_set();
    }
    // What checked launches reported, without waiting for them then (report_channel.hpp).
    const std::int32_t reported = launch::cuda::report_channel::take_all(ordinal, &python_interrupted);
    if (reported == launch::status_interrupted)
    {
        if (PyErr_Occurred() == nullptr)
        {
            PyErr_SetNone(PyExc_KeyboardInterrupt);
        }
        throw py::error_already_set();
    }
    if (reported == launch::status_reported)
    {
        throw py::index_error(launch::last_error());
    }
    if (reported != 0)
    {
        throw std::runtime_error(launch::last_error());
    }
}

} // namespace

PYBIND11_MODULE(_core, m)
{
    if (_import_array() < 0)
    {
        throw py::error_already_set();
    }
    m.doc() = "flyrt's native core: IR, LLVM compilation, JIT loading and launch dispatch.";
    launch::set_interrupt_check(&python_interrupted);
    launch::set_blocking_section_hooks({&release_gil, &reacquire_gil});

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
        .value("ceil", ir::arith::ceil);
    py::enum_<ir::predicate>(m, "Predicate")
        .value("eq", ir::predicate::eq)
        .value("ne", ir::predicate::ne)
        .value("lt", ir::predicate::lt)
        .value("le", ir::predicate::le)
        .value("gt", ir::predicate::gt)
        .value("ge", ir::predicate::ge);
    py::enum_<ir::fp8_format>(m, "FP8Format")
        .value("e4m3fnuz", ir::fp8_format::e4m3fnuz)
        .value("e4m3fn", ir::fp8_format::e4m3fn);
    py::enum_<ir::special_register>(m, "Special")
        .value("thread_idx", ir::special_register::thread_idx)
        .value("block_idx", ir::special_register::block_idx)
        .value("block_dim", ir::special_register::block_dim)
        .value("grid_dim", ir::special_register::grid_dim);
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
        .def("barrier", &ir::function_builder::barrier)
        .def("shuffle", &ir::function_builder::shuffle)
        .def("mma", &ir::function_builder::mma)
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

    py::class_<module_handle>(m, "Module")
        .def(py::init(
            [](const std::string& name)
            {
                auto h = std::make_unique<module_handle>();
                h->module.name = name;
                return h;
            }))
        .def("add_function",
             &add_function,
             py::arg("name"),
             py::arg("kind"),
             py::arg("types"),
             py::arg("names"),
             py::arg("file"),
             py::arg("line"),
             py::arg("known_block_size"),
             py::arg("min_blocks_per_sm") = 0,
             py::return_value_policy::reference_internal)
        .def("__str__", [](const module_handle& h) { return ir::print(h.module); })
        .def(
            "verify",
            [](const module_handle& h, const target& t) -> py::object
            {
                try
                {
                    ir::verify(h.module, t);
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
            [](module_handle& h, const target& t, bool want_llvm_ir)
            {
                std::string llvm_ir;
                std::string payload;
                {
                    py::gil_scoped_release unlocked;
                    for (const auto& f : h.module.functions)
                    {
                        ir::fold_decided_values(*f); // bounds checks the ranges prove, say
                    }
                    payload = jit::compile(h.module, t, want_llvm_ir ? &llvm_ir : nullptr);
                }
                return py::make_tuple(py::bytes(payload), llvm_ir);
            },
            py::arg("target"),
            py::arg("llvm_ir") = false,
            "The compiled payload for the target (and the optimized LLVM IR when asked).");

    py::class_<dispatch::dependency_guard, std::shared_ptr<dispatch::dependency_guard>>(m, "DependencyGuard")
        .def(py::init<>())
        .def("watch_namespace", &dispatch::dependency_guard::watch_namespace)
        .def("watch_function", &dispatch::dependency_guard::watch_function)
        .def("watch_list", &dispatch::dependency_guard::watch_list)
        .def("watch_buffer", &dispatch::dependency_guard::watch_buffer)
        .def("watch_slot", &dispatch::dependency_guard::watch_slot)
        .def("watch_attribute", &dispatch::dependency_guard::watch_attribute)
        .def("watch_equal", &dispatch::dependency_guard::watch_equal)
        .def("invalidate", &dispatch::dependency_guard::invalidate)
        .def("holds", &dispatch::dependency_guard::holds)
        .def("__len__", &dispatch::dependency_guard::size);

    py::class_<launch::kernel_resources>(
        m, "KernelResources", "What a loaded GPU kernel holds on its device.")
        .def_readonly("kernel", &launch::kernel_resources::kernel)
        .def_readonly("device", &launch::kernel_resources::device)
        .def_readonly("registers", &launch::kernel_resources::registers)
        .def_readonly("static_shared_bytes", &launch::kernel_resources::static_shared_bytes)
        .def_readonly("local_bytes", &launch::kernel_resources::local_bytes)
        .def_readonly("constant_bytes", &launch::kernel_resources::constant_bytes)
        .def_readonly("image_bytes", &launch::kernel_resources::image_bytes)
        .def_readonly("device_bytes", &launch::kernel_resources::device_bytes);
    py::class_<dispatch::artifact, std::shared_ptr<dispatch::artifact>>(m, "Artifact")
        .def_property_readonly("hits", [](const dispatch::artifact& a) { return a.hits; })
        .def_readwrite("guard", &dispatch::artifact::guard)
        .def_property("record",
                      &dispatch::artifact::record,
                      [](dispatch::artifact& a, const py::object& record)
                      { a.record_ref = record.is_none() ? py::object() : py::weakref(record); })
        .def_readwrite("written_params", &dispatch::artifact::written_params)
        .def_property_readonly("device_code",
                               [](const dispatch::artifact& a) { return device_code_list(a.device_code); })
        .def_property_readonly("device_kernels",
                               [](const dispatch::artifact& a)
                               {
                                   std::vector<launch::kernel_resources> out;
                                   for (const auto& kernel : a.kernels)
                                   {
                                       out.push_back(kernel->resources());
                                   }
                                   return out;
                               });
    m.def("load_artifact",
          &load_artifact,
          py::arg("payload"),
          py::arg("entry"),
          py::arg("target"),
          py::arg("device"));
    m.def(
        "device_images",
        [](const py::bytes& payload)
        {
            std::vector<std::pair<std::string, std::string>> images;
            for (const jit::device_image& image : jit::unpack(std::string(payload)).images)
            {
                images.emplace_back(image.kernel, image.code);
            }
            return device_code_list(images);
        },
        "(kernel name, PTX text or AMD code object bytes) of each device image in a compiled payload.");
    m.def(
        "compiled_part_counts",
        []
        {
            const jit::part_counts counts = jit::compiled_part_counts();
            return py::make_tuple(counts.compiled, counts.reused);
        },
        "(functions compiled, functions whose object an earlier compile of this process made).");

    py::class_<dispatch::dispatcher>(
        m, "Dispatcher", py::dynamic_attr(), py::custom_type_setup(install_call_slot))
        .def(py::init(
                 [](const std::string& name,
                    const std::vector<py::tuple>& specs,
                    py::object compile,
                    py::object inline_call,
                    py::object adapt,
                    py::object revalidate)
                 {
                     std::vector<dispatch::param_spec> params;
                     for (const auto& spec : specs)
                     {
                         params.push_back(make_param(spec));
                     }
                     return std::make_unique<dispatch::dispatcher>(name,
                                                                   std::move(params),
                                                                   std::move(compile),
                                                                   std::move(inline_call),
                                                                   std::move(adapt),
                                                                   std::move(revalidate));
                 }),
             py::arg("name"),
             py::arg("params"),
             py::arg("compile"),
             py::arg("inline_call"),
             py::arg("adapt"),
             py::arg("revalidate"))
        .def("_counters",
             [](const dispatch::dispatcher& d)
             {
                 const auto& c = d.cache().counters();
                 return py::make_tuple(c.hits, c.misses, c.compiles, c.evictions, d.cache().size());
             })
        .def("_clear", [](dispatch::dispatcher& d) { return d.cache().clear(); })
        .def("_evict",
             [](dispatch::dispatcher& d, const dispatch::key_type& key) { return d.cache().evict(key); })
        .def("_keys", [](const dispatch::dispatcher& d) { return d.cache().keys(); })
        .def("_entries", [](const dispatch::dispatcher& d) { return d.cache().entries(); })
        .def("_specialize",
             [](dispatch::dispatcher& d, const py::tuple& args, const py::dict& kwargs, int target)
             {
                 return d.specialize_for(
                     args.ptr(), kwargs.ptr(), static_cast<dispatch::target_choice>(target));
             })
        .def_property(
            "_target_code",
            [](const dispatch::dispatcher& d) { return static_cast<int>(d.target()); },
            [](dispatch::dispatcher& d, int code)
            { d.set_target(static_cast<dispatch::target_choice>(code)); });

    m.def("set_tracing", &dispatch::set_tracing);
    m.def("tracing", &dispatch::tracing);
    m.def("set_worker_count", &launch::set_worker_count);
    m.def("worker_count", &launch::worker_count);
    py::enum_<target_kind>(m, "TargetKind")
        .value("cpu", target_kind::cpu)
        .value("nvptx", target_kind::nvptx)
        .value("amdgpu", target_kind::amdgpu);
    py::class_<target>(m, "Target")
        .def_readonly("kind", &target::kind)
        .def_readonly("triple", &target::triple)
        .def_readonly("cpu", &target::cpu)
        .def_readonly("features", &target::features)
        .def_readonly("warp_size", &target::warp_size)
        .def_readonly("max_threads_per_block", &target::max_threads_per_block)
        .def_readonly("max_shared_bytes", &target::max_shared_bytes)
        .def_readonly("sync_in_while", &target::sync_in_while)
        .def_readonly("matrix_multiply", &target::matrix_multiply)
        .def_property_readonly("is_gpu", &target::is_gpu)
        .def_property_readonly("name", &target::name)
        .def_property_readonly("id", &target::id)
        .def("__repr__", [](const target& t) { return "<flyrt target " + t.id() + ">"; });
    m.def("cpu_target", &cpu_target, py::arg("warp_size"));
    m.def("nvptx_target", &nvptx_target, py::arg("major"), py::arg("minor"));
    m.def("amdgpu_target", &amdgpu_target, py::arg("arch"));
    m.def("amdgpu_linker", &jit::linker_path, "The ld.lld that links AMD code objects (\"\" if none).");
    m.def("code_object_kernels",
          &code_object_kernels,
          py::arg("code_object"),
          "What an AMD code object's metadata says of each kernel.");
    m.def(
        "set_default_target",
        [](int code) { dispatch::set_default_target(static_cast<dispatch::target_choice>(code)); },
        "The target launchers without their own run on (-1: by their tensors).");
    m.def("set_bounds_checks",
          &dispatch::set_bounds_checks,
          "This process's choice of bounds checks: 1 on, 0 off, -1 as FLYDSL_DEBUG_BOUNDS says (on when "
          "unset).");
    m.def("bounds_checks", &dispatch::bounds_checks, "Whether kernels compiled now check bounds.");
    m.def(
        "register_torch_dtypes",
        [](py::dict codes, int gpu_device_type)
        { dispatch::register_torch_dtypes(codes, static_cast<dispatch::device_type>(gpu_device_type)); },
        py::arg("codes"),
        py::arg("gpu_device_type"));
    m.def(
        "geometry_problem",
        [](const std::array<std::int32_t, 3>& grid,
           const std::array<std::int32_t, 3>& block,
           std::int32_t smem,
           const std::array<std::int32_t, 3>& known_block)
        {
            launch::geometry g{};
            for (int d = 0; d < 3; ++d)
            {
                g.grid[d] = static_cast<std::uint32_t>(grid[d]);
                g.block[d] = static_cast<std::uint32_t>(block[d]);
            }
            g.smem_bytes = static_cast<std::uint32_t>(smem);
            const bool known = known_block[0] > 0;
            return launch::geometry_problem(g, known ? known_block.data() : nullptr, launch::cpu_limits());
        },
        py::arg("grid"),
        py::arg("block"),
        py::arg("smem"),
        py::arg("known_block"),
        "Why the CPU launcher refuses a launch of this geometry, in its words (\"\" when it does not).");
    m.def("hip_problem", &launch::hip::problem, "Why HIP cannot launch here (\"\" when it can).");
    m.def("set_compile_only", &launch::set_compile_only);
    m.def(
        "pack_kernel_arguments",
        [](const py::bytes& code_object, const std::string& kernel, const std::vector<std::uint64_t>& slots)
        {
            // As a launch of `kernel` packs its slots (the places a compile reads from the code object).
            const std::vector<jit::argument_place> places =
                jit::argument_places(std::string(code_object), kernel, slots.size());
            std::string buffer(launch::hip::kernel_arguments_size(places), '\0');
            launch::hip::pack_kernel_arguments(
                places, slots.data(), reinterpret_cast<std::uint8_t*>(buffer.data()));
            return py::bytes(buffer);
        },
        py::arg("code_object"),
        py::arg("kernel"),
        py::arg("slots"));
    m.def("set_libdevice_path", &jit::set_libdevice_path);
    m.def("cuda_available", &launch::cuda::available, "Whether a CUDA driver with a device answers.");
    m.def("cuda_device", &device_description, py::arg("ordinal"));
    m.def("cuda_synchronize",
          &cuda_synchronize,
          py::arg("ordinal"),
          py::arg("stream") = py::none(),
          "Waits for a CUDA stream's work; an interrupt ends the wait (KeyboardInterrupt).");
}
