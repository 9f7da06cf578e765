"""Resource exhaustion during a run is an error naming the resource, never an abort of the
caller: here, worker threads that cannot start under an address-space limit (ulimit -v), in
the caller's process and in an isolated run's device process."""

import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent

# 256 simulated cores need 256 threads with a stack each (8 MiB of address space by default):
# more than a 1.2 GB address space leaves after Python, numpy and the runtime are loaded.
LIMITED_SCRIPT = '''
import resource, sys
sys.path.insert(0, {here!r})
from test_runtime import AddProgram, specs, golden
from pypto.runtime import RunConfig, run
limit = 1200 << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
result = run(AddProgram, specs(), golden,
             RunConfig(isolate={isolate}, workers=256, work_dir={out!r}))
print("passed" if result.passed else "error: " + result.error, flush=True)
result = run(AddProgram, specs(), golden, RunConfig(isolate={isolate}, workers=2, work_dir={out!r}))
print("then passed" if result.passed else "then error: " + result.error, flush=True)
'''


@pytest.mark.parametrize("isolate", [False, True])
def test_threads_that_cannot_start_are_a_clear_error(tmp_path, isolate):
    script = tmp_path / "limited.py"
    script.write_text(LIMITED_SCRIPT.format(here=str(HERE), isolate=isolate,
                                            out=str(tmp_path / "out")))
    env = dict(os.environ, PYPTO_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # no abort (SIGABRT: -6)
    assert "terminate called" not in proc.stderr
    first, then = proc.stdout.splitlines()
    assert first.startswith("error: "), first
    # The resource and the count, and what to do; not a crash of the orchestration.
    assert "cannot start the device's worker threads" in first, first
    assert "of 256" in first, first
    assert "ulimit" in first and "fewer workers" in first, first
    assert "crashed" not in first and "orchestration" not in first, first
    # The caller is intact: a run with fewer workers works.
    assert then == "then passed", then
