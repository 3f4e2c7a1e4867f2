#!/usr/bin/env bash
# Cluster-mode benchmark, all on 127.0.0.1 with a throwaway PostgreSQL 15:
#   1. authenticated GET /v1/me and agent generation enqueue (POST /v1/agent/generate, nodes run
#      with --no-workers so only the enqueue is measured) on one node, then on two nodes sharing the
#      database (one wrk per node, at the same time): requests/s and p99;
#   2. the cost of one rate-limit decision under contention: the exact statement imagod runs,
#      issued by pgbench with CLIENTS concurrent clients (the job claim: job_claim_benchmark).
#
#   bash bench/cluster_bench.sh [path/to/imagod]     (default build/imagod)
#   env: DURATION=10s CONNECTIONS=32 THREADS=1 CLIENTS=8 LOG_LEVEL=warn
# Every process started here is stopped on exit (by pid), the database directory removed.
set -euo pipefail

IMAGOD=${1:-build/imagod}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-1}
CLIENTS=${CLIENTS:-8}
LOG_LEVEL=${LOG_LEVEL:-warn}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
LUA="$HERE/wrk_imago.lua"
PGBIN=/usr/lib/postgresql/15/bin

die() { echo "cluster_bench: $*" >&2; exit 1; }
[ -x "$IMAGOD" ] || die "no imagod at '$IMAGOD' (run 'make build' first)"
for tool in wrk curl python3 psql; do command -v "$tool" >/dev/null || die "$tool is missing (scripts/setup.sh)"; done
[ -x "$PGBIN/pgbench" ] || die "$PGBIN/pgbench is missing (postgresql-15)"

# shellcheck source=bench_lib.sh
source "$HERE/bench_lib.sh"
bench_pg_workdir cluster-bench

bash "$ROOT/scripts/test_postgres.sh" start "$URLFILE"
SERVER_URL=$(cat "$URLFILE")
psql -q "$SERVER_URL" -c "CREATE DATABASE bench" >/dev/null
DB_URL="${SERVER_URL%/*}/bench"
ADMIN_TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(32))')

# Not in a command substitution: that subshell's PIDS would be lost and the node left running.
start_node() {  # start_node NAME -> sets NODE_URL
  local port
  port=$(free_port)
  IMAGO_ADMIN_TOKEN="$ADMIN_TOKEN" "$IMAGOD" serve --listen "127.0.0.1:$port" --data-dir "$WORK/$1" \
    --database "$DB_URL" --no-bootstrap --no-workers --log-level "$LOG_LEVEL" --anon-ip-limit 100000000 \
    >"$WORK/$1.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 300); do
    curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null && break
    sleep 0.1
  done
  curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" || { tail -20 "$WORK/$1.log" >&2; die "node $1 did not come up"; }
  NODE_URL="http://127.0.0.1:$port"
}

start_node a
A=$NODE_URL
start_node b
B=$NODE_URL
# Limits far above what the benchmark sends, so it measures the service, not the 429 path.
ACCOUNT=$(curl -fsS -X POST "$A/admin/v1/accounts" -H "Authorization: Bearer $ADMIN_TOKEN" \
  -H 'content-type: application/json' \
  -d '{"name":"bench","plan":"enterprise","credits":100000000,"limits":{"generate":10000000,"write":10000000,"read":10000000}}')
SECRET=$(echo "$ACCOUNT" | json_field api_secret)

