#include "llvm_diagnostics.hpp"

#include <stdexcept>

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Support/raw_ostream.h>

namespace flyrt::jit
{
namespace
{

std::string text_of(const llvm::DiagnosticInfo& info)
{
    std::string text;
    llvm::raw_string_ostream stream(text);
    llvm::DiagnosticPrinterRawOStream printer(stream);
    info.print(printer);
    return stream.str();
}

void collect(const llvm::DiagnosticInfo* info, void* errors)
{
    switch (info->getSeverity())
    {
    case llvm::DS_Error:
        static_cast<std::vector<std::string>*>(errors)->push_back(text_of(*info));
        break;
    case llvm::DS_Warning:
        llvm::errs() << "warning: " << text_of(*info) << "\n";
        break;
    default: // remarks and notes: LLVM prints them only when asked
        break;
    }
}

} // namespace

llvm_error_collector::llvm_error_collector(llvm::LLVMContext& context) : m_context(context)
{
    m_context.setDiagnosticHandlerCallBack(&collect, &m_errors);
}

llvm_error_collector::~llvm_error_collector()
{
    m_context.setDiagnosticHandlerCallBack(nullptr, nullptr);
}

void throw_llvm_errors(llvm::LLVMContext& context, const std::string& what)
{
    if (context.getDiagnosticHandlerCallBack() != &collect)
    {
        return; // nobody collects here: LLVM has reported them itself
    }
    auto& errors = *static_cast<std::vector<std::string>*>(context.getDiagnosticContext());
    if (errors.empty())
    {
        return;
    }
    std::string message = what + ": " + errors.front();
    for (std::size_t i = 1; i < errors.size(); ++i)
    {
        message += "; " + errors[i];
    }
    errors.clear();
    throw std::runtime_error(message);
}

} // namespace flyrt::jit
