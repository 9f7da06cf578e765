"""``CompiledProgram``: what ``ir.compile`` returns and what ``@pl.jit`` caches per specialisation.

It is the output directory's path, as a ``str``, and a callable: ``compiled(a, b, c)`` runs
the program on the caller's arrays (numpy arrays or torch tensors), writing the Out and InOut
ones in place, and ``compiled(a, b)`` (inputs only) allocates the pure Out tensors and returns
them. A call builds the program library on first use (or takes it from the binary cache); it
neither parses nor compiles again.
"""

import json
import pathlib
from typing import Any, Dict, List, Optional

from pypto import _core
from pypto.ir.program import Program

__all__ = ["CompiledProgram"]


class _CallParam:
    """One entry parameter as a call checks it (the shape of ``_jit._Param``)."""

    __slots__ = ("name", "shape", "dtype", "direction", "is_tensor")

    def __init__(self, name, shape, dtype, direction):
        self.name = name
        self.shape = tuple(shape)
        self.dtype = dtype
        self.direction = direction
        self.is_tensor = True


class OutputDir(str):
    """An output directory's path: a ``str`` that also joins like a ``pathlib.Path``
    (``compiled.output_dir / "kernels"`` is a Path, as in PyPTO)."""

    def __truediv__(self, other: Any) -> pathlib.Path:
        return pathlib.Path(self) / other

    def __fspath__(self) -> str:
        return str.__str__(self)


