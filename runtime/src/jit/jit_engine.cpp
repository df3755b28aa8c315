#include "jit_engine.hpp"

#include <atomic>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include "../codegen/cpu_codegen.hpp"
#include "../launch/cpu_launch.hpp"
#include "module_split.hpp"
#include "object_bundle.hpp"

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

void initialize_llvm()
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

// One target machine for all compiles; LLVM's passes only read it, but
// emission is serialized to stay on the safe side.
struct host_machine
{
    std::unique_ptr<llvm::TargetMachine> machine;
    std::string id;
    std::mutex mutex;

    host_machine()
    {
        initialize_llvm();
        auto builder = take(llvm::orc::JITTargetMachineBuilder::detectHost(), "cannot describe this CPU");
        builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
        machine = take(builder.createTargetMachine(), "cannot create a target machine");
        id = machine->getTargetTriple().str() + "/" + machine->getTargetCPU().str() + "/" +
             machine->getTargetFeatureString().str();
    }
};

host_machine& host()
{
    static host_machine instance;
    return instance;
}

llvm::orc::LLJIT& engine()
{
    static std::unique_ptr<llvm::orc::LLJIT> instance = []
    {
        initialize_llvm();
        return take(llvm::orc::LLJITBuilder().create(), "cannot start the JIT");
    }();
    return *instance;
}

void optimize(llvm::Module& module, llvm::TargetMachine& machine)
{
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager cgscc;
    llvm::ModuleAnalysisManager modules;
    // O3 without LLVM's partial and runtime loop unroller: a quarter less compile
    // time (PA decode's recompile 153 -> 125 ms), kernels within a few percent
    // (their hot loops are vectorized and traced loops fully unrolled anyway).
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = false;
    llvm::PassBuilder builder(&machine, tuning);
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(cgscc);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, cgscc, modules);
    builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, modules);
}

std::string emit_object(llvm::Module& module, llvm::TargetMachine& machine)
{
    llvm::SmallVector<char, 0> object;
    llvm::raw_svector_ostream stream(object);
    llvm::legacy::PassManager emit;
    if (machine.addPassesToEmitFile(emit, stream, nullptr, llvm::CodeGenFileType::ObjectFile))
    {
        throw std::runtime_error("LLVM cannot emit objects for this CPU");
    }
    emit.run(module);
    return std::string(object.begin(), object.end());
}

std::string digest_of(const llvm::Module& module)
{
    std::string text;
    llvm::raw_string_ostream stream(text);
    module.print(stream, nullptr);
    stream.flush();
    llvm::SHA256 sha;
    sha.update(text);
    const auto digest = sha.final();
    return std::string(digest.begin(), digest.end());
}

// Objects of the module parts compiled in this process, by a digest of their
// IR before optimization: a launcher or kernel whose IR did not change since
// is not compiled again (a helper edit recompiles the kernels that inline it).
class part_memo
{
public:
    std::optional<std::string> find(const std::string& key)
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        auto found = m_objects.find(key);
        if (found == m_objects.end())
        {
            ++m_counts.compiled;
            return std::nullopt;
        }
        ++m_counts.reused;
        return found->second;
    }

    part_counts counts()
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_counts;
    }

    void add(const std::string& key, const std::string& object)
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (!m_objects.emplace(key, object).second)
        {
            return;
        }
        m_order.push_back(key);
        if (m_order.size() > capacity)
        {
            m_objects.erase(m_order.front());
            m_order.pop_front();
        }
    }

private:
    static constexpr std::size_t capacity = 256;
    std::mutex m_mutex;
    std::unordered_map<std::string, std::string> m_objects;
    std::deque<std::string> m_order; // oldest first
    part_counts m_counts;
};

part_memo& compiled_parts()
{
    static part_memo instance;
    return instance;
}

} // namespace

const std::string& host_target_id()
{
    return host().id;
}

part_counts compiled_part_counts()
{
    return compiled_parts().counts();
}

std::string compile_to_objects(const ir::module& m, std::string* llvm_ir_out)
{
    host_machine& target = host();
    llvm::LLVMContext context;
    std::unique_ptr<llvm::Module> module = codegen::emit_cpu_module(m, context);
    std::lock_guard<std::mutex> lock(target.mutex);
    module->setDataLayout(target.machine->createDataLayout());
    module->setTargetTriple(target.machine->getTargetTriple().str());
    for (llvm::Function& f : *module)
    {
        if (!f.isDeclaration())
        {
            f.addFnAttr("target-cpu", target.machine->getTargetCPU());
            f.addFnAttr("target-features", target.machine->getTargetFeatureString());
        }
    }
    std::vector<std::unique_ptr<llvm::Module>> parts = split_by_function(*module);
    if (parts.empty())
    {
        parts.push_back(std::move(module));
    }
    std::vector<std::string> objects;
    for (std::unique_ptr<llvm::Module>& part : parts)
    {
        // Inspection wants every part's optimized IR: compile them all then.
        const std::string key = llvm_ir_out == nullptr ? digest_of(*part) : std::string();
        if (std::optional<std::string> known = key.empty() ? std::nullopt : compiled_parts().find(key))
        {
            objects.push_back(std::move(*known));
            continue;
        }
        optimize(*part, *target.machine);
        if (llvm_ir_out != nullptr)
        {
            llvm::raw_string_ostream stream(*llvm_ir_out);
            part->print(stream, nullptr);
        }
        objects.push_back(emit_object(*part, *target.machine));
        if (!key.empty())
        {
            compiled_parts().add(key, objects.back());
        }
    }
    return pack_objects(objects);
}

loaded_object::loaded_object(const std::string& object_bundle)
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
    // libm (expf, ...) from the process; the launch entry point from flyrt.
    m_dylib->addGenerator(take(
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit.getDataLayout().getGlobalPrefix()),
        "cannot search the process for symbols"));
    llvm::orc::SymbolMap runtime;
    runtime[jit.mangleAndIntern(codegen::launch_symbol)] = {
        llvm::orc::ExecutorAddr::fromPtr(&flyrt_cpu_launch), llvm::JITSymbolFlags::Exported};
    runtime[jit.mangleAndIntern(codegen::report_symbol)] = {
        llvm::orc::ExecutorAddr::fromPtr(&flyrt_report_error), llvm::JITSymbolFlags::Exported};
    if (auto error = m_dylib->define(llvm::orc::absoluteSymbols(std::move(runtime))))
    {
        throw std::runtime_error("cannot define runtime symbols: " + message_of(std::move(error)));
    }
    for (std::string_view object : unpack_objects(object_bundle))
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
