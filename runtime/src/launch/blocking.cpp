#include "blocking.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace flyrt::launch
{
namespace
{

bool (*g_interrupt_check)() = nullptr;
blocking_section_hooks g_blocking_hooks;

} // namespace

void set_interrupt_check(bool (*check)())
{
    g_interrupt_check = check;
}

bool (*interrupt_check())()
{
    return g_interrupt_check;
}

void set_blocking_section_hooks(blocking_section_hooks hooks)
{
    g_blocking_hooks = hooks;
}

bool poll_until(const std::function<bool()>& done, bool (*interrupted)())
{
    const auto start = std::chrono::steady_clock::now();
    auto pause = std::chrono::microseconds(20);
    auto next_check = start + std::chrono::milliseconds(20);
    while (!done())
    {
        if (std::chrono::steady_clock::now() - start < std::chrono::microseconds(200))
        {
            std::this_thread::yield();
            continue;
        }
        if (interrupted != nullptr && std::chrono::steady_clock::now() >= next_check)
        {
            if (interrupted())
            {
                return false;
            }
            next_check = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
    return true;
}

blocking_section::blocking_section() : m_entered(g_blocking_hooks.enter ? g_blocking_hooks.enter() : nullptr)
{
}

blocking_section::~blocking_section()
{
    if (g_blocking_hooks.leave)
    {
        g_blocking_hooks.leave(m_entered);
    }
}

} // namespace flyrt::launch
