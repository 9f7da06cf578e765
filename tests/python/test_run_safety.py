"""Nothing a program, a cache file or an argument does can kill or take over the caller of run():
the binary cache, golden views, time limits and Ctrl-C, arguments that do not fit, device
faults and the text of every message."""

import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CompileError, ParseError
from pypto.runtime import RunConfig, TensorSpec, run

# The run() fixtures of test_runtime: AddProgram (64 x 64), its specs and golden, a private cache.
from test_runtime import AddProgram, config, work  # noqa: F401 - work is a fixture
from test_runtime import golden as add_golden
from test_runtime import specs as add_specs

SPIN_SOURCE = '''
import pypto.language as pl

@pl.program
class SpinProgram:
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
'''
SpinProgram = pl.parse(SPIN_SOURCE)


def spin_specs():
    return [TensorSpec("a", [16, 16], pl.FP32, init_value=1.0),
            TensorSpec("c", [16, 16], pl.FP32, is_output=True)]


# ----- the binary cache --------------------------------------------------------------------------

def test_damaged_cached_library_is_rebuilt_with_a_note(work):
    assert run(AddProgram, add_specs(), add_golden, config(work)).passed
    (library,) = (work / "cache").glob("*.so")
    library.write_bytes(library.read_bytes()[:1000])  # truncated: would SIGBUS on dlopen
    result = run(AddProgram, add_specs(), add_golden, config(work))
    assert result.passed, result.error
    assert not result.cache_hit
    assert any("was not used" in n and "rebuilt" in n for n in result.notes), result.notes
    again = run(AddProgram, add_specs(), add_golden, config(work))
    assert again.passed and again.cache_hit and again.notes == []


def test_cache_directory_others_can_write_is_not_used(work, monkeypatch):
    shared = work / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(shared))
    result = run(AddProgram, add_specs(), add_golden, config(work))
    assert result.passed, result.error
    (note,) = [n for n in result.notes if "writable by other users" in n]
    assert not list(shared.glob("*.so"))
    replacement = pathlib.Path(re.search(r"private directory '([^']+)'", note).group(1))
    assert pathlib.Path(result.work_dir).exists() and replacement.is_dir()
    assert replacement.stat().st_mode & 0o777 == 0o700
    shutil.rmtree(replacement)  # made for this process only


# ----- golden views ------------------------------------------------------------------------------

def test_golden_may_keep_its_arrays_after_run(work):
    kept = {}

    def keeping(tensors, params=None):
        tensors["c"][:] = tensors["a"] + tensors["b"]
        kept.update(tensors)

    assert run(AddProgram, add_specs(), keeping, config(work)).passed
    for _ in range(3):  # reuse freed memory, if anything had been freed
        np.ones((512, 512)).sum()
    np.testing.assert_array_equal(kept["c"], kept["a"] + np.float32(2.0))
    assert kept["c"].shape == (64, 64) and kept["c"].flags.owndata


def test_golden_may_fork_and_read_its_arrays_in_the_child(work):
    # The run keeps its expected values out of the device process it forks, but only once the
    # golden has returned: a golden's own child still reads what the golden filled.
    statuses = []

    def forking(tensors, params=None):
        tensors["c"][:] = tensors["a"] + tensors["b"]
        pid = os.fork()
        if pid == 0:
            same = np.array_equal(tensors["c"], tensors["a"] + tensors["b"])
            os._exit(0 if same else 1)
        statuses.append(os.waitpid(pid, 0)[1])

    result = run(AddProgram, add_specs(), forking, config(work))
    assert result.passed, result.error
    assert statuses == [0]


# ----- time limits, Ctrl-C, the GIL, exceptions from golden --------------------------------------

def test_reference_interpreter_has_a_time_limit(work):
    start = time.monotonic()
    result = run(SpinProgram, spin_specs(), None, config(work, timeout=1.0))
    assert not result.passed
    assert "reference interpreter did not finish within 1 s" in result.error, result.error
    assert time.monotonic() - start < 30


def test_device_time_limit_follows_the_run_config(work):
    result = run(SpinProgram, spin_specs(), lambda t: None, config(work, timeout=1.0))
    assert not result.passed
    assert "did not finish within 1 s" in result.error, result.error


