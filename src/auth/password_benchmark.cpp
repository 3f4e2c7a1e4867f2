// What one argon2id hash and one verification cost at the documented parameters (docs/dashboard.md):
// the price of every sign-in, password change and member creation.
#include <benchmark/benchmark.h>

#include "auth/password.h"

namespace imago {
namespace {

void BM_HashPassword(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(hash_password("correct horse battery staple"));
}
BENCHMARK(BM_HashPassword)->Unit(benchmark::kMillisecond);

void BM_VerifyPassword(benchmark::State& state) {
  const std::string h = hash_password("correct horse battery staple").value();
  for (auto _ : state) benchmark::DoNotOptimize(verify_password("correct horse battery staple", h));
}
BENCHMARK(BM_VerifyPassword)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace imago
