// Whether the process environment may have changed, told without running
// Python on every launcher call. Python code changes it through os.environ,
// which updates the C environment and its own dict (os.environ._data) alike,
// so a dict_watch on that dict sees every such change; a C library's own
// setenv() is not seen (os.environ does not see it either).
#pragma once

namespace flyrt::dispatch
{

// Starts watching os.environ (with the GIL held, at import). Until then, or
// where os.environ keeps no dict, environment_changed() is always true.
void watch_environment();

// True when os.environ may have changed since the last call that said so.
bool environment_changed();

} // namespace flyrt::dispatch
