// What a target adds to the neutral lowering: how its kernels are emitted,
// and how a host launcher (always code for this machine's CPU) launches them.
#pragma once

#include <memory>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "flyrt/ir.hpp"
#include "flyrt/target.hpp"

namespace flyrt::codegen
{

// A launch's packed operands in host code (see launch/geometry.hpp).
struct launch_call
{
    const ir::function& kernel;
    std::size_t kernel_index; // among the module's kernels, in order
    llvm::Value* kernels;     // the loaded kernels' table the launcher got
    llvm::Value* slots;       // the kernel's arguments, 8 bytes each
    llvm::Value* geometry;    // launch::geometry
    llvm::Value* stream;      // i64; ir::default_stream for the call's own
};

class target_codegen
{
public:
    explicit target_codegen(target t) : m_target(std::move(t)) {}
    virtual ~target_codegen() = default;

    const target& description() const { return m_target; }
    // Whether kernels go to a device module of their own (GPUs) or into the
    // host module (the CPU).
    virtual bool separate_device_module() const = 0;
    // Emits kernel `f` of `m` into `out`.
    virtual void emit_kernel(const ir::module& m, const ir::function& f, llvm::Module& out) const = 0;
    // Emits, in a host launcher, the call that launches a kernel; returns
    // its i32 status (0: launched).
    virtual llvm::Value*
    emit_launch_call(llvm::IRBuilder<>& b, llvm::Module& host, const launch_call& call) const = 0;

private:
    target m_target;
};

} // namespace flyrt::codegen
