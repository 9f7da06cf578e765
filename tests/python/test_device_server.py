"""The kept device server of isolated runs (src/runtime/device_server.h): one process serves the
isolated runs and @pl.jit calls of a caller; a kernel that crashes ends it, not the caller, and
the next run gets another; it ends with its caller, on pypto.runtime.shutdown(), and when the
PYPTO_* environment changes; two threads calling at once each get correct results."""

import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, shutdown

from test_runtime import AddProgram, config, golden, specs, work  # noqa: F401 - work: fixture

N = 64


@pl.jit
def scale(a: pl.Tensor, c: pl.Out[pl.Tensor], k: pl.Scalar[pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(pl.mul(pl.load(a, [0, 0], [N, N]), k), [0, 0], c)
    return c


def servers():
    """The device servers this process started."""
    me = str(os.getpid())
    found = set()
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            comm = (proc / "comm").read_text().strip()
        except OSError:
            continue
        if stat[1] == me and comm == "pypto-device" and stat[0] != "Z":
            found.add(int(proc.name))
    return found


def cfg(tmp_path, timeout=300.0):
    return RunConfig(work_dir=str(tmp_path / "out"), timeout=timeout)


def test_isolated_calls_are_served_by_one_kept_process(tmp_path):
    shutdown()
    a = np.random.default_rng(0).standard_normal((N, N)).astype(np.float32)
    c = np.zeros_like(a)
    scale(a, c, 2.0, config=cfg(tmp_path))
    first = servers()
    assert len(first) == 1
    for _ in range(5):
        c[:] = 0
        scale(a, c, 2.0, config=cfg(tmp_path))
        np.testing.assert_allclose(c, a * 2.0, rtol=1e-6)
        assert scale.last_call.cache_hit
    assert servers() == first
    # Another specialisation is another library, loaded after the server started: it runs in a
    # server started after it (the servers use the caller's libraries and load none).
    scale(a, c, 3.0, config=cfg(tmp_path))
    np.testing.assert_allclose(c, a * 3.0, rtol=1e-6)
    assert servers() - first


def test_shutdown_ends_the_server_is_idempotent_and_the_next_run_starts_one(tmp_path):
    a = np.ones((N, N), np.float32)
    c = np.zeros_like(a)
    scale(a, c, 2.0, config=cfg(tmp_path))
    assert servers()
    shutdown()
    shutdown()
    assert not servers()
    scale(a, c, 5.0, config=cfg(tmp_path))
    np.testing.assert_array_equal(c, a * 5.0)
    assert len(servers()) == 1


def test_a_crashing_kernel_ends_its_server_not_the_caller(work, monkeypatch):
    shutdown()
    assert run_add(work).passed
    before = servers()
    # Every load of the generated kernels dereferences a null pointer (as test_runtime's
    # test_faulting_kernel_is_contained builds them).
    fault = work / "fault.h"
    fault.write_text("#define load(...) load(__VA_ARGS__) + *(volatile int*)0\n"
                     "#define load_view(...) load_view(__VA_ARGS__) + *(volatile int*)0\n")
    monkeypatch.setenv("CXX", f"c++ -include {fault}")
    result = run_add(work)
    assert not result.passed and "SIGSEGV" in result.error, result.error
    assert "kernel 'add_kernel' crashed with SIGSEGV" in result.error, result.error
    assert servers() <= before, "the server that crashed is still there"
    monkeypatch.delenv("CXX")
    assert run_add(work).passed
    # The first library is in the server it ran in: it is served there again.
    assert servers() == before


def run_add(work):
    from pypto.runtime import run

    return run(AddProgram, specs(), golden, config(work))


def test_two_threads_calling_at_once_get_their_own_results(tmp_path):
    shutdown()
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((N, N)).astype(np.float32) for _ in range(2)]
    failures = []

    def calls(which):
        out = np.zeros((N, N), np.float32)
        for k in range(20):
            factor = float(which * 100 + k)
            scale(inputs[which], out, factor, config=cfg(tmp_path / str(which)))
            if not np.allclose(out, inputs[which] * factor, rtol=1e-6):
                failures.append((which, k))

    threads = [threading.Thread(target=calls, args=(w,)) for w in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not failures
    # A server dies with the thread that started it (its parent-death signal is the thread's):
    # both threads have ended, and their servers go (the signal takes a moment to land).
    deadline = time.monotonic() + 5
    while servers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not servers()


def test_a_changed_pypto_environment_gets_a_new_server(tmp_path, monkeypatch):
    a = np.ones((N, N), np.float32)
    c = np.zeros_like(a)
    scale(a, c, 2.0, config=cfg(tmp_path))
    before = servers()
    monkeypatch.setenv("PYPTO_PIN_WORKERS", "0")
    scale(a, c, 3.0, config=cfg(tmp_path))
    after = servers()
    assert after and not (after & before)
    np.testing.assert_array_equal(c, a * 3.0)


EXIT_SCRIPT = '''
import sys
sys.path.insert(0, {here!r})
import numpy as np
from test_device_server import scale, servers
from pypto.runtime import RunConfig
a = np.ones((64, 64), np.float32)
c = np.zeros_like(a)
scale(a, c, 2.0, config=RunConfig(work_dir={out!r}))
print(*sorted(servers()), flush=True)
'''


@pytest.mark.parametrize("how", ["exit", "SIGKILL"])
def test_the_server_ends_with_its_caller(tmp_path, how):
    script = tmp_path / "caller.py"
    script.write_text(EXIT_SCRIPT.format(here=str(pathlib.Path(__file__).parent),
                                         out=str(tmp_path / "out")))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert len(pids) == 1, proc.stderr.read()
    if how == "SIGKILL":
        proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 5
    while pathlib.Path(f"/proc/{pids[0]}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pathlib.Path(f"/proc/{pids[0]}").exists(), "the server outlived its caller"
