// What a launch that may take long does for the Python process around it,
// whatever it runs on: let other threads run, and see an interrupt.
#pragma once

#include <functional>

namespace flyrt::launch
{

// Asked on the launching thread while a launch (or a wait for one) goes on:
// true stops it (status_interrupted). The Python module installs one that
// runs Python's signal handlers, so Ctrl-C stops a long kernel; none by
// default.
void set_interrupt_check(bool (*check)());
bool (*interrupt_check())();

// Entered around a launch that may take long (one spread over the CPU's
// pool, a wait for a GPU kernel): the Python module releases the GIL there,
// so other Python threads run; a short launch keeps it (releasing would cost
// more than the launch). None by default.
struct blocking_section_hooks
{
    void* (*enter)() = nullptr;
    void (*leave)(void* entered) = nullptr;
};
void set_blocking_section_hooks(blocking_section_hooks hooks);

// Waits until `done()` (a driver's query of a stream) says so: the first
// 200 us spin (a short kernel's end seen within a microsecond or two: a
// sleep, however short asked, takes Linux's 50 us timer slack), then the
// pauses grow to 1 ms, so a long wait does not spin a core. `interrupted`
// is asked every 20 ms; true gives the wait up (returns false).
bool poll_until(const std::function<bool()>& done, bool (*interrupted)());

class blocking_section
{
public:
    blocking_section();
    ~blocking_section();
    blocking_section(const blocking_section&) = delete;
    blocking_section& operator=(const blocking_section&) = delete;

private:
    void* m_entered;
};

} // namespace flyrt::launch
