#!/usr/bin/env python3
"""Writes python/pypto/language/_ops_generated.py: one typed Python function per op of the C++ op
registry (the functions themselves in _ops_compute.py, the ops that compute on tiles, and
_ops_data.py, those that move, lay out, gather and schedule; _ops_generated.py gathers both) (``pypto._core.ir.op_signatures()``), so that ``pl.add`` has a real signature and a
docstring for ``help()``, IDEs and mypy.

The registry is the one definition of an op; this script only renders it. After adding an op to
``src/ir/op_registry.cpp``, rebuild the extension and run

    PYTHONPATH=build/dev/stub_staging python3 scripts/gen_ops.py

(any folder holding a built pypto package will do: build/<dir>/stub_staging is the copy the
build makes next to the fresh extension to generate its stubs; an installed pypto works too).

(``--check`` exits 1 instead of writing when the file is out of date;
tests/python/test_typing.py runs the same comparison). The script also writes the op x dtype
table of docs/language-reference.md (scripts/gen_op_table.py).

Parameter types come from the op's category and the parameter's name (the table below); a
parameter or a category the table does not know is typed ``Any``, so a new op always gets a
function, only a less precise one.
"""

import argparse
import pathlib
import sys
from typing import Dict, List, Sequence, Tuple

LANGUAGE = pathlib.Path(__file__).resolve().parent.parent / "python/pypto/language"
OUTPUT = LANGUAGE / "_ops_generated.py"

# The ops that compute on tiles go to _ops_compute.py; the others (memory, layout, gather and
# scatter, scheduling, communication) to _ops_data.py.
COMPUTE_CATEGORIES = {
    "ElementwiseBinary", "ElementwiseUnary", "Cast", "Compare", "Select", "RowReduce",
    "ColReduce", "ArgReduce", "RowExpand", "ColExpand", "Matmul", "Generate", "Sort",
}
PARTS = {"_ops_compute.py": "The ops that compute on tiles and tensors",
         "_ops_data.py": "The ops that move, lay out, gather, scatter and schedule data"}
# Ops of a namespace (registry names "system.syncall") get a file of their own, whose functions
# carry the name after the dot: pl.system.syncall is python/pypto/language/system.py's syncall.
NAMESPACES = {"system": ("_ops_system.py", "The ops of ``pl.system`` (synchronisation, fences, "
                         "cache maintenance, core counts)")}

# A tile or a tensor: elementwise ops, slices and assembly work on both (tensor ops in an
# orchestration become tile ops in ConvertTensorToTileOps) and return the kind they were given.
VALUE = "_Value"
SHAPE = "Sequence[IntLike]"

