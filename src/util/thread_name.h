// Names a thread after its role, so `top -H`, `ps -L`, perf and /proc/PID/task/*/comm tell an I/O
// thread from a room's renderer or a synthesis worker (the live benchmark sums CPU by these names).
#pragma once

namespace imago {

// Names the calling thread "imago-" + role, cut to the kernel's 15 characters. Never the
// process's main thread: its name is the process name that ps and pkill match.
void name_this_thread(const char* role);

}  // namespace imago
