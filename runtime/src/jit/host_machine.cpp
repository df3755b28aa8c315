#include "host_machine.hpp"

#include <memory>
#include <mutex>
#include <stdexcept>

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include "machine_cache.hpp"
#include "module_split.hpp"
#include "optimizer.hpp"
#include "part_memo.hpp"

namespace flyrt::jit
{
namespace
{

// A target machine for one CPU description (leased: machine_cache.hpp).
struct host_machine
{
    std::unique_ptr<llvm::TargetMachine> machine;

    explicit host_machine(const target& cpu)
    {
        initialize_native_target();
        llvm::orc::JITTargetMachineBuilder builder{llvm::Triple(cpu.triple)};
        builder.setCPU(cpu.cpu);
        llvm::SubtargetFeatures features(cpu.features);
        builder.addFeatures(features.getFeatures());
        builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
        auto created = builder.createTargetMachine();
        if (!created)
        {
            std::string text;
            llvm::raw_string_ostream stream(text);
            stream << created.takeError();
            throw std::runtime_error("cannot create a target machine for this CPU: " + stream.str());
        }
        machine = std::move(*created);
    }
};

} // namespace

void initialize_native_target()
{
    static std::once_flag once;
    std::call_once(once,
                   []
                   {
                       llvm::InitializeNativeTarget();
                       llvm::InitializeNativeTargetAsmPrinter();
                       llvm::InitializeNativeTargetAsmParser();
                   });
}

std::vector<compiled_part> compile_host(llvm::Module& module, const target& cpu, std::string* llvm_ir_out)
{
    const machine_lease<host_machine> host(cpu);
    module.setDataLayout(host->machine->createDataLayout());
    module.setTargetTriple(host->machine->getTargetTriple().str());
    for (llvm::Function& f : module)
    {
        if (!f.isDeclaration())
        {
            f.addFnAttr("target-cpu", host->machine->getTargetCPU());
            f.addFnAttr("target-features", host->machine->getTargetFeatureString());
        }
    }
    std::vector<std::unique_ptr<llvm::Module>> parts = split_by_function(module);
    std::vector<compiled_part> objects;
    auto compile_part = [&](llvm::Module& part)
    {
        // Inspection wants every part's optimized IR: compile them all then.
        const std::string key = llvm_ir_out == nullptr ? digest_of(part, cpu.id()) : std::string();
        objects.push_back(part_memo::instance().memoized(
            key,
            [&]
            {
                optimize(part, *host->machine, false);
                if (llvm_ir_out != nullptr)
                {
                    llvm::raw_string_ostream stream(*llvm_ir_out);
                    part.print(stream, nullptr);
                }
                return emit(part, *host->machine, llvm::CodeGenFileType::ObjectFile);
            }));
    };
    if (parts.empty())
    {
        compile_part(module);
    }
    for (std::unique_ptr<llvm::Module>& part : parts)
    {
        compile_part(*part);
    }
    return objects;
}

} // namespace flyrt::jit
