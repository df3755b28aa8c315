// One target machine per target description, made on first use and kept:
// creating one costs more than a small kernel's compile.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "flyrt/target.hpp"

namespace flyrt::jit
{

template <class Machine> Machine& machine_for(const target& t)
{
    static std::mutex mutex;
    static std::unordered_map<std::string, std::unique_ptr<Machine>> machines;
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<Machine>& slot = machines[t.id()];
    if (!slot)
    {
        slot = std::make_unique<Machine>(t);
    }
    return *slot;
}

} // namespace flyrt::jit
