// From a verified flyrt module to callable machine code on this CPU.
//
// Compilation emits one relocatable object per function (O3 for the host
// CPU), reusing the objects of functions whose IR this process compiled
// before; the bundle of them is what the disk cache stores. Loading links
// them into their own JITDylib of one process-wide ORC LLJIT, so an evicted
// artifact frees its code.
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

// Codegen, O3 and object emission: an object bundle (object_bundle.hpp).
// `llvm_ir_out`, if given, receives the optimized LLVM IR as text (for
// inspection; every function is compiled then).
std::string compile_to_objects(const ir::module& m, std::string* llvm_ir_out = nullptr);

// Functions compiled, and reused from an earlier compile, in this process.
struct part_counts
{
    unsigned long compiled = 0;
    unsigned long reused = 0;
};
part_counts compiled_part_counts();

class loaded_object
{
public:
    explicit loaded_object(const std::string& object_bundle);
    ~loaded_object();

    loaded_object(const loaded_object&) = delete;
    loaded_object& operator=(const loaded_object&) = delete;

    // Address of a function defined in the object; throws if absent.
    void* address(const std::string& symbol) const;

private:
    llvm::orc::JITDylib* m_dylib;
};

} // namespace flyrt::jit
