"""The code-generation backend: which Ascend chip generation programs are compiled for.

PyPTO's DSL names its targets by ``BackendType``: ``Ascend910B`` (the "a2a3" platforms) and
``Ascend950`` (the "a5" platforms). Here both run on the CPU-simulated device; the backend decides
what the "a2a3sim"/"a5sim" platform names decide (for a5, tiles move between Mat and Vec, see
docs/language-reference.md). ``set_backend_type`` records the process's backend, which
``pypto.runtime.compile_program`` and ``pypto.runtime.runner.RunConfig`` read when they are not
given a platform.

``Backend910B.instance()`` / ``Backend950.instance()`` (``get_backend_instance(backend_type)``)
are PyPTO's models of the chips: ``soc`` (dies, clusters, cores and their memories),
``get_core_count(CoreType.VECTOR)``, ``get_mem_size(space)``, ``find_mem_path(from, to)``
(``soc.py``).
"""

import enum
import threading
from typing import Optional

from pypto.backend.soc import (  # noqa: E402 - after the module docstring, before the rest
    Backend,
    Backend910B,
    Backend950,
    Cluster,
    Core,
    CoreType,
    Die,
    Mem,
    SoC,
    get_backend_instance,
)

__all__ = ["BackendType", "set_backend_type", "get_backend_type", "is_backend_configured",
           "reset_for_testing", "platform_of", "backend_of_platform", "Backend", "Backend910B",
           "Backend950", "SoC", "Die", "Cluster", "Core", "Mem", "CoreType",
           "get_backend_instance"]


class BackendType(enum.Enum):
    """A chip generation code is generated for."""

    Ascend910B = "a2a3"
    Ascend950 = "a5"

    @property
    def arch(self) -> str:
        """The platform prefix of this backend: "a2a3" or "a5"."""
        return self.value


_lock = threading.Lock()
_configured: Optional[BackendType] = None


def set_backend_type(backend_type: BackendType) -> None:
    """Makes ``backend_type`` the process's backend (setting it again, also to another one, is
    allowed: the test harness switches backend between test cases)."""
    global _configured
    if not isinstance(backend_type, BackendType):
        raise TypeError(f"set_backend_type expects a pypto.backend.BackendType (Ascend910B or "
                        f"Ascend950), got {backend_type!r}")
    with _lock:
        _configured = backend_type


def get_backend_type() -> BackendType:
    """The process's backend; Ascend910B until ``set_backend_type`` says otherwise."""
    return _configured if _configured is not None else BackendType.Ascend910B


def is_backend_configured() -> bool:
    """Whether ``set_backend_type`` was called (since the last ``reset_for_testing``)."""
    return _configured is not None


def reset_for_testing() -> None:
    """Forgets the configured backend, so that the next ``set_backend_type`` starts afresh."""
    global _configured
    with _lock:
        _configured = None


def platform_of(backend_type: BackendType, simulated: bool = True) -> str:
    """The platform name of a backend: "a2a3sim"/"a5sim" (or "a2a3"/"a5" when not simulated)."""
    return backend_type.arch + ("sim" if simulated else "")


def backend_of_platform(platform: str) -> BackendType:
    """The backend of a platform name ("a5", "a5sim" -> Ascend950; the rest -> Ascend910B)."""
    return BackendType.Ascend950 if str(platform).startswith("a5") else BackendType.Ascend910B
