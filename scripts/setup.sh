#!/usr/bin/env bash
# Installs everything PyPTO-C++ needs on a fresh Debian machine, builds and installs the Python
# package, then runs the main job: compile and run an example with profiling on and print the
# profile. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

echo "==> Debian packages"
mapfile -t apt_packages < <(grep -v -e '^#' -e '^\s*$' scripts/deps-apt.txt)
if ! dpkg -s "${apt_packages[@]}" >/dev/null 2>&1; then
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${apt_packages[@]}"
fi

echo "==> Python packages"
python3 -m pip install -q --disable-pip-version-check -r requirements-dev.txt

echo "==> Building and installing the pypto package"
python3 -m pip install -q --disable-pip-version-check .

echo "==> Main job: PYPTO_COMPILE_PROFILING=1 python3 examples/softmax.py"
cd examples
PYPTO_COMPILE_PROFILING=1 python3 softmax.py
