#!/usr/bin/env bash
# Blob streaming (docs/architecture.md, "Blobs"), all on 127.0.0.1: one imagod on a throwaway
# PostgreSQL 15 (blobs as chunks in the database) and one on SQLite (blobs as files). Each uploads
# a SIZE_MB video by multipart, then downloads it back, and reports the time of each and the
# node's resident memory: before, its peak after the upload (the body is spooled to a temporary
# file and stored chunk by chunk; bench/upload_rss.sh measures that growth alone), and its growth
# over the download (streamed one 1 MiB chunk at a time: stays far below the file's size).
#
#   bash bench/blob_bench.sh [path/to/imagod]     (default build/imagod)
#   env: SIZE_MB=100 DOWNLOADS=3
# Every process started here is stopped on exit (by pid), the temporary directories removed.
set -euo pipefail

IMAGOD=${1:-build/imagod}
SIZE_MB=${SIZE_MB:-100}
DOWNLOADS=${DOWNLOADS:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)

die() { echo "blob_bench: $*" >&2; exit 1; }
[ -x "$IMAGOD" ] || die "no imagod at '$IMAGOD' (run 'make build' first)"
for tool in curl python3 psql; do command -v "$tool" >/dev/null || die "$tool is missing (scripts/setup.sh)"; done

# shellcheck source=bench_lib.sh
source "$HERE/bench_lib.sh"
bench_pg_workdir blob-bench
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }

# An MP4 signature and pseudo-random padding, SIZE_MB MiB in all (100 MiB is the video limit).
python3 - "$WORK/clip.mp4" "$SIZE_MB" <<'PY'
import os, sys
with open(sys.argv[1], "wb") as f:
    f.write(b"\0\0\0\x18ftypisom\0\0\0\0")  # 16 bytes: the whole file is SIZE_MB MiB
    for i in range(int(sys.argv[2])):
        f.write(os.urandom((1 << 20) - (16 if i == 0 else 0)))
PY

bash "$ROOT/scripts/test_postgres.sh" start "$URLFILE"
SERVER_URL=$(cat "$URLFILE")
psql -q "$SERVER_URL" -c "CREATE DATABASE blobbench" >/dev/null
ADMIN_TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(32))')

run() {  # run LABEL DATABASE
  local label=$1 db=$2 port pid base secret up file_url t0 t1 before peak_up dl_start dl_peak
  port=$(free_port)
  IMAGO_ADMIN_TOKEN="$ADMIN_TOKEN" "$IMAGOD" serve --listen "127.0.0.1:$port" --data-dir "$WORK/$label" \
    ${db:+--database "$db"} --no-bootstrap --no-workers --log-level warn >"$WORK/$label.log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  base="http://127.0.0.1:$port"
  for _ in $(seq 300); do curl -fsS -o /dev/null "$base/readyz" 2>/dev/null && break; sleep 0.1; done
  curl -fsS -o /dev/null "$base/readyz" || { tail -20 "$WORK/$label.log" >&2; die "$label did not come up"; }
  secret=$(curl -fsS -X POST "$base/admin/v1/accounts" -H "Authorization: Bearer $ADMIN_TOKEN" \
    -H 'content-type: application/json' -d '{"name":"bench","plan":"enterprise","credits":1000}' | json_field api_secret)
  before=$(rss_kb "$pid")
  t0=$(date +%s.%N)
  up=$(curl -fsS -X POST "$base/v1/files/upload" -H "api-secret: $secret" -F "file=@$WORK/clip.mp4;type=video/mp4")
  t1=$(date +%s.%N)
  peak_up=$(hwm_kb "$pid")
  file_url=$(echo "$up" | json_field data.file_url)
  printf '%-11s upload   %6.2f s   RSS before %6d KiB, peak after upload %7d KiB\n' "$label" \
    "$(echo "$t1 - $t0" | bc)" "$before" "$peak_up"
  for i in $(seq "$DOWNLOADS"); do
    dl_start=$(rss_kb "$pid")
    echo "$dl_start" >"$WORK/peak"
    # Sample the node's RSS while the download runs; its growth is what one download holds.
    ( peak=$dl_start; while kill -0 "$pid" 2>/dev/null; do r=$(rss_kb "$pid"); [ "$r" -gt "$peak" ] && peak=$r; echo "$peak" >"$WORK/peak.tmp"; mv -f "$WORK/peak.tmp" "$WORK/peak"; sleep 0.02; done ) &
    local sampler=$!
    t0=$(date +%s.%N)
    curl -fsS -H "api-secret: $secret" -o "$WORK/back.mp4" "$file_url"
    t1=$(date +%s.%N)
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
    dl_peak=$(cat "$WORK/peak")
    cmp -s "$WORK/clip.mp4" "$WORK/back.mp4" || die "$label: downloaded bytes differ"
    printf '%-11s download %6.2f s   RSS at start %6d KiB, highest during it %7d KiB (+%d KiB)\n' "$label" \
      "$(echo "$t1 - $t0" | bc)" "$dl_start" "$dl_peak" "$((dl_peak - dl_start))"
  done
}

echo "== ${SIZE_MB} MB video, load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
run postgres "${SERVER_URL%/*}/blobbench"
run sqlite-fs ""  # the embedded default: SQLite and blob files in the data directory
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
