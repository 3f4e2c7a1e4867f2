// Per-plan storage quotas: the bytes of files and models (uploads, agent inputs, .imx models,
// gesture clips) an account may keep. Operators change the per-plan values with --storage-quota;
// an enterprise account may carry its own value (admin API limits.storage_mb). docs/operations.md.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "limits/plan.h"
#include "util/status.h"

namespace imago {

struct StorageQuotas {
  // Bytes per plan, indexed by Plan; 0 means unlimited.
  std::array<int64_t, 5> per_plan{};
  int64_t for_plan(Plan p) const { return per_plan[static_cast<size_t>(p)]; }
};

// free 500 MB, creator 5 GB, pro 25 GB, business 100 GB, enterprise 500 GB (1 MB = 10^6 bytes).
StorageQuotas default_storage_quotas();

// "free=200,pro=50000" (megabytes; 0 = unlimited) over the defaults. kInvalidArgument naming the
// bad entry.
Result<StorageQuotas> parse_storage_quotas(std::string_view spec);

// The quota that applies to an account: an enterprise account's own value when set, else its
// plan's. 0 means unlimited.
int64_t effective_storage_quota(const StorageQuotas& quotas, Plan plan,
                                const std::optional<PlanLimits>& custom);

// kQuotaExceeded (403 STORAGE_QUOTA_EXCEEDED) when keeping `adding` more bytes on top of `used`
// would pass `quota`. Work that will produce files (a generation) passes adding >= 1, so an
// account already at its quota cannot start it.
Status check_storage_quota(int64_t used, int64_t adding, int64_t quota);

}  // namespace imago
