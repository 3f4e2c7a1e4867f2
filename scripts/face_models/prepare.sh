#!/usr/bin/env bash
# Prepares the face models once, at setup time (docs/avatar.md "Landmarks and licensing"): installs
# the pinned npm package @vladmandic/human (MIT) into this folder, converts its TensorFlow.js
# graph models to ONNX with tfjs_to_onnx.py (Debian's python3-onnx and python3-numpy) and writes
# them to IMAGO_FACE_MODELS_DIR (default /usr/local/share/imago/face-models), where the avatar
# builder reads them. Nothing is downloaded at build or run time.
# Idempotent: a stamp of the package lock and the converter skips a second run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${IMAGO_FACE_MODELS_DIR:-/usr/local/share/imago/face-models}"
models=(blazeface facemesh iris faceres)
stamp_want="$(cat "$here/package-lock.json" "$here/tfjs_to_onnx.py" | sha256sum | cut -d' ' -f1)"
if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp_want" ]; then
  ok=true
  for m in "${models[@]}"; do [ -s "$out/$m.onnx" ] || ok=false; done
  $ok && exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ] && [ ! -w "$(dirname "$out")" ]; then SUDO="sudo"; fi
echo "face models: installing @vladmandic/human (npm) and converting to ONNX in $out"
(cd "$here" && flock .npm-install.lock sh -c 'cmp -s package-lock.json node_modules/.imago-installed ||
  (npm ci --no-audit --no-fund --ignore-scripts --loglevel=error && cp package-lock.json node_modules/.imago-installed)')
src="$here/node_modules/@vladmandic/human/models"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Debian's python (python3-onnx), not one a version manager may put first on PATH.
for m in "${models[@]}"; do
  /usr/bin/python3 "$here/tfjs_to_onnx.py" "$src/$m.json" "$tmp/$m.onnx"
done
cp "$src/../LICENSE" "$tmp/LICENSE.vladmandic-human"
echo "$stamp_want" > "$tmp/.stamp"
$SUDO mkdir -p "$out"
$SUDO cp "$tmp"/*.onnx "$tmp/LICENSE.vladmandic-human" "$tmp/.stamp" "$out/"
echo "face models: ready in $out"
