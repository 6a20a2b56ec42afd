#!/usr/bin/env bash
# Installs everything skilldb needs on Debian 12, if missing. Idempotent: when
# every package is present it only checks (a second or so).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  librocksdb-dev libsqlite3-dev libicu-dev libstemmer-dev
  libcli11-dev doctest-dev nlohmann-json3-dev
  libcpp-httplib-dev libssl-dev
  python3
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# NVRTC dlopens its builtins library at run time, ignoring RPATH: make the CUDA
# libraries visible to the loader when the toolkit is there.
if [[ -d /usr/local/cuda/lib64 && ! -f /etc/ld.so.conf.d/skilldb-cuda.conf ]]; then
  if [[ $(id -u) -eq 0 ]]; then
    echo /usr/local/cuda/lib64 > /etc/ld.so.conf.d/skilldb-cuda.conf
    ldconfig
  fi
fi
