"""``python -m pypto.sweep.job_process``: runs one sweep job in a process of its own, for the
process-pool backend (executors.run_on_processes). Reads the pickled Job from stdin and writes
the pickled row to stdout.

A fresh interpreter started this way imports only pypto, never the caller's main module (which
multiprocessing's spawn start method re-runs, so that a script calling sweep() without an
``if __name__ == "__main__":`` guard would start its sweep again in every worker)."""

import os
import pickle
import sys


def main():
    job = pickle.load(sys.stdin.buffer)
    # Whatever the job prints (the device, a kernel) goes to stderr; stdout carries the row only.
    row_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from pypto.sweep.jobs import run_job

    row = run_job(job)
    pickle.dump(row, row_out, protocol=pickle.HIGHEST_PROTOCOL)
    row_out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
