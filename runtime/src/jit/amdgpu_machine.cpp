#include "amdgpu_machine.hpp"

#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <llvm/ADT/SmallString.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include "machine_cache.hpp"
#include "optimizer.hpp"
#include "part_memo.hpp"

extern "C" void LLVMInitializeAMDGPUTargetInfo();
extern "C" void LLVMInitializeAMDGPUTarget();
extern "C" void LLVMInitializeAMDGPUTargetMC();
extern "C" void LLVMInitializeAMDGPUAsmPrinter();

namespace flyrt::jit
{
namespace
{

struct amdgpu_machine
{
    std::unique_ptr<llvm::TargetMachine> machine;
    std::mutex mutex;

    explicit amdgpu_machine(const target& gpu)
    {
        static std::once_flag once;
        std::call_once(once,
                       []
                       {
                           LLVMInitializeAMDGPUTargetInfo();
                           LLVMInitializeAMDGPUTarget();
                           LLVMInitializeAMDGPUTargetMC();
                           LLVMInitializeAMDGPUAsmPrinter();
                       });
        std::string problem;
        const llvm::Target* found = llvm::TargetRegistry::lookupTarget(gpu.triple, problem);
        if (found == nullptr)
        {
            throw std::runtime_error("this LLVM has no AMDGPU backend: " + problem);
        }
        machine.reset(found->createTargetMachine(gpu.triple,
                                                 gpu.cpu,
                                                 gpu.features,
                                                 llvm::TargetOptions(),
                                                 llvm::Reloc::PIC_,
                                                 std::nullopt,
                                                 llvm::CodeGenOptLevel::Aggressive));
        if (!machine)
        {
            throw std::runtime_error("cannot create an AMDGPU target machine for " + gpu.cpu);
        }
    }
};

// A call to a function no code object provides: flyrt links no device library.
std::optional<std::string> unresolved_call(const llvm::Module& module)
{
    for (const llvm::Function& f : module)
    {
        if (f.isDeclaration() && !f.use_empty() && !f.isIntrinsic())
        {
            return f.getName().str();
        }
    }
    return std::nullopt;
}

// A file in the temporary directory, removed when this goes.
class temporary_file
{
public:
    explicit temporary_file(const char* suffix)
    {
        if (llvm::sys::fs::createTemporaryFile("flyrt-amdgpu", suffix, m_path))
        {
            throw std::runtime_error("cannot create a temporary file for ld.lld");
        }
    }
    ~temporary_file() { llvm::sys::fs::remove(m_path); }
    temporary_file(const temporary_file&) = delete;
    temporary_file& operator=(const temporary_file&) = delete;

    std::string path() const { return std::string(m_path.str()); }

    void write(const std::string& bytes) const
    {
        std::ofstream out(path(), std::ios::binary);
        out << bytes;
        if (!out)
        {
            throw std::runtime_error("cannot write " + path());
        }
    }

    std::string read() const
    {
        std::ifstream in(path(), std::ios::binary);
        std::ostringstream bytes;
        bytes << in.rdbuf();
        return bytes.str();
    }

private:
    llvm::SmallString<128> m_path;
};

std::string link_code_object(const std::string& object, const std::string& kernel)
{
    const std::string lld = linker_path();
    if (lld.empty())
    {
        throw std::runtime_error(
            "AMD code objects are linked by LLVM's ld.lld, and none was found (ROCm's "
            "$ROCM_PATH/llvm/bin has one; or install lld, or set FLYDSL_LLD to an ld.lld)");
    }
    temporary_file input(".o"), output(".hsaco"), log(".log");
    input.write(object);
    // (the arguments are views: the strings they view live until the call ends)
    const std::string in = input.path(), out = output.path(), messages = log.path();
    llvm::SmallVector<llvm::StringRef, 8> arguments{lld, "-shared", "--no-undefined", "-o", out, in};
    const std::optional<llvm::StringRef> redirects[] = {std::nullopt, messages, messages};
    std::string problem;
    const int status = llvm::sys::ExecuteAndWait(lld, arguments, std::nullopt, redirects, 0, 0, &problem);
    if (status != 0)
    {
        throw std::runtime_error("ld.lld could not link kernel " + kernel + " into a code object" +
                                 (problem.empty() ? "" : ": " + problem) + "\n" + log.read());
    }
    return output.read();
}

} // namespace

std::string linker_path()
{
    if (const char* chosen = std::getenv("FLYDSL_LLD"); chosen != nullptr && *chosen != '\0')
    {
        return chosen;
    }
    // The LLVM flyrt was built with, then PATH, then ROCm's own (a wheel's user on a ROCm machine).
    const char* rocm = std::getenv("ROCM_PATH");
    const std::string rocm_tools =
        std::string(rocm != nullptr && *rocm != '\0' ? rocm : "/opt/rocm") + "/llvm/bin";
    for (const char* name : {"ld.lld-19", "ld.lld"})
    {
        if (auto found = llvm::sys::findProgramByName(name, {FLYRT_LLVM_TOOLS_DIR}))
        {
            return *found;
        }
        if (auto found = llvm::sys::findProgramByName(name))
        {
            return *found;
        }
        if (auto found = llvm::sys::findProgramByName(name, {rocm_tools}))
        {
            return *found;
        }
    }
    return "";
}

std::string compile_code_object(llvm::Module& kernel, const target& gpu, std::string* llvm_ir_out)
{
    amdgpu_machine& amdgpu = machine_for<amdgpu_machine>(gpu);
    std::lock_guard<std::mutex> lock(amdgpu.mutex);
    kernel.setDataLayout(amdgpu.machine->createDataLayout());
    kernel.setTargetTriple(gpu.triple);
    kernel.addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", 500);
    const std::string key = llvm_ir_out == nullptr ? digest_of(kernel, gpu.id()) : "";
    return part_memo::instance().memoized(
        key,
        [&]
        {
            optimize(kernel, *amdgpu.machine, true);
            if (std::optional<std::string> call = unresolved_call(kernel))
            {
                throw std::runtime_error(
                    "kernel " + kernel.getName().str() + " needs " + *call +
                    ", which flyrt's amdgpu target does not provide (a flyrt bug: please "
                    "report it)");
            }
            if (llvm_ir_out != nullptr)
            {
                llvm::raw_string_ostream stream(*llvm_ir_out);
                kernel.print(stream, nullptr);
            }
            return link_code_object(emit(kernel, *amdgpu.machine, llvm::CodeGenFileType::ObjectFile),
                                    kernel.getName().str());
        });
}

} // namespace flyrt::jit
