#!/usr/bin/env bash
# A throwaway PostgreSQL 15 for the tests (docs/developing.md):
#   test_postgres.sh start URLFILE   initdb into a fresh /tmp directory as an unprivileged user
#                                    (the `postgres` system user when run as root), start it on a
#                                    free port on 127.0.0.1 only, write its URL to URLFILE
#   test_postgres.sh stop URLFILE    stop it and delete its directory
# Durability is switched off (fsync, synchronous_commit): the data is thrown away anyway.
# Fails loudly when PostgreSQL 15 is missing: scripts/setup.sh installs postgresql-15.
set -euo pipefail

cmd=${1:-}
urlfile=${2:-}
[ -n "$cmd" ] && [ -n "$urlfile" ] || { echo "usage: $0 start|stop URLFILE" >&2; exit 2; }
PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/initdb" ] || { echo "test_postgres: $PGBIN/initdb not found; run scripts/setup.sh (postgresql-15)" >&2; exit 1; }

as_db_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

stop() {
  [ -f "$urlfile.dir" ] || return 0
  local dir
  dir=$(cat "$urlfile.dir")
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_db_user "$PGBIN/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
  fi
  case "$dir" in /tmp/imago-pg-*) rm -rf "$dir" ;; esac
  rm -f "$urlfile" "$urlfile.dir"
}

case "$cmd" in
  stop) stop ;;
  start)
    stop
    dir=$(mktemp -d /tmp/imago-pg-XXXXXX)
    echo "$dir" >"$urlfile.dir"
    chmod 0755 "$dir"
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
    as_db_user "$PGBIN/initdb" -D "$dir/data" -U imago --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync \
      --no-instructions >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    for attempt in 1 2 3 4 5; do
      port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
      if as_db_user "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o \
        "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
         -c full_page_writes=off -c max_connections=400 -c shared_buffers=64MB" start >/dev/null; then
        echo "postgresql://imago@127.0.0.1:$port/postgres" >"$urlfile.tmp"
        mv "$urlfile.tmp" "$urlfile"
        exit 0
      fi
    done
    cat "$dir/server.log" >&2 || true
    exit 1
    ;;
  *) echo "usage: $0 start|stop URLFILE" >&2; exit 2 ;;
esac
