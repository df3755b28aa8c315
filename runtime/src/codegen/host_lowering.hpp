// Host launchers: code for this machine's CPU, whatever their kernels run
// on. ABI: `i32 @<name>(ptr slots, ptr kernels)`, slot i (8 bytes) holding
// parameter i, `kernels` the table of the module's kernels as loaded on a
// device (GPU targets; in the order of the module's kernel functions). A
// launch packs its geometry and the kernel's arguments and makes the call
// the kernels' target asks for; a non-zero status ends the launcher with it.
#pragma once

#include "cpu/cpu_lowering.hpp"
#include "target_codegen.hpp"

namespace flyrt::codegen
{

class host_lowering : public cpu::cpu_function_lowering
{
public:
    host_lowering(const ir::module& m,
                  const ir::function& f,
                  const target& host,
                  const target_codegen& device,
                  llvm::Module& out)
        : cpu_function_lowering(m, f, host, out), m_device(device)
    {
    }

    void emit() override;

protected:
    void launch(const ir::op& o) override;

private:
    const target_codegen& m_device;
    llvm::Value* m_kernels = nullptr;
};

} // namespace flyrt::codegen
