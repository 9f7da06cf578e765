"""End to end on the simulated device, each against a numpy golden and against the reference
interpreter: pl.gather (index and mask forms, on tiles and on tensors of 2 and 3 dimensions),
pl.scatter (index and mask forms), pl.scatter_update, pl.mscatter, pl.paged_gather and pl.write
(into a tile and into a tensor, as an assignment and as a statement). An index out of range is a
run-time error naming the op and the index, on the device and in the interpreter alike."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import CompileError
from pypto.runtime import TensorSpec

from e2e_helpers import check_both, failure


RNG = np.random.default_rng(11)
SRC = RNG.uniform(-4, 4, (8, 16)).astype(np.float32)


TILE_GATHER = """
import pypto.language as pl

@pl.program
class TileGather:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32], i: pl.Tensor[[IR, IC], pl.INT32],
          o: pl.Out[pl.Tensor[[IR, IC], pl.FP32]]) -> pl.Tensor[[IR, IC], pl.FP32]:
        tx = pl.load(x, [0, 0], [8, 16])
        ti = pl.load(i, [0, 0], [IR, IC])
        o = pl.store(pl.gather(tx, DIM, ti), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], i: pl.Tensor[[IR, IC], pl.INT32],
             o: pl.Out[pl.Tensor[[IR, IC], pl.FP32]]) -> pl.Tensor[[IR, IC], pl.FP32]:
        o = self.k(x, i, o)
        return o
"""


def tile_gather(dim, rows, cols):
    text = TILE_GATHER.replace("IR", str(rows)).replace("IC", str(cols))
    return pl.parse(text.replace("DIM", str(dim)))


@pytest.mark.parametrize("dim, rows, cols, bound", [(1, 8, 8, 16), (-1, 4, 32, 16),
                                                    (0, 8, 16, 8), (0, 3, 8, 8)])
def test_tile_gather_is_take_along_axis(work, dim, rows, cols, bound):
    index = np.random.default_rng(dim + rows).integers(0, bound, (rows, cols)).astype(np.int32)
    axis = dim % 2
    source = SRC if axis == 1 else SRC[:, :cols]
    expected = np.take_along_axis(source if axis == 0 else SRC[:rows], index, axis=axis)

    def golden(t, params=None):
        t["o"][:] = expected

    specs = [TensorSpec("x", [8, 16], pl.FP32, init_value=SRC),
             TensorSpec("i", [rows, cols], pl.INT32, init_value=index),
             TensorSpec("o", [rows, cols], pl.FP32, is_output=True)]
    result = check_both(work, tile_gather(dim, rows, cols), specs, golden)
    np.testing.assert_array_equal(result.outputs["o"], expected)


@pytest.mark.parametrize("bad", [16, -1])
def test_gather_index_out_of_range_is_a_run_time_error(work, bad):
    index = np.zeros((8, 8), np.int32)
    index[5, 3] = bad
    specs = [TensorSpec("x", [8, 16], pl.FP32, init_value=SRC),
             TensorSpec("i", [8, 8], pl.INT32, init_value=index),
             TensorSpec("o", [8, 8], pl.FP32, is_output=True)]
    device, interpreted = failure(work, tile_gather(1, 8, 8), specs)
    for message in (device, interpreted):
        assert (f"index {bad} at [5, 3] is out of range for the columns of the source of "
                f"extent 16 (valid: 0 to 15)") in message, message
        assert "gather" in message, message


TENSOR_FORMS = """
import pypto.language as pl

@pl.program
class TensorForms:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], i: pl.Tensor[[8, 8], pl.INT32],
             v: pl.Tensor[[8, 8], pl.FP32], x3: pl.Tensor[[2, 8, 8], pl.FP32],
             i3: pl.Tensor[[2, 3, 8], pl.INT32],
             g: pl.Out[pl.Tensor[[8, 8], pl.FP32]], s: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
             m: pl.Out[pl.Tensor[[8, 4], pl.FP32]], g3: pl.Out[pl.Tensor[[2, 3, 8], pl.FP32]],
             sm: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
             ) -> tuple[pl.Tensor[[8, 8], pl.FP32], pl.Tensor[[8, 16], pl.FP32],
                        pl.Tensor[[8, 4], pl.FP32], pl.Tensor[[2, 3, 8], pl.FP32],
                        pl.Tensor[[8, 16], pl.FP32]]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.tensor.gather(x, dim=-1, index=i)
            g = pl.assemble(g, a, [0, 0])
            b = pl.scatter(x, -1, i, v)
            s = pl.assemble(s, b, [0, 0])
            c = pl.gather(x, mask_pattern=pl.tile.MaskPattern.P0100)
            m = pl.assemble(m, c, [0, 0])
            d = pl.tensor.gather(x3, dim=1, index=i3)
            g3 = pl.assemble(g3, d, [0, 0, 0])
            e = pl.tensor.scatter(v, mask_pattern=pl.tile.MaskPattern.P1010, dst=x)
            sm = pl.assemble(sm, e, [0, 0])
        return g, s, m, g3, sm