# A tiny PNG face-less image is enough: with --no-workers nothing processes it.
IMAGE_B64=$(python3 -c 'import base64,zlib,struct
def chunk(t,d): return struct.pack(">I",len(d))+t+d+struct.pack(">I",zlib.crc32(t+d)&0xffffffff)
png=b"\x89PNG\r\n\x1a\n"+chunk(b"IHDR",struct.pack(">IIBBBBB",1,1,8,2,0,0,0))+chunk(b"IDAT",zlib.compress(b"\x00\xff\x00\x00"))+chunk(b"IEND",b"")
print(base64.b64encode(png).decode())')
cat >"$WORK/generate.lua" <<EOF
wrk.method = "POST"
wrk.headers["api-secret"] = "$SECRET"
wrk.headers["content-type"] = "application/json"
wrk.body = '{"image":"data:image/png;base64,$IMAGE_B64"}'
dofile("$LUA")
EOF
# wrk_imago.lua sets method from WRK_METHOD; the generate script overrides after loading.
sed -i 's|^dofile.*||' "$WORK/generate.lua"
cat "$LUA" | sed -n '/^function done/,$p' >>"$WORK/generate.lua"

probe=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$A/v1/agent/generate" -H "api-secret: $SECRET" \
  -H 'content-type: application/json' -d "{\"image\":\"data:image/png;base64,$IMAGE_B64\"}")
echo "probe POST /v1/agent/generate -> $probe"

run_wrk() {  # run_wrk LABEL SCRIPT URL...
  local label=$1 script=$2
  shift 2
  local outs=()
  for url in "$@"; do
    local out="$WORK/wrk-$RANDOM.out"
    outs+=("$out")
    IMAGO_SECRET="$SECRET" WRK_METHOD=GET wrk -t "$THREADS" -c "$CONNECTIONS" -d "$DURATION" -s "$script" "$url" >"$out" 2>&1 &
  done
  wait $(jobs -p | tail -n ${#outs[@]}) 2>/dev/null || true
  python3 - "$label" "${outs[@]}" <<'PY'
import re, sys
label, files = sys.argv[1], sys.argv[2:]
rps = 0.0; p99 = 0; non2xx = 0
for f in files:
    m = re.search(r"RESULT .*rps=([\d.]+) p50_us=(\d+) p99_us=(\d+).*non2xx=(\d+)", open(f).read())
    if not m:
        print(f"{label}: no result in {f}:\n" + open(f).read()); continue
    rps += float(m.group(1)); p99 = max(p99, int(m.group(3))); non2xx += int(m.group(4))
print(f"{label:<40} {rps:10.1f} req/s   p99 {p99/1000:8.2f} ms   non2xx {non2xx}")
PY
}

echo "== HTTP ($DURATION, $CONNECTIONS connections per node, $(nproc) cores shared with everything else)"
run_wrk "GET /v1/me, one node" "$LUA" "$A/v1/me"
run_wrk "GET /v1/me, two nodes" "$LUA" "$A/v1/me" "$B/v1/me"
run_wrk "POST /v1/agent/generate, one node" "$WORK/generate.lua" "$A/v1/agent/generate"
run_wrk "POST /v1/agent/generate, two nodes" "$WORK/generate.lua" "$A/v1/agent/generate" "$B/v1/agent/generate"

echo "== statement cost under contention ($CLIENTS pgbench clients, ${DURATION})"
SECS=${DURATION%s}
cat >"$WORK/ratelimit.sql" <<'EOF'
INSERT INTO rate_buckets AS b (key, tokens, updated_at, allowed)
 VALUES ('acct-bench-read', 1000000::float8 - 1, EXTRACT(EPOCH FROM now())::float8, true)
 ON CONFLICT (key) DO UPDATE SET
  tokens = LEAST(1000000::float8, b.tokens + GREATEST(0, EXCLUDED.updated_at - b.updated_at) * 16666.0)
   - CASE WHEN LEAST(1000000::float8, b.tokens + GREATEST(0, EXCLUDED.updated_at - b.updated_at) * 16666.0) >= 1 THEN 1 ELSE 0 END,
  allowed = LEAST(1000000::float8, b.tokens + GREATEST(0, EXCLUDED.updated_at - b.updated_at) * 16666.0) >= 1,
  updated_at = GREATEST(b.updated_at, EXCLUDED.updated_at)
 RETURNING tokens, allowed, updated_at;
EOF
"$PGBIN/pgbench" -n -c "$CLIENTS" -j 2 -T "$SECS" -M prepared -f "$WORK/ratelimit.sql" "$DB_URL" 2>/dev/null |
  grep -E "latency average|tps" | sed 's/^/  rate-limit decision (one hot key): /'

# The job claim under contention is measured by job_claim_benchmark (src/store/contracts/), which
# runs the stores' own claim statement on both backends instead of a copy of its SQL here.
echo "  job claim + complete: see build-bench/src/store/job_claim_benchmark (bench/README.md)"
