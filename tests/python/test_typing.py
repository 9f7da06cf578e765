"""The typed API: ops are real functions generated from the op registry, the extension's stubs
are current, and ``mypy --strict`` accepts the examples (with the package's plugin)."""

import importlib.util
import inspect
import os
import pathlib
import subprocess
import sys
import typing

import pytest

import pypto
import pypto.language as pl
from pypto import _core
from pypto.errors import CompileError

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = pathlib.Path(pypto.__file__).resolve().parent


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_ops", ROOT / "scripts/gen_ops.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_ops_match_the_registry():
    # Another op in src/ir/op_registry.cpp makes this fail until scripts/gen_ops.py is re-run.
    for name, fresh in load_generator().render(_core.ir.op_signatures()).items():
        generated = (ROOT / "python/pypto/language" / name).read_text()
        assert generated == fresh, "run: python3 scripts/gen_ops.py (the op registry changed)"


def test_every_registry_op_is_a_typed_function_with_a_docstring():
    signatures = {s[0]: s for s in _core.ir.op_signatures()}
    assert set(signatures) == set(_core.ir.op_names())
    for name, (_, category, arg_names, min_args, attr_names) in signatures.items():
        if "." in name:  # an op of a namespace: pl.system.syncall
            namespace, short = name.split(".")
            op = getattr(getattr(pl, namespace), short)
        else:
            op = getattr(pl, name)
            assert op is getattr(pl.tile, name), name
        params = inspect.signature(op).parameters
        assert list(params) == list(arg_names) + list(attr_names), name
        for i, arg in enumerate(arg_names):
            assert (params[arg].default is inspect.Parameter.empty) == (i < min_args), name
        for attr in attr_names:
            assert params[attr].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert category in op.__doc__ and f"pl.{name}(" in op.__doc__, name


def test_help_shows_the_signature_and_the_doc():
    text = pydoc_text(pl.add)
    assert "add(lhs: ~_Value, rhs: Union[~_Value, int, float]) -> ~_Value" in text
    assert "Elementwise add of `lhs` and `rhs`" in text
    load = pydoc_text(pl.tile.load)
    assert "load(tensor: pypto.language._types.Tensor" in load
    assert "target_memory: Optional[pypto.language._types.MemorySpace] = None" in load
    hints = typing.get_type_hints(pl.load)
    assert hints["return"] is pl.Tile


def pydoc_text(obj):
    import pydoc

    return pydoc.render_doc(obj, renderer=pydoc.plaintext)


def test_calling_an_op_from_python_says_where_it_belongs():
    with pytest.raises(CompileError, match=r"pl.add\(...\) can only be used inside a @pl.function"):
        pl.add(1, 2)
    with pytest.raises(CompileError, match=r"pl.range"):
        pl.range(4)


def test_package_is_marked_typed_and_ships_the_extension_stubs():
    assert (PACKAGE / "py.typed").is_file()
    stubs = sorted(p.name for p in (PACKAGE / "_core").glob("*.pyi"))
    assert stubs == ["__init__.pyi", "driver.pyi", "ir.pyi", "passes.pyi", "profiling.pyi",
                     "runtime.pyi"]


def test_checked_in_stubs_match_a_fresh_generation(tmp_path):
    # The build regenerates them (build/<dir>/stubs/_core/); this is the same generator run on
    # the extension this test imports.
    proc = subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-r", "-m", "pypto._core",
                           "-O", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    fresh = {p.name: p.read_text() for p in (tmp_path / "_core").glob("*.pyi")}
    checked_in = {p.name: p.read_text() for p in (ROOT / "python/pypto/_core").glob("*.pyi")}
    assert fresh == checked_in, ("the extension's API changed: copy the build's stubs "
                                 "(cp build/dev/stubs/_core/*.pyi python/pypto/_core/)")


def test_extension_signatures_name_real_types():
    stubs = "".join(p.read_text() for p in (ROOT / "python/pypto/_core").glob("*.pyi"))
    assert "-> object" not in stubs
    assert "def op_signatures() -> list[tuple[str, str, list[str], int, list[str]]]" in stubs


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory):
    # One cache for the module's mypy runs: the second does not re-analyse numpy's stubs.
    return tmp_path_factory.mktemp("mypy_cache")


def mypy_config(cache):
    """mypy.ini for checking programs that use this pypto: the plugin reads
    pl.Tensor[[N, N], pl.FP32]; the package's own modules are not what is checked (a user's
    mypy does not report errors in installed packages either). An installed pypto is found
    through the interpreter's site-packages; one on PYTHONPATH (a build tree) needs
    mypy_path, which must not name site-packages."""
    installed = {"site-packages", "dist-packages"} & set(PACKAGE.parts)
    search = "" if installed else f"mypy_path = {PACKAGE.parent}\n"
    return ("[mypy]\nplugins = pypto.mypy_plugin\nstrict = True\n" + search +
            f"cache_dir = {cache}\n[mypy-pypto.*]\nignore_errors = True\n")


def test_mypy_strict_accepts_the_examples(tmp_path, mypy_cache):
    config = tmp_path / "mypy.ini"
    config.write_text(mypy_config(mypy_cache))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PACKAGE.parent)] + sys.path))
    examples = sorted(str(p) for p in (ROOT / "examples").glob("*.py"))
    proc = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), *examples],
                          cwd=ROOT / "examples", capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Success: no issues found in {len(examples)} source files" in proc.stdout


def test_mypy_plugin_reports_a_wrong_op_argument(tmp_path, mypy_cache):
    program = tmp_path / "wrong.py"
    program.write_text(
        "import pypto.language as pl\n\n"
        "@pl.program\n"
        "class Wrong:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, a: pl.Tensor[[8, 8], pl.FP32],\n"
        "          c: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:\n"
        "        c = pl.store(a, [0, 0], c)\n"  # a tensor where a tile belongs
        "        return c\n")
    # Next to it, a correct program using pl.tile.<op>, a pl.Scalar index and pl.range.
    correct = tmp_path / "correct.py"
    correct.write_text(
        "import pypto.language as pl\n\n"
        "@pl.program\n"
        "class Right:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, a: pl.Tensor[[64, 8], pl.FP32], row: pl.Scalar[pl.INT32],\n"
        "          c: pl.InOut[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]:\n"
        "        for i in pl.range(0, 64, 8):\n"
        "            t = pl.tile.add(pl.load(a, [i + row, 0], [8, 8]), 1.0)\n"
        "            c = pl.store(t, [i, 0], c)\n"
        "        return c\n")
    config = tmp_path / "mypy.ini"
    config.write_text(mypy_config(mypy_cache))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PACKAGE.parent)] + sys.path))
    proc = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), str(program),
                           str(correct)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Found 1 error in 1 file (checked 2 source files)" in proc.stdout, proc.stdout
    assert 'wrong.py:8: error: Argument 1 to "store" has incompatible type "Tensor"; ' \
           'expected "Tile"' in proc.stdout, proc.stdout
