"""End to end on the simulated device: the generators (pl.tile.ci / pl.arange, pl.tile.random),
the sorts (pl.tile.sort32, pl.tile.mrgsort) and pl.tile.fillpad_expand, each checked against the
reference interpreter (by run()) and against a numpy golden written here, independently of the
compiler (the Philox-4x32 generator included)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import TensorSpec

from e2e_helpers import run_program


# ----- ci / arange -------------------------------------------------------------------------

CI = """
import pypto.language as pl

@pl.program
class Ci:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, o: pl.Out[pl.Tensor[[1, 40], pl.DT]]) -> pl.Tensor[[1, 40], pl.DT]:
        seq = pl.tile.ci(START, [1, 40], dtype=pl.DT, descending=DESC)
        o = pl.store(seq, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, o: pl.Out[pl.Tensor[[1, 40], pl.DT]]) -> pl.Tensor[[1, 40], pl.DT]:
        o = self.k(o)
        return o
"""


@pytest.mark.parametrize("dtype,start,descending", [
    ("INT32", 0, False), ("INT32", 7, True), ("INT16", -5, False), ("UINT16", 3, True),
    ("UINT32", 10, False)])
def test_ci_is_an_integer_sequence_that_wraps(work, dtype, start, descending):
    text = CI.replace("pl.DT", "pl." + dtype).replace("START", str(start)) \
        .replace("DESC", str(descending))
    out = run_program(work, text, [TensorSpec("o", [1, 40], getattr(pl, dtype), is_output=True)])
    steps = np.arange(40, dtype=np.int64)
    want = (start - steps) if descending else (start + steps)
    np_dtype = {"INT32": np.int32, "INT16": np.int16, "UINT16": np.uint16, "UINT32": np.uint32}
    np.testing.assert_array_equal(out["o"][0], want.astype(np_dtype[dtype]))


ARANGE_IN_SCOPE = """
import pypto.language as pl

@pl.program
class Arange:
    @pl.function
    def main(self, o: pl.Out[pl.Tensor[[1, 32], pl.INT32]]) -> pl.Tensor[[1, 32], pl.INT32]:
        for i in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP):
                seq = pl.tensor.arange(i * 100, [1, 32], dtype=pl.INT32, descending=True)
                o = pl.assemble(o, seq, [0, 0])
        return o
"""


def test_tensor_arange_in_a_scope_with_a_run_time_start(work):
    out = run_program(work, ARANGE_IN_SCOPE,
                      [TensorSpec("o", [1, 32], pl.INT32, is_output=True)])
    np.testing.assert_array_equal(out["o"][0], 100 - np.arange(32))


@pytest.mark.parametrize("call,words", [
    ("pl.tile.ci(0, [4, 32], dtype=pl.INT32)", "every dimension but the last must be 1"),
    ("pl.tile.ci(0, [1, 32], dtype=pl.FP32)", "dtype of pl.ci must be"),
    ("pl.tile.ci(0.5, [1, 32], dtype=pl.INT32)", "start of pl.ci must be an integer scalar"),
])
def test_ci_errors_point_at_the_mistake(call, words):
    text = CI.replace("pl.tile.ci(START, [1, 40], dtype=pl.DT, descending=DESC)", call) \
        .replace("pl.DT", "pl.INT32")
    with pytest.raises(Exception) as err:
        pl.parse(text)
    assert words in str(err.value)
    assert "seq = " in str(err.value)  # the offending line is shown


# ----- random ------------------------------------------------------------------------------

def philox4x32(counter, key, rounds):
    """Philox-4x32 (Salmon et al., SC'11) of four uint32 words under two, in Python integers."""
    c = list(counter)
    k0, k1 = key
    mask = 0xFFFFFFFF
    for _ in range(rounds):
        p0 = 0xD2511F53 * c[0]
        p1 = 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & mask, p1 & mask, ((p0 >> 32) ^ c[3] ^ k1) & mask,
             p0 & mask]
        k0 = (k0 + 0x9E3779B9) & mask
        k1 = (k1 + 0xBB67AE85) & mask
    return c


