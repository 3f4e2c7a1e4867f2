#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a while (FUZZ_SECONDS, default 60).
# On demand only: clang and its runtime are installed here, not by scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${FUZZ_SECONDS:-60}

need=()
for p in clang libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
bash scripts/setup.sh

CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DIMAGO_BUILD_FUZZ=ON -DIMAGO_BUILD_TESTS=OFF >/dev/null
ninja -C build-fuzz imx_reader_fuzz

mkdir -p build-fuzz/imx-corpus
echo "fuzzing the .imx reader for ${SECONDS_PER_TARGET}s"
build-fuzz/src/avatar/imx_reader_fuzz -max_total_time="$SECONDS_PER_TARGET" -max_len=8192 \
  build-fuzz/imx-corpus src/avatar/fuzz_corpus
