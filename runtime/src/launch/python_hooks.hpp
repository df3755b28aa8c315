// What a launch does for the Python process around it (blocking.hpp's
// hooks): the GIL goes to other threads during a long launch, and Ctrl-C
// stops it. Built into the Python extension, not the Python-free compiler.
#pragma once

namespace flyrt::launch
{

// Runs Python's signal handlers (taking the GIL if this thread lacks it):
// true when one raised, KeyboardInterrupt for Ctrl-C, left set for the
// dispatcher to raise once the launch has stopped.
bool python_interrupted();

// Makes launches release the GIL around blocking sections and stop at an
// interrupt; once, as the module loads.
void install_python_hooks();

} // namespace flyrt::launch