"""


def test_tensor_forms_lower_to_tile_ops(work):
    rng = np.random.default_rng(5)
    index = rng.integers(0, 16, (8, 8)).astype(np.int32)
    index[0, :] = 3  # repeated targets in one row: the last write wins
    values = rng.uniform(10, 20, (8, 8)).astype(np.float32)
    x3 = rng.uniform(-1, 1, (2, 8, 8)).astype(np.float32)
    i3 = rng.integers(0, 8, (2, 3, 8)).astype(np.int32)
    scattered = SRC.copy()
    for r in range(8):
        for k in range(8):
            scattered[r, index[r, k]] = values[r, k]
    masked = SRC.copy()
    masked[:, 1::2] = values
    expected = {"g": np.take_along_axis(SRC, index, 1), "s": scattered, "m": SRC[:, 2::4],
                "g3": np.take_along_axis(x3, i3, 1), "sm": masked}

    def golden(t, params=None):
        for name, value in expected.items():
            t[name][:] = value

    specs = [TensorSpec("x", [8, 16], pl.FP32, init_value=SRC),
             TensorSpec("i", [8, 8], pl.INT32, init_value=index),
             TensorSpec("v", [8, 8], pl.FP32, init_value=values),
             TensorSpec("x3", [2, 8, 8], pl.FP32, init_value=x3),
             TensorSpec("i3", [2, 3, 8], pl.INT32, init_value=i3)]
    specs += [TensorSpec(n, list(v.shape), pl.FP32, is_output=True) for n, v in expected.items()]
    result = check_both(work, pl.parse(TENSOR_FORMS), specs, golden)
    assert result.outputs["s"][0, 3] == values[0, 7]


TILE_UPDATES = """
import pypto.language as pl

@pl.program
class TileUpdates:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP16], i: pl.Tensor[[2, 4], pl.INT32],
          s: pl.Tensor[[8, 32], pl.FP16], v: pl.Tensor[[4], pl.FP32],
          o: pl.Out[pl.Tensor[[16, 32], pl.FP16]]) -> pl.Tensor[[16, 32], pl.FP16]:
        tx = pl.load(x, [0, 0], [16, 32])
        ti = pl.load(i, [0, 0], [2, 4])
        ts = pl.load(s, [0, 0], [8, 32])
        t = pl.tile.scatter_update(tx, dim=-2, index=ti, src=ts)
        for k in pl.unroll(4):
            value: pl.Scalar[pl.FP32] = pl.read(v, [k])
            pl.write(t, [k, 31 - k], value)
        o = pl.store(t, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.InCore)
    def scatter_out(self, s: pl.Tensor[[4, 8], pl.INT32], i: pl.Tensor[[4, 8], pl.INT32],
                    flat: pl.Out[pl.Tensor[[64], pl.INT32]]) -> pl.Tensor[[64], pl.INT32]:
        ts = pl.load(s, [0, 0], [4, 8])
        ti = pl.load(i, [0, 0], [4, 8])
        flat = pl.mscatter(ts, ti, flat)
        flat = pl.write(flat, [63], 7)
        return flat

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP16], i: pl.Tensor[[2, 4], pl.INT32],
             s: pl.Tensor[[8, 32], pl.FP16], v: pl.Tensor[[4], pl.FP32],
             si: pl.Tensor[[4, 8], pl.INT32], ii: pl.Tensor[[4, 8], pl.INT32],
             o: pl.Out[pl.Tensor[[16, 32], pl.FP16]],
             flat: pl.Out[pl.Tensor[[64], pl.INT32]]) -> pl.Tensor[[16, 32], pl.FP16]:
        o = self.k(x, i, s, v, o)
        flat = self.scatter_out(si, ii, flat)
        return o
