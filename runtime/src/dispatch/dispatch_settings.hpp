// What the Python side sets for every launcher of the process: whether a
// trace runs, the default target, bounds checks. Read on every call, so
// inline.
#pragma once

#include <atomic>
#include <cstdlib>
#include <string>

#include "environment_watch.hpp"
#include "target_choice.hpp"

namespace flyrt::dispatch
{
namespace settings_detail
{

inline thread_local bool t_tracing = false;
inline target_choice g_default_target = target_choice::automatic;
inline std::atomic<int> g_bounds_choice{-1};
inline std::atomic<int> g_bounds_from_environment{-1}; // FLYDSL_DEBUG_BOUNDS's say, -1 before it is read

} // namespace settings_detail

// True while a Python trace runs; launchers then inline instead of launching.
inline void set_tracing(bool tracing)
{
    settings_detail::t_tracing = tracing;
}

inline bool tracing()
{
    return settings_detail::t_tracing;
}

// The target every launcher without its own choice runs on.
inline void set_default_target(target_choice choice)
{
    settings_detail::g_default_target = choice;
}

inline target_choice default_target()
{
    return settings_detail::g_default_target;
}

// Whether kernels compile with bounds checks: this process's choice (1 on,
// 0 off), or with -1 (the start) what FLYDSL_DEBUG_BOUNDS says (on when it
// is unset), read again whenever os.environ changed, since the user may flip
// it between calls. Part of the key.
// Returns the choice before, so that setting it back restores the variable's
// say too (its value, bounds_checks(), would pin it).
inline int set_bounds_checks(int choice)
{
    return settings_detail::g_bounds_choice.exchange(choice);
}

// On unless the variable says off ("0", "off", "false", "no"): an index out
// of bounds is an IndexError at its line in every process, scripts and pytest
// too, as Julia checks bounds unless told not to.
inline bool bounds_checks_from_environment()
{
    const char* bounds = std::getenv("FLYDSL_DEBUG_BOUNDS");
    if (bounds == nullptr)
    {
        return true;
    }
    const std::string said(bounds);
    return !(said == "0" || said == "off" || said == "false" || said == "no" || said == "OFF" ||
             said == "False");
}

inline bool bounds_checks()
{
    const int choice = settings_detail::g_bounds_choice;
    if (choice >= 0)
    {
        return choice != 0;
    }
    // getenv() scans the environment: a tenth of a cache-hit call's cost on the CPU
    int said = settings_detail::g_bounds_from_environment;
    if (said < 0 || environment_changed())
    {
        said = bounds_checks_from_environment() ? 1 : 0;
        settings_detail::g_bounds_from_environment = said;
    }
    return said != 0;
}

} // namespace flyrt::dispatch
