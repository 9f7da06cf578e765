"""One rank of tests/python/test_multi_rank_mpi.py, started by ``mpirun -n N``:

    python mpi_rank.py run OUT    runs mpi_programs.PROGRAMS over MPI on inputs(N); rank r
                                  saves its outputs (OUT/<program>.rank<r>.npy) and its view of
                                  the call's profile (OUT/<program>.profile<r>.json)
    python mpi_rank.py fail OUT   runs a program whose waits time out, then one whose rank 1
                                  fails; rank r saves each error (OUT/<case>.error<r>)
    python mpi_rank.py wait OUT   writes its pid (OUT/pid.<r>), then waits for a signal nobody
                                  raises (the test kills a rank meanwhile)
"""

import json
import os
import pathlib
import sys

import numpy as np
from mpi4py import MPI

sys.path.insert(0, os.path.dirname(__file__))
import mpi_programs as programs  # noqa: E402
from pypto import ir  # noqa: E402
from pypto.ir.distributed_compiled_program import DistributedConfig  # noqa: E402
from pypto.runtime import RunConfig  # noqa: E402

def main(mode, out):
    comm = MPI.COMM_WORLD
    rank, n = comm.Get_rank(), comm.Get_size()
    if mode == "wait":
        compiled = ir.compile(programs.WaitForPeers, distributed_config=DistributedConfig(
            device_ids=list(range(n)), transport="mpi", signal_timeout=120))
        (out / f"pid.{rank}").write_text(str(os.getpid()))
        compiled(np.zeros((n, 1, 8), np.float32))
        return
    if mode == "fail":
        for case, program, timeout in [("timeout", programs.WaitForPeers, 0.5),
                                       ("failure", programs.RankOneFails, 60.0)]:
            compiled = ir.compile(program, distributed_config=DistributedConfig(
                device_ids=list(range(n)), transport="mpi", signal_timeout=timeout))
            try:
                compiled(np.zeros((n, 1, 8), np.float32))
            except RuntimeError as e:
                (out / f"{case}.error{rank}").write_text(str(e))
        return
    for name, program in programs.PROGRAMS.items():
        compiled = ir.compile(program, distributed_config=DistributedConfig(
            device_ids=list(range(n)), transport="mpi"))
        x = programs.inputs(n)
        y = np.zeros_like(x)
        compiled(x, y, config=RunConfig(compile_profiling=True))
        np.save(out / f"{name}.rank{rank}.npy", y)
        (out / f"{name}.profile{rank}.json").write_text(json.dumps(compiled.last_call.profile))


if __name__ == "__main__":
    main(sys.argv[1], pathlib.Path(sys.argv[2]))
