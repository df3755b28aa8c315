#include "device_library.hpp"

#include <memory>
#include <stdexcept>
#include <utility>

#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/SourceMgr.h>

namespace flyrt::jit
{

device_library::device_library(std::string name, std::string prefix, std::string remedy)
    : m_name(std::move(name)), m_prefix(std::move(prefix)), m_remedy(std::move(remedy))
{
}

void device_library::set_path(const std::string& path)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_path = path;
}

std::string device_library::path() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_path;
}

bool device_library::called_by(const llvm::Module& kernel) const
{
    for (const llvm::Function& f : kernel)
    {
        if (f.isDeclaration() && f.getName().starts_with(m_prefix))
        {
            return true;
        }
    }
    return false;
}

void device_library::link_into(llvm::Module& kernel,
                               unsigned kernel_calling_convention,
                               const std::string& needs) const
{
    const std::string library_path = path();
    if (library_path.empty())
    {
        throw std::runtime_error("kernel " + kernel.getName().str() + " uses " + needs +
                                 ", which comes from " + m_name + "; none was found (" + m_remedy + ")");
    }
    llvm::SMDiagnostic problem;
    std::unique_ptr<llvm::Module> library = llvm::parseIRFile(library_path, problem, kernel.getContext());
    if (!library)
    {
        throw std::runtime_error("cannot read " + m_name + " at " + library_path + ": " +
                                 problem.getMessage().str());
    }
    library->setTargetTriple(kernel.getTargetTriple());
    library->setDataLayout(kernel.getDataLayout());
    if (llvm::Linker::linkModules(kernel, std::move(library), llvm::Linker::LinkOnlyNeeded))
    {
        throw std::runtime_error("cannot link " + m_name + " (" + library_path + ") into kernel " +
                                 kernel.getName().str());
    }
    for (llvm::Function& f : kernel)
    {
        if (!f.isDeclaration() && f.getCallingConv() != kernel_calling_convention)
        {
            f.setLinkage(llvm::GlobalValue::InternalLinkage);
        }
    }
}

device_library& libdevice()
{
    static device_library library(
        "CUDA's libdevice.10.bc",
        "__nv_",
        "set FLYDSL_LIBDEVICE to its path, or pip install nvidia-cuda-nvcc-cu12, which ships one");
    return library;
}

device_library& ocml()
{
    static device_library library(
        "ROCm's device library ocml.bc",
        "__ocml_",
        "set FLYDSL_OCML to its path, or ROCM_PATH to a ROCm whose amdgcn/bitcode holds "
        "it; Debian's and Ubuntu's rocm-device-libs package installs one");
    return library;
}

device_library& ockl()
{
    static device_library library(
        "ROCm's device library ockl.bc",
        "__ockl_",
        "it is looked for beside ocml.bc: set FLYDSL_OCML to the ocml.bc of a ROCm whose "
        "amdgcn/bitcode holds both");
    return library;
}

} // namespace flyrt::jit
