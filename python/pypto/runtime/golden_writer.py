"""PyPTO's ``golden.py``: a run's inputs and expected outputs as a standalone script and data
files (needs torch).

``write_golden(specs, golden_fn, path)`` makes every tensor (``TensorSpec.create_tensor``), saves
the inputs to ``data/in/<name>.pt`` (outputs with an initial value too), calls ``golden_fn`` on
them and saves the expected outputs to ``data/out/<name>.pt``; then writes ``golden.py``, which
defines:

- ``generate_inputs(params)``: ``[(name, tensor), ...]`` in TensorSpec order (then the
  ScalarSpecs as ctypes values), loaded from the data files (outputs without an initial value are
  zeros);
- ``compute_golden(tensors, params)``: the golden function's own source, renamed (for a method:
  without ``self``, its ``self.<attr>`` replaced by their values), preceded by the constants and
  helper functions it reads from its closure and module;
- ``__outputs__``, ``RTOL``, ``ATOL``.

``pypto.runtime.runner._execute_on_device`` runs a compiled program on such a script.
"""

import ast
import builtins
import inspect
import math
import textwrap
import types
from pathlib import Path
from typing import Callable, Dict, List, Optional, Union

import torch

from pypto.runtime import _torch_bridge
from pypto.runtime.tensor_spec import SCALAR_CTYPE_MAP, ScalarSpec, TensorSpec

__all__ = ["write_golden", "generate_golden_source"]


def write_golden(tensor_specs: List[TensorSpec], golden_fn: Callable, output_path: Union[str, Path],
                 rtol: float = 1e-5, atol: float = 1e-5,
                 scalar_specs: Optional[List[ScalarSpec]] = None,
                 data_dir: Optional[Union[str, Path]] = None) -> Path:
    """Writes ``golden.py`` at ``output_path`` and its data files (in ``data_dir``, by default
    ``data/`` beside it; data files already there for every tensor are reused)."""
    output_path = Path(output_path)
    resolved = Path(data_dir).resolve() if data_dir is not None else (
        output_path.parent / "data").resolve()
    if not _data_dir_has_files(resolved, tensor_specs):
        tensors = _materialize_tensors(tensor_specs)
        _save_data_files({s.name: tensors[s.name] for s in tensor_specs if _has_input_file(s)},
                         resolved / "in")
        golden_fn(tensors, None)
        _save_data_files({s.name: tensors[s.name] for s in tensor_specs if s.is_output},
                         resolved / "out")
    source = generate_golden_source(tensor_specs, golden_fn, rtol, atol,
                                    scalar_specs=scalar_specs,
                                    data_dir=resolved if data_dir is not None else None,
                                    use_data_files=True)
    output_path.write_text(source, encoding="utf-8")
    return output_path


def _has_input_file(spec):
    """Inputs, and outputs that start from a given value, are saved under data/in."""
    return not spec.is_output or spec.init_value is not None


