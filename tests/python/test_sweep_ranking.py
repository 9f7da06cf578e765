"""The ranking of a sweep's jobs: by throughput (elements the program writes per second, so
different problem sizes compare), with a bootstrap confidence between neighbours, ties sharing a
rank, and the columns a real sweep fills in (several rounds by default, median, IQR)."""

import pathlib

import numpy as np
import pytest

from pypto.sweep import sweep
from pypto.sweep.ranking import CONFIDENCE, confidence_faster, rank
from pypto.sweep.results import format_throughput, ranking_text

BLOCKED_ADD = pathlib.Path(__file__).resolve().parents[2] / "examples" / "blocked_add.py"


def _row(job, times, elements=1000, passed=True, **params):
    return {"job": job, "file": "k.py", "passed": passed, "elements": elements,
            "round_times_s": list(times) if times is not None else None,
            "rounds": len(times or []),
            "throughput": elements / float(np.median(times)) if times and elements else None,
            "device_median_s": float(np.median(times)) if times else None,
            "device_iqr_s": 0.0, **params}


def test_separated_jobs_get_their_own_ranks_and_a_high_confidence():
    fast = _row(0, [1.0, 1.01, 0.99, 1.02, 1.0])
    middle = _row(1, [2.0, 2.02, 1.98, 2.01, 2.0])
    slow = _row(2, [3.0, 3.1, 2.9, 3.05, 2.95])
    failed = _row(3, None, passed=False)
    ranking = rank([slow, failed, fast, middle])
    assert [r["job"] for r in ranking.order] == [0, 1, 2]
    assert (fast["rank"], middle["rank"], slow["rank"], failed["rank"]) == (1, 2, 3, None)
    assert ranking.best is fast and ranking.runner_up is middle and not ranking.is_tie
    assert ranking.confidence == 1.0
    assert "faster than the runner-up job 1" in ranking_text(ranking, [])


def test_overlapping_jobs_are_a_tie_and_share_a_rank():
    # The same distribution, shuffled: no order can be claimed between 0 and 1; 2 is far behind.
    a = _row(0, [1.0, 1.3, 0.9, 1.2, 1.1])
    b = _row(1, [1.1, 0.95, 1.25, 1.05, 1.15])
    c = _row(2, [5.0, 5.1, 4.9, 5.2, 5.05])
    ranking = rank([a, b, c])
    assert ranking.confidence < CONFIDENCE
    assert ranking.is_tie and ranking.ties == [ranking.runner_up]
    assert {a["rank"], b["rank"]} == {1} and c["rank"] == 3  # competition ranking: 1, 1, 3
    text = ranking_text(ranking, [])
    assert "TIE with job" in text and "below 95% confidence" in text


def test_throughput_ranks_a_larger_problem_that_takes_longer_first():
    small = _row(0, [1.0] * 5, elements=1000, COLS=32)
    large = _row(1, [2.0] * 5, elements=4000, COLS=128)  # 2x the time for 4x the elements
    ranking = rank([small, large])
    assert ranking.best is large and large["rank"] == 1 and small["rank"] == 2
    assert "job 1 (COLS=128)" in ranking_text(ranking, ["COLS"])


def test_unknown_element_counts_rank_by_launches_per_second():
    quick = _row(0, [1.0] * 5, elements=None)
    slow = _row(1, [2.0] * 5, elements=4000)
    ranking = rank([slow, quick])
    assert not ranking.per_element and ranking.best is quick


def test_fewer_than_three_rounds_state_no_confidence():
    ranking = rank([_row(0, [1.0]), _row(1, [2.0])])
    assert ranking.confidence is None and not ranking.is_tie
    assert [r["rank"] for r in ranking.order] == [1, 2]
    assert "no confidence stated: 1 round per job" in ranking_text(ranking, [])


def test_confidence_is_a_probability_that_follows_the_data():
    low = np.array([1.0, 1.1, 1.2, 1.3, 1.4])
    assert confidence_faster(low + 10, low) == 1.0 and confidence_faster(low, low + 10) == 0.0
    assert confidence_faster(low, low) == pytest.approx(0.5, abs=0.03)  # resampling noise
    # Deterministic: the same rounds always get the same verdict.
    assert confidence_faster(low, low[::-1] + 0.05) == confidence_faster(low, low[::-1] + 0.05)


def test_format_throughput():
    assert format_throughput(812e6) == "812 Melem/s"
    assert format_throughput(1.5e9) == "1.5 Gelem/s"
    assert format_throughput(12) == "12 elem/s"


def test_a_sweep_measures_five_rounds_and_fills_the_ranking_columns(tmp_path):
    result = sweep(BLOCKED_ADD, {"BLOCK": [64, 128], "COLS": [32, 128]}, backend="serial",
                   cache_dir=str(tmp_path / "cache"), progress=False,
                   out_dir=str(tmp_path / "out"))
    assert all(r["passed"] for r in result.rows), [r["error"] for r in result.rows]
    for r in result.rows:
        assert r["rounds"] == 5 and len(r["round_times_s"]) == 5
        assert r["elements"] == 512 * r["COLS"]  # the entry's Out tensor c: [ROWS, COLS]
        assert r["throughput"] == pytest.approx(r["elements"] / r["device_median_s"])
        q25, q75 = np.percentile(r["round_times_s"], [25, 75])
        assert r["device_iqr_s"] == pytest.approx(q75 - q25)
    assert result.best["rank"] == 1 and result.ranking.confidence is not None
    assert all(r["rank"] == 1 for r in result.ties)
    ranks = [r["rank"] for r in result.ranking.order]
    assert ranks == sorted(ranks) and ranks[0] == 1
    # The printed table is in rank order, and the summary states the verdict either way.
    first = result.table().splitlines()[1].split()
    assert first[:2] == ["1", str(result.best["job"])]
    summary = result.summary()
    assert ("with " in summary and "% confidence" in summary) or "TIE with job" in summary
    assert "elem/s" in summary
    assert ("tied with job" in repr(result)) == result.ranking.is_tie