class CompiledProgram(str):
    """The result of ``ir.compile``: the output directory's path, as a ``str`` (so the seed's
    ``output_dir + "/report/pipeline_profile.txt"``, ``os.path.join``, ``open`` and
    ``os.fspath`` all work), with what the compile produced as attributes, and callable.

    ``output_dir`` holds ``program.cpp`` (the translation unit built into the program library),
    ``kernels/<f>.cpp``, ``orchestration/<f>.cpp``, ``kernel_config.json``, ``passes_dump/``
    and, when profiling, ``report/pipeline_profile.{txt,json}``.

    Calls: ``compiled(*tensors, config=RunConfig(...))`` with one array per parameter of the
    program's entry (in place: returns None), or with its inputs only (the parameters that are
    not pure ``pl.Out``: the outputs are allocated, numpy arrays or torch tensors like the
    inputs, and returned, one or a tuple). ``param_names``, ``output_indices`` and
    ``has_return`` describe the entry.
    """

    __test__ = False  # not a pytest test class (PyPTO's tests import it)

    output_dir: str
    name: str
    program: Program
    kernel_names: List[str]
    translation_unit: str

    def __new__(cls, result: Any, name: str, driver_program: Any = None) -> "CompiledProgram":
        self = super().__new__(cls, result.output_dir)
        self.output_dir = OutputDir(result.output_dir)
        self.name = name
        self.program = Program(result.lowered)  # after the pass pipeline
        self.kernel_names = list(result.kernel_names)
        self.translation_unit = result.translation_unit
        self._manifest = result.manifest_json
        self._result = result
        self._driver = driver_program
        self._params = None
        return self

    @property
    def manifest(self) -> Dict[str, Any]:
        """The contents of kernel_config.json, as a dict."""
        manifest: Dict[str, Any] = json.loads(self._manifest)
        return manifest

    # ------------------------------------------------------------------ the entry

    def _driver_program(self) -> Any:
        """The driver's callable program (TypeError when the entry takes a scalar)."""
        if self._driver is None:
            self._driver = _core.driver.callable_program(self._result)
        return self._driver

    def _call_params(self) -> List[_CallParam]:
        if self._params is None:
            self._params = [_CallParam(*p) for p in self._driver_program().entry_params]
        return self._params

    @property
    def param_names(self) -> List[str]:
        """The entry's parameter names, in call order."""
        return [p.name for p in self._call_params()]

    @property
    def output_indices(self) -> List[int]:
        """Positions of the pure ``pl.Out`` parameters: what a call with inputs only
        allocates and returns."""
        return [i for i, p in enumerate(self._call_params()) if p.direction == "Out"]

    @property
    def has_return(self) -> bool:
        """Whether the entry returns values (tensors returned by value or Out parameters)."""
        return bool(self._driver_program().returns_values)

    # ------------------------------------------------------------------ runtime artefacts

    @property
    def chip_callable(self) -> Any:
        """What the device runs: the driver's handle of this program (its library is built or
        taken from the binary cache on the first call). The same object on every access."""
        return self._driver_program()

    @property
    def runtime_name(self) -> str:
        """The runtime the program runs on: the simulated CPU device."""
        return "pypto-cpu-device"

    @property
    def runtime_config(self) -> Dict[str, Any]:
        """What the runtime needs to know to run the program: its runtime and entry (from
        kernel_config.json)."""
        return {"runtime": self.runtime_name, "entry": self.manifest.get("entry")}

    # ------------------------------------------------------------------ calls

    def __call__(self, *args: Any, config: Any = None) -> Any:
        args, return_style, launch, profiling = self._prepared_call(args, config)
        with _core.driver.Session(profiling) as session:
            launch(session)
            if session.profiling:
                session.write_report()
        if not return_style:
            return None
        results = tuple(args[i] for i in self.output_indices)
        return results[0] if len(results) == 1 else results

    def _prepared_call(self, args: Any, config: Any) -> Any:
        """Checks a call's arguments once: (the full argument list, whether the call allocated
        the outputs, a launch(session) that runs the program on them and returns the device
        seconds, whether the config asks for a profile). pypto.runtime.benchmark launches it
        many times."""
        from pypto.language import _jit  # here: pypto.language imports pypto.ir

        params = self._call_params()
        outputs = self.output_indices
        return_style = len(args) == len(params) - len(outputs) and len(outputs) > 0
        if return_style:
            args = _with_allocated_outputs(args, params, outputs)
        elif len(args) != len(params):
            names = ", ".join(p.name for p in params)
            raise TypeError(f"{self.name} takes {len(params)} tensor(s) ({names}), or its "
                            f"{len(params) - len(outputs)} input(s) alone; got {len(args)}")
        config, driver_config = _jit._driver_config(config)
        dtypes = []
        for param, value in zip(params, args):
            _jit._check_array(param, value)
            dtypes.append(_jit._dtype_name(param, value))
        buffers = [_jit._types.as_driver_buffer(a) for a in args]
        program = self._driver_program()

        def launch(session: Any) -> float:
            seconds: float = _core.driver.call(session, program, buffers, dtypes,
                                               driver_config)[0]
            return seconds

        return list(args), return_style, launch, config.compile_profiling is True

    def __str__(self) -> str:
        return self.output_dir

    def __repr__(self) -> str:
        return f"<pypto.ir.CompiledProgram {self.name} at {self.output_dir!r}>"

    def __reduce__(self) -> Any:  # pickles as the path it is
        return (str, (self.output_dir,))


def _with_allocated_outputs(args, params, outputs):
    """``args`` (the inputs) with a zero tensor at each pure-Out position: a torch tensor when
    an input is one, else a numpy array."""
    from pypto.language import _types  # here: pypto.language imports pypto.ir

    as_torch = any(type(a).__module__.startswith("torch") for a in args)
    full: List[Optional[Any]] = []
    inputs = iter(args)
    for i, param in enumerate(params):
        if i not in outputs:
            full.append(next(inputs))
            continue
        dtype = _types.DTYPES[param.dtype]
        if as_torch:
            from pypto.runtime import _torch_bridge

            full.append(_torch_bridge.torch.zeros(param.shape,
                                                  dtype=_torch_bridge.torch_dtype(dtype)))
        else:
            import numpy as np

            full.append(np.zeros(param.shape, dtype=dtype.storage_numpy))
    return full
