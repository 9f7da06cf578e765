"""End to end on the simulated device, each against a numpy golden and against the reference
interpreter: pl.tile.gatherb (32-byte blocks by byte offset), pl.tile.mgather (rows or elements
of a tensor by index, with each gather_oob mode, into Vec and into Mat), pl.create_l1 with
pl.gather_row (an L1 accumulator filled row by row, feeding pl.matmul; transposed, and with a
valid_shape computed at run time), pl.tensor.view (in a kernel and in an orchestration) and
pl.dump_tag. An offset or index out of range is a run-time error naming the op, on the device and
in the interpreter."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import CompileError
from pypto.runtime import TensorSpec

from e2e_helpers import check_both, failure


# ----- pl.tile.gatherb

GATHERB = """
import pypto.language as pl

@pl.program
class Gatherb:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, src: pl.Tensor[[1, SC], pl.SRC], off: pl.Tensor[[4, 8], pl.UINT32],
          o: pl.Out[pl.Tensor[[4, OC], pl.OUT]]) -> pl.Tensor[[4, OC], pl.OUT]:
        s = pl.load(src, [0, 0], [1, SC])
        b = pl.load(off, [0, 0], [4, 8], valid_shapes=[VR, VC])
        o = pl.store(pl.tile.gatherb(s, b, output_dtype=pl.OUT), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[1, SC], pl.SRC], off: pl.Tensor[[4, 8], pl.UINT32],
             o: pl.Out[pl.Tensor[[4, OC], pl.OUT]]) -> pl.Tensor[[4, OC], pl.OUT]:
        o = self.k(src, off, o)
        return o
"""

NP = {"FP32": np.float32, "FP16": np.float16, "INT32": np.int32, "INT16": np.int16,
      "UINT8": np.uint8, "UINT16": np.uint16, "INT8": np.int8, "UINT32": np.uint32}


def gatherb_program(src, out, valid=(4, 8)):
    sc = 32 * 32 // np.dtype(NP[src]).itemsize  # 32 blocks of source
    oc = 8 * 32 // np.dtype(NP[out]).itemsize
    text = (GATHERB.replace("SC", str(sc)).replace("OC", str(oc)).replace("pl.SRC", "pl." + src)
            .replace("pl.OUT", "pl." + out).replace("VR", str(valid[0]))
            .replace("VC", str(valid[1])))
    return pl.parse(text), sc, oc


@pytest.mark.parametrize("src, out, pattern, valid", [
    ("FP32", "FP32", "reverse", (4, 8)),
    ("UINT8", "UINT8", "roll3", (4, 8)),
    ("INT16", "INT32", "reverse", (4, 8)),
    ("FP32", "UINT8", "roll3", (4, 8)),
    ("FP16", "FP16", "odd", (3, 5)),
])
def test_gatherb_moves_32_byte_blocks_by_byte_offset(work, src, out, pattern, valid):
    program, sc, oc = gatherb_program(src, out, valid)
    blocks = np.arange(32)
    if pattern == "reverse":
        offsets = (31 - blocks) * 32
    elif pattern == "roll3":
        offsets = ((blocks + 3) % 32) * 32
    else:  # unaligned byte offsets: any byte whose block lies inside the source
        offsets = (blocks * 29 + 5) % (32 * 32 - 32)
    offsets = offsets.astype(np.uint32).reshape(4, 8)
    source = (np.arange(sc) % 113).astype(NP[src]).reshape(1, sc)
    raw = source.view(np.uint8).reshape(-1)
    expected = np.zeros((4, oc), NP[out])
    out_bytes = expected.view(np.uint8).reshape(4, -1)
    for r in range(valid[0]):
        for b in range(valid[1]):
            at = int(offsets[r, b])
            out_bytes[r, b * 32:(b + 1) * 32] = raw[at:at + 32]

    def golden(t, params=None):
        t["o"][:] = expected

    specs = [TensorSpec("src", [1, sc], getattr(pl, src), init_value=source),
             TensorSpec("off", [4, 8], pl.UINT32, init_value=offsets),
             TensorSpec("o", [4, oc], getattr(pl, out), is_output=True)]
    result = check_both(work, program, specs, golden)
    np.testing.assert_array_equal(result.outputs["o"].view(np.uint8), expected.view(np.uint8))


def test_gatherb_offset_past_the_source_is_a_run_time_error(work):
    program, sc, _ = gatherb_program("FP32", "FP32")
    offsets = np.zeros((4, 8), np.uint32)
    offsets[2, 6] = 32 * 32 - 16  # its block runs 16 bytes past the end
    specs = [TensorSpec("src", [1, sc], pl.FP32, init_value=np.ones((1, sc), np.float32)),
             TensorSpec("off", [4, 8], pl.UINT32, init_value=offsets),
             TensorSpec("o", [4, 64], pl.FP32, is_output=True)]
    for error in failure(work, program, specs):
        assert "pl.tile.gatherb" in error or "gatherb" in error, error
        assert "byte offset 1008 at [2, 6]" in error, error


def test_gatherb_checks_its_operands():
    with pytest.raises(CompileError, match="UINT32 byte offsets"):
        pl.parse(GATHERB.replace("pl.UINT32", "pl.INT32").replace("SC", "256").replace(
            "OC", "64").replace("pl.SRC", "pl.FP32").replace("pl.OUT", "pl.FP32")
            .replace("VR", "4").replace("VC", "8"))


# ----- pl.tile.mgather

MGATHER_ROWS = """
import pypto.language as pl

