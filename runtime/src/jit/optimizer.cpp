#include "optimizer.hpp"

#include <memory>
#include <stdexcept>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/CodeGen/Passes.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "llvm_diagnostics.hpp"

namespace flyrt::jit
{

void optimize(llvm::Module& module, llvm::TargetMachine& machine, bool unroll)
{
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager cgscc;
    llvm::ModuleAnalysisManager modules;
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = unroll;
    // The target's own passes (NVVMReflect for libdevice, say) join here.
    llvm::PassBuilder builder(&machine, tuning);
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(cgscc);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, cgscc, modules);
    builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, modules);
}

namespace
{

// The code generation pipeline without MachineSink: the target builds its
// pipeline through add(), and LLVM offers no other per-target switch (its
// -disable-machine-sink is one for every target in the process).
class pass_manager_without_sinking : public llvm::legacy::PassManager
{
public:
    void add(llvm::Pass* pass) override
    {
        if (pass->getPassID() == &llvm::MachineSinkingID)
        {
            std::unique_ptr<llvm::Pass> dropped(pass); // add() owns what it is given
            return;
        }
        llvm::legacy::PassManager::add(pass);
    }
};

} // namespace

std::string
emit(llvm::Module& module, llvm::TargetMachine& machine, llvm::CodeGenFileType type, machine_sinking sinking)
{
    llvm::SmallVector<char, 0> out;
    llvm::raw_svector_ostream stream(out);
    std::unique_ptr<llvm::legacy::PassManager> owned = sinking == machine_sinking::on
                                                           ? std::make_unique<llvm::legacy::PassManager>()
                                                           : std::make_unique<pass_manager_without_sinking>();
    llvm::legacy::PassManager& passes = *owned;
    if (machine.addPassesToEmitFile(passes, stream, nullptr, type))
    {
        throw std::runtime_error("LLVM cannot emit code for " + machine.getTargetTriple().str());
    }
    passes.run(module);
    throw_llvm_errors(module.getContext(), "LLVM cannot compile for " + machine.getTargetCPU().str());
    return std::string(out.begin(), out.end());
}

} // namespace flyrt::jit
