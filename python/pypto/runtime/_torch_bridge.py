"""Conversions between torch tensors and the numpy arrays the driver runs on (torch is an
optional dependency: only the PyPTO-compatible modules import this, on first use).

BF16 and the 8-bit floats have no numpy dtype without ml_dtypes, and torch cannot share an
ml_dtypes array, so their values cross as their bit patterns.
"""

import numpy as np
import torch

from pypto.language import _types

# torch dtypes of the pl dtypes the device has; a torch too old for one (torch.uint16 needs 2.3)
# leaves it out.
_TORCH_BY_PL = {name: getattr(torch, d._numpy_name) for name, d in _types.DTYPES.items()
                if hasattr(torch, d._numpy_name)}
# The floats torch holds that numpy does not: torch dtype -> (numpy and torch dtype of the bits).
_BIT_PATTERN_FLOATS = {getattr(torch, name): (np.dtype(f"int{8 * size}"),
                                              getattr(torch, f"int{8 * size}"))
                       for name, size in (("bfloat16", 2), ("float8_e4m3fn", 1),
                                          ("float8_e5m2", 1), ("float8_e8m0fnu", 1))
                       if hasattr(torch, name)}


def torch_dtype(dtype):
    """The torch dtype of a torch dtype, a pl dtype, a numpy dtype or a name."""
    if isinstance(dtype, torch.dtype):
        return dtype
    from pypto.runtime import _to_pl_dtype  # noqa: PLC0415

    pl_dtype = _to_pl_dtype(dtype)
    if pl_dtype.name not in _TORCH_BY_PL:
        raise TypeError(f"{pl_dtype!r} has no torch dtype in torch {torch.__version__}")
    return _TORCH_BY_PL[pl_dtype.name]


def pl_dtype(dtype):
    """The pl dtype of a torch dtype (TypeError naming the dtype when the device lacks it)."""
    from pypto.runtime import _to_pl_dtype  # noqa: PLC0415

    return _to_pl_dtype(dtype)


def as_torch(value):
    """A torch tensor holding ``value`` (a tensor, a numpy array, a number or a sequence)."""
    if isinstance(value, torch.Tensor):
        return value
    array = np.asarray(value)
    name = array.dtype.name
    if name in _types._ML_DTYPES_NAMES and hasattr(torch, name):  # ml_dtypes' floats
        target = getattr(torch, name)
        bits_numpy, _ = _BIT_PATTERN_FLOATS[target]
        return torch.from_numpy(np.ascontiguousarray(array).view(bits_numpy).copy()).view(target)
    return torch.as_tensor(array)


def to_storage(tensor, dtype):
    """A numpy array with ``tensor``'s values in the storage of pl dtype ``dtype`` (what
    TensorSpec.create_array makes), BF16 and the FP8s as their bit patterns."""
    tensor = tensor.detach().cpu().contiguous()
    if tensor.dtype in _BIT_PATTERN_FLOATS:
        from pypto.runtime import _storage_dtype  # noqa: PLC0415

        bits_numpy, bits_torch = _BIT_PATTERN_FLOATS[tensor.dtype]
        return tensor.view(bits_torch).numpy().view(bits_numpy).view(_storage_dtype(dtype))
    return tensor.numpy()


def from_storage(array, like):
    """``array`` (driver storage) as a torch tensor of ``like``'s dtype and shape."""
    if like.dtype in _BIT_PATTERN_FLOATS:
        bits_numpy, _ = _BIT_PATTERN_FLOATS[like.dtype]
        bits = np.ascontiguousarray(array).view(bits_numpy)
        return torch.from_numpy(bits.copy()).view(like.dtype).reshape(like.shape)
    return torch.from_numpy(np.ascontiguousarray(array)).reshape(like.shape).to(like.dtype)


__all__ = ["torch_dtype", "pl_dtype", "as_torch", "to_storage", "from_storage", "_types"]