@pl.program
class MgatherRows:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, mem: pl.Tensor[[64, 32], pl.FP16], idx: pl.Tensor[ISHAPE, pl.INT32],
          o: pl.Out[pl.Tensor[[16, 32], pl.FP16]]) -> pl.Tensor[[16, 32], pl.FP16]:
        i = pl.load(idx, [0, 0], ISHAPE, valid_shapes=IVALID)
        o = pl.store(pl.tile.mgather(mem, i, "row", gather_oob=OOB), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, mem: pl.Tensor[[64, 32], pl.FP16], idx: pl.Tensor[ISHAPE, pl.INT32],
             o: pl.Out[pl.Tensor[[16, 32], pl.FP16]]) -> pl.Tensor[[16, 32], pl.FP16]:
        o = self.k(mem, idx, o)
        return o
"""

MGATHER_ELEMS = """
import pypto.language as pl

@pl.program
class MgatherElems:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, mem: pl.Tensor[[256], pl.INT32], idx: pl.Tensor[[8, 16], pl.INT32],
          o: pl.Out[pl.Tensor[[8, 16], pl.INT32]]) -> pl.Tensor[[8, 16], pl.INT32]:
        i = pl.load(idx, [0, 0], [8, 16], valid_shapes=[VR, VC])
        o = pl.store(pl.tile.mgather(mem, i, coalesce="elem", gather_oob=OOB), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, mem: pl.Tensor[[256], pl.INT32], idx: pl.Tensor[[8, 16], pl.INT32],
             o: pl.Out[pl.Tensor[[8, 16], pl.INT32]]) -> pl.Tensor[[8, 16], pl.INT32]:
        o = self.k(mem, idx, o)
        return o