def generate_golden_source(tensor_specs: List[TensorSpec], golden_fn: Optional[Callable],
                           rtol: float, atol: float, *, compute_golden_src: Optional[str] = None,
                           scalar_specs: Optional[List[ScalarSpec]] = None,
                           data_dir: Optional[Path] = None, use_data_files: bool = False) -> str:
    """The text of ``golden.py``. ``compute_golden_src`` replaces the source taken from
    ``golden_fn``. Inputs come from the data files with ``use_data_files`` (or a ``data_dir``);
    otherwise they are written as expressions (constants, small literals, factory calls, or a
    named init function's own source)."""
    if compute_golden_src is None:
        if golden_fn is None:
            raise ValueError("generate_golden_source needs golden_fn or compute_golden_src")
        compute_golden_src = _extract_compute_golden(golden_fn)
    scalars = list(scalar_specs or [])
    from_files = use_data_files or data_dir is not None
    helpers: Dict[str, str] = {}
    inits = [_init_expression(spec, helpers, from_files) for spec in tensor_specs]

    out = ['"""Inputs and expected outputs of one run, written by pypto.runtime.golden_writer."""',
           ""]
    if "struct." in compute_golden_src:
        out.append("import struct")
    if scalars:
        out.append("import ctypes")
    if from_files:
        out.append("from pathlib import Path")
    out.append("import torch")
    out.append("")
    if from_files:
        out.append(f"_DATA_DIR = Path({str(data_dir)!r})" if data_dir is not None
                   else '_DATA_DIR = Path(__file__).parent / "data"')
    out.append(f"__outputs__ = {[s.name for s in tensor_specs if s.is_output]!r}")
    out.append(f"RTOL = {rtol!r}")
    out.append(f"ATOL = {atol!r}")
    for helper in helpers.values():
        out += ["", "", helper.rstrip()]
    out += ["", "", "def generate_inputs(params):",
            '    """The arguments in order: (name, value) pairs."""']
    for spec, init in zip(tensor_specs, inits):
        out.append(f"    {spec.name} = {init}")
    for spec in scalars:
        out.append(f"    {spec.name} = {SCALAR_CTYPE_MAP[spec.ctype]}({spec.value!r})")
    out.append("    return [")
    for spec in list(tensor_specs) + scalars:
        out.append(f"        ({spec.name!r}, {spec.name}),")
    out += ["    ]", "", "", compute_golden_src.rstrip(), ""]
    return "\n".join(out)


def _data_dir_has_files(data_dir: Path, tensor_specs: List[TensorSpec]) -> bool:
    """Whether ``data_dir`` holds every file the specs need (in/ and out/)."""
    data_dir = Path(data_dir)
    for spec in tensor_specs:
        if _has_input_file(spec) and not (data_dir / "in" / f"{spec.name}.pt").is_file():
            return False
        if spec.is_output and not (data_dir / "out" / f"{spec.name}.pt").is_file():
            return False
    return True


def _materialize_tensors(tensor_specs: List[TensorSpec]) -> Dict[str, "torch.Tensor"]:
    """Every spec's tensor (``create_tensor``), by name."""
    return {spec.name: spec.create_tensor() for spec in tensor_specs}


def _save_data_files(data_files: Dict[str, "torch.Tensor"], data_dir: Path) -> None:
    """Saves each tensor as ``data_dir/<name>.pt``."""
    if not data_files:
        return
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    for name, tensor in data_files.items():
        torch.save(_torch_bridge.as_torch(tensor), data_dir / f"{name}.pt")


def _dtype_text(dtype):
    dtype = _torch_bridge.torch_dtype(dtype)
    return "torch." + str(dtype).split(".", 1)[1]


_FACTORIES = {torch.randn: "torch.randn", torch.rand: "torch.rand", torch.zeros: "torch.zeros",
              torch.ones: "torch.ones"}


def _init_expression(spec, helpers, from_files):
    shape, dtype = tuple(int(d) for d in spec.shape), _dtype_text(spec.dtype)
    if spec.init_value is None:
        return f"torch.zeros({shape!r}, dtype={dtype})"
    if from_files:
        return f'torch.load(_DATA_DIR / "in" / "{spec.name}.pt", weights_only=True)'
    if spec.is_output:
        return f"torch.zeros({shape!r}, dtype={dtype})"
    value = spec.init_value
    if isinstance(value, (bool, int, float)):
        return f"torch.full({shape!r}, {value!r}, dtype={dtype})"
    if callable(value) and not isinstance(value, torch.Tensor):
        if value in _FACTORIES:
            return f"{_FACTORIES[value]}({shape!r}, dtype={dtype})"
        name = getattr(value, "__name__", "")
        if name.isidentifier():
            try:
                helpers.setdefault(name, textwrap.dedent(inspect.getsource(value)))
            except (OSError, TypeError):
                pass
            else:
                return f"torch.as_tensor({name}(), dtype={dtype})"
        raise ValueError(f"TensorSpec '{spec.name}': golden.py cannot spell init_value "
                         f"{value!r}; use a number, a tensor, a named function or a torch "
                         f"factory (torch.randn...), or write the data files (use_data_files)")
    tensor = _torch_bridge.as_torch(value)
    if tensor.numel() and bool((tensor == tensor.flatten()[0]).all()):
        return f"torch.full({shape!r}, {tensor.flatten()[0].item()!r}, dtype={dtype})"
    if tensor.numel() <= 100:
        return f"torch.tensor({tensor.tolist()!r}, dtype={dtype})"
    raise ValueError(f"TensorSpec '{spec.name}': a {tensor.numel()}-element init_value is too "
                     f"large to write into golden.py; use the data files (use_data_files) or a "
                     f"named function")


