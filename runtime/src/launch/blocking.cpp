#include "blocking.hpp"

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
