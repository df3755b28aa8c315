#include "jit_engine.hpp"

#include <atomic>
#include <mutex>
#include <stdexcept>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include "../codegen/cpu/cpu_codegen.hpp"
#include "../codegen/cpu/cpu_lowering.hpp"
#include "../codegen/gpu/device_launch.hpp"
#include "../launch/cpu/cpu_launch.hpp"
#include "../launch/device_kernel.hpp"
#include "../launch/kernel_output.hpp"
#include "float_conversions.hpp"
#include "host_machine.hpp"
#include "perf_jitdump.hpp"

namespace flyrt::jit
{
namespace
{

std::string message_of(llvm::Error error)
{
    std::string text;
    llvm::raw_string_ostream stream(text);
    stream << error;
    return stream.str();
}

template <class T> T take(llvm::Expected<T> value, const char* what)
{
    if (!value)
    {
        throw std::runtime_error(std::string(what) + ": " + message_of(value.takeError()));
    }
    return std::move(*value);
}

llvm::orc::LLJIT& engine()
{
    static std::unique_ptr<llvm::orc::LLJIT> instance = []
    {
        initialize_native_target();
        auto jit = take(llvm::orc::LLJITBuilder().create(), "cannot start the JIT");
        if (perf_jitdump_requested())
        {
            enable_perf_jitdump(*jit);
        }
        return jit;
    }();
    return *instance;
}

} // namespace

loaded_object::loaded_object(const std::vector<std::string>& objects)
{
    static std::atomic<unsigned long> counter{0};
    llvm::orc::LLJIT& jit = engine();
    auto& session = jit.getExecutionSession();
    auto dylib = session.createJITDylib("flyrt." + std::to_string(counter++));
    if (!dylib)
    {
        throw std::runtime_error("cannot create a JIT library: " + message_of(dylib.takeError()));
    }
    m_dylib = &*dylib;
    // libm (expf, ...) from the process; the launch entry points and BFloat16 roundings from flyrt.
    m_dylib->addGenerator(take(
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit.getDataLayout().getGlobalPrefix()),
        "cannot search the process for symbols"));
    llvm::orc::SymbolMap runtime;
    runtime[jit.mangleAndIntern(codegen::cpu::launch_symbol)] = {
        llvm::orc::ExecutorAddr::fromPtr(&flyrt_cpu_launch), llvm::JITSymbolFlags::Exported};
    runtime[jit.mangleAndIntern(codegen::cpu::report_symbol)] = {
        llvm::orc::ExecutorAddr::fromPtr(&flyrt_report_error), llvm::JITSymbolFlags::Exported};
    runtime[jit.mangleAndIntern(codegen::cpu::print_symbol)] = {
        llvm::orc::ExecutorAddr::fromPtr(&flyrt_print), llvm::JITSymbolFlags::Exported};
    runtime[jit.mangleAndIntern(codegen::device_launch_symbol)] = {
        llvm::orc::ExecutorAddr::fromPtr(&flyrt_device_launch), llvm::JITSymbolFlags::Exported};
    runtime[jit.mangleAndIntern("__truncsfbf2")] = {llvm::orc::ExecutorAddr::fromPtr(&flyrt_truncsfbf2),
                                                    llvm::JITSymbolFlags::Exported};
    runtime[jit.mangleAndIntern("__truncdfbf2")] = {llvm::orc::ExecutorAddr::fromPtr(&flyrt_truncdfbf2),
                                                    llvm::JITSymbolFlags::Exported};
    if (auto error = m_dylib->define(llvm::orc::absoluteSymbols(std::move(runtime))))
    {
        throw std::runtime_error("cannot define runtime symbols: " + message_of(std::move(error)));
    }
    for (const std::string& object : objects)
    {
        auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()),
                                                           "flyrt-object");
        if (auto error = jit.addObjectFile(*m_dylib, std::move(buffer)))
        {
            throw std::runtime_error("cannot load compiled code: " + message_of(std::move(error)));
        }
    }
}

loaded_object::~loaded_object()
{
    if (auto error = engine().getExecutionSession().removeJITDylib(*m_dylib))
    {
        llvm::consumeError(std::move(error));
    }
}

void* loaded_object::address(const std::string& symbol) const
{
    auto address = take(engine().lookup(*m_dylib, symbol), "compiled code lacks a symbol");
    return address.toPtr<void*>();
}

} // namespace flyrt::jit
