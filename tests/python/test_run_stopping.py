"""Every run can be stopped: a run in the caller's process (isolate=False), a @pl.jit call and the
reference interpreter end at their time limit and on Ctrl-C, with a located error or
KeyboardInterrupt, and the caller can run again afterwards; an isolated run's device process
never outlives its caller or its own time limit."""

import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from pypto.runtime import RunConfig, run

from test_run_safety import SPIN_SOURCE, SpinProgram, _alive, _forked_children, spin_specs
from test_runtime import AddProgram, config, golden, specs, work  # noqa: F401 - work: fixture

HERE = pathlib.Path(__file__).parent

# A @pl.jit kernel whose loop never ends (2**40 trips), and one that ends.
JIT_MODULE = '''
import pypto.language as pl


@pl.jit
def spin(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 16])
        for i in pl.range(1099511627776):
            t = pl.add(t, 1.0)
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def add_one(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 16])
        c = pl.store(pl.add(t, 1.0), [0, 0], c)
    return c
'''


def no_check(tensors, params=None):
    pass  # a golden that checks nothing: the device part runs, the interpreter does not


def test_in_process_run_stops_at_its_time_limit_with_a_located_error(work):
    # The first run builds the program's library (not part of the device's time limit).
    result = run(SpinProgram, spin_specs(), no_check, config(work, isolate=False, timeout=0.5))
    assert not result.passed
    assert "did not finish within 0.5 s and was stopped" in result.error, result.error
    # Where the loop was: the kernel, and the pl.range loop of its source.
    assert "kernel 'spin'" in result.error, result.error
    assert "pl.range" in result.error, result.error
    start = time.monotonic()
    result = run(SpinProgram, spin_specs(), no_check, config(work, isolate=False, timeout=1.0))
    elapsed = time.monotonic() - start
    assert "did not finish within 1 s and was stopped" in result.error, result.error
    assert elapsed < 2.0, elapsed
    # The caller is intact: the next in-process run works.
    result = run(AddProgram, specs(), golden, config(work, isolate=False))
    assert result.passed, result.error


def test_jit_call_in_process_stops_at_its_time_limit(work, tmp_path):
    module = _jit_module(tmp_path)
    a = np.ones((16, 16), np.float32)
    c = np.zeros_like(a)
    cfg = RunConfig(work_dir=str(tmp_path / "out"), isolate=False, timeout=1.0)
    module.add_one(a, c, config=cfg)  # builds and loads both the runtime and a library
    with pytest.raises(Exception, match="did not finish within 1 s and was stopped") as info:
        module.spin(a, c, config=cfg)
    # The outlined kernel and the line of its pl.range loop in spin_jit.py.
    assert "kernel 'spin_incore_0'" in str(info.value) and "pl.range at line 9" in str(info.value)
    start = time.monotonic()
    with pytest.raises(Exception, match="did not finish within 1 s"):
        module.spin(a, c, config=cfg)  # cached now: only the run is timed
    assert time.monotonic() - start < 2.0
    module.add_one(a, c, config=cfg)
    np.testing.assert_array_equal(c, a + 1)


