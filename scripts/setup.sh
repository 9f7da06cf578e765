#!/usr/bin/env bash
# Installs everything PyPTO-C++ needs on a fresh Debian machine, builds and installs the Python
# package into a virtual environment (.venv, so that Debian's own python3, which refuses
# system-wide pip installs under PEP 668, works as well as any other), then runs the main job:
# compile and run an example with profiling on and print the profile. Safe to run again: the
# environment and the package's build folder (build/<wheel tag>) are reused.
#   PYTHON=/path/to/python3 bash scripts/setup.sh    use another interpreter for the environment
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

echo "==> Python environment (.venv)"
if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
fi
py=.venv/bin/python
"$py" -m pip install -q --disable-pip-version-check -r requirements-dev.txt

echo "==> Building and installing the pypto package (C++ core + extension)"
# Without build isolation the build uses the environment's scikit-build-core and nanobind and
# keeps its CMake folder, so a second install only rebuilds what changed; -v shows progress.
mkdir -p build
log=build/pip-install.log
set +e
"$py" -m pip install --disable-pip-version-check --no-build-isolation -v . 2>&1 | tee "$log" |
  { grep --line-buffered -E '^ *\[[0-9]+/[0-9]+\] |^Successfully installed' || true; }
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "building the pypto package failed (pip exit code $status); the end of $log:" >&2
  tail -n 40 "$log" >&2
  exit 1
fi

echo "==> Main job: PYPTO_COMPILE_PROFILING=1 python examples/softmax.py"
cd examples
PYPTO_COMPILE_PROFILING=1 "../$py" softmax.py
