"""PyPTO's ``pypto.runtime.distributed_runner`` names that programs and tests use: the
``DistributedWorker`` and ``StackedDeviceTensor`` (``pypto/ir/distributed_worker.py``) and
``_tensor_from_continuous``.

A callback bound with ``prepare(callbacks={name: fn})`` gets its sub-worker's arguments as one
list; ``_tensor_from_continuous`` gives each tensor argument as a torch tensor sharing its memory,
so that what the callback writes into an Out/InOut argument is what the program sees.
"""

from typing import Any

from pypto.ir.distributed_worker import DistributedWorker, StackedDeviceTensor


def _tensor_from_continuous(arg: Any) -> Any:
    """The torch tensor of a callback's tensor argument (a torch tensor or a numpy array, the
    same memory)."""
    import torch  # noqa: PLC0415 - torch is optional: only callers of this need it

    if isinstance(arg, torch.Tensor):
        return arg
    return torch.from_numpy(arg)


__all__ = ["DistributedWorker", "StackedDeviceTensor", "_tensor_from_continuous"]
