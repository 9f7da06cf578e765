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

    def __eq__(self, other: Any) -> bool:
        # Equal to the same path given as a pathlib.Path, as well as to the same str.
        if isinstance(other, pathlib.PurePath):
            return pathlib.Path(self) == other
        return str.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        return not self == other

    __hash__ = str.__hash__


class CompiledProgram(str):
    """The result of ``ir.compile``: the output directory's path, as a ``str`` (so the seed's
    ``output_dir + "/report/pipeline_profile.txt"``, ``os.path.join``, ``open`` and
    ``os.fspath`` all work), with what the compile produced as attributes, and callable.

    ``output_dir`` holds ``program.cpp`` (the translation unit built into the program library),
    ``kernels/<f>.cpp``, ``orchestration/<f>.cpp``, ``kernel_config.json`` (and the same facts
    as a Python module, ``kernel_config.py``), ``passes_dump/`` and, when profiling,
    ``report/pipeline_profile.{txt,json}``. ``CompiledProgram.from_dir(output_dir)`` reloads
    it without compiling.

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

    def __new__(cls, result: Any, name: str, driver_program: Any = None,
                platform: str = "a2a3sim", reloaded: bool = False) -> "CompiledProgram":
        self = super().__new__(cls, result.output_dir)
        self.output_dir = OutputDir(result.output_dir)
        self.name = name
        self.platform = platform
        # After the pass pipeline; None when reloaded from a directory (from_dir), which keeps
        # the entry's signature and the generated sources, not the IR.
        self.program = None if reloaded else Program(result.lowered)
        self.kernel_names = list(result.kernel_names)
        self.translation_unit = result.translation_unit
        self._manifest = result.manifest_json
        self._result = result
        self._driver = driver_program
        self._params = None
        return self

    @classmethod
    def from_dir(cls, output_dir: Any, *, platform: Optional[str] = None,
                 backend_type: Any = None) -> "CompiledProgram":
        """The compiled program an earlier ``ir.compile`` wrote into ``output_dir``, callable
        and benchmarkable with nothing parsed or compiled again: the entry's signature comes
        from ``kernel_config.json`` and the program library is built (or taken from the binary
        cache) from ``program.cpp`` as it is on disk, so an edited ``program.cpp`` is what
        runs. ``program`` is None. ``platform`` (or ``backend_type``) names the platform the
        program was compiled for (default ``"a2a3sim"``). Raises ``FileNotFoundError`` when
        the directory holds no ``kernel_config.json`` (a multi-rank program's device programs
        are in its ``next_levels/<function>/``), ``ValueError`` when its files are malformed
        or its entry takes other than tensors."""
        path = pathlib.Path(output_dir)
        if not (path / "kernel_config.json").is_file():
            raise FileNotFoundError(
                f"{path / 'kernel_config.json'} not found: CompiledProgram.from_dir needs the "
                f"output directory of an ir.compile (a multi-rank program's device programs "
                f"are in its next_levels/<function>/)")
        if platform is None and backend_type is not None:
            from pypto.backend import platform_of  # noqa: PLC0415

            platform = platform_of(backend_type)
        driver_program = _core.driver.load_compiled(str(path))
        result = driver_program.result
        return cls(result, result.lowered.name, driver_program,
                   platform=platform or "a2a3sim", reloaded=True)

    def build_call_config(self, config: Any = None, *, aicpu_thread_num: Optional[int] = None,
                          dfx_dir: Any = None) -> Any:
        """The ``RunConfig`` a call of this program runs with (what PyPTO calls the call
        config): ``config`` (default ``RunConfig()``) with ``aicpu_thread_num`` set when given,
        which takes precedence over the config's own value. A call's DFX files always go to
        ``<output_dir>/dfx_outputs``, so ``dfx_dir`` must be None or that folder."""
        import dataclasses  # noqa: PLC0415

        from pypto import runtime  # noqa: PLC0415 - runtime imports pypto.ir

        if config is None:
            config = runtime.RunConfig(platform=self.platform)
        if not isinstance(config, runtime.RunConfig):
            raise TypeError(f"build_call_config: config must be a pypto.runtime.RunConfig, got "
                            f"{type(config).__name__}")
        if dfx_dir is not None and pathlib.Path(dfx_dir) != self.output_dir / "dfx_outputs":
            raise ValueError(f"build_call_config: the DFX files of a call go to "
                             f"{self.output_dir / 'dfx_outputs'}, not {dfx_dir}")
        if aicpu_thread_num is not None:
            config = dataclasses.replace(config, aicpu_thread_num=aicpu_thread_num)
        return config

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
