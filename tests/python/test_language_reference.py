"""docs/language-reference.md documents every op of the registry: one section per op, with a
signature and an example."""

import pathlib
import re

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
