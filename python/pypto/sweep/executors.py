"""Where a sweep's jobs run: on Dask (an embedded local cluster, or an existing cluster by
address or Client), in a fresh process per job when Dask is not installed, or one after another in
this process (the reference the others are checked against, and the loop a benchmark compares
scheduling with). Every backend returns one row per job, whatever happens to the job."""

import concurrent.futures
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import uuid

from pypto.sweep.jobs import empty_row, run_job


class Progress:
    """Jobs done and failed, with the ETA, on stderr: a tqdm bar when tqdm is installed, else
    one line per job; nothing when disabled. ``on_row(row)`` is called for every row."""

    def __init__(self, total, enabled=True, on_row=None):
        self.total, self.done, self.failed = total, 0, 0
        self.enabled, self.on_row = enabled, on_row
        self._started = time.monotonic()
        self._bar = None
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=total, unit="job", desc="sweep", file=sys.stderr,
                                 dynamic_ncols=True)

    def row_done(self, row):
        self.done += 1
        self.failed += 0 if row["passed"] else 1
        if self._bar is not None:
            self._bar.set_postfix(failed=self.failed, refresh=False)
            self._bar.update(1)
        elif self.enabled:
            elapsed = time.monotonic() - self._started
            eta = elapsed / self.done * (self.total - self.done)
            print(f"sweep: {self.done}/{self.total} jobs done, {self.failed} failed, "
                  f"ETA {eta:.0f} s", file=sys.stderr, flush=True)
        if self.on_row is not None:
            self.on_row(row)

    def close(self):
        if self._bar is not None:
            self._bar.close()


def lost_row(job, reason):
    row = empty_row(job)
    row["error"] = f"the job did not complete: {reason}"
    return row


def dask_available():
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


def run_serially(jobs, progress):
    rows = []
    for job in jobs:
        row = run_job(job)
        progress.row_done(row)
        rows.append(row)
    return rows


def _package_root():
    """The folder holding the pypto package this process imported, for a child's PYTHONPATH (the
    caller may have found it through sys.path rather than the environment)."""
    import pypto

    return os.path.dirname(os.path.dirname(os.path.abspath(pypto.__file__)))


class _JobProcesses:
    """Runs jobs in fresh Python children (pypto.sweep.job_process.main) and can stop them
    all: on Ctrl-C (or any error of the caller's loop) the running children are killed and no
    job starts or is retried after."""

    def __init__(self, env=None):
        self.env = env  # None: this process's own
        # The package's folder first on the child's path, as the caller may have found pypto
        # through sys.path rather than PYTHONPATH; the main module is pypto's, never the caller's.
        self.command = [sys.executable, "-c",
                        f"import sys; sys.path.insert(0, {_package_root()!r}); "
                        f"from pypto.sweep.job_process import main; sys.exit(main())"]
        self._lock = threading.Lock()
        self._running = set()
        self._stopped = False

    def run_once(self, job):
        """(row, None), or (None, why the process gave no row)."""
        with self._lock:
            if self._stopped:
                return None, "the sweep was stopped"
            child = subprocess.Popen(self.command,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=self.env)
            self._running.add(child)
        try:
            out, err = child.communicate(pickle.dumps(job))
        finally:
            with self._lock:
                self._running.discard(child)
        if child.returncode == 0:
            try:
                return pickle.loads(out), None
            except (pickle.UnpicklingError, EOFError, AttributeError, ImportError) as e:
                return None, f"its worker process wrote no row ({type(e).__name__}: {e})"
        if child.returncode < 0:
            try:
                how = f"killed by {signal.Signals(-child.returncode).name}"
            except ValueError:
                how = f"killed by signal {-child.returncode}"
        else:
            how = f"exit code {child.returncode}"
        lines = err.decode(errors="replace").strip().splitlines()
        return None, how + (f": {lines[-1]}" if lines else "")

    def run(self, job):
        """The job's row; a job whose process died runs once more, then is a row saying so."""
        row, why = self.run_once(job)
        if row is None:
            row, again = self.run_once(job)
            if row is None:
                row = lost_row(job, f"its worker process died twice ({why}; then {again})")
        return row

    def stop(self):
        with self._lock:
            self._stopped = True
            for child in self._running:
                child.kill()


def run_on_processes(jobs, processes, progress):
    """Each job in a fresh Python process of its own (running ``pypto.sweep.job_process``),
    ``processes`` at a time. A process that dies takes only its own job with it; the job is run
    once more, and lost twice it is a row with its error. No process re-imports the caller's
    main module, so a script needs no ``if __name__ == "__main__":`` guard for this backend."""
    children = _JobProcesses()
    rows = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=processes) as pool:
        futures = {pool.submit(children.run, job): job for job in jobs}
        try:
            for future in concurrent.futures.as_completed(futures):
                job = futures[future]
                try:
                    row = future.result()
                except Exception as e:  # noqa: BLE001 - a row, never the end of the sweep
                    row = lost_row(job, f"{type(e).__name__}: {e}")
                rows[job.index] = row
                progress.row_done(row)
        except BaseException:
            # Ctrl-C: the pool's exit would otherwise wait for every queued job to run.
            children.stop()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return [rows[job.index] for job in jobs]


