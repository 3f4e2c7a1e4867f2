#include "live/thread_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace imago::live {

bool adjust_this_thread_nice(int offset) {
  // PRIO_PROCESS with a thread id addresses that one thread on Linux (nice is per thread).
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, tid);
  if (now == -1 && errno != 0) return false;
  const int want = std::clamp(now + offset, -20, 19);
  return want != now && ::setpriority(PRIO_PROCESS, tid, want) == 0;
}

}  // namespace imago::live
