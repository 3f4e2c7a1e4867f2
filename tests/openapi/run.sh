#!/bin/sh
# Runs one of this folder's node scripts after installing its pinned npm packages once (npm ci under
# a lock, finished by a copy of package-lock.json: tests/support/test_server.h, ensure_node_packages).
# Usage: run.sh SCRIPT.mjs ARGS...
set -e
dir=$(cd "$(dirname "$0")" && pwd)
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1
cd "$dir"
flock .npm-install.lock sh -c 'cmp -s package-lock.json node_modules/.imago-installed ||
  (npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.imago-installed)'
script=$1
shift
exec node "$dir/$script" "$@"
