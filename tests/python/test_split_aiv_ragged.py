"""Partly valid values at the boundary of a pl.split_aiv region (LowerSplitAiv): the valid
regions the cube-to-vector boundary can carry compile, the others are refused where the boundary
op is written, with the value's valid extent and a way to write it that works."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import CompileError
from pypto.runtime import RunConfig

ROWS, COLS, K, HALF = 16, 128, 64, 8


@pl.jit
def rows_ragged_up_down(a: pl.Tensor[[5, K], pl.FP16], w: pl.Tensor[[COLS, K], pl.FP16],
                        out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows_ragged"):
        a_box = pl.slice(a, [ROWS, K], [0, 0], valid_shape=[5, K])
        acc = pl.matmul(a_box, w[0:COLS, 0:K], b_trans=True, out_dtype=pl.FP32)
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            part = pl.aiv_shard(acc)
            out[lane * HALF: lane * HALF + HALF, 0:COLS] = part
    return out


@pl.jit
def rows_ragged_through_exp(a: pl.Tensor[[5, K], pl.FP16], w: pl.Tensor[[COLS, K], pl.FP16],
                            out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows_exp"):
        a_box = pl.slice(a, [ROWS, K], [0, 0], valid_shape=[5, K])
        acc = pl.matmul(a_box, w[0:COLS, 0:K], b_trans=True, out_dtype=pl.FP32)
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            part = pl.aiv_shard(acc)
            out[lane * HALF: lane * HALF + HALF, 0:COLS] = pl.mul(part, 0.5)
    return out


@pl.jit
def rows_ragged_in_a_branch(a: pl.Tensor[[11, K], pl.FP16], w: pl.Tensor[[COLS, K], pl.FP16],
                            out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows_branch"):
        a_box = pl.slice(a, [ROWS, K], [0, 0], valid_shape=[11, K])
        acc = pl.matmul(a_box, w[0:COLS, 0:K], b_trans=True, out_dtype=pl.FP32)
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            part = pl.aiv_shard(acc)
            if lane == 1:
                out[HALF:ROWS, 0:COLS] = part
    return out


@pl.jit
def cols_ragged_left_right(a: pl.Tensor[[ROWS, K], pl.FP16], w: pl.Tensor[[24, K], pl.FP16],
                           out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cols_ragged"):
        w_box = pl.slice(w, [COLS, K], [0, 0], valid_shape=[24, K])
        acc = pl.matmul(a[0:ROWS, 0:K], w_box, b_trans=True, out_dtype=pl.FP32)
        scaled = pl.exp(acc)  # an op of one operand keeps the valid region
        for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
            part = pl.aiv_shard(scaled)
            out[0:ROWS, lane * 64: lane * 64 + 64] = part
    return out


@pl.jit
def rows_and_cols_ragged(a: pl.Tensor[[5, K], pl.FP16], w: pl.Tensor[[24, K], pl.FP16],
                         out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="both_ragged"):
        a_box = pl.slice(a, [ROWS, K], [0, 0], valid_shape=[5, K])
        w_box = pl.slice(w, [COLS, K], [0, 0], valid_shape=[24, K])
        acc = pl.matmul(a_box, w_box, b_trans=True, out_dtype=pl.FP32)
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            part = pl.aiv_shard(acc)
            out[lane * HALF: lane * HALF + HALF, 0:COLS] = part
    return out


@pl.jit
def partial_lanes_gathered(x: pl.Tensor[[ROWS, K], pl.FP16], q: pl.Tensor[[ROWS, K], pl.FP16],
                           out: pl.Out[pl.Tensor[[ROWS, ROWS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="partial_gather"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            mine = pl.slice(x, [HALF, K], [lane * HALF, 0], valid_shape=[6, K])
            joined = pl.aic_gather(mine)
        out[0:ROWS, 0:ROWS] = pl.matmul(q, joined, b_trans=True, out_dtype=pl.FP32)
    return out


@pl.jit
def whole_lanes_gathered(x: pl.Tensor[[ROWS, K], pl.FP16], q: pl.Tensor[[ROWS, K], pl.FP16],
                         out: pl.Out[pl.Tensor[[ROWS, ROWS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="whole_gather"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            mine = pl.slice(x, [HALF, K], [lane * HALF, 0])
            joined = pl.aic_gather(mine)
        out[0:ROWS, 0:ROWS] = pl.matmul(q, joined, b_trans=True, out_dtype=pl.FP32)
    return out


def located(info, line_text):
    text = str(info.value)
    assert "test_split_aiv_ragged.py:" in text and "^" in text, text
    assert line_text in text, text
    return text


def operands(rows, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((rows, K)).astype(np.float16)
    w = rng.standard_normal((COLS, K)).astype(np.float16)
    return a, w, a.astype(np.float32) @ w.astype(np.float32).T


def test_a_per_lane_row_extent_is_carried(tmp_path):
    # 5 valid rows of 16 split by rows: lane 0 holds 5, lane 1 none. Each lane stores the rows it
    # holds and nothing else, so the rows past the product keep what the output held.
    a, w, product = operands(5, 1)
    out = np.full((ROWS, COLS), -7.0, np.float32)
    rows_ragged_up_down(a, w, out, config=RunConfig(work_dir=str(tmp_path / "out")))
    np.testing.assert_allclose(out[:5], product, rtol=1e-3, atol=1e-3)
    assert (out[5:] == -7.0).all()
    # The lanes' loads carry their extents: 5 of lane 0's 8 rows, none of lane 1's.
    text = rows_ragged_up_down.lower().as_python()
    assert "[8, 128], [5, 128])" in text and "[8, 128], [0, 128])" in text


def test_the_lane_extent_reaches_the_store_through_a_vector_op(tmp_path):
    a, w, product = operands(5, 2)
    out = np.full((ROWS, COLS), -7.0, np.float32)
    rows_ragged_through_exp(a, w, out, config=RunConfig(work_dir=str(tmp_path / "out")))
    np.testing.assert_allclose(out[:5], product * 0.5, rtol=1e-3, atol=1e-3)
    assert (out[5:] == -7.0).all()


def test_the_lane_extent_holds_in_a_branch_of_the_region(tmp_path):
    # 11 valid rows: lane 1 holds rows 8..10 and stores them from inside its branch.
    a, w, product = operands(11, 3)
    out = np.full((ROWS, COLS), -7.0, np.float32)
    rows_ragged_in_a_branch(a, w, out, config=RunConfig(work_dir=str(tmp_path / "out")))
    np.testing.assert_allclose(out[HALF:11], product[HALF:11], rtol=1e-3, atol=1e-3)
    assert (out[:HALF] == -7.0).all() and (out[11:] == -7.0).all()


def test_left_right_of_a_value_valid_to_fewer_columns_is_refused():
    with pytest.raises(CompileError) as info:
        cols_ragged_left_right.lower()
    assert isinstance(info.value, ValueError)  # as PyPTO raises it
    text = located(info, "part = pl.aiv_shard(scaled)")
    assert "LEFT_RIGHT splits the column axis" in text
    assert "'scaled' has the valid column extent (24 of 128)" in text
    assert "mode=pl.SplitMode.UP_DOWN" in text and "pl.set_validshape(scaled, 16, 128)" in text


def test_up_down_of_a_value_narrowed_on_both_axes_is_refused():
    with pytest.raises(CompileError) as info:
        rows_and_cols_ragged.lower()
    text = located(info, "part = pl.aiv_shard(acc)")
    assert "(5 of 16 rows, 24 of 128 columns)" in text
    assert "per-lane row extent" in text and "pl.set_validshape(acc, 5, 128)" in text


def test_gathering_lanes_valid_to_part_of_their_half_is_refused():
    with pytest.raises(CompileError) as info:
        partial_lanes_gathered.lower()
    text = located(info, "joined = pl.aic_gather(mine)")
    assert "tile.aic_gather re-joins the two lanes positionally" in text
    assert "valid row extent (6 of 8)" in text and "[0, 6) and [8, 14)" in text
    assert "pl.fillpad(mine)" in text


def test_gathering_whole_lanes_compiles():
    assert whole_lanes_gathered.lower() is not None
