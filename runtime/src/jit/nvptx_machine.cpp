#include "nvptx_machine.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>

#include <llvm/IR/Constants.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include "../codegen/nvptx/nvptx_codegen.hpp"
#include "device_library.hpp"
#include "machine_cache.hpp"
#include "optimizer.hpp"
#include "part_memo.hpp"

extern "C" void LLVMInitializeNVPTXTargetInfo();
extern "C" void LLVMInitializeNVPTXTarget();
extern "C" void LLVMInitializeNVPTXTargetMC();
extern "C" void LLVMInitializeNVPTXAsmPrinter();

namespace flyrt::jit
{
namespace
{

struct nvptx_machine
{
    std::unique_ptr<llvm::TargetMachine> machine;

    explicit nvptx_machine(const target& gpu)
    {
        static std::once_flag once;
        std::call_once(once,
                       []
                       {
                           LLVMInitializeNVPTXTargetInfo();
                           LLVMInitializeNVPTXTarget();
                           LLVMInitializeNVPTXTargetMC();
                           LLVMInitializeNVPTXAsmPrinter();
                       });
        std::string problem;
        const llvm::Target* found = llvm::TargetRegistry::lookupTarget(gpu.triple, problem);
        if (found == nullptr)
        {
            throw std::runtime_error("this LLVM has no NVPTX backend: " + problem);
        }
        machine.reset(found->createTargetMachine(gpu.triple,
                                                 gpu.cpu,
                                                 gpu.features,
                                                 llvm::TargetOptions(),
                                                 std::nullopt,
                                                 std::nullopt,
                                                 llvm::CodeGenOptLevel::Aggressive));
        if (!machine)
        {
            throw std::runtime_error("cannot create an NVPTX target machine for " + gpu.cpu);
        }
    }
};

// A call the NVPTX backend cannot lower (it would abort the process) or that
// would reach the driver as an unresolved extern.
std::optional<std::string> unlowerable_call(const llvm::Module& module)
{
    for (const llvm::Function& f : module)
    {
        if (!f.isDeclaration() || f.use_empty())
        {
            continue;
        }
        const llvm::StringRef name = f.getName();
        if (name == codegen::nvptx::printf_function)
        {
            continue; // the driver's
        }
        if (!f.isIntrinsic())
        {
            return name.str();
        }
        static const char* aborting[] = {"llvm.exp.",
                                         "llvm.exp2.",
                                         "llvm.exp10.",
                                         "llvm.log.",
                                         "llvm.log2.",
                                         "llvm.log10.",
                                         "llvm.pow.",
                                         "llvm.powi.",
                                         "llvm.sin.",
                                         "llvm.cos.",
                                         "llvm.tan.",
                                         "llvm.ldexp.",
                                         "llvm.frexp."};
        for (const char* prefix : aborting)
        {
            if (name.starts_with(prefix))
            {
                return name.str();
            }
        }
    }
    return std::nullopt;
}

// Whether the kernel holds an instruction newer than the PTX ISA 8.0 kernels
// are written in (the FP8 MMA needs 8.4): drivers before CUDA 12.4 read 8.0.
bool needs_ptx84(const llvm::Module& module)
{
    for (const llvm::Function& f : module)
    {
        for (const llvm::BasicBlock& block : f)
        {
            for (const llvm::Instruction& instruction : block)
            {
                const auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction);
                const auto* assembly =
                    call ? llvm::dyn_cast<llvm::InlineAsm>(call->getCalledOperand()) : nullptr;
                if (assembly != nullptr && llvm::StringRef(assembly->getAsmString())
                                               .starts_with(codegen::nvptx::fp8_mma_instruction))
                {
                    return true;
                }
            }
        }
    }
    return false;
}

} // namespace

void set_libdevice_path(const std::string& path)
{
    libdevice().set_path(path);
}

compiled_part compile_ptx(llvm::Module& kernel, const target& gpu, std::string* llvm_ir_out)
{
    target chosen = gpu;
    if (needs_ptx84(kernel))
    {
        chosen.features = "+ptx84";
    }
    const machine_lease<nvptx_machine> nvptx(chosen);
    kernel.setDataLayout(nvptx->machine->createDataLayout());
    kernel.setTargetTriple(gpu.triple);
    const bool wants_libdevice = libdevice().called_by(kernel);
    const std::string key = llvm_ir_out == nullptr
                                ? digest_of(kernel, chosen.id() + (wants_libdevice ? libdevice().path() : ""))
                                : "";
    return part_memo::instance().memoized(
        key,
        [&]
        {
            if (wants_libdevice)
            {
                libdevice().link_into(kernel,
                                      llvm::CallingConv::PTX_Kernel,
                                      "a math function (Float64 exp or log; sin, cos, tanh, erf, pow)");
                // libdevice asks NVVMReflect whether to flush subnormals: no.
                kernel.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", std::uint32_t(0));
            }
            optimize(kernel, *nvptx->machine, true);
            if (std::optional<std::string> call = unlowerable_call(kernel))
            {
                throw std::runtime_error(
                    "kernel " + kernel.getName().str() + " needs " + *call +
                    ", which flyrt's NVPTX target does not provide (a flyrt bug: please report it)");
            }
            if (llvm_ir_out != nullptr)
            {
                llvm::raw_string_ostream stream(*llvm_ir_out);
                kernel.print(stream, nullptr);
            }
            // Sinking moves a checked store's operands into its in-bounds branch, and with them
            // their inputs' live ranges across every check before it; ptxas schedules within
            // blocks. PA decode's checked kernels spilled 344-448 bytes with it, none without.
            return emit(kernel, *nvptx->machine, llvm::CodeGenFileType::AssemblyFile, machine_sinking::off);
        });
}

} // namespace flyrt::jit
