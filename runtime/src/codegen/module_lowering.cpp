#include "module_lowering.hpp"

#include <stdexcept>

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "amdgpu/amdgpu_codegen.hpp"
#include "cpu/cpu_codegen.hpp"
#include "host_lowering.hpp"
#include "nvptx/nvptx_codegen.hpp"

namespace flyrt::codegen
{
namespace
{

std::unique_ptr<target_codegen> make_target_codegen(const target& t)
{
    switch (t.kind)
    {
    case target_kind::cpu:
        return cpu::make_cpu_codegen(t);
    case target_kind::nvptx:
        return nvptx::make_nvptx_codegen(t);
    case target_kind::amdgpu:
        return amdgpu::make_amdgpu_codegen(t);
    }
    throw std::logic_error("unknown target kind");
}

void check(const llvm::Module& module)
{
    std::string problems;
    llvm::raw_string_ostream stream(problems);
    if (llvm::verifyModule(module, &stream))
    {
        throw std::logic_error("flyrt produced invalid LLVM IR: " + stream.str());
    }
}

} // namespace

lowered_module lower_module(const ir::module& m, const target& kernels, llvm::LLVMContext& host_context)
{
    // Host code needs only the CPU's address spaces, not its features.
    static const target host = cpu_target(32);
    const std::unique_ptr<target_codegen> device = make_target_codegen(kernels);
    lowered_module out;
    out.host = std::make_unique<llvm::Module>(m.name, host_context);
    // Kernels first: launches in host functions refer to them.
    for (const auto& f : m.functions)
    {
        if (f->kind != ir::function_kind::kernel)
        {
            continue;
        }
        if (device->separate_device_module())
        {
            out.device_contexts.push_back(std::make_unique<llvm::LLVMContext>());
            out.devices.push_back(std::make_unique<llvm::Module>(f->name, *out.device_contexts.back()));
        }
        device->emit_kernel(m, *f, out.devices.empty() ? *out.host : *out.devices.back());
    }
    for (const auto& f : m.functions)
    {
        if (f->kind == ir::function_kind::host)
        {
            host_lowering(m, *f, host, *device, *out.host).emit();
        }
    }
    check(*out.host);
    for (const auto& kernel : out.devices)
    {
        check(*kernel);
    }
    return out;
}

} // namespace flyrt::codegen