"""


def resolve(indices, bound, oob):
    """The units the indices read (-1: zeros), as the device reads an INT32 index: unsigned."""
    u = indices.astype(np.int64) & 0xFFFFFFFF
    if oob == "clamp":
        return np.minimum(u, bound - 1)
    if oob == "wrap":
        return u % bound
    if oob == "zero":
        return np.where(u < bound, u, -1)
    return u


@pytest.mark.parametrize("column, oob, valid", [
    (False, "undefined", 16), (True, "undefined", 11), (False, "clamp", 16),
    (True, "wrap", 16), (False, "zero", 9)])
def test_mgather_rows(work, column, oob, valid):
    shape = [16, 1] if column else [1, 16]
    ivalid = [valid, 1] if column else [1, valid]
    text = (MGATHER_ROWS.replace("ISHAPE", str(shape)).replace("IVALID", str(ivalid))
            .replace("OOB", f'"{oob}"'))
    values = ([63, 2, 41, 7, 31, 0, 18, 55, 4, 29, 13, 47, 8, 38, 22, 60] if oob == "undefined"
              else [-1, 64, 65, 7, 80, 0, 18, 55, 4, 70, 13, 47, 8, 38, 22, 60])
    indices = np.array(values, np.int32).reshape(shape)
    table = (np.arange(64 * 32) % 97).astype(np.float16).reshape(64, 32)
    expected = np.zeros((16, 32), np.float16)
    rows = resolve(indices.reshape(-1)[:valid], 64, oob)
    for k, row in enumerate(rows):
        if row >= 0:
            expected[k] = table[row]

    def golden(t, params=None):
        t["o"][:] = expected

    specs = [TensorSpec("mem", [64, 32], pl.FP16, init_value=table),
             TensorSpec("idx", shape, pl.INT32, init_value=indices),
             TensorSpec("o", [16, 32], pl.FP16, is_output=True)]
    result = check_both(work, pl.parse(text), specs, golden)
    np.testing.assert_array_equal(result.outputs["o"], expected)


@pytest.mark.parametrize("oob, valid", [("undefined", (8, 16)), ("clamp", (8, 16)),
                                        ("wrap", (5, 11)), ("zero", (8, 16))])
def test_mgather_elements(work, oob, valid):
    text = (MGATHER_ELEMS.replace("VR", str(valid[0])).replace("VC", str(valid[1]))
            .replace("OOB", f'"{oob}"'))
    if oob == "undefined":
        indices = np.arange(127, -1, -1, dtype=np.int32) * 2
    else:
        indices = np.arange(128, dtype=np.int32) * 3 - 4
        indices[:4] = [-1, 256, 257, 515]
    indices = indices.reshape(8, 16)
    table = (np.arange(256) * 7 % 53 - 20).astype(np.int32)
    expected = np.zeros((8, 16), np.int32)
    vr, vc = valid
    picked = resolve(indices[:vr, :vc], 256, oob)
    expected[:vr, :vc] = np.where(picked >= 0, table[np.maximum(picked, 0)], 0)

    def golden(t, params=None):
        t["o"][:] = expected

    specs = [TensorSpec("mem", [256], pl.INT32, init_value=table),
             TensorSpec("idx", [8, 16], pl.INT32, init_value=indices),
             TensorSpec("o", [8, 16], pl.INT32, is_output=True)]
    result = check_both(work, pl.parse(text), specs, golden)
    np.testing.assert_array_equal(result.outputs["o"], expected)


def test_mgather_index_past_the_tensor_is_a_run_time_error(work):
    text = (MGATHER_ELEMS.replace("VR", "8").replace("VC", "16")
            .replace("OOB", '"undefined"'))
    indices = np.zeros((8, 16), np.int32)
    indices[3, 5] = 256
    specs = [TensorSpec("mem", [256], pl.INT32, init_value=np.arange(256, dtype=np.int32)),
             TensorSpec("idx", [8, 16], pl.INT32, init_value=indices),
             TensorSpec("o", [8, 16], pl.INT32, is_output=True)]
    for error in failure(work, pl.parse(text), specs):
        assert "mgather" in error and "index 256" in error, error
        assert "gather_oob" in error, error


MGATHER_MAT = """
import pypto.language as pl

