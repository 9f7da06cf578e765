"""The element types are one table (include/pypto/ir/dtypes.def): the device ABI's enumerators
and the Python constants are generated from it and current; the IR's own enum is checked against
it when src/ir/types.cpp compiles."""

import importlib.util
import pathlib

import pypto.language as pl
from pypto import _core
from pypto.language import _types

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLE = _core.ir.dtype_table()


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_dtypes", ROOT / "scripts/gen_dtypes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_files_match_the_table():
    # A row added to dtypes.def makes this fail until scripts/gen_dtypes.py is re-run.
    for path, fresh in load_generator().render(TABLE).items():
        assert path.read_text() == fresh, f"run: python3 scripts/gen_dtypes.py ({path.name})"


def test_python_constants_are_the_tables_rows_in_value_order():
    assert [row["value"] for row in TABLE] == list(range(len(TABLE)))
    assert list(_types.DTYPES) == [row["name"] for row in TABLE]
    for row in TABLE:
        dtype = getattr(pl, row["name"])
        assert (dtype.name, dtype.itemsize, dtype._numpy_name) == (row["name"], row["bytes"],
                                                                   row["numpy"])
        assert dtype.is_float == (row["kind"] == "float"), row["name"]


def test_the_abi_header_has_each_value():
    header = (ROOT / "device/pto_abi.h").read_text()
    for row in TABLE:
        assert f"  PTO_{row['name']} = {row['value']}" in header
    assert f"#define PTO_NUM_DTYPES {len(TABLE)} " in header
