#include "compiler.hpp"

#include <llvm/IR/LLVMContext.h>

#include "../codegen/gpu/gpu_kernel.hpp"
#include "../codegen/module_lowering.hpp"
#include "amdgpu_machine.hpp"
#include "amdgpu_metadata.hpp"
#include "code_bundle.hpp"
#include "host_machine.hpp"
#include "llvm_diagnostics.hpp"
#include "nvptx_machine.hpp"

namespace flyrt::jit
{
std::string compile(const ir::module& m, const target& kernels, std::string* llvm_ir_out)
{
    // Host code runs here; only the CPU target's warp size (its shuffles) differs.
    static const target host = cpu_target(32);
    llvm::LLVMContext context;
    llvm_error_collector errors(context);
    codegen::lowered_module lowered = codegen::lower_module(m, kernels, context);
    compiled_code code;
    std::size_t next = 0;
    for (const auto& f : m.functions)
    {
        if (f->kind != ir::function_kind::kernel || lowered.devices.empty())
        {
            continue;
        }
        device_image image;
        image.kernel = f->name;
        llvm::Module& device = *lowered.devices.at(next++);
        if (kernels.kind == target_kind::amdgpu)
        {
            image.code = compile_code_object(device, kernels, llvm_ir_out);
            image.arguments = argument_places(image.code, f->name, f->parameters.size());
        }
        else
        {
            image.code = compile_ptx(device, kernels, llvm_ir_out);
        }
        image.reports = codegen::report_messages(*f);
        image.parameters = static_cast<std::uint32_t>(f->parameters.size());
        image.known_block = f->known_block_size;
        code.images.push_back(std::move(image));
    }
    code.host_objects = compile_host(*lowered.host, kernels.is_gpu() ? host : kernels, llvm_ir_out);
    return pack(code);
}

part_counts compiled_part_counts()
{
    return part_memo::instance().counts();
}

} // namespace flyrt::jit