@pl.program
class MgatherMat:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, mem: pl.Tensor[MSHAPE, pl.DT], idx: pl.Tensor[ISHAPE, pl.INT32],
          scratch: pl.Tensor[[256], pl.DT], eye: pl.Tensor[[16, 16], pl.DT],
          o: pl.Out[pl.Tensor[[16, OC], pl.FP32]]) -> pl.Tensor[[16, OC], pl.FP32]:
        g = pl.tile.mgather(mem, idx, COALESCE, gather_oob="wrap",
                            target_memory=pl.MemorySpace.Mat, SCRATCH)
        e = pl.load(eye, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
        o = pl.store(pl.matmul(e, g), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, mem: pl.Tensor[MSHAPE, pl.DT], idx: pl.Tensor[ISHAPE, pl.INT32],
             scratch: pl.Tensor[[256], pl.DT], eye: pl.Tensor[[16, 16], pl.DT],
             o: pl.Out[pl.Tensor[[16, OC], pl.FP32]]) -> pl.Tensor[[16, OC], pl.FP32]:
        o = self.k(mem, idx, scratch, eye, o)
        return o
"""


def mgather_mat(rows):
    """Rows of a [64, 32] FP16 table by a [1, 16] GM index, or elements of a [512] FP32 one by a
    [16, 8] index (staged through scratch), into Mat; read back as eye @ result."""
    if rows:
        subs = {"MSHAPE": "[64, 32]", "ISHAPE": "[1, 16]", "pl.DT": "pl.FP16", "OC": "32",
                "COALESCE": '"row"', ", SCRATCH": ""}
    else:
        subs = {"MSHAPE": "[512]", "ISHAPE": "[16, 8]", "pl.DT": "pl.FP32", "OC": "8",
                "COALESCE": '"elem"', "SCRATCH": "scratch=scratch"}
    text = MGATHER_MAT
    for k, v in subs.items():
        text = text.replace(k, v)
    return text


@pytest.mark.parametrize("rows", [True, False])
def test_mgather_into_mat_feeds_matmul(work, rows):
    rng = np.random.default_rng(5)
    dtype = np.float16 if rows else np.float32
    mem = rng.integers(-50, 50, (64, 32) if rows else (512,)).astype(dtype)
    indices = rng.integers(-3, 700, (1, 16) if rows else (16, 8)).astype(np.int32)
    picked = resolve(indices, 64 if rows else 512, "wrap")
    expected = (mem[picked[0]] if rows else mem[picked]).astype(np.float32)

    def golden(t, params=None):
        t["o"][:] = expected

    specs = [TensorSpec("mem", list(mem.shape), pl.FP16 if rows else pl.FP32, init_value=mem),
             TensorSpec("idx", list(indices.shape), pl.INT32, init_value=indices),
             TensorSpec("scratch", [256], pl.FP16 if rows else pl.FP32),
             TensorSpec("eye", [16, 16], pl.FP16 if rows else pl.FP32,
                        init_value=np.eye(16, dtype=dtype)),
             TensorSpec("o", [16, expected.shape[1]], pl.FP32, is_output=True)]
    result = check_both(work, pl.parse(mgather_mat(rows)), specs, golden)
    np.testing.assert_array_equal(result.outputs["o"], expected)


def test_mgather_forms_check_their_arguments():
    with pytest.raises(CompileError, match="needs scratch="):
        pl.parse(mgather_mat(False).replace(", scratch=scratch", ""))
    with pytest.raises(CompileError, match="scratch= only in its Mat element form"):
        pl.parse(mgather_mat(True).replace("pl.MemorySpace.Mat)", "pl.MemorySpace.Mat, "
                                           "scratch=scratch)", 1))
    with pytest.raises(CompileError, match="is not supported yet"):
        pl.parse(mgather_mat(True).replace("pl.MemorySpace.Mat)", "pl.MemorySpace.Mat, "
                                           "valid_shape=[8, 32])", 1))
    with pytest.raises(CompileError, match='coalesce of pl.tile.mgather must be "row" or "elem"|'
                                           'coalesce of pl.mgather must be "row" or "elem"'):
        pl.parse(MGATHER_ELEMS.replace("VR", "8").replace("VC", "16").replace(
            'coalesce="elem", gather_oob=OOB', 'coalesce="cols"'))


# ----- pl.create_l1 and pl.gather_row

GATHER_ROW = """
import pypto.language as pl

@pl.program
class PagedKv:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, q: pl.Tensor[[16, 32], pl.FP16], pool: pl.Tensor[[64, 32], pl.FP16],
          table: pl.Tensor[[16], pl.INT32],
          o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        kv = pl.tensor.create_l1([32, 16], pl.FP16, transpose=True)
        for r in pl.range(16):
            phys = pl.read(table, [r])
            kv = pl.tensor.gather_row(kv, pool, [0, r], [phys, 0], [1, 32], True)
        a = pl.load(q, [0, 0], [16, 32], target_memory=pl.MemorySpace.Mat)
        o = pl.store(pl.matmul(a, kv), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.Tensor[[16, 32], pl.FP16], pool: pl.Tensor[[64, 32], pl.FP16],
             table: pl.Tensor[[16], pl.INT32],
             o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        o = self.k(q, pool, table, o)
        return o
"""


def test_gather_row_fills_a_transposed_l1_operand_of_matmul(work):
    rng = np.random.default_rng(3)
    q = rng.uniform(-1, 1, (16, 32)).astype(np.float16)
    pool = rng.uniform(-1, 1, (64, 32)).astype(np.float16)
    table = rng.permutation(64)[:16].astype(np.int32)
    expected = q.astype(np.float32) @ pool[table].astype(np.float32).T

    def golden(t, params=None):
        t["o"][:] = expected

    specs = [TensorSpec("q", [16, 32], pl.FP16, init_value=q),
             TensorSpec("pool", [64, 32], pl.FP16, init_value=pool),
             TensorSpec("table", [16], pl.INT32, init_value=table),
             TensorSpec("o", [16, 16], pl.FP32, is_output=True)]
    result = check_both(work, pl.parse(GATHER_ROW), specs, golden)
    np.testing.assert_allclose(result.outputs["o"], expected, rtol=1e-3, atol=1e-3)


# The row count of the second gather is read from global memory: a run-time valid_shape. The
# first paints every slot with sentinel rows, the second overwrites only the first n.
GATHER_ROW_DYNAMIC = """
import pypto.language as pl

@pl.program
class DynamicRows:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, src: pl.Tensor[[64, 32], pl.FP16], n: pl.Tensor[[1], pl.INT32],
          eye: pl.Tensor[[32, 32], pl.FP16],
          o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        rows = pl.read(n, [0])
        kv = pl.create_l1([32, 32], pl.FP16)
        kv = pl.gather_row(kv, src, [0, 0], [32, 0], [32, 32])
        kv = pl.tile.gather_row(kv, src, [0, 0], [0, 0], [32, 32], valid_shape=[rows, 32])
        e = pl.load(eye, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
        o = pl.store(pl.matmul(e, kv), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[64, 32], pl.FP16], n: pl.Tensor[[1], pl.INT32],
             eye: pl.Tensor[[32, 32], pl.FP16],
             o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        o = self.k(src, n, eye, o)
        return o
"""


@pytest.mark.parametrize("rows", [0, 1, 17, 32])
def test_gather_row_moves_only_its_run_time_valid_rows(work, rows):
    src = np.repeat(np.arange(64, dtype=np.float16).reshape(64, 1), 32, axis=1)
    expected = src[32:64].astype(np.float32)
    expected[:rows] = src[:rows]

    def golden(t, params=None):
        t["o"][:] = expected

    specs = [TensorSpec("src", [64, 32], pl.FP16, init_value=src),
             TensorSpec("n", [1], pl.INT32, init_value=np.array([rows], np.int32)),
             TensorSpec("eye", [32, 32], pl.FP16, init_value=np.eye(32, dtype=np.float16)),
             TensorSpec("o", [32, 32], pl.FP32, is_output=True)]
    result = check_both(work, pl.parse(GATHER_ROW_DYNAMIC), specs, golden)
    np.testing.assert_array_equal(result.outputs["o"], expected)


# Two runs into one accumulator split at a run-time row r (a window straddling a block boundary),
# in a pl.at scope of an Opaque function: the second run is written at row r, its static window
# reaching past the tile, of which only 32 - r rows move.
GATHER_ROW_TWO_RUNS = """
import pypto.language as pl

@pl.program
class TwoRuns:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, src: pl.Tensor[[64, 32], pl.FP16], n: pl.Tensor[[1], pl.INT32],
             eye: pl.Tensor[[32, 32], pl.FP16],
             o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            r = pl.read(n, [0])
            kv = pl.create_l1([32, 32], pl.FP16)
            kv = pl.gather_row(kv, src, [0, 0], [0, 0], [32, 32], valid_shape=[r, 32])
            kv = pl.gather_row(kv, src, [r, 0], [32, 0], [32, 32], valid_shape=[32 - r, 32])
            e = pl.load(eye, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
            o = pl.store(pl.matmul(e, kv), [0, 0], o)
        return o
"""


@pytest.mark.parametrize("r", [0, 9, 32])
def test_gather_row_two_runs_split_at_a_run_time_row(work, r):
    src = np.repeat(np.arange(64, dtype=np.float16).reshape(64, 1), 32, axis=1)
    expected = np.concatenate([src[:r], src[32:64 - r]]).astype(np.float32)

    def golden(t, params=None):
        t["o"][:] = expected

    specs = [TensorSpec("src", [64, 32], pl.FP16, init_value=src),
             TensorSpec("n", [1], pl.INT32, init_value=np.array([r], np.int32)),
             TensorSpec("eye", [32, 32], pl.FP16, init_value=np.eye(32, dtype=np.float16)),
             TensorSpec("o", [32, 32], pl.FP32, is_output=True)]
    result = check_both(work, pl.parse(GATHER_ROW_TWO_RUNS), specs, golden)
    np.testing.assert_array_equal(result.outputs["o"], expected)


# PyPTO's form: in a pl.at scope, a tensor matmul whose right operand is the L1 accumulator
# (eye @ kv reads the gathered rows back), its product assembled into the output tensor.
GATHER_ROW_TENSOR_MATMUL = """
import pypto.language as pl

@pl.program
class TensorMatmul:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, src: pl.Tensor[[64, 32], pl.FP16], table: pl.Tensor[[16], pl.INT32],
             eye: pl.Tensor[[16, 16], pl.FP16],
             o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            kv = pl.create_l1([16, 32], pl.FP16)
            for i in pl.range(16):
                kv = pl.gather_row(kv, src, [i, 0], [pl.read(table, [i]), 0], [1, 32])
            result = pl.matmul(eye, kv, out_dtype=pl.FP32)
            o = pl.assemble(o, result, [0, 0])
        return o
"""


def test_gather_row_accumulator_is_an_operand_of_a_tensor_matmul(work):
    src = np.random.default_rng(8).uniform(-2, 2, (64, 32)).astype(np.float16)
    table = np.random.default_rng(9).permutation(64)[:16].astype(np.int32)
    expected = src[table].astype(np.float32)

    def golden(t, params=None):
        t["o"][:] = expected

    specs = [TensorSpec("src", [64, 32], pl.FP16, init_value=src),
             TensorSpec("table", [16], pl.INT32, init_value=table),
             TensorSpec("eye", [16, 16], pl.FP16, init_value=np.eye(16, dtype=np.float16)),
             TensorSpec("o", [16, 32], pl.FP32, is_output=True)]
    result = check_both(work, pl.parse(GATHER_ROW_TENSOR_MATMUL), specs, golden)
    np.testing.assert_array_equal(result.outputs["o"], expected)


def test_gather_row_valid_rows_past_the_window_is_a_run_time_error(work):
    src = np.zeros((64, 32), np.float16)
    specs = [TensorSpec("src", [64, 32], pl.FP16, init_value=src),
             TensorSpec("n", [1], pl.INT32, init_value=np.array([33], np.int32)),
             TensorSpec("eye", [32, 32], pl.FP16, init_value=np.eye(32, dtype=np.float16)),
             TensorSpec("o", [32, 32], pl.FP32, is_output=True)]
    for error in failure(work, pl.parse(GATHER_ROW_DYNAMIC), specs):
        assert "gather_row" in error, error


def test_gather_row_checks_its_window_at_compile_time():
    with pytest.raises(CompileError, match="valid_shape is not supported together with"):
        pl.parse(GATHER_ROW_DYNAMIC.replace("valid_shape=[rows, 32]",
                                            "True, valid_shape=[rows, 32]"))
    with pytest.raises(CompileError) as info:
        pl.parse(GATHER_ROW_DYNAMIC.replace("[0, 0], [32, 0], [32, 32])",
                                            "[0, 0], [40, 0], [32, 32])"))
    assert "pl.gather_row" in str(info.value)


# ----- pl.tensor.view and pl.dump_tag

VIEW = """
import pypto.language as pl

@pl.program
class Views:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 64], pl.FP32],
          o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        v = pl.tensor.view(x, [16, 32])
        t = pl.load(v, [0, 0], [16, 32])
        ov = pl.tensor.view(o, [512], layout=pl.TensorLayout.ND)
        ov = pl.store(pl.reshape(pl.mul(t, 2.0), [512]), [0], ov)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 128], pl.FP32],
             o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        DUMP
        w = pl.tensor.view(x, [8, 64], valid_shape=[8, 64])
        o = self.k(w, o)
        return o
