"""docs/language-reference.md documents every op of the registry: one section per op, with a
signature and an example."""

import pathlib
import re

import pypto.language as pl
from pypto import _core

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "language-reference.md"


def sections():
    text = PAGE.read_text(encoding="utf-8")
    # Names with a namespace (pl.system.syncall) are registry names with a dot.
    parts = re.split(r"^### `pl\.([\w.]+)`\n", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_every_registered_op_has_a_section():
    documented = sections()
    missing = [op for op in _core.ir.op_names() if op not in documented]
    assert not missing, f"ops of the registry missing from {PAGE.name}: {missing}"


def test_every_section_is_a_registered_op_with_a_signature_and_an_example():
    ops = set(_core.ir.op_names())
    for name, body in sections().items():
        assert name in ops, f"{PAGE.name} documents pl.{name}, which the registry does not have"
        assert f"pl.{name}(" in body.split("\n")[0] or f"pl.tile.{name}(" in body.split("\n")[0], name
        assert "```python" in body, f"pl.{name} has no example"


def test_the_page_names_the_types_and_the_targets():
    text = PAGE.read_text(encoding="utf-8")
    for word in ["pl.INDEX", "pl.PadValue", "pl.MemorySpace", "pl.Level", "pl.Out", "pl.InOut",
                 "a2a3sim", "a5sim", "Data movement by target"]:
        assert word in text, word


def _table_generator():
    import importlib.util

    path = PAGE.parents[1] / "scripts" / "gen_op_table.py"
    spec = importlib.util.spec_from_file_location("gen_op_table", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_op_dtype_table_is_current():
    # A new op, spelling or dtype rule makes this fail until scripts/gen_ops.py is re-run.
    table = _table_generator()
    text = PAGE.read_text(encoding="utf-8")
    assert table.update(text, table.render(_core)) == text, "run: python3 scripts/gen_ops.py"


def test_the_op_dtype_table_has_a_row_for_every_op_of_the_language_and_of_the_registry():
    table = _table_generator()
    rendered = table.render(_core)
    names = {n for text in table.PYPTO_OPS.values() for n in text.split()}
    rows = [line for line in rendered.splitlines() if line.startswith("| `pl.")]
    assert len(rows) == len(names)
    # Each registry op that PyPTO names is reached by its own spelling; the rows name it.
    for name in _core.ir.op_names():
        short = name.split(".")[-1]
        if short in names:
            assert any(f".{short}`" in row.split("|")[1] for row in rows), name
    # The rows' dtype cells agree with the type rules: add computes on FP32 and INT8, log on no
    # integer, shl on no float, load on any dtype.
    row = {line.split("|")[1].split(",")[0].strip(" `"): line.split("|")[3:-1] for line in rows}
    header = [h.strip() for h in rendered.splitlines()[rendered.splitlines().index(rows[0]) - 2]
              .split("|")[3:-1]]
    cell = lambda op, dtype: row[op][header.index(dtype)].strip()  # noqa: E731
    assert cell("pl.add", "FP32") == "✓" and cell("pl.add", "I8") == "✓"
    assert cell("pl.log", "I32") == "—" and cell("pl.log", "FP16") == "✓"
    assert cell("pl.shl", "FP32") == "—" and cell("pl.shl", "U16") == "✓"
    assert cell("pl.tile.load", "E5M2") == "any"


KERNEL_CALLING = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = CALL()
        return x
'''


def test_the_table_says_what_the_parser_does_with_each_spelling():
    # An op the table calls "not yet" is refused as not supported at its call; every other
    # spelling reaches its op or form (its arguments are then what is wrong with an empty call).
    table = _table_generator()
    for ns, text in table.PYPTO_OPS.items():
        for name in text.split():
            spelling = f"pl.{ns + '.' if ns else ''}{name}"
            kind, _ = _core.ir.op_spelling(ns, name)
            try:
                pl.parse(KERNEL_CALLING.replace("CALL", spelling))
                message = ""
            except Exception as e:  # noqa: BLE001 - any error of the parse is compared below
                message = str(e)
            refused = f"{spelling} is not supported yet" in message or "unknown op" in message
            assert refused == (kind in ("unsupported", "unknown")), (spelling, kind, message)
