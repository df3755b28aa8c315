// Target machines per target description, made on first use and kept:
// creating one costs more than a small kernel's compile. A compile leases
// one for itself (a TargetMachine is not for two compiles at once), so
// kernels compiled on threads at once each get their own.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "flyrt/target.hpp"

namespace flyrt::jit
{

template <class Machine> class machine_lease
{
public:
    explicit machine_lease(const target& t) : m_id(t.id())
    {
        {
            std::lock_guard<std::mutex> lock(idle_mutex());
            std::vector<std::unique_ptr<Machine>>& idle = idle_machines()[m_id];
            if (!idle.empty())
            {
                m_machine = std::move(idle.back());
                idle.pop_back();
            }
        }
        if (!m_machine)
        {
            m_machine = std::make_unique<Machine>(t);
        }
    }
    ~machine_lease()
    {
        std::lock_guard<std::mutex> lock(idle_mutex());
        idle_machines()[m_id].push_back(std::move(m_machine));
    }
    machine_lease(const machine_lease&) = delete;
    machine_lease& operator=(const machine_lease&) = delete;

    Machine& operator*() const { return *m_machine; }
    Machine* operator->() const { return m_machine.get(); }

private:
    static std::mutex& idle_mutex()
    {
        static std::mutex mutex;
        return mutex;
    }
    static std::unordered_map<std::string, std::vector<std::unique_ptr<Machine>>>& idle_machines()
    {
        static std::unordered_map<std::string, std::vector<std::unique_ptr<Machine>>> idle;
        return idle;
    }

    std::string m_id;
    std::unique_ptr<Machine> m_machine;
};

} // namespace flyrt::jit
