#!/bin/sh
# Fails when clients/typescript/src/schema.d.ts is not what openapi-typescript makes of
# docs/openapi.yaml today: after changing the document, run `npm run generate` in clients/typescript.
# Usage: check_client.sh SOURCE_DIR
set -e
src=$1
dir=$src/clients/typescript
cd "$dir"
flock .npm-install.lock sh -c 'cmp -s package-lock.json node_modules/.imago-installed ||
  (npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.imago-installed)'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node_modules/.bin/openapi-typescript "$src/docs/openapi.yaml" -o "$tmp/schema.d.ts" >/dev/null
if ! cmp -s "$tmp/schema.d.ts" src/schema.d.ts; then
  diff -u src/schema.d.ts "$tmp/schema.d.ts" | head -40
  echo "clients/typescript/src/schema.d.ts is stale: run 'npm run generate' in clients/typescript" >&2
  exit 1
fi
echo "clients/typescript/src/schema.d.ts matches docs/openapi.yaml"
