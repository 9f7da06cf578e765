"""Multi-rank programs over MPI (DistributedConfig(transport="mpi"), docs/multi-rank.md): the
tests start ``mpirun -n 4`` on this machine, each process one rank of the same programs
(tests/python/multi_rank_programs/mpi_rank.py), and compare what every rank ends with to the
forked shared-memory run and to numpy; then they kill one rank of a run and check that the run
ends naming it and leaves no process behind."""

import importlib.util
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig

HERE = pathlib.Path(__file__).parent / "multi_rank_programs"
sys.path.insert(0, str(HERE))
# (Not mpi_rank.py: importing mpi4py would make this process an MPI process, whose environment
# would confuse the mpirun it starts.)
import mpi_programs as programs  # noqa: E402

N = 4

# Without MPI on the machine (scripts/setup.sh installs Open MPI and mpi4py) there is nothing to
# launch; with it, a missing MPI transport library fails the tests with its message.
pytestmark = pytest.mark.skipif(
    shutil.which("mpirun") is None or importlib.util.find_spec("mpi4py") is None,
    reason="needs mpirun and mpi4py (scripts/setup.sh installs them)")


def _mpirun(mode, out, **kwargs):
    # As root (CI, containers) Open MPI wants to be told; 4 ranks on fewer cores oversubscribe.
    command = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-n", str(N),
               sys.executable, str(HERE / "mpi_rank.py"), mode, str(out)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, **kwargs)


@pytest.fixture(scope="module")
def mpi_run(tmp_path_factory):
    """One mpirun of every program (starting MPI and Python four times costs more than a run)."""
    out = tmp_path_factory.mktemp("mpi")
    proc = _mpirun("run", out)
    try:
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, output
    return out


def _forked(program):
    compiled = ir.compile(program, distributed_config=DistributedConfig(device_ids=list(range(N))))
    x = programs.inputs(N)
    y = np.zeros_like(x)
    compiled(x, y)
    return x, y


@pytest.mark.parametrize("name", ["ring", "allreduce"])
def test_every_rank_ends_with_the_forked_result(mpi_run, name):
    x, forked = _forked(programs.PROGRAMS[name])
    if name == "ring":
        golden = x + np.roll(x, 1, axis=0)  # out[r] = inp[r] + inp[r - 1]
    else:
        golden = np.broadcast_to(N * x.astype(np.float64).sum(axis=0), x.shape)
    np.testing.assert_allclose(forked, golden, rtol=1e-5, atol=1e-4)
    for r in range(N):
        # Every rank's tensors end as the forked run's: each rank's rows reach all of them.
        np.testing.assert_array_equal(np.load(mpi_run / f"{name}.rank{r}.npy"), forked)


def test_the_profile_merges_every_rank_on_a_track_of_its_own(mpi_run):
    profile = json.loads((mpi_run / "ring.profile0.json").read_text())
    execute = [c for s in profile["stages"] if s["name"] == "device_execution"
               for c in s["children"] if c["name"] == "execute"][0]
    # (In the order they started, which MPI's start-up decides.)
    ranks = sorted((c for c in execute["children"] if c["name"].startswith("rank ")),
                   key=lambda c: c["name"])
    assert [r["name"] for r in ranks] == [f"rank {r}" for r in range(N)]
    named = {t["id"]: t["name"] for t in profile["threads"]}
    assert [named[r["thread"]] for r in ranks] == [f"rank {r}" for r in range(N)]

    def names(stage):
        yield stage["name"]
        for child in stage["children"]:
            yield from names(child)

    for rank in ranks:
        assert "run" in list(names(rank))
        # Each rank's one wait for its predecessor's row, under its run.
        assert [n for n in names(rank) if n.startswith("signal_wait:")] == \
            ["signal_wait:signal[0, 0] >= 1"]
    # The ranks' timelines overlap: they ran at once, on clocks lined up at the windows' opening.
    assert max(r["start"] for r in ranks) < min(r["start"] + r["seconds"] for r in ranks)
    # Every rank holds the same merged timeline.
    other = json.loads((mpi_run / "ring.profile3.json").read_text())
    other_execute = [c for s in other["stages"] if s["name"] == "device_execution"
                     for c in s["children"] if c["name"] == "execute"][0]
    assert sorted(c["name"] for c in other_execute["children"]) == [r["name"] for r in ranks]


def test_a_failing_rank_or_a_wait_out_of_time_fails_the_call_on_every_rank(tmp_path):
    proc = _mpirun("fail", tmp_path)
    try:
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, output
    for case in ["timeout", "failure"]:
        errors = {(tmp_path / f"{case}.error{r}").read_text() for r in range(N)}
        assert len(errors) == 1, errors  # every rank raises the same error
        [error] = errors
        if case == "timeout":
            # No wait hangs: each fails after the signal timeout, naming its rank and cell.
            assert "of 4 failed: " in error and "pld.system.wait on signal[0, 0] (waiting " \
                "for >= 1, it holds 0) timed out after 0.5 s" in error, error
        else:
            assert error.startswith("program 'RankOneFails': rank 1 of 4 failed: "), error
            assert "exceed the tensor view of shape [1, 8]" in error
            assert error.endswith("(rank(s) 0, 2, 3 stopped because of it)"), error


def test_a_program_run_without_mpirun_says_how_to_start_it():
    # In a process of its own: MPI initialised here would be inherited by the mpiruns above.
    script = (f"import sys; sys.path.insert(0, {str(HERE)!r})\n"
              "import numpy as np, mpi_programs as p\n"
              "from pypto import ir\n"
              "from pypto.ir.distributed_compiled_program import DistributedConfig\n"
              "ir.compile(p.RingExchange, distributed_config=DistributedConfig(\n"
              "    device_ids=[0, 1, 2, 3], transport='mpi'))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0
    assert ("ValueError: the program has 4 rank(s) (DistributedConfig.device_ids) but 1 MPI "
            "process(es) run it: start it with mpirun -n 4") in proc.stderr, proc.stderr


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_killing_a_rank_ends_the_run_naming_it_and_leaves_no_process(tmp_path):
    proc = _mpirun("wait", tmp_path)
    try:
        deadline = time.monotonic() + 90
        pids = {}
        while len(pids) < N and time.monotonic() < deadline and proc.poll() is None:
            pids = {int(p.suffix[1:]): int(p.read_text()) for p in tmp_path.glob("pid.*")
                    if p.read_text()}
            time.sleep(0.05)
        assert len(pids) == N, proc.communicate()[0] if proc.poll() is not None else pids
        time.sleep(2.0)  # the ranks are in their waits by now
        os.kill(pids[2], signal.SIGKILL)
        output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode != 0
    # mpirun names the rank that died; the others say why they end.
    assert "process rank 2 with PID" in output and "exited on signal 9" in output, output
    # (Each survivor that had begun its run; on a busy machine one may still be starting it.)
    assert re.search(r"pypto: rank [013] of 4 \(program 'WaitForPeers'\) was ended by SIGTERM "
                     r"during its run: mpirun ends every rank once one rank fails or dies",
                     output), output
    time.sleep(0.5)
    assert [pid for pid in pids.values() if _alive(pid)] == []
    survivors = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True)
    assert survivors.stdout == "", survivors.stdout
