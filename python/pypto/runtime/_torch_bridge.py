"""Conversions between torch tensors and the numpy arrays the driver runs on (torch is an
optional dependency: only the PyPTO-compatible modules import this, on first use).

BF16 has no numpy dtype without ml_dtypes, so its values cross as their 16-bit patterns.
"""

import numpy as np
import torch

from pypto.language import _types

# torch dtypes by their name (torch.float32 -> "float32") for the pl dtypes the device has.
_TORCH_BY_PL = {"FP32": torch.float32, "FP16": torch.float16, "BF16": torch.bfloat16,
                "INT32": torch.int32, "INT64": torch.int64, "BOOL": torch.bool}


def torch_dtype(dtype):
    """The torch dtype of a torch dtype, a pl dtype, a numpy dtype or a name."""
    if isinstance(dtype, torch.dtype):
        return dtype
    from pypto.runtime import _to_pl_dtype  # noqa: PLC0415

    return _TORCH_BY_PL[_to_pl_dtype(dtype).name]


def pl_dtype(dtype):
    """The pl dtype of a torch dtype (TypeError naming the dtype when the device lacks it)."""
    from pypto.runtime import _to_pl_dtype  # noqa: PLC0415

    return _to_pl_dtype(dtype)


def as_torch(value):
    """A torch tensor holding ``value`` (a tensor, a numpy array, a number or a sequence)."""
    if isinstance(value, torch.Tensor):
        return value
    array = np.asarray(value)
    if array.dtype.name == "bfloat16":  # ml_dtypes' bfloat16
        return torch.from_numpy(array.view(np.int16).copy()).view(torch.bfloat16)
    return torch.as_tensor(array)


def to_storage(tensor, dtype):
    """A numpy array with ``tensor``'s values in the storage of pl dtype ``dtype`` (what
    TensorSpec.create_array makes), BF16 as its bit patterns."""
    tensor = tensor.detach().cpu().contiguous()
    if tensor.dtype == torch.bfloat16:
        from pypto.runtime import _storage_dtype  # noqa: PLC0415

        return tensor.view(torch.int16).numpy().view(np.uint16).view(_storage_dtype(dtype))
    return tensor.numpy()


def from_storage(array, like):
    """``array`` (driver storage) as a torch tensor of ``like``'s dtype and shape."""
    if like.dtype == torch.bfloat16:
        bits = np.ascontiguousarray(array).view(np.int16)
        return torch.from_numpy(bits.copy()).view(torch.bfloat16).reshape(like.shape)
    return torch.from_numpy(np.ascontiguousarray(array)).reshape(like.shape).to(like.dtype)


__all__ = ["torch_dtype", "pl_dtype", "as_torch", "to_storage", "from_storage", "_types"]
