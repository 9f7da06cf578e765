from collections.abc import Sequence
from typing import Any


class Function:
    @property
    def name(self) -> str: ...

    @property
    def type(self) -> str: ...

    @property
    def params(self) -> list[tuple[str, str, str]]: ...

    @property
    def return_types(self) -> list[str]: ...

    @property
    def level(self) -> str | None: ...

    @property
    def role(self) -> str | None: ...

    @property
    def works_on_ranks(self) -> bool: ...

    def as_python(self) -> str: ...

    def structural_equal(self, arg: Function, /) -> bool: ...

class Program:
    @property
    def name(self) -> str: ...

    @property
    def functions(self) -> list[Function]: ...

    @property
    def entry_name(self) -> str | None: ...

    @property
    def file_name(self) -> str: ...

    def as_python(self) -> str: ...

    def structural_equal(self, arg: Program, /) -> bool: ...

    def structural_hash(self) -> int: ...

def parse_program(text: str, file_name: str = '<string>', constants: dict = {}, line_offset: int = 0, rest_of_file: bool = False, helpers: object | None = None, entry_tensors: Sequence[tuple[str, Sequence[int], str]] = []) -> Program:
    """
    Parses the source of one @pl.program class (decorators included; it may be indented), as the `parse` stage of the active profiler. rest_of_file: the text runs on to the end of the class's file; only the class is read. entry_tensors: (name, shape, dtype name) of the tensors the program runs with, which specialise an entry whose shapes name pl.dynamic dimensions.
    """

def parse_module(text: str, file_name: str = '<string>', constants: dict = {}, pinned: dict = {}) -> list[Program]:
    """
    Parses a Python file: top-level constants are evaluated, every @pl.program class is parsed (the `parse` stage of the active profiler). `pinned` constants replace the file's own assignments of those names.
    """

def parse_jit(file_text: str, file_name: str, functions: Sequence[tuple[str, bool, int]], entry: str, arguments: dict, constants: dict = {}, helpers: object | None = None) -> Program:
    """
    Parses the @pl.jit function `entry` of a file specialised on `arguments` (name -> (shape, dtype name) for tensors, a number for scalars); `functions` are the file's jit functions as (name, is_incore, first_line). The `parse` stage of the active profiler.
    """

def render_diagnostic(file_name: str, text: str, line_offset: int, line: int, col: int, message: str) -> str: ...

def op_names() -> list[str]:
    """The names of the DSL's ops (pl.<name>), sorted."""

def memory_spaces() -> list[tuple[str, int]]:
    """
    Each memory space of the device with its capacity in bytes (0: global memory, unbounded here), in declaration order.
    """

def legal_transfers(platform: str) -> list[tuple[str, str]]:
    """
    The direct moves (load, move or store) between memory spaces on a platform's target, as (from, to) names.
    """

def op_signatures() -> list[tuple[str, str, list[str], int, list[str]]]:
    """
    One (name, category, positional parameters, how many of them are required, keyword attributes) per op of the registry, sorted by name: what scripts/gen_ops.py turns into the typed functions of pypto.language.
    """

def dtype_table() -> list[dict[str, Any]]:
    """
    The element types in value order (pypto/ir/dtypes.def): name, value (the device ABI's), bytes, kind (float, signed, unsigned, bool), numpy (numpy's or ml_dtypes' name), doc.
    """

def op_element_dtypes() -> list[tuple[str, list[str] | None]]:
    """
    One (name, the dtypes its type rule computes on, or None for an op that moves bytes or has no element data) per op of the registry, sorted by name: the op x dtype table of the language reference (scripts/gen_ops.py).
    """

def op_spelling(ns: str, name: str) -> tuple[str, str]:
    """
    How the parser reads pl.<ns>.<name> (ns '' for pl.<name>): ('op', registry op), ('form', the op it is built on or ''), ('unsupported', '') for an op of PyPTO's language not here yet, or ('unknown', '').
    """
