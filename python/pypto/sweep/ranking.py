"""Which job of a sweep is fastest, and how sure that is.

Jobs are ranked by throughput: the elements their program writes per launch (the entry
function's Out/InOut tensors, from the program itself) over the median of their measured launch
times, so that configurations of different problem sizes compare (for jobs of one size it is the
same order as by time); when some job's element count is unknown (a shape that is not a
constant), all are ranked by launches per second instead. One job is called faster than another only when a bootstrap of the two
medians says so with at least CONFIDENCE; otherwise the two are a tie and share a rank. A single
measured launch per job gives no spread to judge by, so such a ranking states no confidence.
"""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import numpy as np

# Below this probability that the faster-looking job really has the higher median throughput,
# two jobs are reported as a tie.
CONFIDENCE = 0.95
# Resamples of each bootstrap: the confidence is then known to about +-0.5 %, far finer than
# the 95 % line it is compared with.
BOOTSTRAP_RESAMPLES = 4000
# Fewer measured launches than this per job leave no spread worth resampling.
MIN_ROUNDS_FOR_CONFIDENCE = 3


def round_throughputs(row: Dict[str, Any], per_element: bool = True) -> Optional[np.ndarray]:
    """Elements (or, with ``per_element`` False, launches) per second of each measured launch of
    a row; None when the row has no times or its program's element count is unknown. A row with
    a median but not its rounds (made by hand, or by an older version) counts as one round."""
    times = row.get("round_times_s") or ([row["device_median_s"]]
                                         if row.get("device_median_s") else None)
    elements = row.get("elements") if per_element else 1
    if not times or not elements:
        return None
    times = np.asarray(times, dtype=float)
    if np.any(times <= 0):
        return None
    return elements / times


def confidence_faster(fast: np.ndarray, slow: np.ndarray, seed: int = 0) -> float:
    """The bootstrap probability that ``fast``'s median is above ``slow``'s (ties of the
    resampled medians count half). The seed is fixed so that one set of rounds always gets
    the same verdict."""
    rng = np.random.default_rng(seed)
    fast_medians = np.median(rng.choice(fast, size=(BOOTSTRAP_RESAMPLES, fast.size)), axis=1)
    slow_medians = np.median(rng.choice(slow, size=(BOOTSTRAP_RESAMPLES, slow.size)), axis=1)
    return float(np.mean(fast_medians > slow_medians) + 0.5 * np.mean(fast_medians == slow_medians))


@dataclass
class Ranking:
    """The order of the passed, measured jobs, fastest first.

    ``best``: the job of highest median throughput; ``ties``: the other jobs it cannot be told
    apart from (rank 1 too); ``runner_up``: the second job of the order; ``confidence``: the
    probability that ``best`` beats ``runner_up`` (None with fewer than
    MIN_ROUNDS_FOR_CONFIDENCE rounds per job, or fewer than two jobs)."""

    order: List[Dict[str, Any]] = field(default_factory=list)
    best: Optional[Dict[str, Any]] = None
    ties: List[Dict[str, Any]] = field(default_factory=list)
    runner_up: Optional[Dict[str, Any]] = None
    confidence: Optional[float] = None
    # False: some job's element count is unknown, and the jobs are ranked by launches per second.
    per_element: bool = True

    @property
    def is_tie(self) -> bool:
        return bool(self.ties)


def rank(rows: List[Dict[str, Any]]) -> Ranking:
    """Sets each row's ``rank`` (competition ranking: tied jobs share a number, the next one
    skips; None for a job that failed or was not measured) and returns the Ranking.

    Going down the order, a job joins the rank of the group above it unless the group's first
    job beats it with CONFIDENCE."""
    for row in rows:
        row["rank"] = None
    passed = [row for row in rows
              if row.get("passed") and (row.get("round_times_s") or row.get("device_median_s"))]
    per_element = all(row.get("elements") for row in passed)
    measured = [(row, round_throughputs(row, per_element)) for row in passed]
    measured = [(row, samples) for row, samples in measured if samples is not None]
    if not measured:
        return Ranking()
    measured.sort(key=lambda item: (-float(np.median(item[1])), item[0]["job"]))
    judged = min(samples.size for _, samples in measured) >= MIN_ROUNDS_FOR_CONFIDENCE
    leader, leader_samples = measured[0]
    leader["rank"] = 1
    for position, (row, samples) in enumerate(measured[1:], start=2):
        if judged and confidence_faster(leader_samples, samples) < CONFIDENCE:
            row["rank"] = leader["rank"]
        else:
            row["rank"] = position
            leader, leader_samples = row, samples
    order = [row for row, _ in measured]
    ranking = Ranking(order=order, best=order[0], per_element=per_element,
                      ties=[row for row in order[1:] if row["rank"] == 1])
    if len(measured) > 1:
        ranking.runner_up = order[1]
        if judged:
            ranking.confidence = confidence_faster(measured[0][1], measured[1][1])
    return ranking
