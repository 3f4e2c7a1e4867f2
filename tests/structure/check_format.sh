#!/usr/bin/env bash
# Fails when a tracked C++ file differs from what clang-format (.clang-format) would write.
# `make format` rewrites the tree; this only looks (dry run, errors). Exit 77 (skipped) when
# clang-format or git is missing.
set -uo pipefail
root="${1:-.}"
cd "$root" || exit 2
command -v clang-format >/dev/null || { echo "clang-format not installed: skipped"; exit 77; }
git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cc')
[ "${#files[@]}" -eq 0 ] && exit 0
if clang-format --dry-run --Werror "${files[@]}" 2>/tmp/imago-format-$$.log; then
  rm -f /tmp/imago-format-$$.log
  echo "format: ${#files[@]} files clean"
  exit 0
fi
grep -E '^[^ ].*: error:' /tmp/imago-format-$$.log | cut -d: -f1 | sort -u | sed 's/^/needs clang-format: /' | head -50
rm -f /tmp/imago-format-$$.log
echo "run 'make format' and commit the result"
exit 1
