"""Runs the one-statement op examples of the docs: each fragment becomes the body of a kernel of
one generated program, after declarations of the names it reads.

A page says what its fragments' names are in an HTML comment, for every block after it
(`<!-- snippets: kernel: DECLS -->`) or for the next block alone, added to the page's
(`<!-- snippet: kernel: DECLS -->`). DECLS are `;`-separated:

    a, b, s: tile[16, 16] FP32          tiles loaded from inputs (Vec; `Mat`, `Left`, `Right`
    idx: tile[16, 16] INT32 Mat         after the dtype put them in that memory); integers are
    slots: tile[1, 8] INT32 permutation   1 to 7, or with `permutation` 0 to size - 1 each once
    x: tensor[16, 64] FP32              a tensor parameter of the kernel
    j = 1                               a statement before the fragment (a scalar, a tile...)

A fragment is parsed on its own first (so an error names its line in the page); then one program
holds every fragment's kernel, and each tile or tensor the fragment assigns is stored into an
output of its own, so the ops stay in the program and run: on the device and in the reference
interpreter, whose outputs must agree.
"""

import ast
import dataclasses
import re
from typing import Dict, List

import numpy as np

import pypto.ir
import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run

KERNEL_MARKER = re.compile(r"^\s*<!--\s*snippet:\s*kernel\s*:\s*(.*?)\s*-->\s*$")
PAGE_KERNEL_MARKER = re.compile(r"^\s*<!--\s*snippets:\s*kernel\s*:\s*(.*?)\s*-->\s*$")
DECL = re.compile(r"^(?P<names>[\w\s,]+):\s*(?P<kind>tile|tensor)\s*\[(?P<shape>[\d\s,]+)\]\s*"
                  r"(?P<dtype>\w+)\s*(?P<memory>Vec|Mat|Left|Right)?\s*(?P<perm>permutation)?$")
# What a fragment may read without a declaration.
BUILTINS = {"pl", "min", "max", "range", "len", "abs", "int", "float", "True", "False", "None"}
# "name: pl.Tile[[16, 1], pl.FP32, ...] = ..." or "name: pl.Tensor[[16, 16], pl.FP32] = ..."
TYPED = re.compile(r"^\s+(\w+): pl\.(Tile|Tensor)\[\[([\d, ]+)\], pl\.(\w+)(?:, ([^\]=]*))?\] = ")


@dataclasses.dataclass
class Declarations:
    tiles: Dict[str, tuple]  # name -> (shape, dtype, memory)
    tensors: Dict[str, tuple]  # name -> (shape, dtype)
    permuted: set  # integer inputs whose values are a permutation of 0 .. size - 1
    statements: List[str]

    def merged(self, other):
        """These declarations, then ``other``'s: a name ``other`` declares is its alone."""
        theirs = set(other.tiles) | set(other.tensors) | {
            n for s in other.statements for n in _stored(ast.parse(s))}
        tiles = {k: v for k, v in self.tiles.items() if k not in theirs}
        tensors = {k: v for k, v in self.tensors.items() if k not in theirs}
        return Declarations({**tiles, **other.tiles}, {**tensors, **other.tensors},
                            (self.permuted - theirs) | other.permuted,
                            self.statements + other.statements)


