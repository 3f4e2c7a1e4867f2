# What the benchmark scripts that run imagod on a throwaway PostgreSQL share (sourced, not run):
#   bench_pg_workdir NAME   a temporary WORK directory with URLFILE for scripts/test_postgres.sh, and
#                           an exit trap that stops every pid in PIDS (TERM, then KILL after 10 s),
#                           the PostgreSQL server, and removes WORK
#   free_port               a free loopback TCP port
#   json_field F.PATH       a field of the JSON on stdin
# The caller sets ROOT (the repository) and runs under `set -euo pipefail`.

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

json_field() {
  python3 -c 'import json,sys; v=json.load(sys.stdin)
for k in sys.argv[1].split("."): v=v[k]
print(v)' "$1"
}

bench_pg_cleanup() {
  for p in "${PIDS[@]+"${PIDS[@]}"}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]+"${PIDS[@]}"}"; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  bash "$ROOT/scripts/test_postgres.sh" stop "$URLFILE" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}

bench_pg_workdir() {
  WORK=$(mktemp -d "/tmp/imago-$1-XXXXXX")
  URLFILE="$WORK/pg.url"
  PIDS=()
  trap bench_pg_cleanup EXIT
  trap 'exit 130' INT TERM
}
