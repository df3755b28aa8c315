// From a verified flyrt module to callable machine code on this CPU.
//
// Compilation emits a relocatable object (O3 for the host CPU); that object
// is what the disk cache stores. Loading links it into its own JITDylib of
// one process-wide ORC LLJIT, so an evicted artifact frees its code.
#pragma once

#include <memory>
#include <string>

#include "flyrt/ir.hpp"

namespace llvm::orc
{
class JITDylib;
}

namespace flyrt::jit
{

// Target description that keys compiled artifacts (triple, CPU, features).
const std::string& host_target_id();

// Codegen, O3 and object emission. `llvm_ir_out`, if given, receives the
// optimized LLVM IR as text (for inspection).
std::string compile_to_object(const ir::module& m, std::string* llvm_ir_out = nullptr);

class loaded_object
{
public:
    explicit loaded_object(const std::string& object_bytes);
    ~loaded_object();

    loaded_object(const loaded_object&) = delete;
    loaded_object& operator=(const loaded_object&) = delete;

    // Address of a function defined in the object; throws if absent.
    void* address(const std::string& symbol) const;

private:
    llvm::orc::JITDylib* m_dylib;
};

} // namespace flyrt::jit
