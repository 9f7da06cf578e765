"""The `pypto` command-line tool (installed with the package): exit codes and output."""

import os
import pathlib
import subprocess
import sys

import pytest
from cli_tool import PYPTO, cli

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("name", ["add", "blocked_add", "ffn", "matmul", "matmul_ksplit",
                                  "scoped_scale", "softmax"])
def test_run_passes_on_every_example(name, tmp_path):
    # The reference interpreter computes in double: the FP32 matmuls need the tolerance their
    # own examples give run() (1e-5, the default, for the others).
    tolerance = ["--rtol", "1e-3", "--atol", "1e-3"] if "matmul" in name or name == "ffn" else []
    proc = cli("run", EXAMPLES / f"{name}.py", "--workers", 2, *tolerance, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("passed")


def test_compile_writes_the_output_layout_and_profile(tmp_path):
    out = tmp_path / "out"
    proc = cli("compile", EXAMPLES / "softmax.py", "-o", out, "--profile", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "PyPTO Compile Profile" in proc.stdout and "kernel_codegen:softmax_kernel" in proc.stdout
    assert (out / "kernels" / "softmax_kernel.cpp").is_file()
    assert (out / "orchestration" / "main.cpp").is_file()
    assert (out / "kernel_config.json").is_file()
    assert (out / "passes_dump" / "00_frontend.py").is_file()
    assert (out / "report" / "pipeline_profile.json").is_file()


def test_no_dump_passes(tmp_path):
    out = tmp_path / "out"
    proc = cli("compile", EXAMPLES / "add.py", "-o", out, "--no-dump-passes", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not (out / "passes_dump").exists()


def test_usage_errors_exit_with_2(tmp_path):
    assert cli(cwd=tmp_path).returncode == 2
    assert cli("run", cwd=tmp_path).returncode == 2
    assert cli("run", tmp_path / "missing.py", cwd=tmp_path).returncode == 2
    proc = cli("run", EXAMPLES / "add.py", "--program", "Nope", cwd=tmp_path)
    assert proc.returncode == 2 and "AddProgram" in proc.stderr


def test_help_exits_with_0(tmp_path):
    proc = cli("compile", "--help", cwd=tmp_path)
    assert proc.returncode == 0 and "--no-dump-passes" in proc.stdout


def test_program_error_exits_with_1_and_points_at_it(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import pypto.language as pl\n\n"
        "@pl.program\n"
        "class Bad:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, a: pl.Tensor[[64, 64], pl.FP32],\n"
        "          c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:\n"
        "        c = pl.store(pl.add(a, a), [0, 0], c)\n"
        "        return c\n")
    proc = cli("compile", bad, cwd=tmp_path)
    assert proc.returncode == 1
    assert "bad.py:8:" in proc.stderr and "^" in proc.stderr


def test_invalid_utf8_in_a_name_is_written_not_thrown(tmp_path):
    # A kernel name holding the byte 0xFF reaches kernel_config.json and the profile report.
    source = (
        b"import pypto.language as pl\n\n@pl.program\nclass Odd:\n"
        b"    @pl.function(type=pl.FunctionType.InCore)\n"
        b"    def k\xff(self, a: pl.Tensor[[16, 16], pl.FP32],\n"
        b"          c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
        b"        c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)\n"
        b"        return c\n\n"
        b"    @pl.function(type=pl.FunctionType.Orchestration)\n"
        b"    def main(self, a: pl.Tensor[[16, 16], pl.FP32],\n"
        b"             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
        b"        c = self.k\xff(a, c)\n"
        b"        return c\n")
    (tmp_path / "odd.py").write_bytes(source)
    proc = subprocess.run([PYPTO, "compile", "odd.py", "-o", "out", "--profile"], cwd=tmp_path,
                          capture_output=True, timeout=300)
    output = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    assert "json.exception" not in output
    assert proc.returncode == 0, output
    assert "k\ufffd" in (tmp_path / "out" / "kernel_config.json").read_text(encoding="utf-8")


def test_version_usage_name_and_exit_code_table(tmp_path):
    version = cli("--version", cwd=tmp_path)
    assert version.returncode == 0
    assert version.stdout.strip() == "pypto 0.1.0"
    usage = cli("--help", cwd=tmp_path)
    assert usage.returncode == 0
    assert "Usage: pypto [OPTIONS] SUBCOMMAND" in usage.stdout  # not the binary's full path
    assert "Exit codes: 0 success; 1 " in usage.stdout and "2 usage error" in usage.stdout


@pytest.mark.parametrize("args, message", [
    (["run", "--rtol", "-1", EXAMPLES / "add.py"], "--rtol: must be a number >= 0, got '-1'"),
    (["run", "--atol", "x", EXAMPLES / "add.py"], "--atol: must be a number >= 0, got 'x'"),
    (["run", "--seed", "-3", EXAMPLES / "add.py"], "--seed: must be a number >= 0, got '-3'"),
    (["run", "missing.py"], "File does not exist: missing.py"),
    (["run", "--timeout", "0", EXAMPLES / "add.py"],
     "--timeout: must be a number from 0.001 to 86400 s, got '0'"),
    (["frobnicate"], "pypto: unknown command 'frobnicate'; the commands are compile, run, "
                     "sweep and profile"),
])
def test_bad_usage_exits_2_with_a_clear_message(args, message, tmp_path):
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr


def python_m_pypto(*args, cwd):
    # PYPTO_CLI names the tool under test (cli_tool.py), which python -m pypto honours too.
    env = dict(os.environ, PYPTO_CLI=PYPTO) if PYPTO else dict(os.environ)
    return subprocess.run([sys.executable, "-m", "pypto", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args", [["--version"], ["frobnicate"], ["run", "--rtol", "-1", "x.py"],
                                  ["compile", EXAMPLES / "add.py", "-o", "out"]])
def test_python_m_pypto_is_the_cli(args, tmp_path):
    for folder in ("direct", "module"):
        (tmp_path / folder).mkdir()
    direct = cli(*args, cwd=tmp_path / "direct")
    via_module = python_m_pypto(*args, cwd=tmp_path / "module")
    assert via_module.returncode == direct.returncode, via_module.stderr
    assert via_module.stdout == direct.stdout
    assert via_module.stderr == direct.stderr
    if args[0] == "compile":
        assert (tmp_path / "module" / "out" / "program.cpp").is_file()


SPIN = """
import pypto.language as pl

@pl.program
class Spin:
    @pl.function(type=pl.FunctionType.InCore)
    def spin(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        for i in pl.range(1099511627776):
            t = pl.add(t, 1.0)
        c = pl.store(t, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.spin(a, c)
        return c
"""


def test_run_timeout_stops_a_program_that_never_ends(tmp_path):
    (tmp_path / "spin.py").write_text(SPIN)
    proc = cli("run", "spin.py", "--timeout", "1", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAILED: " in proc.stdout
    assert "did not finish within 1 s" in proc.stdout, proc.stdout
