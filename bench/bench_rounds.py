"""Interleaved timing rounds shared by the Python benchmarks in this folder.

An anchor (the baseline) and a subject are timed in the same rounds, back to back, and the one
that goes first alternates from round to round: a slow spell of a shared machine (another
process, frequency scaling, a cold cache) then hits both sides alike instead of whichever was
being timed at that moment. Figures are medians over the rounds, not minima: a minimum reports
the luckiest round, which flatters the side that varies more.
"""

import statistics
import time


def interleaved(anchor, subject, rounds, settle=0.0):
    """Times ``anchor()`` and ``subject()`` (each returns a duration) in ``rounds`` rounds.

    Round k runs anchor then subject when k is even, subject then anchor when it is odd.
    ``settle`` seconds of sleep before each side let what the other side left running die down
    before it is timed: numpy's OpenBLAS threads, for one, spin-wait for more work for a while
    after each multi-threaded call and take a core from whatever runs next. After the sleep the
    side runs once untimed, then timed, so that neither is timed cold (numpy's threads asleep,
    caches and clocks down) because of the sleep.
    Returns the two lists of durations, in round order.
    """
    def settled(fn):
        if settle > 0:
            time.sleep(settle)
            fn()
        return fn()

    anchor_times, subject_times = [], []
    for k in range(rounds):
        if k % 2 == 0:
            anchor_times.append(settled(anchor))
            subject_times.append(settled(subject))
        else:
            subject_times.append(settled(subject))
            anchor_times.append(settled(anchor))
    return anchor_times, subject_times


class NumpyAnchor:
    """numpy timed two ways in one anchor slot of ``interleaved``: ``plain()`` as a user writes it
    (``a @ b``: it allocates its output, and as the first call after the subject it pays for what
    the subject left behind), then ``ready()`` right after it, into an output that already exists
    (``np.matmul(a, b, out=c)``). The device's time starts with its outputs mapped and its cores
    awake, so ``ready`` is the like-for-like anchor; ``plain`` is what a numpy user's next line
    costs. The first call after a run was measured 15-40% slower than the second after a run in
    the process, and up to 6x slower on two threads after an isolated run: fork() leaves every
    page of the caller copy-on-write, so each page the caller writes next takes a fault.

    Calling the object times both and returns the plain duration; ``ready_times`` collects the
    others in round order. ``out``, the ready output, gets one write per 4 KiB page before its
    call, untimed: after an isolated run its pages too are copy-on-write, and the device's
    outputs were mapped for writing before its clock started (one element per page, so that
    only a line per page is brought into the caches).
    """

    def __init__(self, plain, ready, out):
        self.plain, self.ready, self.out = plain, ready, out.reshape(-1)
        self.ready_times = []

    def __call__(self):
        plain = timed(self.plain)
        self.out[::max(1, 4096 // self.out.itemsize)] = 0
        self.ready_times.append(timed(self.ready))
        return plain


def medians(anchor_times, subject_times):
    """(median anchor, median subject, subject / anchor ratio of the medians)."""
    anchor = statistics.median(anchor_times)
    subject = statistics.median(subject_times)
    return anchor, subject, subject / anchor if anchor > 0 else float("inf")


def timed(fn):
    """Seconds one call of ``fn()`` takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def stage_seconds(profile, *path):
    """Seconds of the profile stage at ``path`` (names from the root, e.g. "device_execution",
    "execute") in a RunResult.profile dict."""
    stages = profile["stages"]
    for name in path:
        stage = next(s for s in stages if s["name"] == name)
        stages = stage["children"]
    return stage["seconds"]