# ---- compute_golden from the user's golden function ----------------------------------------

def _extract_compute_golden(golden_fn: Callable) -> str:
    """The source of ``golden_fn`` as ``def compute_golden(tensors, params)``: decorators and
    annotations dropped; for a bound method, ``self`` removed and each ``self.<attr>`` replaced
    by its value (RuntimeError when one is not a literal); preceded by the literal constants and
    helper functions it reads from its closure and module. RuntimeError when there is no source
    (a REPL, a builtin)."""
    try:
        source = textwrap.dedent(inspect.getsource(golden_fn))
        function = ast.parse(source).body[0]
    except (OSError, TypeError, SyntaxError, IndexError) as e:
        raise RuntimeError(f"cannot read the source of the golden function {golden_fn!r}; "
                           f"define it in a .py file") from e
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise RuntimeError(f"the golden function {golden_fn!r} is not a def statement")
    function.name = "compute_golden"
    function.decorator_list = []
    function.returns = None
    arguments = function.args
    if inspect.ismethod(golden_fn):
        arguments.args = arguments.args[1:]
        _InlineSelf(golden_fn.__self__).visit(function)
    for argument in arguments.posonlyargs + arguments.args + arguments.kwonlyargs:
        argument.annotation = None
    code = ast.unparse(ast.fix_missing_locations(function))
    preamble = _captured_values(inspect.unwrap(getattr(golden_fn, "__func__", golden_fn)), set())
    return "\n\n".join(preamble + [code])


class _InlineSelf(ast.NodeTransformer):
    """Replaces ``self.<attr>`` by the attribute's value, which must be a literal."""

    def __init__(self, instance):
        self.instance = instance

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            if not hasattr(self.instance, node.attr):
                raise RuntimeError(f"the golden method reads self.{node.attr}, which "
                                   f"{type(self.instance).__name__} lacks")
            value = getattr(self.instance, node.attr)
            try:
                literal = ast.parse(repr(value), mode="eval").body
                ast.literal_eval(literal)
            except (SyntaxError, ValueError):
                raise RuntimeError(f"the golden method reads self.{node.attr}={value!r}, which "
                                   f"golden.py cannot spell as a literal") from None
            return ast.copy_location(literal, node)
        return self.generic_visit(node)


def _literal(value):
    """``repr(value)`` for a literal golden.py can hold (no inf/nan), else None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (bool, int, float, str, type(None))):
        return repr(value)
    return None


def _captured_values(fn, inlined):
    """Lines defining what ``fn`` reads from outside: literal closure values and module
    constants, and the module's functions it calls (with what they read, first)."""
    lines, done = [], set()
    code = getattr(fn, "__code__", None)
    if code is None:
        return lines
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            text = _literal(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
        if text is not None:
            lines.append(f"{name} = {text}")
            done.add(name)
    module_names = getattr(fn, "__globals__", {})
    for name in _names_read(code):
        if name in done or name not in module_names or hasattr(builtins, name):
            continue
        value = module_names[name]
        if isinstance(value, (types.ModuleType, type)):
            continue  # imports and classes: golden.py imports torch itself
        text = _literal(value)
        if text is not None:
            lines.append(f"{name} = {text}")
        elif isinstance(value, types.FunctionType) and id(value) not in inlined:
            inlined.add(id(value))
            try:
                helper = textwrap.dedent(inspect.getsource(value))
            except (OSError, TypeError):
                continue
            lines += _captured_values(value, inlined) + [helper.rstrip()]
        done.add(name)
    return lines


def _names_read(code):
    """The global names ``code`` and its nested functions read."""
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _names_read(const)
    return list(dict.fromkeys(names))
