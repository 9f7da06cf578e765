"""``Worker``: what the single-chip ``ChipWorker`` and the multi-rank ``DistributedWorker`` have in
common, by PyPTO's name (``pypto.runtime.Worker``): programs run on it explicitly
(``run(compiled, *tensors, config=None)``), tensors live on it across runs (``alloc_tensor`` /
``free_tensor``), and ``close()`` (or the end of a ``with`` block) ends it. Code that does not
care which kind of worker it has can be written against this class."""

import abc
from typing import Any, Sequence

__all__ = ["Worker"]


class Worker(abc.ABC):
    """The interface of ``ChipWorker`` and ``DistributedWorker``."""

    @abc.abstractmethod
    def run(self, compiled: Any, *args: Any, config: Any = None) -> Any:
        """Runs a compiled program of this worker on ``args`` (as calling it would)."""

    @abc.abstractmethod
    def alloc_tensor(self, shape: Sequence[int], dtype: Any, *, init: Any = None) -> Any:
        """A tensor that stays valid across runs until ``free_tensor`` or ``close``."""

    @abc.abstractmethod
    def free_tensor(self, tensor: Any) -> None:
        """Releases a tensor of ``alloc_tensor``."""

    @abc.abstractmethod
    def close(self) -> None:
        """Ends the worker and frees its tensors; idempotent."""

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()
