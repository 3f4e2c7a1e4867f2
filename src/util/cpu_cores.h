// How many cores this process may use: what the "one per core" defaults size themselves by.
//
// std::thread::hardware_concurrency() counts the machine's online CPUs. A process started under
// `taskset`, in a container with a cpuset, or with a cgroup CPU quota (`docker --cpus 2`) may use
// fewer; sizing I/O threads by the machine then puts several busy threads on each usable core,
// and the scheduler's time slices show up as tail latency.
#pragma once

#include <optional>
#include <string_view>

namespace imago {

// min(CPUs in the calling thread's affinity mask, the cgroup v2 quota rounded up); at least 1.
// Falls back to hardware_concurrency() where the affinity mask cannot be read.
int usable_cores();

// A cgroup v2 `cpu.max` line ("QUOTA PERIOD" or "max PERIOD") as whole cores, rounded up;
// nullopt when there is no quota or the line does not parse.
std::optional<int> cores_of_cpu_max(std::string_view line);

}  // namespace imago
