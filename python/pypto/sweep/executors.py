"""Where a sweep's jobs run: on Dask (an embedded LocalCluster, or an existing cluster by
address or Client), in a local process pool when Dask is not installed, or one after another in
this process (the reference the others are checked against, and the loop a benchmark compares
scheduling with). Every backend returns one row per job, whatever happens to the job."""

import concurrent.futures
import logging
import multiprocessing
import sys
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


def run_on_processes(jobs, workers, progress):
    """A spawn-started process pool (no fork of a threaded parent). A pool whose worker process
    died runs the jobs that were lost once more in a fresh pool; lost twice, a job is a row with
    its error."""
    rows = {}
    pending = list(jobs)
    for attempt in range(2):
        context = multiprocessing.get_context("spawn")
        lost = []
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers,
                                                    mp_context=context) as pool:
            futures = {pool.submit(run_job, job): job for job in pending}
            for future in concurrent.futures.as_completed(futures):
                job = futures[future]
                try:
                    row = future.result()
                except concurrent.futures.process.BrokenProcessPool as e:
                    if attempt == 0:
                        lost.append(job)
                        continue
                    row = lost_row(job, f"its worker process died twice ({e})")
                except Exception as e:  # noqa: BLE001 - a row, never the end of the sweep
                    row = lost_row(job, f"{type(e).__name__}: {e}")
                rows[job.index] = row
                progress.row_done(row)
        if not lost:
            break
        pending = lost
    return [rows[job.index] for job in jobs]


def embedded_cluster(workers):
    """A LocalCluster of `workers` single-threaded worker processes (the compile keeps its
    profiler per thread; processes also keep one job's crash from another), no dashboard."""
    import dask
    from distributed import LocalCluster

    # A job whose worker is lost is run once more, then reported (Dask's default is 3 tries).
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        # No dashboard, and the scheduler's HTTP endpoints on a free port rather than 8787,
        # which another cluster on the machine may hold.
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                            dashboard_address=None, silence_logs=logging.ERROR,
                            scheduler_kwargs={"dashboard": False, "dashboard_address": ":0"})


def run_on_dask(jobs, progress, client=None, scheduler=None, workers=2):
    """Submits every job to Dask (``retries=1``) and collects the rows as they complete. Uses
    ``client``, else connects to ``scheduler`` (tcp://HOST:PORT), else starts and stops an
    embedded LocalCluster."""
    from distributed import Client, as_completed

    cluster = own_client = None
    if client is None:
        if scheduler:
            client = own_client = Client(scheduler, timeout="30s")
        else:
            cluster = embedded_cluster(workers)
            client = own_client = Client(cluster)
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