def random_words(key, counter, rounds, count):
    base = sum(w << (32 * i) for i, w in enumerate(counter))
    out = []
    for block in range((count + 3) // 4):
        value = (base + block) % (1 << 128)
        words = [(value >> (32 * i)) & 0xFFFFFFFF for i in range(4)]
        out += philox4x32(words, key, rounds)
    return np.array(out[:count], dtype=np.uint64).astype(np.uint32)


RANDOM = """
import pypto.language as pl

@pl.program
class Random:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, o: pl.Out[pl.Tensor[[4, 64], pl.DT]]) -> pl.Tensor[[4, 64], pl.DT]:
        r = pl.tile.random(0x1234, 0x5678, 0xFFFFFFFE, 0xFFFFFFFF, 2, 3, [4, 64], dtype=pl.DT, rounds=ROUNDS)
        o = pl.store(r, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, o: pl.Out[pl.Tensor[[4, 64], pl.DT]]) -> pl.Tensor[[4, 64], pl.DT]:
        o = self.k(o)
        return o
"""


@pytest.mark.parametrize("dtype,rounds", [("UINT32", 10), ("INT32", 7)])
def test_random_is_philox_of_the_counter_plus_the_position(work, dtype, rounds):
    text = RANDOM.replace("pl.DT", "pl." + dtype).replace("ROUNDS", str(rounds))
    out = run_program(work, text, [TensorSpec("o", [4, 64], getattr(pl, dtype), is_output=True)])
    # The counter's low words are near their top: the position carries into counter2.
    want = random_words((0x1234, 0x5678), (0xFFFFFFFE, 0xFFFFFFFF, 2, 3), rounds, 4 * 64)
    got = np.asarray(out["o"]).reshape(-1).view(np.uint32)
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) > 250  # words, not a constant


RANDOM_VALID = """
import pypto.language as pl

@pl.program
class RandomValid:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, o: pl.Out[pl.Tensor[[8, 32], pl.UINT32]]) -> pl.Tensor[[8, 32], pl.UINT32]:
        r = pl.tile.random(1, 2, 3, 4, 5, 6, [8, 32], valid_shape=[5, 20])
        o = pl.store(pl.tile.fillpad(r, pad_value=pl.PadValue.zero), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, o: pl.Out[pl.Tensor[[8, 32], pl.UINT32]]) -> pl.Tensor[[8, 32], pl.UINT32]:
        o = self.k(o)
        return o
"""


def test_random_with_a_valid_shape_writes_that_corner(work):
    out = run_program(work, RANDOM_VALID, [TensorSpec("o", [8, 32], pl.UINT32, is_output=True)])
    full = random_words((1, 2), (3, 4, 5, 6), 10, 8 * 32).reshape(8, 32)
    want = np.zeros((8, 32), np.uint32)
    want[:5, :20] = full[:5, :20]
    np.testing.assert_array_equal(out["o"], want)


# ----- sort32 and mrgsort ------------------------------------------------------------------

SORT32 = """
import pypto.language as pl

@pl.program
class Sort:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, v: pl.Tensor[[4, 64], pl.FP32], i: pl.Tensor[[4, 64], pl.UINT32],
          o: pl.Out[pl.Tensor[[4, 128], pl.FP32]]) -> pl.Tensor[[4, 128], pl.FP32]:
        pairs = pl.tile.sort32(pl.load(v, [0, 0], [4, 64]), pl.load(i, [0, 0], [4, 64]))
        o = pl.store(pairs, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, v: pl.Tensor[[4, 64], pl.FP32], i: pl.Tensor[[4, 64], pl.UINT32],
             o: pl.Out[pl.Tensor[[4, 128], pl.FP32]]) -> pl.Tensor[[4, 128], pl.FP32]:
        o = self.k(v, i, o)
        return o
"""


def descending_order(values):
    """Stable descending order (equal values keep their order)."""
    return np.argsort(-values, kind="stable")


def test_sort32_sorts_blocks_of_32_into_value_index_pairs(work):
    rng = np.random.default_rng(3)
    v = rng.integers(-20, 20, (4, 64)).astype(np.float32)  # ties: their order is kept
    idx = (np.arange(4 * 64, dtype=np.uint32) * 7).reshape(4, 64)
    out = run_program(work, SORT32, [TensorSpec("v", [4, 64], pl.FP32, init_value=v),
                                     TensorSpec("i", [4, 64], pl.UINT32, init_value=idx),
                                     TensorSpec("o", [4, 128], pl.FP32, is_output=True)])
    o = np.asarray(out["o"])
    for r in range(4):
        for block in range(2):
            cols = slice(32 * block, 32 * block + 32)
            order = descending_order(v[r, cols])
            np.testing.assert_array_equal(o[r, 64 * block:64 * block + 64:2], v[r, cols][order])
            np.testing.assert_array_equal(o[r, 64 * block + 1:64 * block + 64:2].view(np.uint32),
                                          idx[r, cols][order])


MRGSORT = """
import pypto.language as pl

@pl.program
class Merge:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, v: pl.Tensor[[1, 512], pl.FP32], i: pl.Tensor[[1, 512], pl.UINT32],
          o: pl.Out[pl.Tensor[[1, 1024], pl.FP32]]) -> pl.Tensor[[1, 1024], pl.FP32]:
        pairs = pl.tile.sort32(pl.load(v, [0, 0], [1, 512]), pl.load(i, [0, 0], [1, 512]))
        for step in pl.range(2):
            pairs = pl.tile.mrgsort(pairs, block_len=1 << (6 + 2 * step))
        o = pl.store(pairs, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, v: pl.Tensor[[1, 512], pl.FP32], i: pl.Tensor[[1, 512], pl.UINT32],
             o: pl.Out[pl.Tensor[[1, 1024], pl.FP32]]) -> pl.Tensor[[1, 1024], pl.FP32]:
        o = self.k(v, i, o)
        return o
"""


