#include "module_split.hpp"

#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Cloning.h>

namespace flyrt::jit
{

std::vector<std::unique_ptr<llvm::Module>> split_by_function(llvm::Module& module)
{
    std::vector<std::unique_ptr<llvm::Module>> parts;
    for (const llvm::GlobalVariable& variable : module.globals())
    {
        if (variable.hasLocalLinkage() && !variable.isConstant())
        {
            return parts; // copying it into each part would split its state
        }
    }
    for (llvm::Function& function : module)
    {
        if (!function.isDeclaration())
        {
            function.setLinkage(llvm::GlobalValue::ExternalLinkage);
        }
    }
    for (const llvm::Function& function : module)
    {
        if (function.isDeclaration())
        {
            continue;
        }
        llvm::ValueToValueMapTy map;
        parts.push_back(llvm::CloneModule(module,
                                          map,
                                          [&](const llvm::GlobalValue* value)
                                          {
                                              // its function, and the private constants (unused ones go at
                                              // O3)
                                              return value == &function ||
                                                     (llvm::isa<llvm::GlobalVariable>(value) &&
                                                      value->hasLocalLinkage());
                                          }));
    }
    return parts;
}

} // namespace flyrt::jit