def _stored(node):
    return {n.id for n in ast.walk(node)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def parse_declarations(text, where):
    """The page's declarations then the block's, as test_doc_snippets joins them ("; ")."""
    decls = Declarations({}, {}, set(), [])
    for group in text.split(" ;; "):
        decls = decls.merged(_parse_group(group, where))
    return decls


def _parse_group(text, where):
    decls = Declarations({}, {}, set(), [])
    for part in filter(None, (p.strip() for p in text.split(";"))):
        m = DECL.match(part)
        if m is None:
            if "=" not in part:
                raise ValueError(f"{where}: '{part}' is neither 'NAMES: tile|tensor[SHAPE] DTYPE "
                                 f"[MEMORY]' nor a statement 'NAME = VALUE'")
            decls.statements.append(part)
            continue
        shape = [int(d) for d in m["shape"].split(",") if d.strip()]
        for name in (n.strip() for n in m["names"].split(",")):
            if m["perm"]:
                decls.permuted.add(name)
            if m["kind"] == "tile":
                decls.tiles[name] = (shape, m["dtype"], m["memory"] or "Vec")
            else:
                decls.tensors[name] = (shape, m["dtype"])
    return decls


def free_names(text):
    """Names the fragment reads before (or without) assigning them, in order."""
    tree = ast.parse(text)
    assigned, free = set(), []
    for statement in tree.body:
        if not isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
            # A loop's or a scope's own names (its target, what its body assigns).
            assigned |= _stored(statement)
        loads = [n.id for n in ast.walk(statement)
                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        for name in loads:
            if name not in assigned and name not in free and name not in BUILTINS:
                free.append(name)
        assigned |= _stored(statement)
    return free


def _tensor_type(shape, dtype):
    return f"pl.Tensor[{list(shape)}, pl.{dtype}]"


@dataclasses.dataclass
class Fragment:
    where: str  # page:line of the block
    text: str
    decls: Declarations
    index: int = 0
    # (name, shape, dtype, "Tile" or "Tensor") of the values the fragment assigns
    outputs: List[tuple] = dataclasses.field(default_factory=list)

    @property
    def kernel(self):
        return f"snippet_{self.index}"

    def inputs(self):
        """(parameter, shape, dtype) of every tile and tensor the fragment reads."""
        needed = free_names(self.text)
        # Names the statements read are needed too (a statement `v = pl.row_max(s)`).
        for statement in self.decls.statements:
            needed += [n for n in free_names(statement) if n not in needed]
        out, missing = [], []
        defined_by_statements = {n for s in self.decls.statements for n in _stored(ast.parse(s))}
        for name in needed:
            if name in self.decls.tiles:
                shape, dtype, _ = self.decls.tiles[name]
                out.append((f"{name}_in", shape, dtype))
            elif name in self.decls.tensors:
                shape, dtype = self.decls.tensors[name]
                out.append((name, shape, dtype))
            elif name not in defined_by_statements:
                missing.append(name)
        if missing:
            raise ValueError(f"{self.where}: the example reads {', '.join(missing)}: declare "
                             f"{'it' if len(missing) == 1 else 'them'} in a '<!-- snippet: "
                             f"kernel: ... -->' comment before the block")
        return out

    def body(self):
        lines = []
        for name, (shape, dtype, memory) in self.decls.tiles.items():
            if f"{name}_in" not in {p for p, _, _ in self.inputs()}:
                continue
            zeros = [0] * len(shape)
            if memory == "Vec":
                lines.append(f"{name} = pl.load({name}_in, {zeros}, {shape})")
            else:
                load = (f"pl.load({name}_in, {zeros}, {shape}, "
                        f"target_memory=pl.MemorySpace.Mat)")
                lines.append(f"{name} = " + (load if memory == "Mat" else
                                             f"pl.move({load}, target_memory="
                                             f"pl.MemorySpace.{memory})"))
        return lines + list(self.decls.statements) + self.text.rstrip("\n").split("\n")

    def written(self):
        """The tensor parameters the fragment writes (``out = pl.store(t, [0, 0], out)``)."""
        return _stored(ast.parse(self.text)) & set(self.decls.tensors)

    def source(self, with_outputs):
        written = self.written()
        params = [f"{p}: " + (f"pl.InOut[{_tensor_type(s, d)}]" if p in written else
                              _tensor_type(s, d)) for p, s, d in self.inputs()]
        body = self.body()
        ret = ""
        if with_outputs:
            params += [f"out_{n}: pl.Out[{_tensor_type(s, d)}]" for n, s, d, _ in self.outputs]
            for name, shape, _, kind in self.outputs:
                zeros = [0] * len(shape)
                body.append(f"out_{name} = pl.store({name}, {zeros}, out_{name})" if kind == "Tile"
                            else f"out_{name} = pl.assemble(out_{name}, {name}, {zeros})")
        written = sorted(self.written())
        if written:
            # The device keeps a tensor written in place (pl.mscatter) only when the kernel
            # returns it, as a kernel written by hand does.
            shapes = {p: (s, d) for p, s, d in self.inputs()}
            ret = " -> " + ", ".join(_tensor_type(*shapes[n]) for n in written)
            body.append("return " + ", ".join(written))
        text = f"    @pl.function(type=pl.FunctionType.InCore)\n" \
               f"    def {self.kernel}(self, {', '.join(params)}){ret}:\n"
        return text + "".join(f"        {line}\n" for line in body)


def _program(fragments, with_outputs):
    text = "import pypto.language as pl\n\n\n@pl.program\nclass DocSnippets:\n"
    text += "\n".join(f.source(with_outputs) for f in fragments)
    params = []
    for f in fragments:
        params += [f"{p}_{f.index}: " + (f"pl.InOut[{_tensor_type(s, d)}]" if p in f.written()
                                         else _tensor_type(s, d)) for p, s, d in f.inputs()]
        params += [f"{f.kernel}_{n}: pl.Out[{_tensor_type(s, d)}]" for n, s, d, _ in f.outputs]
    text += (f"\n    @pl.function(type=pl.FunctionType.Orchestration)\n"
             f"    def main(self, {', '.join(params)}):\n")
    for f in fragments:
        args = [f"{p}_{f.index}" for p, _, _ in f.inputs()] + [
            f"{f.kernel}_{n}" for n, _, _, _ in f.outputs]
        text += f"        self.{f.kernel}({', '.join(args)})\n"
    return text


def _compile_error(fragment, text, error):
    return ValueError(f"{fragment.where}: the example does not compile as a kernel body: "
                      f"{error}\n--- generated program ---\n{text}")


def check_fragment(fragment, work_dir):
    """Compiles the fragment's kernel alone (passes and code generation, into ``work_dir``),
    with an output for each value it assigns. Raises ValueError naming the block on any
    error."""
    text = _program([fragment], with_outputs=False)
    try:
        program = pl.parse(text)
    except Exception as e:  # noqa: BLE001 - reported with the block's place
        raise _compile_error(fragment, text, e) from None
    assigned = {n.id for n in ast.walk(ast.parse(fragment.text))
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    fragment.outputs = []
    for line in program.as_python().splitlines():
        m = TYPED.match(line)
        if (not m or m[1] not in assigned or m[1] in fragment.written() or
                any(o[0] == m[1] for o in fragment.outputs)):
            continue
        memory = m[5] or ""
        # Values in Vec (or tensors) can be stored; a Mat/Left/Right/Acc tile feeds other ops.
        if m[2] == "Tile" and memory and "Vec" not in memory:
            continue
        fragment.outputs.append((m[1], [int(d) for d in m[3].split(",")], m[4], m[2]))
    text = _program([fragment], with_outputs=True)
    try:
        pypto.ir.compile(pl.parse(text), output_dir=str(work_dir), dump_passes=False)
    except Exception:  # noqa: BLE001 - a tensor view cannot be copied out in a kernel:
        # then the tiles alone are the outputs.
        fragment.outputs = [o for o in fragment.outputs if o[3] == "Tile"]
        text = _program([fragment], with_outputs=True)
        try:
            pypto.ir.compile(pl.parse(text), output_dir=str(work_dir), dump_passes=False)
        except Exception as e:  # noqa: BLE001 - reported with the block's place
            raise _compile_error(fragment, text, e) from None
    return fragment


def _input_values(shape, dtype, rng, permutation):
    if permutation:
        return rng.permutation(int(np.prod(shape))).reshape(shape)
    if dtype.startswith(("FP", "BF")):
        # Positive and away from 0: sqrt, log, rsqrt and divisions stay defined.
        return rng.uniform(0.5, 2.0, size=shape)
    if dtype == "BOOL":
        return rng.integers(0, 2, size=shape)
    return rng.integers(1, 8, size=shape)


def run_fragments(fragments, work_dir):
    """One program of every fragment's kernel, on the device and in the reference interpreter;
    returns the RunResult."""
    for i, fragment in enumerate(fragments):
        fragment.index = i
    text = _program(fragments, with_outputs=True)
    rng = np.random.default_rng(0)
    specs = []
    for f in fragments:
        for p, shape, dtype in f.inputs():
            specs.append(TensorSpec(f"{p}_{f.index}", shape, getattr(pl, dtype),
                                    init_value=_input_values(
                                        shape, dtype, rng,
                                        p.removesuffix("_in") in f.decls.permuted),
                                    is_output=p in f.written()))
        for n, shape, dtype, _ in f.outputs:
            specs.append(TensorSpec(f"{f.kernel}_{n}", shape, getattr(pl, dtype),
                                    is_output=True))
    result = run(pl.parse(text), specs, None,
                 RunConfig(work_dir=str(work_dir), write_golden_data=False, isolate=False))
    return text, result
