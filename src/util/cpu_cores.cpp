#include "util/cpu_cores.h"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

#include "util/strings.h"

namespace imago {

namespace {

// The quota of this process's own cgroup (v2: the "0::/path" line of /proc/self/cgroup).
std::optional<int> cgroup_quota_cores() {
  std::ifstream self("/proc/self/cgroup");
  std::string line, path;
  while (std::getline(self, line)) {
    if (line.rfind("0::", 0) == 0) {
      path = line.substr(3);
      break;
    }
  }
  if (path.empty()) return std::nullopt;
  std::ifstream max("/sys/fs/cgroup" + (path == "/" ? std::string() : path) + "/cpu.max");
  if (!std::getline(max, line)) return std::nullopt;
  return cores_of_cpu_max(line);
}

}  // namespace

std::optional<int> cores_of_cpu_max(std::string_view line) {
  line = trim(line);
  const size_t space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  if (line.substr(0, space) == "max") return std::nullopt;
  auto quota = parse_int(line.substr(0, space));
  auto period = parse_int(line.substr(space + 1));
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return static_cast<int>(std::max<int64_t>(1, (*quota + *period - 1) / *period));
}

int usable_cores() {
  int n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = std::max(1, CPU_COUNT(&set));
  if (auto quota = cgroup_quota_cores()) n = std::min(n, *quota);
  return n;
}

}  // namespace imago