def test_other_python_threads_run_while_run_waits(work):
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    thread = threading.Thread(target=ticker)
    thread.start()
    start = time.monotonic()
    run(SpinProgram, spin_specs(), None, config(work, timeout=1.0))
    elapsed = time.monotonic() - start
    stop.set()
    thread.join()
    assert len(ticks) >= 0.5 * elapsed / 0.01, (len(ticks), elapsed)


CTRL_C_SCRIPT = '''
import sys, time
sys.path.insert(0, {here!r})
import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run
program = pl.parse({source!r})
specs = [TensorSpec("a", [16, 16], pl.FP32, init_value=1.0),
         TensorSpec("c", [16, 16], pl.FP32, is_output=True)]

def golden(tensors, params=None):
    print("golden", flush=True)

print("started", flush=True)
try:
    run(program, specs, {golden}, RunConfig(work_dir={work!r}))
except KeyboardInterrupt:
    print("KeyboardInterrupt after", time.monotonic(), flush=True)
    raise
print("run returned", flush=True)
'''


@pytest.mark.parametrize("stage", ["interpreter", "device"])
def test_ctrl_c_stops_run_within_a_second(work, stage):
    script = work / "ctrl_c.py"
    script.write_text(CTRL_C_SCRIPT.format(
        here=str(pathlib.Path(__file__).parent), source=SPIN_SOURCE, work=str(work / "out"),
        golden="None" if stage == "interpreter" else "golden"))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    assert proc.stdout.readline().strip() == "started"
    if stage == "device":
        assert proc.stdout.readline().strip() == "golden"  # the device part comes next
    time.sleep(1.5)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("Ctrl-C did not stop run()")
    waited = time.monotonic() - sent
    assert "KeyboardInterrupt after" in out, out + err
    assert "run returned" not in out
    assert proc.returncode != 0
    assert waited < 3.0, waited  # one second to stop, plus interpreter start-up and exit


def _forked_children(pid):
    """The children of ``pid`` that are forks of it (same command line), not programs it runs
    (the C++ compiler building the program library)."""
    def cmdline(p):
        try:
            return pathlib.Path(f"/proc/{p}/cmdline").read_bytes()
        except OSError:
            return None

    children = set()
    for task in pathlib.Path(f"/proc/{pid}/task").glob("*"):
        try:
            children.update(int(c) for c in (task / "children").read_text().split())
        except OSError:
            pass
    own = cmdline(pid)
    return {c for c in children if cmdline(c) == own}


def _alive(pid):
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_the_device_process_dies_with_a_killed_caller(work):
    # SIGKILL leaves the caller no time to clean up: the isolated device process it forked
    # must not keep spinning on its own.
    script = work / "killed.py"
    script.write_text(CTRL_C_SCRIPT.format(
        here=str(pathlib.Path(__file__).parent), source=SPIN_SOURCE, work=str(work / "out"),
        golden="golden"))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    assert proc.stdout.readline().strip() == "started"
    assert proc.stdout.readline().strip() == "golden"
    deadline = time.monotonic() + 120  # the program library may have to be built first
    children = set()
    while not children and time.monotonic() < deadline:
        time.sleep(0.1)
        children = _forked_children(proc.pid)
    assert children, "the run forked no device process"
    proc.kill()
    proc.communicate(timeout=20)
    deadline = time.monotonic() + 10
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = [c for c in children if _alive(c)]
    for c in survivors:
        os.kill(c, signal.SIGKILL)
    assert not survivors, f"device process(es) {survivors} outlived their killed caller"


@pytest.mark.parametrize("exception", [KeyboardInterrupt, SystemExit])
def test_keyboard_interrupt_and_system_exit_in_golden_propagate(work, exception):
    def golden(tensors, params=None):
        raise exception()

    with pytest.raises(exception):
        run(AddProgram, add_specs(), golden, config(work))


def test_other_golden_exceptions_fail_the_run_and_are_kept(work):
    def golden(tensors, params=None):
        raise ValueError("bad golden")

    result = run(AddProgram, add_specs(), golden, config(work))
    assert not result.passed
    assert "the golden function failed" in result.error and "bad golden" in result.error
    assert isinstance(result.exception, ValueError)


# ----- run() never raises for what the caller passes ---------------------------------------------

def raising_init(shape):
    raise RuntimeError("no data today")


