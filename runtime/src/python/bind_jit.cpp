// Compiled payloads: their device images, the reuse of compiled parts, AMD
// code objects and the tools and libraries compiles use.
#include <string>
#include <utility>
#include <vector>

#include "../jit/amdgpu_machine.hpp"
#include "../jit/amdgpu_metadata.hpp"
#include "../jit/code_bundle.hpp"
#include "../jit/compiler.hpp"
#include "../jit/nvptx_machine.hpp"
#include "../jit/ptx_assembler.hpp"
#include "bind.hpp"

namespace py = pybind11;

namespace flyrt::python
{
namespace
{

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

} // namespace

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

void bind_jit(py::module_& m)
{
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
        "device_binaries",
        [](const py::bytes& payload)
        {
            py::list binaries;
            for (const jit::device_image& image : jit::unpack(std::string(payload)).images)
            {
                if (!image.binary.empty())
                {
                    binaries.append(py::make_tuple(image.kernel, py::bytes(image.binary)));
                }
            }
            return binaries;
        },
        "(kernel name, cubin bytes) of each device image in a compiled payload that nvJitLink assembled.");
    m.def(
        "host_objects",
        [](const py::bytes& payload)
        {
            py::list objects;
            for (const std::string& object : jit::unpack(std::string(payload)).host_objects)
            {
                objects.append(py::bytes(object));
            }
            return objects;
        },
        "The relocatable objects (ELF) of a compiled payload's host code: on the CPU target, its kernels "
        "too.");
    m.def(
        "compiled_part_counts",
        []
        {
            const jit::part_counts counts = jit::compiled_part_counts();
            return py::make_tuple(counts.compiled, counts.reused);
        },
        "(functions compiled, functions whose object an earlier compile of this process made).");
    m.def(
        "assembled_cubin_counts",
        []
        {
            const jit::part_counts counts = jit::assembled_cubin_counts();
            return py::make_tuple(counts.compiled, counts.reused);
        },
        "(kernels nvJitLink assembled, kernels whose cubin an earlier assemble of this process made).");
    m.def("amdgpu_linker", &jit::linker_path, "The ld.lld that links AMD code objects (\"\" if none).");
    m.def("code_object_kernels",
          &code_object_kernels,
          py::arg("code_object"),
          "What an AMD code object's metadata says of each kernel.");
    m.def("set_libdevice_path", &jit::set_libdevice_path);
    m.def("set_ocml_path", &jit::set_ocml_path);
    m.def("set_ptx_assembler_path",
          &jit::set_ptx_assembler_path,
          "The nvJitLink NVPTX compiles assemble their PTX with (\"\": none, the driver compiles it).");
    m.def("ptx_assembler_path",
          &jit::ptx_assembler_path,
          "The nvJitLink NVPTX compiles assemble their PTX with now (\"\": none).");
    m.def("ptx_assembler_problem",
          &jit::ptx_assembler_problem,
          "Why the nvJitLink set last cannot assemble (\"\" when it can or none is set).");
}

} // namespace flyrt::python
