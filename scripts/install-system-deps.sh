#!/usr/bin/env bash
# Install the system OpenGL libraries headless MuJoCo needs (EGL + Mesa), only when missing.
set -euo pipefail

need=()
ldconfig -p | grep -q 'libEGL.so.1 ' || need+=(libegl1)
ldconfig -p | grep -q 'libGL.so.1 ' || need+=(libgl1)
ldconfig -p | grep -q 'libEGL_mesa.so.0 ' || need+=(libegl-mesa0)
ls /usr/lib/*/dri/swrast_dri.so /usr/lib/*/dri/kms_swrast_dri.so >/dev/null 2>&1 || need+=(libgl1-mesa-dri)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "installing system OpenGL libraries: ${need[*]}"
if ! command -v apt-get >/dev/null; then
  echo "error: missing ${need[*]} and no apt-get; install EGL + Mesa (libEGL.so.1, libEGL_mesa.so.0) by hand" >&2
  exit 1
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
