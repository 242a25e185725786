#!/usr/bin/env bash
# Install the system OpenGL libraries headless MuJoCo needs (EGL + Mesa), only when missing.
set -euo pipefail

need=()
ldconfig -p | grep -q 'libEGL.so.1 ' || need+=(libegl1)
ldconfig -p | grep -q 'libGL.so.1 ' || need+=(libgl1)
ldconfig -p | grep -q 'libEGL_mesa.so.0 ' || need+=(libegl-mesa0)
ls /usr/lib/*/dri/swrast_dri.so /usr/lib/*/dri/kms_swrast_dri.so >/dev/null 2>&1 || need+=(libgl1-mesa-dri)

bash "$(dirname "$0")/apt-install.sh" "the system OpenGL libraries (EGL + Mesa: libEGL.so.1, libEGL_mesa.so.0)" "${need[@]}"
