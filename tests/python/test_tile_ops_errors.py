"""Misuse of the layout ops, fillpad, read and valid_shapes: a ParseError naming the file, line
and column, with the source line and a caret under the offending argument."""

import pytest

import pypto.language as pl
from pypto.errors import ParseError

PROGRAM = """import pypto.language as pl

@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.FP32], b: pl.Tensor[[8, 8], pl.FP32],
          o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        t = pl.load(a, [0, 0], [4, 8])
        u = pl.load(b, [0, 0], [8, 8])
        BAD
        o = pl.store(t, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 8], pl.FP32], b: pl.Tensor[[8, 8], pl.FP32],
             o: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        o = self.k(a, b, o)
        return o
"""
BAD_LINE = 10

CASES = [
    # (statement, the text the caret points at, message)
    ("x = pl.tile.fillpad(t, pad_value=3)", "pl.tile.fillpad",
     "pad_value of pl.fillpad must be a pl.PadValue (pl.PadValue.zero, pl.PadValue.min or "
     "pl.PadValue.max)"),
    ("x = pl.tile.fillpad(t, pad_value=pl.PadValue.mid)", "mid",
     "unknown pad value 'pl.PadValue.mid' (expected zero, min or max)"),
    ("x = pl.tile.fillpad(a)", "a)", "pl.tile.fillpad takes tiles, got pl.Tensor[[4, 8], pl.FP32] in argument 1 (for tensors, write pl.tensor.fillpad or pl.fillpad)"),
    ("x = pl.reshape(t, [4, 4])", "[4, 4]",
     "pl.reshape cannot change the element count: [4, 8] has 32 elements, [4, 4] has 16"),
    ("x = pl.reshape(t, [2.5, 4])", "2.5",
     "shape dimensions must be integers, got the float 2.5 in argument 2 of pl.reshape"),
    ("x = pl.concat(t, u)", "u)",
     "row mismatch in pl.concat: [4, 8] and [8, 8] must have the same number of rows"),
    ("x = pl.concat(t)", "pl.concat", "pl.concat takes at least 2 argument(s), got 1 (missing 'src1')"),
    ("x = pl.concat(t, a)", "a)", "expected Tile, got Tensor in argument 2 of pl.concat"),
    ("x = pl.col_expand_mul(t, pl.row_sum(t))", "pl.row_sum",
     "shape mismatch in pl.col_expand_mul: [1, 8] vs [4, 1]"),
    ("x = pl.col_expand(t)", "pl.col_expand", "pl.col_expand takes at least 2 argument(s), got 1 (missing 'col')"),
    ("x = pl.col_expand_add(t, pl.cast(pl.slice(t, [1, 8], [0, 0]), target_type=pl.INT32))",
     "pl.cast", "dtype mismatch in pl.col_expand_add: FP32 vs INT32"),
    ("x = pl.read(t, [0])", "[0]", "rank mismatch in pl.read: 1 indices for rank 2 (argument 2)"),
    ("x = pl.read(a, [0, 1.5])", "1.5",
     "indices must be integer scalars, got pl.Scalar[pl.FP32] in argument 2 of pl.read"),
    ("x = pl.read(a, [4, 0])", "[4, 0]",
     "out of bounds in pl.read: region [1, 1] at offsets [4, 0] exceeds [4, 8]"),
    ("x = pl.load(a, [0, 0], [4, 8], valid_shapes=[4, 9])", "[4, 9]",
     "valid_shapes 9 of dimension 1 is outside [0, 8] (the tile's shape) in argument 4 of pl.load"),
    ("x = pl.load(a, [0, 0], [4, 8], valid_shapes=[4])", "[4]",
     "rank mismatch in pl.load: 1 valid_shapes dimensions for rank 2 (argument 4)"),
]


@pytest.mark.parametrize("statement,at,message", CASES, ids=[c[0] for c in CASES])
def test_misuse_is_a_located_error(statement, at, message):
    text = PROGRAM.replace("BAD", statement)
    with pytest.raises(ParseError) as info:
        pl.parse(text, file_name="bad.py")
    e = info.value
    assert e.msg == message
    assert e.filename == "bad.py" and e.lineno == BAD_LINE
    column = text.splitlines()[BAD_LINE - 1].index(at) + 1
    assert e.offset == column, str(e)
    source, caret = str(e).splitlines()[1:3]
    assert source.strip() == statement
    assert caret == " " * (column - 1) + "^"


def test_pad_value_and_index_exist_in_pl():
    assert [p.value for p in pl.PadValue] == ["zero", "min", "max"]
    assert repr(pl.PadValue.min) == "pl.PadValue.min"
    assert pl.INDEX is pl.INT64
    for op in ["concat", "reshape", "read", "fillpad", "col_expand", "col_expand_add",
               "col_expand_sub", "col_expand_mul", "col_expand_div", "col_expand_max",
               "col_expand_min"]:
        assert callable(getattr(pl, op)) and callable(getattr(pl.tile, op))


def test_pad_value_prints_back_and_parses_again():
    text = PROGRAM.replace("BAD", "x = pl.tile.fillpad(pl.load(a, [0, 0], [4, 8], valid_shapes=[2, 5]), "
                                  "pad_value=pl.PadValue.max)")
    printed = pl.parse(text).as_python()
    assert "pad_value=pl.PadValue.max" in printed
    assert pl.parse(printed).as_python() == printed