"""


def test_scatter_update_write_and_mscatter(work):
    rng = np.random.default_rng(9)
    x = rng.uniform(-1, 1, (16, 32)).astype(np.float16)
    rows = np.array([[15, 2, 9, 2], [0, 7, 11, 3]], np.int32)  # row 2 twice: the last wins
    src = rng.uniform(5, 6, (8, 32)).astype(np.float16)
    values = np.array([100.5, -3.25, 7.0, 0.125], np.float32)
    si = np.arange(32, dtype=np.int32).reshape(4, 8) * 3
    ii = rng.permutation(63).astype(np.int32)[:32].reshape(4, 8)
    expected = x.copy()
    for k, r in enumerate(rows.flat):
        expected[r] = src[k]
    for k in range(4):
        expected[k, 31 - k] = values[k]
    flat = np.zeros(64, np.int32)
    flat[ii.flat] = si.flat
    flat[63] = 7

    def golden(t, params=None):
        t["o"][:] = expected
        t["flat"][:] = flat

    specs = [TensorSpec("x", [16, 32], pl.FP16, init_value=x),
             TensorSpec("i", [2, 4], pl.INT32, init_value=rows),
             TensorSpec("s", [8, 32], pl.FP16, init_value=src),
             TensorSpec("v", [4], pl.FP32, init_value=values),
             TensorSpec("si", [4, 8], pl.INT32, init_value=si),
             TensorSpec("ii", [4, 8], pl.INT32, init_value=ii),
             TensorSpec("o", [16, 32], pl.FP16, is_output=True),
             TensorSpec("flat", [64], pl.INT32, is_output=True)]
    result = check_both(work, pl.parse(TILE_UPDATES), specs, golden)
    np.testing.assert_array_equal(result.outputs["flat"], flat)


def test_scatter_update_row_out_of_range(work):
    rows = np.array([[1, 2, 3, 4], [5, 6, 16, 0]], np.int32)
    specs = [TensorSpec("x", [16, 32], pl.FP16), TensorSpec("i", [2, 4], pl.INT32, init_value=rows),
             TensorSpec("s", [8, 32], pl.FP16), TensorSpec("v", [4], pl.FP32),
             TensorSpec("si", [4, 8], pl.INT32), TensorSpec("ii", [4, 8], pl.INT32),
             TensorSpec("o", [16, 32], pl.FP16, is_output=True),
             TensorSpec("flat", [64], pl.INT32, is_output=True)]
    for message in failure(work, pl.parse(TILE_UPDATES), specs):
        assert "scatter_update" in message, message
        assert ("index 16 at flat position 6 is out of range for the rows of the destination of "
                "extent 16") in message, message


PAGED = """
import pypto.language as pl

