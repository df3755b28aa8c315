#include "nvptx_machine.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

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

std::mutex g_libdevice_mutex;
std::string g_libdevice_path;

struct nvptx_machine
{
    std::unique_ptr<llvm::TargetMachine> machine;
    std::mutex mutex;

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

std::string libdevice_path()
{
    std::lock_guard<std::mutex> lock(g_libdevice_mutex);
    return g_libdevice_path;
}

bool calls_libdevice(const llvm::Module& module)
{
    for (const llvm::Function& f : module)
    {
        if (f.isDeclaration() && f.getName().starts_with("__nv_"))
        {
            return true;
        }
    }
    return false;
}

// Links the libdevice functions the kernel calls and makes them internal, so
// that O3 inlines them and drops the rest.
void link_libdevice(llvm::Module& module)
{
    const std::string path = libdevice_path();
    if (path.empty())
    {
        throw std::runtime_error(
            "kernel " + module.getName().str() +
            " uses Float64 exp or log, which on NVIDIA GPUs come from CUDA's libdevice.10.bc; none was found "
            "(set FLYDSL_LIBDEVICE to its path, or compute in Float32)");
    }
    llvm::SMDiagnostic problem;
    std::unique_ptr<llvm::Module> library = llvm::parseIRFile(path, problem, module.getContext());
    if (!library)
    {
        throw std::runtime_error("cannot read libdevice " + path + ": " + problem.getMessage().str());
    }
    library->setTargetTriple(module.getTargetTriple());
    library->setDataLayout(module.getDataLayout());
    if (llvm::Linker::linkModules(module, std::move(library), llvm::Linker::LinkOnlyNeeded))
    {
        throw std::runtime_error("cannot link libdevice " + path + " into kernel " + module.getName().str());
    }
    for (llvm::Function& f : module)
    {
        if (!f.isDeclaration() && f.getCallingConv() != llvm::CallingConv::PTX_Kernel)
        {
            f.setLinkage(llvm::GlobalValue::InternalLinkage);
        }
    }
    // libdevice asks NVVMReflect whether to flush subnormals: no.
    module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", std::uint32_t(0));
}

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

} // namespace

void set_libdevice_path(const std::string& path)
{
    std::lock_guard<std::mutex> lock(g_libdevice_mutex);
    g_libdevice_path = path;
}

std::string compile_ptx(llvm::Module& kernel, const target& gpu, std::string* llvm_ir_out)
{
    nvptx_machine& nvptx = machine_for<nvptx_machine>(gpu);
    std::lock_guard<std::mutex> lock(nvptx.mutex);
    kernel.setDataLayout(nvptx.machine->createDataLayout());
    kernel.setTargetTriple(gpu.triple);
    const bool wants_libdevice = calls_libdevice(kernel);
    const std::string key =
        llvm_ir_out == nullptr ? digest_of(kernel, gpu.id() + (wants_libdevice ? libdevice_path() : "")) : "";
    return part_memo::instance().memoized(
        key,
        [&]
        {
            if (wants_libdevice)
            {
                link_libdevice(kernel);
            }
            optimize(kernel, *nvptx.machine, true);
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
            return emit(kernel, *nvptx.machine, llvm::CodeGenFileType::AssemblyFile);
        });
}

} // namespace flyrt::jit
