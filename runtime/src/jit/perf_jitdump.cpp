#include "perf_jitdump.hpp"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/Debugging/DebugInfoSupport.h>
#include <llvm/ExecutionEngine/Orc/Debugging/PerfSupportPlugin.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/Orc/Shared/PerfSharedStructs.h>
#include <llvm/ExecutionEngine/Orc/Shared/WrapperFunctionUtils.h>
#include <llvm/ExecutionEngine/Orc/TargetProcess/JITLoaderPerf.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

namespace flyrt::jit
{
namespace
{

// perf's jitdump header: magic, version, size, ELF machine, padding, pid
// (4 bytes each), timestamp (8), then the flags.
constexpr off_t header_flags_offset = 32;

// Where LLVM's perf loader writes (JITDUMPDIR, else the home directory, then
// .debug/jit/ as perf's own tools expect). Checked here because the loader
// aborts the process when it cannot start.
void check_dump_directory()
{
    llvm::SmallString<256> path;
    if (const char* base = std::getenv("JITDUMPDIR"))
    {
        path = base;
    }
    else if (!llvm::sys::path::home_directory(path))
    {
        path = ".";
    }
    llvm::sys::path::append(path, ".debug", "jit");
    if (std::error_code error = llvm::sys::fs::create_directories(path))
    {
        throw std::runtime_error("FLYDSL_PERF_JITDUMP=1: cannot create " + std::string(path) + ": " +
                                 error.message() + " (JITDUMPDIR chooses another directory)");
    }
    if (::access(path.c_str(), W_OK | X_OK) != 0)
    {
        throw std::runtime_error("FLYDSL_PERF_JITDUMP=1: cannot write in " + std::string(path) +
                                 " (JITDUMPDIR chooses another directory)");
    }
}

// LLVM 19's loader leaves the dump header's flags unset (stack bytes; later LLVMs
// set them), and `perf inject --jit` refuses such a file. The header
// reaches the file with the first batch, so after each batch the flags are
// written as the loader means them: 0, timestamps from CLOCK_MONOTONIC.
void zero_header_flags()
{
    static std::atomic<bool> done{false};
    if (done)
    {
        return;
    }
    const std::string name = "jit-" + std::to_string(::getpid()) + ".dump";
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error))
    {
        std::filesystem::path target = std::filesystem::read_symlink(entry.path(), error);
        if (error || target.filename() != name)
        {
            continue;
        }
        const std::uint64_t flags = 0;
        int file = ::open(entry.path().c_str(), O_WRONLY);
        if (file >= 0)
        {
            done = ::pwrite(file, &flags, sizeof flags, header_flags_offset) == sizeof flags;
            ::close(file);
        }
        return;
    }
}

// LLVM 19's plugin adds 0x40 to every line entry's address, for perf versions
// that placed a dump's code 0x40 bytes further into the ELF file they make of
// it than they placed its line table. perf has since placed both at its own
// offset ("perf inject: Fix GEN_ELF_TEXT_OFFSET for jit", Linux 6.7 and the
// stable kernels' perf, Debian 12's among them), so the entries are put back
// at the addresses of their code, as the jitdump format defines them: else
// every line reads 0x40 bytes late, and a hot loop is attributed to the lines
// before it.
constexpr std::uint64_t llvm_line_entry_shift = 0x40;
static_assert(LLVM_VERSION_MAJOR == 19,
              "check whether this LLVM's PerfSupportPlugin still shifts line entries");

llvm::orc::shared::CWrapperFunctionResult register_batch(const char* data, std::size_t size)
{
    using Batch = llvm::orc::shared::SPSArgList<llvm::orc::shared::SPSPerfJITRecordBatch>;
    llvm::orc::PerfJITRecordBatch batch;
    llvm::orc::shared::SPSInputBuffer input(data, size);
    if (!Batch::deserialize(input, batch))
    {
        return llvm::orc::shared::WrapperFunctionResult::createOutOfBandError(
                   "flyrt: a perf record batch that does not parse")
            .release();
    }
    for (auto& record : batch.DebugInfoRecords)
    {
        for (auto& entry : record.Entries)
        {
            entry.Addr -= llvm_line_entry_shift;
        }
    }
    std::vector<char> corrected(Batch::size(batch));
    llvm::orc::shared::SPSOutputBuffer output(corrected.data(), corrected.size());
    Batch::serialize(output, batch);
    auto result = llvm_orc_registerJITLoaderPerfImpl(corrected.data(), corrected.size());
    zero_header_flags();
    return result;
}

std::string message_of(llvm::Error error)
{
    std::string text;
    llvm::raw_string_ostream stream(text);
    stream << error;
    return stream.str();
}

} // namespace

bool perf_jitdump_requested()
{
    const char* value = std::getenv("FLYDSL_PERF_JITDUMP");
    return value != nullptr && std::string(value) == "1";
}

void enable_perf_jitdump(llvm::orc::LLJIT& jit)
{
    auto* linker = llvm::dyn_cast<llvm::orc::ObjectLinkingLayer>(&jit.getObjLinkingLayer());
    if (linker == nullptr)
    {
        throw std::runtime_error("FLYDSL_PERF_JITDUMP=1: this JIT does not link with JITLink");
    }
    check_dump_directory();
    // The loader's entry points are in this process (LLVM's target-process
    // library); the plugin finds them by name in a library of their own.
    auto& session = jit.getExecutionSession();
    llvm::orc::JITDylib& loader = session.createBareJITDylib("flyrt.perf");
    llvm::orc::SymbolMap entries;
    auto add = [&](const char* name, auto* function)
    {
        entries[session.intern(name)] = {llvm::orc::ExecutorAddr::fromPtr(function),
                                         llvm::JITSymbolFlags::Exported};
    };
    add("llvm_orc_registerJITLoaderPerfStart", &llvm_orc_registerJITLoaderPerfStart);
    add("llvm_orc_registerJITLoaderPerfEnd", &llvm_orc_registerJITLoaderPerfEnd);
    add("llvm_orc_registerJITLoaderPerfImpl", &register_batch);
    if (auto error = loader.define(llvm::orc::absoluteSymbols(std::move(entries))))
    {
        throw std::runtime_error("FLYDSL_PERF_JITDUMP=1: " + message_of(std::move(error)));
    }
    // Debug sections are kept (JITLink drops what nothing references) so that
    // the plugin can read the line tables. No unwind records: perf annotate
    // does not need them, and LLVM 19 logs each one to stderr.
    linker->addPlugin(std::make_unique<llvm::orc::DebugInfoPreservationPlugin>());
    auto plugin = llvm::orc::PerfSupportPlugin::Create(session.getExecutorProcessControl(),
                                                       loader,
                                                       /*EmitDebugInfo=*/true,
                                                       /*EmitUnwindInfo=*/false);
    if (!plugin)
    {
        throw std::runtime_error("FLYDSL_PERF_JITDUMP=1: " + message_of(plugin.takeError()));
    }
    linker->addPlugin(std::move(*plugin));
}

} // namespace flyrt::jit