@pytest.mark.parametrize("specs, cfg, expected", [
    ([TensorSpec("a", [64, 64], pl.FP32, init_value=raising_init)] + add_specs()[1:], {},
     "TensorSpec 'a': RuntimeError: no data today"),
    (None, {}, "run() needs tensor_specs, a list of TensorSpec; got NoneType"),
    ([42], {}, "tensor_specs must hold TensorSpec objects, got int"),
    (add_specs(), {"rtol": "tight"}, "RunConfig.rtol='tight' is not valid: expected a number"),
    (add_specs(), {"workers": 100000}, "RunConfig.workers=100000 is out of range: give 1 to 256"),
    (add_specs(), {"workers": 2.5}, "RunConfig.workers=2.5 is not valid: expected an int"),
    (add_specs(), {"strategy": "Fastest"}, "RunConfig.strategy='Fastest' is not valid"),
    (add_specs(), {"isolate": "yes"}, "RunConfig.isolate='yes' is not valid"),
    (add_specs(), {"timeout": -1.0}, "RunConfig.timeout=-1"),
    (add_specs(), {"platform": "gpu"}, "unknown platform 'gpu'"),
])
def test_run_reports_bad_arguments_instead_of_raising(work, specs, cfg, expected):
    result = run(AddProgram, specs, add_golden, config(work, **cfg))
    assert not result.passed
    assert expected in result.error, result.error


HUGE = pl.parse("""
import pypto.language as pl

@pl.program
class Huge:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.InOut[pl.Tensor[[1048576, 1048576], pl.FP32]]) -> pl.Tensor[[1048576, 1048576], pl.FP32]:
        return a
""")


def test_a_spec_too_large_for_memory_is_reported(work):
    result = run(HUGE, [TensorSpec("a", [2**20, 2**20], pl.FP32)], None, config(work))
    assert not result.passed
    assert "TensorSpec 'a' of shape [1048576, 1048576] does not fit in memory" in result.error, \
        result.error


def test_run_reports_a_config_that_is_not_a_run_config(work):
    result = run(AddProgram, add_specs(), add_golden, {"workers": 2})
    assert not result.passed and "config must be a pypto.runtime.RunConfig" in result.error


def test_duplicated_tensor_spec_is_named(work):
    specs = add_specs() + [TensorSpec("a", [64, 64], pl.FP32)]
    result = run(AddProgram, specs, add_golden, config(work))
    assert not result.passed
    assert "duplicated TensorSpec 'a'" in result.error, result.error


def test_nul_in_work_dir_is_an_error(work):
    result = run(AddProgram, add_specs(), add_golden, RunConfig(work_dir=str(work / "a\0b")))
    assert not result.passed
    assert "contains a NUL character" in result.error, result.error
    assert not (work / "a").exists()


# ----- device faults -----------------------------------------------------------------------------

DIV_SOURCE = '''
import pypto.language as pl

@pl.program
class DivProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def div(self, a: pl.Tensor[[16, 16], pl.INT32], b: pl.Tensor[[16, 16], pl.INT32],
            c: pl.Out[pl.Tensor[[16, 16], pl.INT32]]) -> pl.Tensor[[16, 16], pl.INT32]:
        for i in pl.range(1):
            c = pl.store(pl.add({expr}, 64 // (i + {shift})), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.INT32], b: pl.Tensor[[16, 16], pl.INT32],
             c: pl.Out[pl.Tensor[[16, 16], pl.INT32]]) -> pl.Tensor[[16, 16], pl.INT32]:
        c = self.div(a, b, c)
        return c
'''


@pytest.mark.parametrize("expr, shift, where", [
    ("pl.div(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16]))", 1, "div: pl.div"),
    ("pl.load(a, [0, 0], [16, 16])", 0, "div: integer division by zero (//)"),
])
@pytest.mark.parametrize("use_golden", [False, True])
def test_integer_division_by_zero_is_a_fault(work, expr, shift, where, use_golden):
    program = pl.parse(DIV_SOURCE.format(expr=expr, shift=shift))
    specs = [TensorSpec("a", [16, 16], pl.INT32, init_value=64),
             TensorSpec("b", [16, 16], pl.INT32, init_value=0),
             TensorSpec("c", [16, 16], pl.INT32, is_output=True)]
    # Without a golden the reference interpreter finds it; with one, the device must.
    result = run(program, specs, (lambda t: None) if use_golden else None, config(work))
    assert not result.passed
    assert "division by zero" in result.error, result.error
    if use_golden:
        assert where in result.error, result.error