@pl.program
class Paged:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, pool: pl.Tensor[[64, 32], pl.FP32], idx: pl.Tensor[[6], pl.INT32],
             bt: pl.Tensor[[8], pl.INT32],
             o: pl.Out[pl.Tensor[[6, 16], pl.FP32]]) -> pl.Tensor[[6, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            rows = pl.paged_gather(pool, idx, bt, block_size=8, size=16, max_indices=6,
                                   space=pl.MemorySpace.Vec, col_off=8)
            o = pl.assemble(o, rows, [0, 0])
        return o
"""


def test_paged_gather_translates_through_the_block_table(work):
    pool = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    idx = np.array([0, 9, 17, 31, 40, 63], np.int32)
    bt = np.array([7, 6, 5, 4, 3, 2, 1, 0], np.int32)
    phys = bt[idx // 8] * 8 + idx % 8
    expected = pool[phys, 8:24]

    def golden(t, params=None):
        t["o"][:] = expected

    specs = [TensorSpec("pool", [64, 32], pl.FP32, init_value=pool),
             TensorSpec("idx", [6], pl.INT32, init_value=idx),
             TensorSpec("bt", [8], pl.INT32, init_value=bt),
             TensorSpec("o", [6, 16], pl.FP32, is_output=True)]
    check_both(work, pl.parse(PAGED), specs, golden)


def test_type_errors_are_located():
    bad_index = TILE_GATHER.replace("pl.INT32]", "pl.FP32]").replace("IR", "8").replace(
        "IC", "8").replace("DIM", "1")
    with pytest.raises(CompileError, match="takes INT32 indices, got FP32"):
        pl.parse(bad_index)
    too_wide = TILE_GATHER.replace("IR", "9").replace("IC", "8").replace("DIM", "1")
    with pytest.raises(CompileError, match=r"index \[9, 8\] is larger than the input \[8, 16\]"):
        pl.parse(too_wide)
    with pytest.raises(CompileError, match="mask_pattern must be 1 to 7"):
        pl.parse(TENSOR_FORMS.replace("pl.tile.MaskPattern.P0100", "9"))


TILE_FLAT = """
import pypto.language as pl

@pl.program
class TileFlat:
    @pl.function(type=pl.FunctionType.InCore)
    def k_gather(self, x: pl.Tensor[[4, 8], pl.FP32], i: pl.Tensor[[2, 8], pl.INT32],
                 g: pl.Out[pl.Tensor[[2, 8], pl.FP32]]) -> pl.Tensor[[2, 8], pl.FP32]:
        tx = pl.load(x, [0, 0], [4, 8])
        tmp = pl.tile.create([2, 8], dtype=pl.FP32)
        g = pl.store(pl.tile.gather(tx, pl.load(i, [0, 0], [2, 8]), tmp), [0, 0], g)
        return g

    @pl.function(type=pl.FunctionType.InCore)
    def k_scatter(self, x: pl.Tensor[[4, 8], pl.FP32], i: pl.Tensor[[2, 8], pl.INT32],
                  v: pl.Tensor[[2, 8], pl.FP32],
                  s: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        ti = pl.load(i, [0, 0], [2, 8])
        t = pl.tile.scatter(pl.load(x, [0, 0], [4, 8]), pl.load(v, [0, 0], [2, 8]), ti)
        s = pl.store(t, [0, 0], s)
        return s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 8], pl.FP32], i: pl.Tensor[[2, 8], pl.INT32],
             v: pl.Tensor[[2, 8], pl.FP32], g: pl.Out[pl.Tensor[[2, 8], pl.FP32]],
             s: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[2, 8], pl.FP32]:
        g = self.k_gather(x, i, g)
        s = self.k_scatter(x, i, v, s)
        return g
"""


def test_tile_forms_take_flat_indices(work):
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    index = np.random.default_rng(2).permutation(32)[:16].astype(np.int32).reshape(2, 8)
    values = -np.arange(1, 17, dtype=np.float32).reshape(2, 8)
    scattered = x.copy().ravel()
    scattered[index.ravel()] = values.ravel()

    def golden(t, params=None):
        t["g"][:] = x.ravel()[index]
        t["s"][:] = scattered.reshape(4, 8)

    specs = [TensorSpec("x", [4, 8], pl.FP32, init_value=x),
             TensorSpec("i", [2, 8], pl.INT32, init_value=index),
             TensorSpec("v", [2, 8], pl.FP32, init_value=values),
             TensorSpec("g", [2, 8], pl.FP32, is_output=True),
             TensorSpec("s", [4, 8], pl.FP32, is_output=True)]
    check_both(work, pl.parse(TILE_FLAT), specs, golden)


def test_mscatter_and_paged_gather_indices_out_of_range(work):
    rows = np.array([[1, 2, 3, 4], [5, 6, 7, 0]], np.int32)
    ii = np.arange(32, dtype=np.int32).reshape(4, 8)
    ii[2, 5] = 64  # one past the 64 elements of `flat`
    specs = [TensorSpec("x", [16, 32], pl.FP16), TensorSpec("i", [2, 4], pl.INT32, init_value=rows),
             TensorSpec("s", [8, 32], pl.FP16), TensorSpec("v", [4], pl.FP32),
             TensorSpec("si", [4, 8], pl.INT32), TensorSpec("ii", [4, 8], pl.INT32, init_value=ii),
             TensorSpec("o", [16, 32], pl.FP16, is_output=True),
             TensorSpec("flat", [64], pl.INT32, is_output=True)]
    for message in failure(work, pl.parse(TILE_UPDATES), specs):
        assert ("mscatter" in message and "index 64 at flat position 21 is out of range for the "
                "elements of the tensor of extent 64") in message, message

    pool_specs = [TensorSpec("pool", [64, 32], pl.FP32),
                  TensorSpec("idx", [6], pl.INT32,
                             init_value=np.array([0, 9, 17, 31, 40, 64], np.int32)),
                  TensorSpec("bt", [8], pl.INT32, init_value=np.arange(8, dtype=np.int32)),
                  TensorSpec("o", [6, 16], pl.FP32, is_output=True)]
    for message in failure(work / "paged", pl.parse(PAGED), pool_specs):
        # Logical row 64 needs block 8 of a table of 8: reported at the pl.paged_gather line,
        # as the read of the table (device) or as the op's own index check (interpreter).
        assert ":11:" in message or "line 11" in message, message
        assert ("exceed the tensor view of shape [8]" in message or
                "index 64 at [5] is out of range" in message), message


WRITE_AT = """
import pypto.language as pl

