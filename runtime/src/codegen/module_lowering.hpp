// A verified flyrt module to LLVM IR for one target: host launchers become
// code for this machine's CPU; kernels become code for the target, in the
// host module (the CPU) or each in a device module of its own (GPUs: one
// device image per kernel, so a helper edit recompiles only its kernels).
#pragma once

#include <memory>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "flyrt/ir.hpp"
#include "flyrt/target.hpp"

namespace flyrt::codegen
{

struct lowered_module
{
    std::unique_ptr<llvm::Module> host; // in the caller's context
    // GPU targets: one per kernel, in the order of the module's kernels,
    // each in a context of its own so that they can compile on threads at
    // once (declared first: contexts outlive their modules).
    std::vector<std::unique_ptr<llvm::LLVMContext>> device_contexts;
    std::vector<std::unique_ptr<llvm::Module>> devices;
};

lowered_module lower_module(const ir::module& m, const target& kernels, llvm::LLVMContext& host_context);

} // namespace flyrt::codegen