# Per category: parameter name -> type, the return type, and what the op does (first docstring
# line; "{name}" is replaced by the op's name).
CATEGORIES: Dict[str, Tuple[Dict[str, str], str, str]] = {
    "Load": ({"tensor": "Tensor", "offsets": SHAPE, "shapes": SHAPE,
              "target_memory": "MemorySpace", "valid_shapes": SHAPE}, "Tile",
             "Loads the box of `tensor` at `offsets` with extent `shapes` into a new tile in "
             "`target_memory` (Vec when omitted); with `valid_shapes` only that leading part "
             "is read (the rest is undefined until `fillpad`)."),
    "Store": ({"tile": "Tile", "offsets": SHAPE, "output_tensor": "Tensor",
               "atomic": "AtomicType"}, "Tensor",
              "Writes `tile` into `output_tensor` at `offsets` (atomic=AtomicType.Add: adds it "
              "into what is there); returns the updated tensor."),
    "Move": ({"tile": "Tile", "target_memory": "MemorySpace"}, "Tile",
             "Copies `tile` into another on-chip memory space (Mat->Left/Right, Acc->Mat)."),
    "CreateTile": ({"shape": SHAPE, "dtype": "DType", "target_memory": "MemorySpace"}, "Tile",
                   "A new zero-filled tile of `shape` and `dtype` in `target_memory`."),
    "CreateTensor": ({"shape": SHAPE, "dtype": "DType"}, "Tensor",
                     "A new tensor in global memory (orchestration functions only)."),
    "ExpandClone": ({"src": "Tensor", "target": "Tensor"}, "Tensor",
                    "`src` repeated along its dimensions of extent 1 to the shape of `target` "
                    "(tensors; in a kernel lowered to loads and row/column expands)."),
    "Slice": ({"input": VALUE, "shape": SHAPE, "offsets": SHAPE}, VALUE,
              "The box of `input` at `offsets` with extent `shape`: a copy for a tile, a view "
              "for a tensor."),
    "Assemble": ({"target": VALUE, "source": "Tile", "offsets": SHAPE, "atomic": "AtomicType"},
                 VALUE,
                 "Returns `target` with `source` written at `offsets` (into a tensor with "
                 "atomic=AtomicType.Add: added to what is there)."),
    "ElementwiseBinary": ({"lhs": VALUE, "rhs": f"Union[{VALUE}, int, float]", "tile": VALUE,
                           "slope": f"Union[{VALUE}, int, float]", "target": VALUE,
                           "scalar": "Union[int, float]", "tmp": "Tile",
                           "high_precision": "bool"}, VALUE,
                          "Elementwise {name} of `lhs` and `rhs` (a tile or tensor of the same "
                          "shape and dtype, or a scalar)."),
    "ElementwiseUnary": ({"input": VALUE, "tmp": "Tile", "high_precision": "bool"}, VALUE,
                         "Elementwise {name} of `input`."),
    "Cast": ({"tile": "Tile", "target_type": "DType"}, "Tile",
             "Converts every element of `tile` to `target_type` (saturating for integers)."),
    "RowReduce": ({"tile": "Tile", "tmp_tile": "Tile"}, "Tile",
                  "Reduces each row of `tile` with {name}: a [rows, 1] tile. `tmp_tile` is "
                  "scratch space the device may use."),
    "RowExpand": ({"target": "Tile", "tile": "Tile", "row": "Tile"}, "Tile",
                  "Applies {name} between each row of `tile` and that row's value in the "
                  "[rows, 1] tile `row` (row_expand: `row` repeated along each row of the "
                  "target's shape; row_expand_expdif: exp(tile - row))."),
    "ColExpand": ({"target": "Tile", "tile": "Tile", "col": "Tile"}, "Tile",
                  "Applies {name} between each column of the tile and that column's value in "
                  "the [1, cols] tile `col` (col_expand: `col` repeated on every row)."),
    "Concat": ({"src0": "Tile", "src1": "Tile"}, "Tile",
               "The tiles `src0` and `src1` side by side (same rows; columns add up)."),
    "Read": ({"input": "Union[Tile, Tensor]", "indices": SHAPE}, "Any",
             "One element of a tile or tensor, as a scalar."),
    "FillPad": ({"tile": "Tile", "pad_value": "PadValue"}, "Tile",
                "`tile` with everything outside its valid region set to `pad_value` (zero, the "
                "dtype's min or max); the result is valid everywhere."),
    "Compare": ({"lhs": "Tile", "rhs": "Union[Tile, int, float]", "cmp_type": "int"}, "Tile",
                "The predicate mask of {name}: one bit per element of `lhs` <cmp_type> `rhs` "
                "(0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >=), 8 to a byte."),
    "Select": ({"mask": "Tile", "lhs": "Tile", "rhs": "Tile", "src": "Tile", "tmp": "Tile",
                "scalar": "Union[int, float]"}, "Tile",
               "{name}: the first value where the mask of pl.cmp has its bit set, else the "
               "second (a tile, or the scalar)."),
    "Matmul": ({"acc": "Tile", "left": "Tile", "right": "Tile", "init_cond": "Any",
                "out_dtype": "DType", "a_trans": "bool", "b_trans": "bool",
                "c_matrix_nz": "bool", "acc_phase": "str", "bias": "Tile"}, "Tile",
               "Matrix product of a Left and a Right tile into an Acc tile ({name}; matmul_acc "
               "adds it to `acc`, or replaces `acc` where `init_cond` holds; matmul_bias adds "
               "the [1, N] `bias` to every row; gemv and gemv_acc take a [1, K] left operand; "
               "a_trans / b_trans read an operand stored transposed)."),
    "ColReduce": ({"tile": "Tile", "tmp_tile": "Tile"}, "Tile",
                  "Reduces each column of `tile` with {name}: a [1, cols] tile, each column "
                  "folded from row 0 down."),
    "ArgReduce": ({"tile": "Tile", "tmp_tile": "Tile"}, "Tile",
                  "The INT32 index of the first extreme of each row ([rows, 1]) or column "
                  "([1, cols]) of `tile` ({name}); a NaN counts as the extreme."),
    "Reshape": ({"input": VALUE, "shape": SHAPE, "data": "Tile", "dtype": "DType"}, VALUE,
                "`input` with the same elements in row-major order and a new `shape`: a copy "
                "for a tile, a view for a tensor (reinterpret_view: the tile's bytes as "
                "elements of `dtype`)."),
    "Transpose": ({"input": VALUE, "axis1": "int", "axis2": "int"}, VALUE,
                  "`input` with axes `axis1` and `axis2` swapped: a transposed copy of a tile "
                  "(the last two axes of one of more than two dimensions), a view of a tensor."),
    # Gather and scatter.
    "Write": ({"input": VALUE, "indices": SHAPE, "value": "Union[int, float]"}, VALUE,
              "`input` with the element at `indices` set to `value` (written as a statement, "
              "`pl.write(x, [i, j], v)` rebinds x)."),
    "Gather": ({"input": VALUE, "dim": "int", "index": VALUE, "mask_pattern": "int",
                "output_dtype": "DType"}, VALUE,
               "{name}: out[i][j] = input[index[i][j]][j] (dim 0) or input[i][index[i][j]] "
               "(dim 1), as torch.gather; an index out of range is a run-time error."),
    "Scatter": ({"input": VALUE, "dim": "int", "index": VALUE, "src": VALUE, "dst": VALUE,
                 "mask_pattern": "int"}, VALUE,
                "{name}: a copy of `input` with the elements of `src` placed along `dim` at "
                "`index` (the last write wins), as torch.scatter; an index out of range is a "
                "run-time error."),
    # pl.system: results are None (a statement) except the core counts.
    "System": ({"tensor": "Tensor", "shapes": SHAPE, "offsets": SHAPE, "workspace": "Tensor",
                "gm_workspace": "Tensor", "used_cores": "IntLike", "event": "IntLike",
                "event_id": "int", "set_pipe": "PipeType", "wait_pipe": "PipeType",
                "pipe": "PipeType", "ffts_mode": "int", "core_type": "str", "mode": "str"},
               "None", "The registry's op {name}."),
    "GatherRow": ({"shape": SHAPE, "dtype": "DType", "transpose": "bool", "dst": "Tile",
                   "src": "Tensor", "dst_offset": SHAPE, "src_offset": SHAPE, "shapes": SHAPE,
                   "valid_shape": SHAPE}, "Tile",
                  "create_l1: a zero-filled Mat (L1) accumulator; gather_row: `dst` with the "
                  "`shapes` window of `src` at `src_offset` (its `valid_shape` part) written at "
                  "`dst_offset` (transpose=True: the window's columns as rows)."),
    "PagedGather": ({"src": "Tensor", "indices": "Tensor", "block_table": "Tensor",
                     "block_size": "int", "size": "int", "max_indices": "int",
                     "space": "MemorySpace", "col_off": "int", "is_trans": "bool",
                     "is_b_matrix": "bool"}, "Tensor",
                    "Rows of the paged pool `src`: row i is src[block_table[k // block_size] * "
                    "block_size + k % block_size, col_off:col_off + size] for k = indices[i]."),
}

