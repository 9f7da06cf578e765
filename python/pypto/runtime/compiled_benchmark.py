"""``benchmark(compiled, args, rounds=..., warmup=...)`` of an ``ir.compile`` result: PyPTO's
form of :func:`pypto.runtime.benchmark`, which launches a compiled program on tensors the
caller owns (updated in place, like a call) and returns :class:`BenchmarkStats`.

The program is loaded once; each of the ``warmup + rounds`` launches runs it on the simulated
device. ``device_wall_us`` is what the device measured for each measured launch (the program's
own time, as the profile's ``device_execution`` stage shows it), ``host_wall_us`` the caller's
wait for it, launch overhead included. Of a multi-rank program (``DistributedCompiledProgram``)
each launch runs every rank: ``per_rank("device")`` holds each rank's device time per round,
``device_wall_us`` the slowest rank's, and ``per_round("union")`` the window from the first
rank's start to the last rank's end."""

import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

__all__ = ["BenchmarkStats", "benchmark_compiled"]


@dataclass
class BenchmarkStats:
    """Per-launch timings of a benchmark of a compiled program, microseconds, warmup
    launches excluded."""

    device_wall_us: List[float] = field(default_factory=list)
    host_wall_us: List[float] = field(default_factory=list)
    rounds: int = 0
    warmup: int = 0
    # A multi-rank program's: each rank's device time per measured round, by rank, and each
    # round's window from the first rank's start to the last rank's end. Its device_wall_us is
    # then the slowest rank's device time of each round, as PyPTO's.
    rank_device_us: Dict[int, List[float]] = field(default_factory=dict)
    union_us: List[float] = field(default_factory=list)
    # Always False here: every launch of a multi-rank program is one round of every rank.
    fallback_flattened: bool = False

    def per_rank(self, metric: str = "device") -> Dict[int, List[float]]:
        """A multi-rank program's samples per rank, ``{rank: [round0, ...]}`` (µs); ``{}`` for a
        single-chip program. Only ``"device"`` is measured per rank on this device."""
        if metric != "device":
            raise ValueError(f"per_rank: this device measures each rank's device time only "
                             f"(metric 'device'), not {metric!r}")
        return {rank: list(series) for rank, series in self.rank_device_us.items()}

    @property
    def samples(self) -> List[float]:
        """The device samples (``device_wall_us``)."""
        return self.device_wall_us

    @property
    def device_us_min(self) -> float:
        return min(self.device_wall_us) if self.device_wall_us else 0.0

    @property
    def device_us_max(self) -> float:
        return max(self.device_wall_us) if self.device_wall_us else 0.0

    @property
    def device_us_median(self) -> float:
        return statistics.median(self.device_wall_us) if self.device_wall_us else 0.0

    @property
    def device_us_mean(self) -> float:
        return statistics.fmean(self.device_wall_us) if self.device_wall_us else 0.0

    @property
    def device_us_stdev(self) -> float:
        return statistics.stdev(self.device_wall_us) if len(self.device_wall_us) > 1 else 0.0

    @property
    def all_zero_device(self) -> bool:
        """True when there are samples and every one is 0 (never on this device, which
        times every launch)."""
        return bool(self.device_wall_us) and not any(self.device_wall_us)

    def per_round(self, metric: str = "device") -> List[float]:
        """The samples of one metric per measured round: ``"device"`` or ``"host"``."""
        if metric == "device":
            return list(self.device_wall_us)
        if metric == "host":
            return list(self.host_wall_us)
        if metric == "union" and self.rank_device_us:
            return list(self.union_us)
        raise ValueError(f"per_round: metric must be 'device' or 'host' (or 'union' for a "
                         f"multi-rank program), got {metric!r}")

    def summary(self) -> str:
        return (f"{self.rounds} rounds (+{self.warmup} warmup): device min "
                f"{self.device_us_min:.1f} us, median {self.device_us_median:.1f} us, max "
                f"{self.device_us_max:.1f} us")


def benchmark_compiled(compiled: Any, args: Sequence[Any], *, rounds: int = 100, warmup: int = 3,
                       platform: Optional[str] = None, device_id: Optional[int] = None,
                       config: Any = None, persistent: bool = False,
                       reset_persistent_windows: Optional[bool] = None) -> BenchmarkStats:
    """Launches ``compiled`` on ``args`` ``warmup`` times unmeasured, then ``rounds`` times
    measured. ``platform`` and ``device_id`` (or a ``config``, not both) pick the run's
    settings as for a call; ``persistent`` and ``reset_persistent_windows`` concern resident
    window buffers of NPU ranks and change nothing here."""
    from pypto.runtime import RunConfig  # here: pypto.runtime imports this module

    del persistent, reset_persistent_windows  # NPU-only options (see above)
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds <= 0:
        raise ValueError(f"benchmark: rounds must be a positive integer, got {rounds!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"benchmark: warmup must be a non-negative integer, got {warmup!r}")
    if config is not None and (platform is not None or device_id is not None):
        raise ValueError("benchmark: pass config= or platform=/device_id=, not both")
    if config is None:
        config = RunConfig()
        if platform is not None:
            config.platform = platform
        if device_id is not None:
            config.device_id = device_id
    _, _, launch, _ = compiled._prepared_call(tuple(args), config)
    stats = BenchmarkStats(rounds=rounds, warmup=warmup)
    for i in range(warmup + rounds):
        start = time.perf_counter()
        device_seconds = launch(None)
        host_seconds = time.perf_counter() - start
        if i < warmup:
            continue
        stats.host_wall_us.append(host_seconds * 1e6)
        ranks = getattr(getattr(compiled, "last_call", None), "rank_seconds", None)
        if not ranks:
            stats.device_wall_us.append(device_seconds * 1e6)
            continue
        for rank, seconds in enumerate(ranks):
            stats.rank_device_us.setdefault(rank, []).append(seconds * 1e6)
        stats.device_wall_us.append(max(ranks) * 1e6)
        stats.union_us.append(device_seconds * 1e6)
    return stats