@pl.program
class WriteAt:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 8], pl.FP32], r: pl.Scalar[pl.INT64],
          o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        t = pl.load(x, [0, 0], [4, 8])
        pl.write(t, [r, 0], 1.0)
        o = pl.store(t, [0, 0], o)
        o = pl.write(o, [r, 7], 2.0)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 8], pl.FP32],
             o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        o = self.k(x, ROW, o)
        return o
"""


def test_write_at_a_run_time_row(work):
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    expected = x.copy()
    expected[2, 0], expected[2, 7] = 1.0, 2.0

    def golden(t, params=None):
        t["o"][:] = expected

    specs = [TensorSpec("x", [4, 8], pl.FP32, init_value=x),
             TensorSpec("o", [4, 8], pl.FP32, is_output=True)]
    check_both(work, pl.parse(WRITE_AT.replace("ROW", "2")), specs, golden)
    for message in failure(work / "bad", pl.parse(WRITE_AT.replace("ROW", "4")), specs):
        assert "write" in message and ("exceed" in message or "outside" in message), message


MASK_BITS = """
import pypto.language as pl

@pl.program
class MaskBits:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32],
             o: pl.Out[pl.Tensor[[8, 8], pl.UINT32]]) -> pl.Tensor[[8, 8], pl.UINT32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            odd = pl.tensor.gather(x, mask_pattern=pl.tile.MaskPattern.P1010,
                                   output_dtype=pl.UINT32)
            o = pl.assemble(o, odd, [0, 0])
        return o
"""


def test_mask_gather_output_dtype_reinterprets_the_bits(work):
    x = ((np.arange(128, dtype=np.float32).reshape(8, 16) - 64.0) / 8.0).astype(np.float32)

    def golden(t, params=None):
        t["o"][:] = x[:, 1::2].copy().view(np.uint32)

    specs = [TensorSpec("x", [8, 16], pl.FP32, init_value=x),
             TensorSpec("o", [8, 8], pl.UINT32, is_output=True)]
    check_both(work, pl.parse(MASK_BITS), specs, golden)


LOCAL_COPY = """
import pypto.language as pl

@pl.program
class LocalCopy:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, src: pl.Tensor[[16, 64], pl.FP32], idx: pl.Tensor[[16, 8], pl.INT32],
             echo: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
             g: pl.Out[pl.Tensor[[16, 8], pl.FP32]],
             ) -> tuple[pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[16, 8], pl.FP32]]:
        with pl.at(level=pl.Level.CORE_GROUP):
            local = pl.create_tensor([16, 64], dtype=pl.FP32)
            local = pl.assemble(local, src, [0, 0])
            right = local[:, 32:64]
            picked = pl.tensor.gather(right, dim=-1, index=idx)
            g = pl.assemble(g, picked, [0, 0])
            echo = pl.assemble(echo, local, [0, 0])
        return echo, g
"""


def test_gather_of_a_local_copy_and_a_tensor_assembled_into_another(work):
    src = np.random.default_rng(4).standard_normal((16, 64)).astype(np.float32)
    idx = np.random.default_rng(6).integers(0, 32, (16, 8)).astype(np.int32)

    def golden(t, params=None):
        t["echo"][:] = src
        t["g"][:] = np.take_along_axis(src[:, 32:], idx, 1)

    specs = [TensorSpec("src", [16, 64], pl.FP32, init_value=src),
             TensorSpec("idx", [16, 8], pl.INT32, init_value=idx),
             TensorSpec("echo", [16, 64], pl.FP32, is_output=True),
             TensorSpec("g", [16, 8], pl.FP32, is_output=True)]
    check_both(work, pl.parse(LOCAL_COPY), specs, golden)
