#include "util/cpu_cores.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

namespace imago {
namespace {

TEST(CpuCores, CgroupQuotaRoundsUpToWholeCores) {
  EXPECT_EQ(cores_of_cpu_max("200000 100000"), 2);
  EXPECT_EQ(cores_of_cpu_max("150000 100000\n"), 2);  // 1.5 cores: two threads, not one
  EXPECT_EQ(cores_of_cpu_max("50000 100000"), 1);
  EXPECT_EQ(cores_of_cpu_max("max 100000"), std::nullopt);
  EXPECT_EQ(cores_of_cpu_max(""), std::nullopt);
  EXPECT_EQ(cores_of_cpu_max("abc 100000"), std::nullopt);
  EXPECT_EQ(cores_of_cpu_max("100000 0"), std::nullopt);
}

TEST(CpuCores, FollowsTheAffinityMask) {
  const int all = usable_cores();
  EXPECT_GE(all, 1);
  EXPECT_LE(all, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  // A thread pinned to one CPU (as `taskset -c 0` pins a process) may use one core.
  int pinned = 0;
  std::thread t([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0) {
      pinned = -1;
      return;
    }
    pinned = usable_cores();
  });
  t.join();
  if (pinned == -1) GTEST_SKIP() << "sched_setaffinity refused here";
  EXPECT_EQ(pinned, 1);
}

}  // namespace
}  // namespace imago
