// Loads compiled host code into this process: one process-wide ORC LLJIT,
// each artifact's objects in a JITDylib of their own, so that an evicted
// artifact frees its code.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llvm::orc
{
class JITDylib;
}

namespace flyrt::jit
{

class loaded_object
{
public:
    explicit loaded_object(const std::vector<std::string>& objects);
    ~loaded_object();

    loaded_object(const loaded_object&) = delete;
    loaded_object& operator=(const loaded_object&) = delete;

    // Address of a function defined in the objects; throws if absent.
    void* address(const std::string& symbol) const;

private:
    llvm::orc::JITDylib* m_dylib;
};

} // namespace flyrt::jit
