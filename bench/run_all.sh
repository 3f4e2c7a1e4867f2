#!/usr/bin/env bash
# Runs every benchmark once and prints its figures. Usage: bench/run_all.sh BUILD_DIR
# (built with -DIMAGO_BUILD_BENCH=ON; `make bench` does both). Nothing here is a pass/fail test.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-bench}
ninja -C "$B" avatar_renderer_benchmark speech_benchmark imagod

echo "== avatar renderer (one core)"
taskset -c 0 "$B/src/avatar/avatar_renderer_benchmark" --benchmark_min_time=2
echo "== speech: raw engine vs POST /v1/tts, streaming time to first byte"
"$B/src/speech/speech_benchmark"
echo "== HTTP surface vs nginx"
bash bench/http_bench.sh "$B/imagod"