# Ops whose parameters, result or summary differ from their category's: parameter types added
# to (or replacing) the category's, the result type, and the first docstring line.
OPS: Dict[str, Tuple[Dict[str, str], str, str]] = {
    "aiv_shard": ({"input": VALUE, "split": "int"}, VALUE,
                  "In a pl.split_aiv region: this AIV lane's part of the cube value `input` "
                  "(half its rows with UP_DOWN, half its columns with LEFT_RIGHT, all of it with "
                  "NONE): a Vec tile for a tile, a tensor for a tensor. `split` is the region's "
                  "mode, which the parser fills in."),
    "aic_gather": ({"input": VALUE, "split": "int"}, VALUE,
                   "In a pl.split_aiv region: the AIV lanes' parts `input` joined again for the "
                   "cube (a Mat tile for tiles, a tensor for tensors). `split` is the region's "
                   "mode, which the parser fills in."),
    "row_expand_add": ({"tmp": "Tile"}, "Tile",
                       "Adds to each row of `tile` that row's value in the [rows, 1] tile `row`, "
                       "or, for a packed `row` of [rows, 32 bytes of elements], the row's block "
                       "repeated along it. `tmp` is scratch space the device may use."),
    "gather_mask": ({}, VALUE,
                    "The columns of `input` that `mask_pattern` selects (pl.tile.MaskPattern: "
                    "P0101 even, P1010 odd, P0001..P1000 one of four, P1111 all); output_dtype "
                    "reads their bits as another dtype of the same width."),
    "gather_compare": ({"kvalue": "Union[int, float]", "tmp": "Tile", "cmp_mode": "str",
                        "out_cols": "int", "offset": "int", "count_dtype": "DType"}, "Any",
                       "For each row of `input`, the column numbers (+ offset) where "
                       "`element <cmp_mode> kvalue` holds, the first out_cols of them, and "
                       "their count: a tuple ([rows, out_cols] INT32, [1, rows])."),
    "scatter_mask": ({}, VALUE,
                     "`dst` with the columns of `src` written into the columns `mask_pattern` "
                     "selects (the inverse of gather_mask); the other columns keep their "
                     "values."),
    "scatter_update": ({}, VALUE,
                       "`input` [rows, d] with row index.flat[k] replaced by row k of `src` "
                       "[b * s, d] (dim=-2; the last write wins); an index out of range is a "
                       "run-time error."),
    "mscatter": ({"src": "Tile", "idx": "Tile", "output_tensor": "Tensor"}, "Tensor",
                 "Stores element (i, j) of `src` at flat element idx[i, j] of `output_tensor` "
                 "and returns the tensor; an index out of range is a run-time error."),
    "batch_matmul": ({"lhs": "Tile", "rhs": "Tile"}, "Tile",
                     "Matrix products of tiles of 2 or more dimensions, matrix by matrix: "
                     "[..., M, K] @ [..., K, N] -> [...batch, M, N] in Acc, the batch dimensions "
                     "broadcast as numpy's (a transposed operand is a pl.tile.transpose_view)."),
    "batch_matmul_acc": ({"lhs": "Tile", "rhs": "Tile"}, "Tile",
                         "`acc` + lhs @ rhs batch by batch, lhs and rhs broadcast as in "
                         "batch_matmul; `acc` has the product's shape."),
    "system.sync_src": ({}, "None", "Sets the flag `event_id` from pipe `set_pipe` to pipe "
                        "`wait_pipe` (the CPU device's core is in order: an ordering point)."),
    "system.sync_dst": ({}, "None", "Waits on pipe `wait_pipe` for the flag `event_id` that "
                        "`set_pipe` sets (the CPU device's core is in order: an ordering point)."),
    "system.sync_set": ({}, "None", "Raises the Cube/Vector event `event_id` (0-13, or a scalar "
                        "`event`) on `pipe`; on the CPU device an ordering point."),
    "system.sync_wait": ({}, "None", "Waits for the Cube/Vector event `event_id` (0-13, or a "
                         "scalar `event`) on `pipe`; on the CPU device an ordering point."),
    "system.set_ffts": ({}, "None", "Declares the FFTS workspace (1-D INT64, 256 or more "
                        "elements) of the cross-core events; no code on the CPU device."),
    "system.bar_v": ({}, "None", "Vector pipe barrier (an ordering point)."),
    "system.bar_m": ({}, "None", "Matrix pipe barrier (an ordering point)."),
    "system.bar_all": ({}, "None", "Barrier of every pipe (an ordering point)."),
    "system.fence": ({}, "None", "A memory fence over global memory."),
    "system.cacheinvalid": ({}, "None", "Invalidates global memory's cache lines (all of them, "
                            "or the one holding a region's base); the host's caches are "
                            "coherent, so an ordering point."),
    "system.syncall": ({}, "None", "A barrier across every block of the SPMD launch: no block "
                       "passes before all arrive. mode='soft' takes gm_workspace (INT32, 16 or "
                       "more elements) and used_cores."),
    "system.available_cluster_count": ({}, "Scalar", "The device's cluster count (INT32): the "
                                       "widest pl.spmd launch whose blocks all run at once."),
    "system.available_aiv_count": ({}, "Scalar", "The device's vector core count (INT32)."),
    "view": ({"input": "Tensor", "valid_shape": SHAPE, "layout": "Any"}, "Tensor",
             "`input` (a tensor) seen in another `shape` over the same memory, as reshape's "
             "view (no shape: `input` itself); layout=TensorLayout.ND only."),
    "gatherb": ({"src": "Tile", "offset": "Tile", "output_dtype": "DType"}, "Tile",
                "32-byte blocks of `src` at the UINT32 byte offsets of `offset` ([r, c] -> "
                "[r, c * 32 / sizeof(output_dtype)]); an offset past `src` is a run-time error."),
    # The third positional argument is coalesce as PyPTO spells it (the parser reads it so);
    # scratch, the registry's third argument, is given by keyword.
    "mgather": ({"mem": "Tensor", "idx": "Union[Tile, Tensor]",
                 "scratch": "Union[Tensor, str, int]", "coalesce": "Union[str, int]",
                 "gather_oob": "Union[str, int]", "target_memory": "MemorySpace",
                 "valid_shape": SHAPE}, "Tile",
                "Rows (coalesce='row') or flat elements ('elem') of the tensor `mem` at the "
                "INT32 indices `idx`: into Vec by an index tile, into Mat by a GM index tensor "
                "(elements staged through scratch=); gather_oob: 'undefined' (a run-time error), "
                "'clamp', 'wrap' or 'zero'. The third positional argument is coalesce."),
    # Triangular masks, partial elementwise ops, gemv_bias and MX block-scaled matmul.
    "tri": ({"diagonal": "IntLike", "shape": SHAPE, "valid_shape": SHAPE, "dtype": "DType",
             "upper": "bool"}, "Tile",
            "A [rows, cols] mask tile: 1 where col - row <= `diagonal` (upper=True: >=), else 0, "
            "written in the `valid_shape` corner only; `diagonal` may be a run-time scalar."),
    **{f"part_{op}": ({"src0": VALUE, "src1": VALUE}, VALUE,
                      f"Partial {what} of two tiles over src0's valid region: where src1 is valid "
                      "too the op, where it is not a copy of src0 (the result has src0's valid "
                      "region).")
       for op, what in (("add", "add"), ("mul", "multiply"), ("max", "max"), ("min", "min"))},
    "gemv_bias": ({}, "Tile",
                  "`left` [1, K] @ `right` [K, N] plus the [1, N] `bias` (of the accumulator's "
                  "dtype); acc_phase is a pipeline hint."),
    **{name: ({"acc": "Tile", "lhs": "Tile", "lhs_scale": "Tile", "rhs": "Tile",
               "rhs_scale": "Tile", "bias": "Tile"}, "Tile",
              f"MX block-scaled matmul ({name}): FP8E4M3FN `lhs` [M, K] and `rhs` [K, N], each "
              "element times the FP8E8M0 scale of its block of 32 along K (`lhs_scale` "
              "[M, K/32], `rhs_scale` [K/32, N], in Mat or moved to LeftScale / RightScale), "
              "into an FP32 [M, N] Acc tile"
              + extra)
       for name, extra in (("matmul_mx", "."), ("matmul_mx_acc", ", added to `acc`."),
                           ("matmul_mx_bias", ", plus the FP32 [1, N] `bias` on every row."))},
    "transpose_view": ({"tile": "Tile"}, "Tile",
                       "`tile` with its last two axes swapped, in the same memory space (the "
                       "hardware reinterprets its fractal layout; here it is a transposed copy)."),
}