"""


def test_view_reinterprets_a_tensor_in_kernels_and_orchestrations(work):
    x = np.arange(512, dtype=np.float32).reshape(4, 128)

    def golden(t, params=None):
        t["o"][:] = (x * 2).reshape(16, 32)

    specs = [TensorSpec("x", [4, 128], pl.FP32, init_value=x),
             TensorSpec("o", [16, 32], pl.FP32, is_output=True)]
    program = pl.parse(VIEW.replace("DUMP", "pl.dump_tag(x)"))
    result = check_both(work, program, specs, golden, enable_dump_args=True)
    np.testing.assert_array_equal(result.outputs["o"], (x * 2).reshape(16, 32))
    # The tag is a marker only: the argument dump is the whole one, as without it.
    assert list((work / "out" / "dfx_outputs" / "args").iterdir())
    assert "dump_tag" not in program.as_python()


@pytest.mark.parametrize("change, message", [
    # A DN view is column-major: it needs the two dimensions it swaps.
    (("layout=pl.TensorLayout.ND", "layout=pl.TensorLayout.DN"),
     r"pl.tensor.view between ND and DN needs 2 or more dimensions"),
    (("[16, 32])\n        t =", "[16, 16])\n        t ="), "cannot change the element count"),
    (("valid_shape=[8, 64]", "valid_shape=[4, 64]"), "tensors are valid whole here"),
    (("DUMP", "pl.dump_tag(4)"), "takes a tensor"),
])
def test_view_and_dump_tag_errors(change, message):
    with pytest.raises(CompileError, match=message):
        pl.parse(VIEW.replace("DUMP", "").replace(*change) if change[0] != "DUMP"
                 else VIEW.replace(*change))


def test_dump_tag_is_rejected_in_kernels():
    text = VIEW.replace("DUMP", "").replace("        v = pl.tensor.view(x, [16, 32])\n",
                                            "        pl.tensor.dump_tag(x)\n"
                                            "        v = pl.tensor.view(x, [16, 32])\n")
    with pytest.raises(CompileError, match="write it in an orchestration function"):
        pl.parse(text)
