"""`pypto compile` and `pypto run` on a file of @pl.jit functions: the shapes come from --arg."""

import pathlib

from cli_tool import cli

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "jit_blocked_add.py"
ARGS = ["--arg", "a=FP32[256,64]", "--arg", "b=FP32[256,64]", "--arg", "c=FP32[256,64]",
        "--arg", "scale=0.5"]


def test_run_a_jit_function_against_the_reference_interpreter(tmp_path):
    proc = cli("run", EXAMPLE, *ARGS, "-o", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("passed (blocked_add,")


def test_compile_a_jit_function_by_name(tmp_path):
    out = tmp_path / "out"
    proc = cli("compile", EXAMPLE, "--program", "blocked_add", *ARGS, "-o", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (out / "kernels" / "add_scaled_block.cpp").is_file()
    assert (out / "orchestration" / "blocked_add.cpp").is_file()
    # The scalar is a constant of the specialisation.
    assert "0.5" in (out / "passes_dump" / "00_frontend.py").read_text()


def test_a_missing_arg_points_at_the_parameter(tmp_path):
    proc = cli("compile", EXAMPLE, *ARGS[:6], "-o", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert lines[0].startswith(f"{EXAMPLE}:") and lines[0].endswith(
        "error: the specialisation gives no argument for parameter 'scale'")
    assert "give each parameter an --arg" in lines[-1]


def test_shapes_the_program_does_not_fit(tmp_path):
    # b narrower than a: its window of a's width runs past b's columns at the constant offset 0.
    args = list(ARGS)
    args[3] = "b=FP32[256,32]"
    proc = cli("run", EXAMPLE, *args, "-o", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"{EXAMPLE}:"), proc.stderr
    assert "pl.slice(b, [BLOCK, a.shape[1]], [i * BLOCK, 0])" in proc.stderr.splitlines()[1]


def test_fewer_rows_than_one_block_run_no_block(tmp_path):
    # As in PyPTO, a window that may run past its tensor at a run-time offset is no error when
    # compiling; here the loop has no trip, and c stays as it was.
    args = [a.replace("256", "32") for a in ARGS]
    proc = cli("run", EXAMPLE, *args, "-o", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_malformed_args_are_usage_errors(tmp_path):
    proc = cli("compile", EXAMPLE, "--arg", "a=FP32[256,x]", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--arg 'a=FP32[256,x]': dimension 'x'" in proc.stderr
    softmax = EXAMPLE.parent / "softmax.py"
    proc = cli("compile", softmax, "--arg", "n=4", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--arg is for @pl.jit functions" in proc.stderr
