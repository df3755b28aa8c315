#include "compiler.hpp"

#include <future>
#include <string>
#include <vector>

#include <llvm/IR/LLVMContext.h>

#include "../codegen/gpu/gpu_kernel.hpp"
#include "../codegen/module_lowering.hpp"
#include "amdgpu_machine.hpp"
#include "amdgpu_metadata.hpp"
#include "code_bundle.hpp"
#include "host_machine.hpp"
#include "llvm_diagnostics.hpp"
#include "nvptx_machine.hpp"
#include "ptx_assembler.hpp"

namespace flyrt::jit
{
namespace
{

// One kernel's device image, from its device module (in a context of its own).
device_image
compile_device(const ir::function& f, llvm::Module& device, const target& kernels, std::string* llvm_ir_out)
{
    llvm_error_collector errors(device.getContext());
    device_image image;
    image.kernel = f.name;
    const bool amdgpu = kernels.kind == target_kind::amdgpu;
    compiled_part part = amdgpu ? compile_code_object(device, kernels, llvm_ir_out)
                                : compile_ptx(device, kernels, llvm_ir_out);
    image.code = std::move(part.code);
    image.digest = std::move(part.digest);
    if (amdgpu)
    {
        image.arguments = argument_places(image.code, f.name, f.parameters.size());
    }
    else
    {
        image.binary = assemble_ptx(image.code, image.digest, kernels.cpu);
    }
    image.reports = codegen::report_messages(f);
    image.parameters = static_cast<std::uint32_t>(f.parameters.size());
    image.known_block = f.known_block_size;
    return image;
}

} // namespace

std::string compile(const ir::module& m, const target& kernels, std::string* llvm_ir_out)
{
    // Host code runs here; only the CPU target's warp size (its shuffles) differs.
    static const target host = cpu_target(32);
    llvm::LLVMContext context;
    llvm_error_collector errors(context);
    codegen::lowered_module lowered = codegen::lower_module(m, kernels, context);
    std::vector<const ir::function*> device_kernels; // in the order of lowered.devices
    for (const auto& f : m.functions)
    {
        if (f->kind == ir::function_kind::kernel && !lowered.devices.empty())
        {
            device_kernels.push_back(f.get());
        }
    }
    // Each kernel compiles on a thread of its own while this one compiles
    // the host code: they share no context and no target machine, and the
    // slowest part (a PA decode kernel's optimization and emission) then
    // sets the time, not the sum. Every future is waited for, even after a
    // failure (their destructors wait), before what they use goes.
    const bool inspecting = llvm_ir_out != nullptr;
    std::vector<std::string> device_ir(device_kernels.size());
    std::vector<std::future<device_image>> images;
    for (std::size_t i = 0; i < device_kernels.size(); ++i)
    {
        images.push_back(std::async(std::launch::async,
                                    [&, i]
                                    {
                                        return compile_device(*device_kernels[i],
                                                              *lowered.devices[i],
                                                              kernels,
                                                              inspecting ? &device_ir[i] : nullptr);
                                    }));
    }
    std::string host_ir;
    compiled_code code;
    for (compiled_part& part :
         compile_host(*lowered.host, kernels.is_gpu() ? host : kernels, inspecting ? &host_ir : nullptr))
    {
        code.host_objects.push_back(std::move(part.code));
        code.host_digests.push_back(std::move(part.digest));
    }
    for (std::future<device_image>& image : images)
    {
        code.images.push_back(image.get());
    }
    if (inspecting)
    {
        for (const std::string& text : device_ir)
        {
            *llvm_ir_out += text;
        }
        *llvm_ir_out += host_ir;
    }
    return pack(code);
}

void remember_parts(const compiled_code& code, const target& kernels)
{
    for (std::size_t i = 0; i < code.host_objects.size() && i < code.host_digests.size(); ++i)
    {
        part_memo::instance().remember(code.host_digests[i], code.host_objects[i]);
    }
    for (const device_image& image : code.images)
    {
        part_memo::instance().remember(image.digest, image.code);
        if (kernels.kind == target_kind::nvptx)
        {
            remember_cubin(image.digest, kernels.cpu, image.binary);
        }
    }
}

part_counts compiled_part_counts()
{
    return part_memo::instance().counts();
}

} // namespace flyrt::jit