HEADER = '''"""The DSL's ops as typed functions: ``pl.add``, ``pl.load``... (and ``pl.tile.<op>``).

Generated by scripts/gen_ops.py from the C++ op registry (src/ir/op_registry.cpp); do not edit,
run the script after changing the registry. The parser reads a program's source text, so these
functions are never called by a program: they give ``help()``, IDEs and type checkers the ops'
signatures. Called from Python they raise ``CompileError``.
"""

# fmt: off
from typing import Any, Optional, Sequence, TypeVar, Union

from pypto.language._ops import IntLike, outside_program
from pypto.language._types import (AtomicType, DType, MemorySpace, PadValue, PipeType, Scalar,
                                   Tensor, Tile)

_Value = TypeVar("_Value", Tile, Tensor)

__all__ = [{names}]
'''

Signature = Tuple[str, str, List[str], int, List[str]]


def render_op(sig: Signature) -> str:
    name, category, arg_names, min_args, attr_names = sig
    short = name.split(".")[-1]
    types, result, summary = CATEGORIES.get(category, ({}, "Any", "The registry's op {name}."))
    if name in OPS:
        extra_types, result, summary = OPS[name]
        types = {**types, **extra_types}
    params = []
    for i, arg in enumerate(arg_names):
        type_ = types.get(arg, "Any")
        params.append(f"{arg}: {type_}" if i < min_args else f"{arg}: Optional[{type_}] = None")
    if attr_names:
        params.append("*")
        params += [f"{a}: Optional[{types.get(a, 'Any')}] = None" for a in attr_names]
    call = ", ".join(arg_names[:min_args] + [f"[{a}]" for a in arg_names[min_args:]] +
                     [f"{a}=" for a in attr_names])
    doc = (f"{summary.format(name=name)}\n\n"
           f"    In a program: ``pl.{name}({call})``. Category {category}; valid only inside a\n"
           f"    ``@pl.program``'s functions or a ``@pl.jit`` function.\n    ")
    return (f"\n\ndef {short}({', '.join(params)}) -> {result}:\n"
            f'    """{doc}"""\n'
            f"    raise outside_program({name!r})\n")


