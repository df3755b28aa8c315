// LLVM's error diagnostics (an AMD kernel's LDS over its limit, ...) as
// exceptions: with no handler of its own, LLVM prints them and calls
// exit(1), which would end the user's notebook kernel.
#pragma once

#include <string>
#include <vector>

namespace llvm
{
class LLVMContext;
}

namespace flyrt::jit
{

// While it lives, `context`'s error diagnostics are collected, not fatal;
// warnings are printed to stderr, as LLVM prints them.
class llvm_error_collector
{
public:
    explicit llvm_error_collector(llvm::LLVMContext& context);
    ~llvm_error_collector();

    llvm_error_collector(const llvm_error_collector&) = delete;
    llvm_error_collector& operator=(const llvm_error_collector&) = delete;

private:
    llvm::LLVMContext& m_context;
    std::vector<std::string> m_errors;

    friend void throw_llvm_errors(llvm::LLVMContext& context, const std::string& what);
};

// Throws std::runtime_error naming `what` and the errors `context` collected
// since the last call (which it forgets), if there are any. Called before a
// compiled part is kept, so that a part whose compile failed never is.
void throw_llvm_errors(llvm::LLVMContext& context, const std::string& what);

} // namespace flyrt::jit