def test_constant_division_by_zero_is_a_located_compile_error():
    with pytest.raises(ParseError) as info:
        pl.parse(DIV_SOURCE.format(expr="pl.load(a, [0, 0], [16, 16])", shift=0)
                 .replace("64 // (i + 0)", "64 // 0"))
    assert "division by zero" in str(info.value)
    assert info.value.lineno == 10 and "^" in str(info.value)


# ----- every message is ours ---------------------------------------------------------------------

def test_surrogate_escaped_program_text_is_a_located_parse_error():
    with pytest.raises(ParseError) as info:
        pl.parse("import pypto.language as pl\n@pl.program\nclass P\udcff:\n    pass\n")
    text = str(info.value)
    assert text.startswith("<string>:3:8: error:") and "not valid text" in text
    assert "incompatible function arguments" not in text


@pytest.mark.parametrize("output_dir, expected", [
    (b"/tmp/out\xff", "is not valid UTF-8"),
    ("/tmp/out\udcff", "is not valid UTF-8"),
    (42, "must be a path"),
])
def test_compile_rejects_output_dirs_it_cannot_use_with_our_message(output_dir, expected):
    with pytest.raises(CompileError) as info:
        ir.compile(AddProgram, output_dir=output_dir)
    assert expected in str(info.value)
    assert "incompatible function arguments" not in str(info.value)


def test_compile_accepts_a_bytes_output_dir(tmp_path):
    out = ir.compile(AddProgram, output_dir=os.fsencode(tmp_path / "out"), dump_passes=False)
    assert (pathlib.Path(out.output_dir) / "program.cpp").is_file()


def test_non_utf8_work_dir_is_reported(work):
    result = run(AddProgram, add_specs(), add_golden, RunConfig(work_dir=b"/tmp/x\xff"))
    assert not result.passed and "not valid UTF-8" in result.error, result.error
    assert "incompatible function arguments" not in result.error


def test_program_in_a_non_utf8_directory_compiles(tmp_path):
    folder = pathlib.Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/dir\xff"))
    folder.mkdir()
    (folder / "prog_in_odd_dir.py").write_text(
        "import pypto.language as pl\n\n@pl.program\nclass Odd:\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def main(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:\n"
        "        return a\n")
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
         "import prog_in_odd_dir; print(prog_in_odd_dir.Odd.name)", str(folder)],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Odd"


# ----- config values that can never work ---------------------------------------------------------

@pytest.mark.parametrize("field, value", [("rtol", float("nan")), ("atol", -1.0),
                                          ("rtol", float("inf"))])
def test_a_tolerance_that_can_never_pass_is_refused_at_config_time(field, value):
    with pytest.raises(ValueError, match=rf"RunConfig.{field}={value!r} is not valid: a tolerance "
                                         r"must be a finite number >= 0"):
        RunConfig(**{field: value})


def test_a_tolerance_set_later_is_refused_by_run(work):
    cfg = config(work)
    cfg.atol = -1.0
    result = run(AddProgram, add_specs(), add_golden, cfg)
    assert not result.passed
    assert "RunConfig.atol=-1.0 is not valid: a tolerance must be a finite number >= 0" \
        in result.error, result.error


def test_a_nul_in_the_platform_is_named(work):
    result = run(AddProgram, add_specs(), add_golden, config(work, platform="a2a3sim\0x"))
    assert not result.passed
    assert "the platform contains a NUL character (at offset 7)" in result.error, result.error


def test_no_memory_for_the_golden_copies_is_not_blamed_on_the_golden(work, monkeypatch):
    import pypto.runtime as runtime

    def no_memory(spec, arr):
        raise MemoryError()

    monkeypatch.setattr(runtime, "_initial_copy", no_memory)
    specs = add_specs()
    specs[2] = TensorSpec("c", [64, 64], pl.FP32, init_value=1.0, is_output=True)
    result = run(AddProgram, specs, add_golden, config(work))
    assert not result.passed
    assert result.error.startswith("out of memory copying the outputs' initial values for the "
                                   "golden function (16384 bytes)"), result.error
    assert "golden function failed" not in result.error