def _jit_module(tmp_path):
    import importlib.util

    path = tmp_path / "spin_jit.py"
    path.write_text(JIT_MODULE)
    spec = importlib.util.spec_from_file_location("spin_jit", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CTRL_C_SCRIPT = '''
import sys, time
sys.path.insert(0, {here!r})
import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run
sys.path.insert(0, {work!r})
import spin_jit

program = pl.parse({source!r})
specs = [TensorSpec("a", [16, 16], pl.FP32, init_value=1.0),
         TensorSpec("c", [16, 16], pl.FP32, is_output=True)]
cfg = RunConfig(work_dir={out!r}, isolate=False)
a = np.ones((16, 16), np.float32)
c = np.zeros_like(a)

def golden(tensors, params=None):
    print("device next", flush=True)

def endless():
    if {how!r} == "run":
        run(program, specs, golden, cfg)
    elif {how!r} == "interpreter":
        print("device next", flush=True)
        run(program, specs, None, cfg)
    else:
        spin_jit.add_one(a, c, config=cfg)  # the cores are started before the endless call
        print("device next", flush=True)
        spin_jit.spin(a, c, config=cfg)

print("started", flush=True)
try:
    endless()
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
# The caller is intact: another in-process run works.
spin_jit.add_one(a, c, config=cfg)
print("after", float(c[0, 0]), flush=True)
'''


@pytest.mark.parametrize("how", ["run", "jit", "interpreter"])
def test_ctrl_c_stops_an_in_process_run_within_a_second(work, how):
    (work / "spin_jit.py").write_text(JIT_MODULE)
    script = work / "ctrl_c_in_process.py"
    script.write_text(CTRL_C_SCRIPT.format(here=str(HERE), work=str(work), source=SPIN_SOURCE,
                                           out=str(work / "out"), how=how))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert proc.stdout.readline().strip() == "started"
        assert proc.stdout.readline().strip() == "device next"
        time.sleep(1.0 if how != "jit" else 0.5)
        # The endless part has begun (a first call may still be building: wait for a CPU-bound
        # process with no compiler child).
        _wait_until_spinning(proc.pid)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        line = proc.stdout.readline().strip()
        waited = time.monotonic() - sent
        assert line == "KeyboardInterrupt", line + proc.stderr.read()
        assert waited < 1.0, waited
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "after 2.0" in out, out + err
    assert proc.returncode == 0, err


def _wait_until_spinning(pid, limit=120):
    """Until `pid` has no child process (the C++ compiler building a library)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        children = set()
        for task in pathlib.Path(f"/proc/{pid}/task").glob("*"):
            try:
                children.update((task / "children").read_text().split())
            except OSError:
                pass
        if not children:
            time.sleep(0.3)
            return
        time.sleep(0.1)
    pytest.fail("the endless run never started")


ORPHAN_SCRIPT = '''
import sys
sys.path.insert(0, {here!r})
import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run
program = pl.parse({source!r})
specs = [TensorSpec("a", [16, 16], pl.FP32, init_value=1.0),
         TensorSpec("c", [16, 16], pl.FP32, is_output=True)]

def golden(tensors, params=None):
    print("golden", flush=True)

print("started", flush=True)
run(program, specs, golden, RunConfig(work_dir={out!r}, timeout={timeout}))
'''


def _start_isolated_spin(work, timeout):
    script = work / "isolated_spin.py"
    script.write_text(ORPHAN_SCRIPT.format(here=str(HERE), source=SPIN_SOURCE,
                                           out=str(work / "out"), timeout=timeout))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    assert proc.stdout.readline().strip() == "started"
    assert proc.stdout.readline().strip() == "golden"
    deadline = time.monotonic() + 120  # the library may have to be built first
    children = set()
    while not children and time.monotonic() < deadline:
        time.sleep(0.05)
        children = _forked_children(proc.pid)
    assert children, "the run forked no device process"
    return proc, children


def _gone_within(children, seconds):
    deadline = time.monotonic() + seconds
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = [c for c in children if _alive(c)]
    for c in survivors:
        os.kill(c, signal.SIGKILL)
    return not survivors


def test_device_process_of_a_sigkilled_caller_is_gone_within_two_seconds(work):
    proc, children = _start_isolated_spin(work, timeout=300)
    proc.kill()
    proc.communicate(timeout=20)
    assert _gone_within(children, 2.0), "the device process outlived its killed caller"


def test_device_process_keeps_its_own_time_limit_when_its_caller_cannot(work):
    # A stopped caller cannot kill its device process at the time limit; the process ends on
    # its own shortly after it (the limit rounded up plus a grace of 2 s).
    proc, children = _start_isolated_spin(work, timeout=2)
    try:
        os.kill(proc.pid, signal.SIGSTOP)
        assert all(_alive(c) for c in children)  # still running: the caller did not end it
        assert _gone_within(children, 7.0), "the device process ran past its own time limit"
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        proc.kill()
        proc.communicate(timeout=20)
