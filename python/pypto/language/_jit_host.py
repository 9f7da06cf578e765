"""``@pl.jit.host``: the host orchestrator of a multi-rank program in the function style.

A ``@pl.jit.host`` function allocates window buffers and dispatches ``@pl.jit`` functions (the
per-device orchestrations, which call ``@pl.jit.incore`` kernels) to ranks with ``device=r``.
``fn.compile(*tensors, config=RunConfig(distributed_config=DistributedConfig(device_ids=...)))``
gives a ``DistributedCompiledProgram`` (pypto.ir.distributed_compiled_program); calling the
function itself compiles (once per shapes) and runs. The C++ parser reads the functions
(``_core.ir.parse_jit`` with the rank count as the constant of ``pld.world_size()``).
"""

from typing import Any

from pypto import _core
from pypto.ir.program import Program
from pypto.language._jit import JitFunction, _check_array, _dtype_name

__all__ = ["JitHostFunction"]


class JitHostFunction(JitFunction):
    """A ``@pl.jit.host`` function: call it (or ``.compile`` it) with its tensors and
    ``config=RunConfig(distributed_config=DistributedConfig(device_ids=[...]))``."""

    def __repr__(self):
        return f"<pl.jit.host function {self.__qualname__}>"

    def _sources(self):
        text, file_name, functions, constants, helpers = super()._sources()
        fn = self.__wrapped__
        scope = dict(fn.__globals__)
        listed = {name for name, _, _ in functions}
        for name, value in scope.items():
            # The per-device @pl.jit functions it dispatches (kernels are listed already).
            if (isinstance(value, JitFunction) and not isinstance(value, JitHostFunction)
                    and value.__name__ == name and name not in listed):
                code = value.__wrapped__.__code__
                if code.co_filename == fn.__code__.co_filename:
                    functions.append((name, False, code.co_firstlineno))
        return text, file_name, functions, constants, helpers

    def compile(self, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        """The DistributedCompiledProgram of these tensors' shapes, for the ranks of
        ``config.distributed_config``."""
        from pypto.ir.distributed_compiled_program import (  # noqa: PLC0415
            WORLD_SIZE_CONSTANT, DistributedCompiledProgram, DistributedConfig)

        args = self._arguments(args, kwargs)
        distributed = getattr(config, "distributed_config", None)
        if not isinstance(distributed, DistributedConfig):
            raise TypeError(f"@pl.jit.host function {self.__qualname__} runs on several ranks: "
                            f"compile it with config=RunConfig(distributed_config="
                            f"DistributedConfig(device_ids=[...]))")
        scalars = {}
        for param, value in zip(self._params, args):
            if param.is_tensor:
                _check_array(param, value)
            else:
                scalars[param.name] = value
        sources = self._sources()

        def specialise(entry):
            text, file_name, functions, constants, helpers = sources
            arguments = dict(scalars)
            tensors = iter(entry)
            for param in self._params:
                if param.is_tensor:
                    _, shape, dtype = next(tensors)
                    arguments[param.name] = (list(shape), dtype)
            scope = {**constants, WORLD_SIZE_CONSTANT: distributed.world_size}
            return Program(_core.ir.parse_jit(text, file_name, functions, self.__name__,
                                              arguments, scope, helpers))

        entry = [(p.name, [int(d) for d in v.shape], _dtype_name(p, v))
                 for p, v in zip(self._params, args) if p.is_tensor]
        return DistributedCompiledProgram(self.__name__, distributed, specialise, config,
                                          entry=entry)

    def __call__(self, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        args = self._arguments(args, kwargs)
        tensors = [v for p, v in zip(self._params, args) if p.is_tensor]
        distributed = getattr(config, "distributed_config", None)
        ranks = tuple(getattr(distributed, "device_ids", ()))
        key = (ranks, tuple((tuple(t.shape), str(t.dtype)) for t in tensors),
               tuple(v for p, v in zip(self._params, args) if not p.is_tensor))
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self.compile(*args, config=config)
            self._cache[key] = compiled
            self.misses += 1
        else:
            self.hits += 1
        return compiled(*tensors, config=config)


