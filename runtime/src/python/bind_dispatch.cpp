// The launcher's dispatch: Dispatcher (called straight through tp_call),
// the artifacts it caches and their dependency guards, and the settings
// every call reads.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "../dispatch/artifact.hpp"
#include "../dispatch/dependency_guard.hpp"
#include "../dispatch/dispatch_settings.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../dispatch/tensor_view.hpp"
#include "bind.hpp"
#include "flyrt/target.hpp"

namespace py = pybind11;

namespace flyrt::python
{
namespace
{

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
        // pybind11's cast looks the type up on every call; a launcher, one
        // C++ base under Python subclasses, keeps its pointer in place.
        auto* instance = reinterpret_cast<py::detail::instance*>(self);
        auto* d = instance->simple_layout && instance->simple_value_holder[0] != nullptr
                      ? static_cast<dispatch::dispatcher*>(instance->simple_value_holder[0])
                      : py::handle(self).cast<dispatch::dispatcher*>();
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

} // namespace

void bind_dispatch(py::module_& m)
{
    using dispatch::dependency_guard;
    py::class_<dependency_guard, std::shared_ptr<dependency_guard>>(m, "DependencyGuard")
        .def(py::init<>())
        .def("watch_namespace", &dependency_guard::watch_namespace)
        .def("watch_function", &dependency_guard::watch_function)
        .def("watch_list", &dependency_guard::watch_list)
        .def("watch_buffer", &dependency_guard::watch_buffer)
        .def("watch_slot", &dependency_guard::watch_slot)
        .def("watch_attribute", &dependency_guard::watch_attribute)
        .def("watch_equal", &dependency_guard::watch_equal)
        .def("invalidate", &dependency_guard::invalidate)
        .def("holds", &dependency_guard::holds)
        .def("__len__", &dependency_guard::size);

    using dispatch::artifact;
    py::class_<artifact, std::shared_ptr<artifact>>(m, "Artifact")
        .def_property_readonly("hits", [](const artifact& a) { return a.hits; })
        .def_readwrite("guard", &artifact::guard)
        .def_property("record",
                      &artifact::record,
                      [](artifact& a, const py::object& record)
                      { a.record_ref = record.is_none() ? py::object() : py::weakref(record); })
        .def_readwrite("written_params", &artifact::written_params)
        .def_property_readonly("device_code",
                               [](const artifact& a) { return device_code_list(a.device_code); })
        .def_property_readonly("device_kernels",
                               [](const artifact& a)
                               {
                                   std::vector<launch::kernel_resources> out;
                                   for (const auto& kernel : a.kernels)
                                   {
                                       out.push_back(kernel->resources());
                                   }
                                   return out;
                               });
    m.def(
        "load_artifact",
        [](const py::bytes& payload, const std::string& entry, const target& kernels, int device)
        {
            const std::string bytes = payload;
            py::gil_scoped_release unlocked; // loading runs no Python: other threads run meanwhile
            return dispatch::load_artifact(bytes, entry, kernels, device);
        },
        py::arg("payload"),
        py::arg("entry"),
        py::arg("target"),
        py::arg("device"));

    using dispatch::dispatcher;
    py::class_<dispatcher>(m, "Dispatcher", py::dynamic_attr(), py::custom_type_setup(install_call_slot))
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
                     return std::make_unique<dispatcher>(name,
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
             [](const dispatcher& d)
             {
                 const auto& c = d.cache().counters();
                 return py::make_tuple(c.hits, c.misses, c.compiles, c.evictions, d.cache().size());
             })
        .def("_clear", [](dispatcher& d) { return d.cache().clear(); })
        .def("_evict", [](dispatcher& d, const dispatch::key_type& key) { return d.cache().evict(key); })
        .def("_keys", [](const dispatcher& d) { return d.cache().keys(); })
        .def("_entries", [](const dispatcher& d) { return d.cache().entries(); })
        .def("_specialize",
             [](dispatcher& d, const py::tuple& args, const py::dict& kwargs, int target)
             {
                 return d.specialize_for(
                     args.ptr(), kwargs.ptr(), static_cast<dispatch::target_choice>(target));
             })
        .def(
            "warmup",
            [](dispatcher& d, const py::args& args, const py::kwargs& kwargs)
            { d.warmup(args.ptr(), kwargs.ptr()); },
            "The call path's half of JitFunction.warmup: specialize, find or compile, no launch.")
        .def("_key_of_call",
             [](dispatcher& d, const py::tuple& args, const py::dict& kwargs)
             { return d.key_of_call(args.ptr(), kwargs.ptr()); })
        .def_property(
            "_target_code",
            [](const dispatcher& d) { return static_cast<int>(d.target()); },
            [](dispatcher& d, int code) { d.set_target(static_cast<dispatch::target_choice>(code)); });

    m.def("set_tracing", &dispatch::set_tracing);
    m.def("tracing", &dispatch::tracing);
    m.def(
        "set_default_target",
        [](int code) { dispatch::set_default_target(static_cast<dispatch::target_choice>(code)); },
        "The target launchers without their own run on (-1: by their tensors).");
    m.def("set_bounds_checks",
          &dispatch::set_bounds_checks,
          "This process's choice of bounds checks: 1 on, 0 off, -1 as FLYDSL_DEBUG_BOUNDS says (on when "
          "unset); returns the choice before.");
    m.def("bounds_checks", &dispatch::bounds_checks, "Whether kernels compiled now check bounds.");
    dispatch::watch_environment(); // FLYDSL_DEBUG_BOUNDS is read again only when os.environ changes
    m.def(
        "register_torch_dtypes",
        [](py::dict codes, int gpu_device_type)
        { dispatch::register_torch_dtypes(codes, static_cast<dispatch::device_type>(gpu_device_type)); },
        py::arg("codes"),
        py::arg("gpu_device_type"));
}

} // namespace flyrt::python
