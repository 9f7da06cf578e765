"""PyPTO's other form of ``pypto.runtime.run``: ``run(program, *tensors, config=RunConfig(...))``
compiles the program and calls it on the given arrays (torch tensors or numpy arrays, one per
parameter of its entry, in order), which hold the outputs afterwards; it returns the
``CompiledProgram``, to be called again. With no tensors it only compiles. There is no golden:
PyPTO's examples compare the outputs themselves.

``run()`` takes this form when its arguments after the program are arrays, or when there are
none and no ``tensor_specs`` (pypto.runtime.run)."""

from typing import Any, Sequence


def is_tensor_call(args: Sequence[Any]) -> bool:
    """Whether ``run``'s positional arguments after the program are the arrays of this form
    (not ``tensor_specs``, ``golden``, ``config``)."""
    return all(hasattr(a, "shape") and hasattr(a, "dtype") for a in args)


def run_on_tensors(program: Any, tensors: Sequence[Any], config: Any) -> Any:
    """Compiles ``program`` as ``config`` says and calls it on ``tensors`` (see the module)."""
    from pypto import ir  # noqa: PLC0415 - pypto.ir imports pypto.runtime
    from pypto.ir.program import DynamicProgram  # noqa: PLC0415
    from pypto.runtime import RunConfig  # noqa: PLC0415
    from pypto.runtime._config import strategy as _strategy  # noqa: PLC0415

    config = RunConfig() if config is None else config
    if isinstance(program, DynamicProgram):
        if not tensors:
            from pypto.errors import CompileError  # noqa: PLC0415

            raise CompileError(f"{program.name} has pl.dynamic dimensions: run() compiles it for "
                               "the tensors it is given, and got none")
        # pl.dynamic dimensions take the extents of the tensors, bound by position.
        program = program.specialise([(f"arg{i}", list(t.shape), t.dtype)
                                      for i, t in enumerate(tensors)])
    strategy = config.strategy
    if not isinstance(strategy, ir.OptimizationStrategy):
        strategy = _strategy(strategy)
    compiled = ir.compile(program, output_dir=config.save_kernels_dir or config.work_dir,
                          strategy=strategy, dump_passes=config.dump_passes,
                          platform=config.platform, profiling=config.compile_profiling)
    if tensors and not config.codegen_only:
        compiled(*tensors, config=config)
    return compiled