def test_sort32_then_mrgsort_with_a_run_time_block_len_sorts_a_row(work):
    # 512 values: sort32 makes runs of 32, two merges of four runs make 512 (run-time block_len
    # 64, then 256 elements).
    rng = np.random.default_rng(5)
    v = rng.normal(size=(1, 512)).astype(np.float32)
    idx = np.arange(512, dtype=np.uint32).reshape(1, 512)
    out = run_program(work, MRGSORT, [TensorSpec("v", [1, 512], pl.FP32, init_value=v),
                                      TensorSpec("i", [1, 512], pl.UINT32, init_value=idx),
                                      TensorSpec("o", [1, 1024], pl.FP32, is_output=True)])
    o = np.asarray(out["o"])[0]
    order = descending_order(v[0])
    np.testing.assert_array_equal(o[0::2], v[0][order])
    np.testing.assert_array_equal(o[1::2].view(np.uint32), order.astype(np.uint32))


def test_mrgsort_rejects_an_odd_block_len():
    text = MRGSORT.replace("block_len=1 << (6 + 2 * step)", "block_len=63")
    with pytest.raises(Exception, match="block_len of pl.mrgsort must be a positive even"):
        pl.parse(text)


# ----- fillpad_expand ----------------------------------------------------------------------

FILLPAD_EXPAND = """
import pypto.language as pl

@pl.program
class Expand:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[12, 16], pl.DT],
          o: pl.Out[pl.Tensor[[16, 32], pl.DT]]) -> pl.Tensor[[16, 32], pl.DT]:
        t = pl.load(a, [0, 0], [12, 16], valid_shapes=[9, 10])
        o = pl.store(pl.tile.fillpad_expand(t, [16, 32], pad_value=pl.PadValue.PAD), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[12, 16], pl.DT],
             o: pl.Out[pl.Tensor[[16, 32], pl.DT]]) -> pl.Tensor[[16, 32], pl.DT]:
        o = self.k(a, o)
        return o
"""


@pytest.mark.parametrize("dtype,pad", [("FP32", "min"), ("INT32", "max"), ("FP16", "zero")])
def test_fillpad_expand_pads_around_the_valid_region(work, dtype, pad):
    np_dtype = {"FP32": np.float32, "INT32": np.int32, "FP16": np.float16}[dtype]
    a = np.arange(12 * 16).reshape(12, 16).astype(np_dtype)
    text = FILLPAD_EXPAND.replace("pl.DT", "pl." + dtype).replace("PAD", pad)
    out = run_program(work, text, [TensorSpec("a", [12, 16], getattr(pl, dtype), init_value=a),
                                   TensorSpec("o", [16, 32], getattr(pl, dtype), is_output=True)])
    if np.issubdtype(np_dtype, np.floating):
        fill = {"zero": 0, "min": -np.inf, "max": np.inf}[pad]
    else:
        fill = {"zero": 0, "min": np.iinfo(np_dtype).min, "max": np.iinfo(np_dtype).max}[pad]
    want = np.full((16, 32), fill, np_dtype)
    want[:9, :10] = a[:9, :10]
    np.testing.assert_array_equal(out["o"], want)


FILLPAD_EXPAND_TENSOR = """
import pypto.language as pl

@pl.program
class ExpandTensor:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[12, 16], pl.FP32],
          o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        r: pl.Tensor[[16, 32], pl.FP32] = pl.fillpad_expand(a, [16, 32], pad_value=pl.PadValue.max)
        return pl.assemble(o, r, [0, 0])

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[12, 16], pl.FP32],
             o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        return self.k(a, o)
"""


def test_fillpad_expand_of_a_tensor_in_a_kernel(work):
    a = np.random.default_rng(1).normal(size=(12, 16)).astype(np.float32)
    out = run_program(work, FILLPAD_EXPAND_TENSOR,
                      [TensorSpec("a", [12, 16], pl.FP32, init_value=a),
                       TensorSpec("o", [16, 32], pl.FP32, is_output=True)])
    want = np.full((16, 32), np.inf, np.float32)
    want[:12, :16] = a
    np.testing.assert_array_equal(out["o"], want)


def test_fillpad_expand_cannot_shrink():
    text = FILLPAD_EXPAND.replace("[16, 32], pad_value", "[8, 32], pad_value") \
        .replace("pl.DT", "pl.FP32").replace("PAD", "zero")
    with pytest.raises(Exception, match=r"must be at least the tile's \[12, 16\]"):
        pl.parse(text)


