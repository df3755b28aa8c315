#include "amdgpu_machine.hpp"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <llvm/ADT/SmallString.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include "device_library.hpp"
#include "machine_cache.hpp"
#include "optimizer.hpp"
#include "part_memo.hpp"

extern "C" void LLVMInitializeAMDGPUTargetInfo();
extern "C" void LLVMInitializeAMDGPUTarget();
extern "C" void LLVMInitializeAMDGPUTargetMC();
extern "C" void LLVMInitializeAMDGPUAsmPrinter();
extern "C" void LLVMInitializeAMDGPUAsmParser();

namespace flyrt::jit
{
namespace
{

struct amdgpu_machine
{
    std::unique_ptr<llvm::TargetMachine> machine;

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
                           // ockl's hostcall (printf) is inline assembly the object streamer parses.
                           LLVMInitializeAMDGPUAsmParser();
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

// "gfx942" (major 9, minor 4, stepping 2) -> 9402, as oclc_isa_version_*.bc
// number them; a generic target ("gfx9-generic") -> its major version's.
int ocml_isa_version(const std::string& cpu)
{
    const std::string name = cpu.substr(3);
    const bool numbered = name.size() >= 3 && name.find('-') == std::string::npos &&
                          std::isxdigit(static_cast<unsigned char>(name[name.size() - 1])) &&
                          std::isxdigit(static_cast<unsigned char>(name[name.size() - 2]));
    if (!numbered)
    {
        return std::atoi(name.c_str()) * 1000;
    }
    return std::atoi(name.substr(0, name.size() - 2).c_str()) * 1000 +
           std::stoi(name.substr(name.size() - 2, 1), nullptr, 16) * 100 +
           std::stoi(name.substr(name.size() - 1), nullptr, 16);
}

// The control constants ocml and ockl read (what ROCm's oclc_*.bc libraries
// define): IEEE results, no flushing of subnormals, the architecture's
// version and wave size.
void define_device_library_controls(llvm::Module& kernel, const target& gpu)
{
    const int isa_version = ocml_isa_version(gpu.cpu);
    const std::pair<const char*, int> controls[] = {{"__oclc_unsafe_math_opt", 0},
                                                    {"__oclc_daz_opt", 0},
                                                    {"__oclc_finite_only_opt", 0},
                                                    {"__oclc_correctly_rounded_sqrt32", 1},
                                                    {"__oclc_wavefrontsize64", gpu.warp_size == 64 ? 1 : 0},
                                                    {"__oclc_ISA_version", isa_version},
                                                    {"__oclc_ABI_version", 500}};
    for (const auto& [name, value] : controls)
    {
        llvm::GlobalVariable* control = kernel.getGlobalVariable(name);
        if (control != nullptr && control->isDeclaration())
        {
            control->setInitializer(llvm::ConstantInt::get(control->getValueType(), value));
            control->setConstant(true);
            control->setLinkage(llvm::GlobalValue::InternalLinkage);
        }
    }
}

// ocml's functions carry no target-cpu; without the kernel's they count as
// incompatible with it and are never inlined (clang stamps its builtins so).
void stamp_target(llvm::Module& kernel, const target& gpu)
{
    for (llvm::Function& f : kernel)
    {
        if (f.isDeclaration())
        {
            continue;
        }
        f.addFnAttr("target-cpu", gpu.cpu);
        if (!gpu.features.empty())
        {
            const llvm::Attribute features = f.getFnAttribute("target-features");
            f.addFnAttr("target-features",
                        features.isValid() ? features.getValueAsString().str() + "," + gpu.features
                                           : gpu.features);
        }
    }
}

// A call to a function no code object provides.
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

void set_ocml_path(const std::string& path)
{
    ocml().set_path(path);
    llvm::SmallString<256> beside(path);
    llvm::sys::path::remove_filename(beside);
    llvm::sys::path::append(beside, "ockl.bc");
    ockl().set_path(!path.empty() && llvm::sys::fs::exists(beside) ? std::string(beside) : "");
}

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

compiled_part compile_code_object(llvm::Module& kernel, const target& gpu, std::string* llvm_ir_out)
{
    const machine_lease<amdgpu_machine> amdgpu(gpu);
    kernel.setDataLayout(amdgpu->machine->createDataLayout());
    kernel.setTargetTriple(gpu.triple);
    kernel.addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", 500);
    const bool wants_ocml = ocml().called_by(kernel);
    const bool wants_ockl = ockl().called_by(kernel);
    const std::string key =
        llvm_ir_out == nullptr
            ? digest_of(kernel,
                        gpu.id() + (wants_ocml ? ocml().path() : "") + (wants_ockl ? ockl().path() : ""))
            : "";
    return part_memo::instance().memoized(
        key,
        [&]
        {
            if (wants_ocml)
            {
                ocml().link_into(kernel, llvm::CallingConv::AMDGPU_KERNEL, "sin, cos, tanh, erf or pow");
            }
            if (wants_ockl)
            {
                ockl().link_into(kernel, llvm::CallingConv::AMDGPU_KERNEL, "fx.printf");
            }
            if (wants_ocml || wants_ockl)
            {
                define_device_library_controls(kernel, gpu);
                stamp_target(kernel, gpu);
            }
            optimize(kernel, *amdgpu->machine, true);
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
            return link_code_object(emit(kernel, *amdgpu->machine, llvm::CodeGenFileType::ObjectFile),
                                    kernel.getName().str());
        });
}

} // namespace flyrt::jit
