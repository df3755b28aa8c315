// A GPU vendor's bitcode math library (CUDA's libdevice, ROCm's ocml), found
// by the Python side and linked into a kernel only when the kernel calls it.
// The library's functions become internal, so that O3 inlines what the
// kernel uses and drops the rest.
#pragma once

#include <mutex>
#include <string>

namespace llvm
{
class Module;
}

namespace flyrt::jit
{

class device_library
{
public:
    // `name`: how errors call it ("CUDA's libdevice.10.bc"); `prefix`: what
    // its function names start with ("__nv_"); `remedy`: how a user points
    // flyrt at one.
    device_library(std::string name, std::string prefix, std::string remedy);

    void set_path(const std::string& path);
    // "" when this machine has none.
    std::string path() const;

    // Whether `kernel` calls one of the library's functions.
    bool called_by(const llvm::Module& kernel) const;

    // Links the functions `kernel` calls. Throws, naming the library and how
    // to point flyrt at it, when none was found; `needs` says what in the
    // kernel asked for it.
    void link_into(llvm::Module& kernel, unsigned kernel_calling_convention, const std::string& needs) const;

private:
    std::string m_name;
    std::string m_prefix;
    std::string m_remedy;
    mutable std::mutex m_mutex;
    std::string m_path;
};

// CUDA's libdevice (__nv_sinf, ...), linked into NVPTX kernels.
device_library& libdevice();
// ROCm's ocml (__ocml_sin_f32, ...), linked into AMDGPU kernels.
device_library& ocml();
// ROCm's ockl (__ockl_printf_begin, ...), beside ocml: AMDGPU kernels' printf.
device_library& ockl();

} // namespace flyrt::jit