def spawn_reruns_main():
    """Whether multiprocessing's spawn would run the caller's main module again in a child (the
    rule of multiprocessing/spawn.py): for a script or a ``python -m module``, but not for a
    package's ``__main__`` (``python -m pypto.sweep``, ``pypto sweep``), ``python -c``, stdin,
    or a notebook, whose main module has no file."""
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None:
        return not (name == "__main__" or name.endswith(".__main__"))
    path = getattr(main, "__file__", None)
    return path is not None and os.path.splitext(os.path.basename(path))[0] != "ipython"


def embedded_cluster(processes, subprocess_workers=None):
    """A cluster on this machine: the scheduler in this process, and ``processes`` Dask workers of
    one thread each (the compile keeps its profiler per thread; processes also keep one job's
    crash from another), each under a nanny that restarts it when it dies, no dashboard.

    A LocalCluster starts its nannies with multiprocessing's spawn, which re-runs the caller's
    main module in every child: a script calling sweep() without an ``if __name__ ==
    "__main__":`` guard would start its sweep again in each worker ("Nanny failed to start").
    Called from such a module, each nanny runs in a ``python -m dask spec`` process of its own
    instead (Dask's SubprocessWorker), which costs a second interpreter start per worker (about
    twice LocalCluster's start-up); from anywhere else (``pypto sweep``, a notebook) it is a
    LocalCluster. ``subprocess_workers`` True or False overrides that choice (a script with a
    guard may take the LocalCluster)."""
    import dask
    from distributed import LocalCluster, Scheduler, SpecCluster
    from distributed.deploy.subprocess import SubprocessWorker

    # A job whose worker is lost is run once more, then reported (Dask's default is 3 tries);
    # the scheduler reads this when it is made, here.
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        # No dashboard, and the scheduler's HTTP endpoints on a free port rather than 8787,
        # which another cluster on the machine may hold.
        if subprocess_workers is None:
            subprocess_workers = spawn_reruns_main()
        if not subprocess_workers:
            return LocalCluster(n_workers=processes, threads_per_worker=1, processes=True,
                                dashboard_address=None, silence_logs=logging.ERROR,
                                scheduler_kwargs={"dashboard": False, "dashboard_address": ":0"})
        nanny = {"cls": SubprocessWorker,
                 "options": {"worker_class": "distributed.Nanny",
                             "worker_kwargs": {"nthreads": 1, "host": "127.0.0.1",
                                               "silence_logs": logging.ERROR}}}
        return SpecCluster(
            scheduler={"cls": Scheduler,
                       "options": {"host": "127.0.0.1", "port": 0, "dashboard": False,
                                   "dashboard_address": ":0"}},
            workers={i: nanny for i in range(processes)}, worker=nanny,
            silence_logs=logging.ERROR, name="pypto-sweep")


def run_on_dask(jobs, progress, client=None, scheduler=None, processes=2):
    """Submits every job to Dask (``retries=1``) and collects the rows as they complete. Uses
    ``client``, else connects to ``scheduler`` (tcp://HOST:PORT), else starts and stops an
    embedded local cluster (embedded_cluster)."""
    from distributed import Client, as_completed

    cluster = own_client = None
    if client is None:
        if scheduler:
            client = own_client = Client(scheduler, timeout="30s")
        else:
            cluster = embedded_cluster(processes)
            client = own_client = Client(cluster)
            try:
                client.wait_for_workers(1, timeout=120)
            except TimeoutError as e:
                raise RuntimeError("sweep: no worker of the local Dask cluster started within "
                                   "120 s (is `python -m dask` runnable?); try "
                                   "backend='processes'") from e
    try:
        token = uuid.uuid4().hex[:12]
        futures = {}
        for job in jobs:
            future = client.submit(run_job, job, key=f"pypto-sweep-{token}-{job.index}",
                                   retries=1, pure=False)
            futures[future] = job
        rows = {}
        for future in as_completed(list(futures)):
            job = futures[future]
            try:
                row = future.result()
            except Exception as e:  # noqa: BLE001 - KilledWorker, a lost connection...
                row = lost_row(job, f"{type(e).__name__}: {e}")
            rows[job.index] = row
            progress.row_done(row)
        return [rows[job.index] for job in jobs]
    finally:
        if own_client is not None:
            own_client.close()
        if cluster is not None:
            cluster.close()