INDEX = '''"""The DSL's ops as typed functions: ``pl.add``, ``pl.load``... (and ``pl.tile.<op>``),
gathered from _ops_compute.py and _ops_data.py.

Generated by scripts/gen_ops.py from the C++ op registry (src/ir/op_registry.cpp); do not edit.
"""

# fmt: off
from pypto.language._ops_compute import *  # noqa: F403
from pypto.language._ops_data import *  # noqa: F403

__all__ = [{names}]
'''


def render_part(title: str, signatures: Sequence[Signature], namespace: str = "") -> str:
    names = ", ".join(repr(s[0].split(".")[-1]) for s in signatures)
    header = HEADER.replace("The DSL's ops as typed functions", title + ", as typed functions", 1)
    if namespace:
        header = header.replace(": ``pl.add``, ``pl.load``... (and ``pl.tile.<op>``)",
                                f" (``pl.{namespace}.<op>``)", 1)
    return header.format(names=names) + "".join(render_op(tuple(s)) for s in signatures)


def render(signatures: Sequence[Signature]) -> Dict[str, str]:
    """File name (in python/pypto/language) -> text."""
    flat = [s for s in signatures if "." not in s[0]]
    compute = [s for s in flat if s[1] in COMPUTE_CATEGORIES]
    data = [s for s in flat if s[1] not in COMPUTE_CATEGORIES]
    names = list(PARTS)
    files = {names[0]: render_part(PARTS[names[0]], compute),
             names[1]: render_part(PARTS[names[1]], data),
             OUTPUT.name: INDEX.format(names=", ".join(repr(s[0]) for s in flat))}
    for namespace, (file_name, title) in NAMESPACES.items():
        members = [s for s in signatures if s[0].startswith(namespace + ".")]
        files[file_name] = render_part(title, members, namespace)
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the file is out of date instead of writing it")
    args = parser.parse_args()
    from pypto import _core  # a built extension: installed, or on PYTHONPATH

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import gen_op_table

    outputs = {LANGUAGE / name: text for name, text in render(_core.ir.op_signatures()).items()}
    reference = LANGUAGE.parents[2] / "docs/language-reference.md"
    outputs[reference] = gen_op_table.update(reference.read_text(), gen_op_table.render(_core))
    from generated_files import write_or_check

    return write_or_check(outputs, args.check, "gen_ops.py")


if __name__ == "__main__":
    sys.exit(main())
