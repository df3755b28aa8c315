#include "ptx_assembler.hpp"

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace flyrt::jit
{
namespace
{

using handle = void*; // nvJitLinkHandle
constexpr int success = 0;
constexpr int input_ptx = 2; // NVJITLINK_INPUT_PTX

// nvJitLink's C API, opened at run time: flyrt links nothing of CUDA's.
class nvjitlink
{
public:
    explicit nvjitlink(const std::string& path)
        : m_path(path),
          m_library(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL), [](void* library) { dlclose(library); })
    {
        if (!m_library)
        {
            const char* why = dlerror();
            m_problem = "cannot open nvJitLink at " + path + (why != nullptr ? ": " + std::string(why) : "");
            return;
        }
        const bool found = bind(m_create, "nvJitLinkCreate") && bind(m_destroy, "nvJitLinkDestroy") &&
                           bind(m_add_data, "nvJitLinkAddData") && bind(m_complete, "nvJitLinkComplete") &&
                           bind(m_cubin_size, "nvJitLinkGetLinkedCubinSize") &&
                           bind(m_cubin, "nvJitLinkGetLinkedCubin");
        if (!found)
        {
            m_problem = path + " is not an nvJitLink of CUDA 12 or 13 (its functions are missing)";
        }
    }

    const std::string& path() const { return m_path; }
    const std::string& problem() const { return m_problem; }

    std::string assemble(const std::string& ptx, const std::string& arch) const
    {
        const std::string arch_option = "-arch=" + arch;
        // -lineinfo: the PTX's .loc kept, as the driver's CU_JIT_GENERATE_LINE_INFO keeps them.
        const char* options[] = {arch_option.c_str(), "-lineinfo"};
        handle link = nullptr;
        if (m_create(&link, 2, options) != success)
        {
            return "";
        }
        std::string cubin;
        std::size_t size = 0;
        if (m_add_data(link, input_ptx, ptx.data(), ptx.size(), "flyrt.ptx") == success &&
            m_complete(link) == success && m_cubin_size(link, &size) == success)
        {
            cubin.resize(size);
            if (m_cubin(link, cubin.data()) != success)
            {
                cubin.clear();
            }
        }
        m_destroy(&link);
        return cubin;
    }

private:
    // The entry points carry the version they appeared in (cuda.h's way):
    // the first release of each major version has them all.
    template <class F> bool bind(F& slot, const std::string& name)
    {
        for (const char* version : {"_13_0", "_12_0"})
        {
            if (void* symbol = dlsym(m_library.get(), ("__" + name + version).c_str()))
            {
                slot = reinterpret_cast<F>(symbol);
                return true;
            }
        }
        return false;
    }

    std::string m_path;
    std::unique_ptr<void, void (*)(void*)> m_library;
    std::string m_problem;
    int (*m_create)(handle*, std::uint32_t, const char**) = nullptr;
    int (*m_destroy)(handle*) = nullptr;
    int (*m_add_data)(handle, int, const void*, std::size_t, const char*) = nullptr;
    int (*m_complete)(handle) = nullptr;
    int (*m_cubin_size)(handle, std::size_t*) = nullptr;
    int (*m_cubin)(handle, void*) = nullptr;
};

struct assembler_state
{
    std::mutex mutex;
    std::string path;
    std::shared_ptr<const nvjitlink> library; // opened from `path` on first use
};

assembler_state& state()
{
    static assembler_state s;
    return s;
}

// The library to assemble with (null: none), opened on first use; each
// compile thread keeps its own reference while a new path may be set.
std::shared_ptr<const nvjitlink> library()
{
    assembler_state& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.library && !s.path.empty())
    {
        s.library = std::make_shared<const nvjitlink>(s.path);
    }
    return s.library && s.library->problem().empty() ? s.library : nullptr;
}

// Cubins by the PTX they were assembled from: a kernel whose PTX an edit left
// as it was (its compile reused) is not assembled again either.
part_memo& assembled_cubins()
{
    static part_memo memo;
    return memo;
}

std::string cubin_key(const std::string& ptx_digest, const std::string& arch, const std::string& library_path)
{
    return ptx_digest.empty() ? "" : ptx_digest + '\0' + arch + '\0' + library_path;
}

} // namespace

void set_ptx_assembler_path(const std::string& path)
{
    assembler_state& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (path != s.path)
    {
        s.path = path;
        s.library.reset();
    }
}

std::string ptx_assembler_path()
{
    assembler_state& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    return s.path;
}

std::string ptx_assembler_problem()
{
    library();
    assembler_state& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    return s.library ? s.library->problem() : "";
}

std::string assemble_ptx(const std::string& ptx, const std::string& ptx_digest, const std::string& arch)
{
    const std::shared_ptr<const nvjitlink> assembler = library();
    if (!assembler)
    {
        return "";
    }
    const std::string key = cubin_key(ptx_digest, arch, assembler->path());
    return assembled_cubins().memoized(key, [&] { return assembler->assemble(ptx, arch); }).code;
}

void remember_cubin(const std::string& ptx_digest, const std::string& arch, const std::string& cubin)
{
    const std::string path = ptx_assembler_path();
    if (!path.empty() && !cubin.empty() && !ptx_digest.empty())
    {
        assembled_cubins().remember(cubin_key(ptx_digest, arch, path), cubin);
    }
}

part_counts assembled_cubin_counts()
{
    return assembled_cubins().counts();
}

} // namespace flyrt::jit
