// LLVM's O3 pipeline for one module and the machine it is compiled for,
// and the machine code (or assembly, such as PTX) it then becomes.
#pragma once

#include <string>

#include <llvm/Support/CodeGen.h>

namespace llvm
{
class Module;
class TargetMachine;
} // namespace llvm

namespace flyrt::jit
{

// `unroll`: LLVM's partial and runtime loop unroller. Off for the CPU: a
// quarter less compile time (PA decode's recompile 153 -> 125 ms), kernels
// within a few percent (their hot loops vectorize, traced loops are fully
// unrolled anyway). GPUs want it: a loop's loads in flight together.
void optimize(llvm::Module& module, llvm::TargetMachine& machine, bool unroll);

// Whether code generation may sink instructions into the branch that uses
// them (LLVM's MachineSink).
enum class machine_sinking
{
    on,
    off
};

// Machine code (or PTX); an error LLVM reports while emitting it is thrown.
std::string emit(llvm::Module& module,
                 llvm::TargetMachine& machine,
                 llvm::CodeGenFileType type,
                 machine_sinking sinking = machine_sinking::on);

} // namespace flyrt::jit
