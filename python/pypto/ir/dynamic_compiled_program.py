"""What ``ir.compile`` returns for a program whose entry has ``pl.dynamic`` dimensions.

Such a program's passes and code generation need the extents of its dimensions, which the
tensors it runs with give. ``ir.compile`` therefore does what it can without them (the parser
has read every function whose shapes are fixed; those with ``pl.dynamic`` dimensions are read
per specialisation) and returns a ``DynamicCompiledProgram``: its output folder, callable like a ``CompiledProgram``.
Each call specialises the program on its tensors' shapes and dtypes, compiles that
specialisation once into ``<output_dir>/shapes/<key>/`` (a complete ``ir.compile`` folder, with
its own profile when profiling is on) and calls it; later calls with the same shapes reuse it,
as ``@pl.jit`` keeps one compiled program per shape key.
"""

import hashlib
import os
import pathlib
from typing import Any, Dict, Sequence, Tuple

from pypto import _core
from pypto.ir.compiled_program import CompiledProgram, OutputDir

__all__ = ["DynamicCompiledProgram"]

ShapeKey = Tuple[Tuple[Tuple[int, ...], str], ...]


class DynamicCompiledProgram(str):
    """The output folder of a program with ``pl.dynamic`` dimensions (a ``str``), compiled per
    shape on its calls: ``compiled(*tensors, config=None)`` with one array per entry parameter;
    ``specialise(tensors)`` gives the ``CompiledProgram`` of those shapes without calling it;
    ``specialisations`` maps each shape key compiled so far to its ``CompiledProgram``."""

    __test__ = False

    def __new__(cls, program: Any, output_dir: Any, compile_options: Dict[str, Any],
                platform: str) -> "DynamicCompiledProgram":
        folder = (_core.driver.default_output_dir(program.name) if output_dir is None
                  else os.fspath(output_dir))
        self = super().__new__(cls, folder)
        self.output_dir = OutputDir(folder)
        self.name = program.name
        self.program = program  # the DynamicProgram: its IR exists per specialisation
        self.platform = platform
        self.kernel_names: list = []
        self._options = dict(compile_options)
        self._specialisations: Dict[ShapeKey, CompiledProgram] = {}
        pathlib.Path(folder).mkdir(parents=True, exist_ok=True)
        return self

    @property
    def specialisations(self) -> Dict[ShapeKey, CompiledProgram]:
        return dict(self._specialisations)

    def specialise(self, tensors: Sequence[Any]) -> CompiledProgram:
        """The compiled program for ``tensors`` (arrays, or anything with ``shape`` and
        ``dtype``), bound to the entry's parameters by position; compiled on first use."""
        from pypto.ir.compile import compile as compile_program  # noqa: PLC0415 - cycle
        from pypto.runtime import _to_pl_dtype  # noqa: PLC0415 - runtime imports pypto.ir

        key: ShapeKey = tuple((tuple(int(d) for d in t.shape), _to_pl_dtype(t.dtype).name)
                              for t in tensors)
        compiled = self._specialisations.get(key)
        if compiled is None:
            program = self.program.specialise(
                [(f"arg{i}", list(shape), dtype) for i, (shape, dtype) in enumerate(key)])
            folder = pathlib.Path(self.output_dir) / "shapes" / _folder_name(key)
            compiled = compile_program(program, output_dir=folder, platform=self.platform,
                                       **self._options)
            self._specialisations[key] = compiled
        return compiled

    def __call__(self, *args: Any, config: Any = None) -> Any:
        if not args:
            raise TypeError(f"{self.name} has pl.dynamic dimensions: a call gives one tensor "
                            f"per parameter of its entry, whose shapes fix them; got none")
        return self.specialise(args)(*args, config=config)

    def __str__(self) -> str:
        return self.output_dir

    def __repr__(self) -> str:
        return (f"<pypto.ir.DynamicCompiledProgram {self.name} at {self.output_dir!r}: "
                f"{len(self._specialisations)} shape(s) compiled>")

    def __reduce__(self) -> Any:  # pickles as the path it is
        return (str, (self.output_dir,))


def _folder_name(key: ShapeKey) -> str:
    """``64x128_f32-128_f32`` style: readable for a few small tensors, else hashed."""
    name = "-".join("x".join(map(str, shape)) + "_" + dtype.lower() for shape, dtype in key)
    if len(name) <= 80:
        return name
    return "shapes_" + hashlib.sha256(name.encode()).hexdigest()[:16]
