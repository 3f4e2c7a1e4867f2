#!/usr/bin/env bash
# Memory of large uploads (docs/http.md, "Request bodies"): imagod's resident memory while it
# takes SIZE_MB MiB videos by multipart POST /v1/files/upload, one alone and then CONCURRENT at
# once. The body is spooled to a nameless file in the data directory and copied to the blob store
# in 1 MiB chunks, so the growth should stay far below the upload's size (the goal: < 32 MB for
# one 100 MB upload and for four at once). Reports VmRSS before each round and the peak (VmHWM,
# reset through /proc/PID/clear_refs before the round) with the growth between them; checks that
# every upload arrived intact (sha256 of the download).
#
#   bash bench/upload_rss.sh [path/to/imagod]     (default build/imagod; builds nothing itself)
#   env: SIZE_MB=100 CONCURRENT=4 BACKEND=sqlite|postgres (postgres: a throwaway PostgreSQL via
#        scripts/test_postgres.sh, blobs as chunks in the database)
# One account runs at most --outbound-per-account uploads at once: the server gets CONCURRENT.
# All on 127.0.0.1; every process started here is stopped on exit (by pid), WORK removed.
set -euo pipefail

IMAGOD=${1:-build/imagod}
SIZE_MB=${SIZE_MB:-100}
CONCURRENT=${CONCURRENT:-4}
BACKEND=${BACKEND:-sqlite}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)

die() { echo "upload_rss: $*" >&2; exit 1; }
[ -x "$IMAGOD" ] || die "no imagod at '$IMAGOD' (run 'make build' first)"
for tool in curl python3 sha256sum; do command -v "$tool" >/dev/null || die "$tool is missing"; done

# shellcheck source=bench_lib.sh
source "$HERE/bench_lib.sh"
bench_pg_workdir upload-rss
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
reset_hwm() { echo 5 >"/proc/$1/clear_refs"; }  # VmHWM starts again from the current RSS

# An MP4 signature and random padding, SIZE_MB MiB in all (100 MiB is the video limit).
python3 - "$WORK/clip.mp4" "$SIZE_MB" <<'PY'
import os, sys
with open(sys.argv[1], "wb") as f:
    f.write(b"\0\0\0\x18ftypisom\0\0\0\0")
    for i in range(int(sys.argv[2])):
        f.write(os.urandom((1 << 20) - (16 if i == 0 else 0)))
PY
WANT=$(sha256sum "$WORK/clip.mp4" | cut -d' ' -f1)

DB_ARGS=()
if [ "$BACKEND" = postgres ]; then
  command -v psql >/dev/null || die "psql is missing"
  bash "$ROOT/scripts/test_postgres.sh" start "$URLFILE"
  SERVER_URL=$(cat "$URLFILE")
  psql -q "$SERVER_URL" -c "CREATE DATABASE uploadrss" >/dev/null
  DB_ARGS=(--database "${SERVER_URL%/*}/uploadrss")
fi

ADMIN_TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
PORT=$(free_port)
BASE="http://127.0.0.1:$PORT"
IMAGO_ADMIN_TOKEN="$ADMIN_TOKEN" "$IMAGOD" serve --listen "127.0.0.1:$PORT" --data-dir "$WORK/data" \
  "${DB_ARGS[@]}" --outbound-per-account "$CONCURRENT" --no-bootstrap --no-workers --log-level warn >"$WORK/imagod.log" 2>&1 &
PID=$!
PIDS+=("$PID")
for _ in $(seq 300); do curl -fsS -o /dev/null "$BASE/readyz" 2>/dev/null && break; sleep 0.1; done
curl -fsS -o /dev/null "$BASE/readyz" || { tail -20 "$WORK/imagod.log" >&2; die "imagod did not come up"; }
SECRET=$(curl -fsS -X POST "$BASE/admin/v1/accounts" -H "Authorization: Bearer $ADMIN_TOKEN" \
  -H 'content-type: application/json' -d '{"name":"bench","plan":"enterprise","credits":1000}' | json_field api_secret)

upload() {  # upload N: one upload, its response in $WORK/up.N
  curl -fsS -X POST "$BASE/v1/files/upload" -H "api-secret: $SECRET" \
    -F "file=@$WORK/clip.mp4;type=video/mp4" >"$WORK/up.$1"
}
check() {  # check N: the stored file is the uploaded one
  local url got
  url=$(json_field data.file_url <"$WORK/up.$1")
  got=$(curl -fsS -H "api-secret: $SECRET" "$url" | sha256sum | cut -d' ' -f1)
  [ "$got" = "$WANT" ] || die "upload $1: the stored file differs"
}
round() {  # round COUNT
  local count=$1 before peak pids=() i
  before=$(rss_kb "$PID")
  reset_hwm "$PID"
  for i in $(seq "$count"); do upload "$i" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || die "an upload failed"; done
  peak=$(hwm_kb "$PID")
  for i in $(seq "$count"); do check "$i"; done
  printf '%d x %d MiB at once: RSS before %7d KiB, peak during %7d KiB, growth %6d KiB (%.1f MiB)\n' \
    "$count" "$SIZE_MB" "$before" "$peak" "$((peak - before))" "$(echo "($peak - $before) / 1024" | bc -l)"
}

echo "== $BACKEND, load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
upload 0 && check 0  # warm-up: the first upload's allocations (pools, statements) are not the body's
round 1
round "$CONCURRENT"
echo "== spool directory after: $(find "$WORK/data/spool" -type f 2>/dev/null | wc -l) files"
