"""A program with several orchestrations and none named ``main``: ``ir.compile`` compiles each
on its own (the orchestration with the functions it calls) into
``<output_dir>/next_levels/<orchestration>/``, and returns a ``MultiOrchestrationProgram``.
Nothing is written at the top of ``output_dir``.

``compiled.orchestration_names`` lists them in definition order; ``compiled["name"]`` (or
``compiled.name_of_it``) is that orchestration's ``CompiledProgram``, to call, inspect or
reload (``CompiledProgram.from_dir`` of its folder). Calling ``compiled(...)`` itself raises
``TypeError``: which orchestration to run is the caller's choice.
"""

import pathlib
from typing import Any, Dict, List

from pypto import _core
from pypto.ir.compiled_program import CompiledProgram, OutputDir
from pypto.ir.program import Program

__all__ = ["MultiOrchestrationProgram", "multi_orchestration_names", "compile_orchestrations"]


def multi_orchestration_names(program: Program) -> List[str]:
    """The orchestrations ``ir.compile`` compiles each on its own: all of the program's, when
    it has two or more and none is ``main`` (the entry when there is one); else none."""
    names = [f.name for f in program._cpp.functions if f.type == "Orchestration"]
    return names if len(names) > 1 and "main" not in names else []


def compile_orchestrations(program: Program, names: List[str],
                           options: Any) -> "MultiOrchestrationProgram":
    """Compiles each orchestration of ``names`` into ``next_levels/<name>/`` of one output
    directory (``options.output_dir``, or the default one named after the program)."""
    root = options.output_dir
    compiled: Dict[str, CompiledProgram] = {}
    for name in names:
        part = _core.driver.function_program(program._cpp, name, program.name)
        part_options = _core.driver.CompileOptions()
        part_options.output_dir = root
        part_options.sub_dir = f"next_levels/{name}"
        part_options.strategy = options.strategy
        part_options.dump_passes = options.dump_passes
        part_options.profiling = options.profiling
        part_options.platform = options.platform
        result = _core.driver.compile_program(part, part_options)
        if not root:  # the first compile opened the default directory: the others join it
            root = str(pathlib.Path(result.output_dir).parent.parent)
        compiled[name] = CompiledProgram(result, name, platform=options.platform)
    return MultiOrchestrationProgram(program.name, root, compiled)


class MultiOrchestrationProgram(str):
    """What ``ir.compile`` returns for a program of several orchestrations (see the module's
    text): the output directory's path, as a ``str``."""

    __test__ = False  # not a pytest test class

    def __new__(cls, name: str, output_dir: str,
                programs: Dict[str, CompiledProgram]) -> "MultiOrchestrationProgram":
        self = super().__new__(cls, output_dir)
        self.__dict__["name"] = name
        self.__dict__["output_dir"] = OutputDir(output_dir)
        self.__dict__["_programs"] = dict(programs)
        return self

    @property
    def orchestration_names(self) -> List[str]:
        return list(self._programs)

    def __getitem__(self, name: Any) -> CompiledProgram:  # type: ignore[override]
        if not isinstance(name, str):
            return str.__getitem__(self, name)  # the path's characters, as for any str
        program = self._programs.get(name)
        if program is None:
            raise KeyError(f"{name!r} is not an orchestration of {self.name}; its orchestrations "
                           f"are {', '.join(self._programs)}")
        return program

    def __getattr__(self, name: str) -> CompiledProgram:
        programs = self.__dict__.get("_programs", {})
        if name in programs:
            return programs[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{self.name} has {len(self._programs)} orchestrations "
                        f"({', '.join(self._programs)}): select one explicitly, e.g. "
                        f"compiled[{next(iter(self._programs))!r}](...)")

    def __repr__(self) -> str:
        return (f"<pypto.ir.MultiOrchestrationProgram {self.name} "
                f"({', '.join(self._programs)}) at {str.__str__(self)!r}>")

    def __reduce__(self) -> Any:  # pickles as the path it is
        return (str, (str.__str__(self),))