RANDOM_TENSOR = """
import pypto.language as pl

@pl.program
class RandomTensor:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, o: pl.Out[pl.Tensor[[4, 64], pl.UINT32]]) -> pl.Tensor[[4, 64], pl.UINT32]:
        a: pl.Tensor[[4, 64], pl.UINT32] = pl.random(9, 8, 7, 6, 5, 4, [4, 64])
        b: pl.Tensor[[4, 64], pl.UINT32] = pl.tensor.random(9, 8, 7, 6, 5, 4, [4, 64], rounds=7)
        return pl.assemble(o, pl.xor(a, b), [0, 0])

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, o: pl.Out[pl.Tensor[[4, 64], pl.UINT32]]) -> pl.Tensor[[4, 64], pl.UINT32]:
        return self.k(o)
"""


def test_random_of_tensors_in_a_kernel(work):
    out = run_program(work, RANDOM_TENSOR, [TensorSpec("o", [4, 64], pl.UINT32, is_output=True)])
    want = random_words((9, 8), (7, 6, 5, 4), 10, 256) ^ random_words((9, 8), (7, 6, 5, 4), 7, 256)
    np.testing.assert_array_equal(np.asarray(out["o"]).reshape(-1), want)
    # The tile form prints as pl.tile_random and the tensor form as pl.random: both read back.
    printed = pl.parse(RANDOM_TENSOR).as_python()
    assert pl.parse(printed).as_python() == printed


def test_a_scalar_narrowed_at_run_time_wraps(work):
    text = ARANGE_IN_SCOPE.replace("pl.tensor.arange(i * 100,",
                                   "pl.tensor.arange(pl.cast(i * 100 - 150, pl.UINT16),") \
        .replace("pl.INT32", "pl.UINT16")
    out = run_program(work, text, [TensorSpec("o", [1, 32], pl.UINT16, is_output=True)])
    np.testing.assert_array_equal(out["o"][0], ((-50 - np.arange(32)) % 65536).astype(np.uint16))


MERGE_LISTS = """
import pypto.language as pl

@pl.program
class MergeLists:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, v: pl.Tensor[[1, 96], pl.FP32], i: pl.Tensor[[1, 96], pl.UINT32],
          o: pl.Out[pl.Tensor[[1, 192], pl.FP32]]) -> pl.Tensor[[1, 192], pl.FP32]:
        a = pl.tile.sort32(pl.load(v, [0, 0], [1, 32]), pl.load(i, [0, 0], [1, 32]))
        b = pl.tile.sort32(pl.load(v, [0, 32], [1, 32]), pl.load(i, [0, 32], [1, 32]))
        c = pl.tile.sort32(pl.load(v, [0, 64], [1, 32]), pl.load(i, [0, 64], [1, 32]))
        tmp = pl.tile.create([1, 192], dtype=pl.FP32)
        o = pl.store(MERGE, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, v: pl.Tensor[[1, 96], pl.FP32], i: pl.Tensor[[1, 96], pl.UINT32],
             o: pl.Out[pl.Tensor[[1, 192], pl.FP32]]) -> pl.Tensor[[1, 192], pl.FP32]:
        o = self.k(v, i, o)
        return o
"""


@pytest.mark.parametrize("merge", ["pl.tile.mrgsort(a, b, c, tmp=tmp)",
                                   "pl.tile.mrgsort(a, b, c, pl.tile.sort32(pl.load(v, [0, 0], "
                                   "[1, 0 + 32]), pl.load(i, [0, 0], [1, 32])), tmp)"])
def test_mrgsort_of_lists_merges_them(work, merge):
    rng = np.random.default_rng(8)
    v = rng.integers(-30, 30, (1, 96)).astype(np.float32)  # ties: the earlier list's first
    idx = np.arange(96, dtype=np.uint32).reshape(1, 96)
    four = "tmp)" in merge and merge.count("sort32") == 1
    text = MERGE_LISTS.replace("MERGE", merge)
    if four:  # a fourth list (the first again): [1, 256]
        text = text.replace("[1, 192]", "[1, 256]")
    cols = 256 if four else 192
    out = run_program(work, text, [TensorSpec("v", [1, 96], pl.FP32, init_value=v),
                                   TensorSpec("i", [1, 96], pl.UINT32, init_value=idx),
                                   TensorSpec("o", [1, cols], pl.FP32, is_output=True)])
    o = np.asarray(out["o"])[0]
    values = v[0] if not four else np.concatenate([v[0], v[0, :32]])
    order = descending_order(values)
    np.testing.assert_array_equal(o[0::2], values[order])
    np.testing.assert_array_equal(o[1::2].view(np.uint32),
                                  (order % 96 if four else order).astype(np.uint32))
