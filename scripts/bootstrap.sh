#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian/Ubuntu machine (root or sudo):
# apt packages (Xvfb, Mesa GL/EGL, Qt's xcb libraries), a .venv in the project
# root and the pip dependencies.  Sourced by run.sh and test.sh; re-running it
# only installs what is missing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

APT_PKGS=(xvfb xauth libgl1 libegl1 libgl1-mesa-dri libglx-mesa0 libegl-mesa0
  libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1
  libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1
  libdbus-1-3 libfontconfig1 libxkbcommon0 libegl-dev
  g++)   # g++: Flint runtimes c / c-is and the host runs of the CUDA sources

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${APT_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  PY="${PYTHON:-python3}"
  if ! command -v "$PY" >/dev/null 2>&1; then missing+=(python3); fi
  if command -v "$PY" >/dev/null 2>&1 && ! "$PY" -c "import venv, ensurepip" >/dev/null 2>&1; then
    missing+=(python3-venv python3-pip)
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] installing apt packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv"
  "$PY" -m venv .venv
fi
stamp=".venv/.deps-$(cat pyproject.toml | sha1sum | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  echo "[setup] installing Python dependencies (first run takes a few minutes)"
  .venv/bin/python -m pip install -q --upgrade pip
  extras="dev"
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then extras="dev,gpu"; fi
  .venv/bin/python -m pip install -q -e ".[${extras}]"
  rm -f .venv/.deps-*; touch "$stamp"
fi
