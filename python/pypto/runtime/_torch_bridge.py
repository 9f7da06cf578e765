"""Conversions between torch tensors and the numpy arrays the driver runs on (torch is an
optional dependency: only the PyPTO-compatible modules import this, on first use).

BF16 and the 8-bit floats have no numpy dtype without ml_dtypes, and torch cannot share an
ml_dtypes array, so their values cross as their bit patterns.

FP4 crosses as PyPTO passes it: torch's ``float4_e2m1fn_x2``, two E2M1 codes a byte (the first
element in the low four bits), whose last dimension is half the logical one; the device holds one
code a byte (ml_dtypes' ``float4_e2m1fn``), so the bytes are split on the way in and joined on
the way out.
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


# torch's packed FP4 (torch 2.8 and later), else None.
_PACKED_FP4 = getattr(torch, "float4_e2m1fn_x2", None)


def unpack_fp4(packed):
    """The E2M1 codes of a ``float4_e2m1fn_x2`` tensor, one a byte: numpy uint8, its last
    dimension twice the tensor's."""
    data = packed.detach().cpu().contiguous().view(torch.uint8).numpy()
    codes = np.empty(data.shape[:-1] + (2 * data.shape[-1],), dtype=np.uint8)
    codes[..., 0::2] = data & 0x0F
    codes[..., 1::2] = data >> 4
    return codes


def pack_fp4(codes, shape):
    """E2M1 codes one a byte (an array of uint8 or of ``float4_e2m1fn``) as a
    ``float4_e2m1fn_x2`` tensor of ``shape`` (the last dimension half theirs)."""
    bits = np.ascontiguousarray(codes).view(np.uint8) & 0x0F
    if bits.shape[-1] % 2:
        raise ValueError(f"packed FP4 needs an even last dimension, got shape {list(bits.shape)}")
    packed = (bits[..., 0::2] | (bits[..., 1::2] << 4)).astype(np.uint8)
    return torch.from_numpy(packed.copy()).view(_PACKED_FP4).reshape(shape)


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
    if name == "float4_e2m1fn" and _PACKED_FP4 is not None and array.ndim and \
            array.shape[-1] % 2 == 0:
        return pack_fp4(array, array.shape[:-1] + (array.shape[-1] // 2,))
    if name in ("float4_e2m1fn", "int4", "uint4"):  # no torch dtype computes on these
        return torch.from_numpy(array.astype(np.float32 if name == "float4_e2m1fn" else np.int8))
    if name in _types._ML_DTYPES_NAMES and hasattr(torch, name):  # ml_dtypes' floats
        target = getattr(torch, name)
        bits_numpy, _ = _BIT_PATTERN_FLOATS[target]
        return torch.from_numpy(np.ascontiguousarray(array).view(bits_numpy).copy()).view(target)
    return torch.as_tensor(array)


def to_storage(tensor, dtype):
    """A numpy array with ``tensor``'s values in the storage of pl dtype ``dtype`` (what
    TensorSpec.create_array makes), BF16 and the FP8s as their bit patterns."""
    tensor = tensor.detach().cpu().contiguous()
    if _PACKED_FP4 is not None and tensor.dtype == _PACKED_FP4:
        from pypto.runtime import _storage_dtype  # noqa: PLC0415

        return unpack_fp4(tensor).view(_storage_dtype(dtype))
    if tensor.dtype in _BIT_PATTERN_FLOATS:
        from pypto.runtime import _storage_dtype  # noqa: PLC0415

        bits_numpy, bits_torch = _BIT_PATTERN_FLOATS[tensor.dtype]
        return tensor.view(bits_torch).numpy().view(bits_numpy).view(_storage_dtype(dtype))
    return tensor.numpy()


def from_storage(array, like):
    """``array`` (driver storage) as a torch tensor of ``like``'s dtype and shape."""
    if _PACKED_FP4 is not None and like.dtype == _PACKED_FP4:
        return pack_fp4(array, like.shape)
    if like.dtype in _BIT_PATTERN_FLOATS:
        bits_numpy, _ = _BIT_PATTERN_FLOATS[like.dtype]
        bits = np.ascontiguousarray(array).view(bits_numpy)
        return torch.from_numpy(bits.copy()).view(like.dtype).reshape(like.shape)
    return torch.from_numpy(np.ascontiguousarray(array)).reshape(like.shape).to(like.dtype)


__all__ = ["torch_dtype", "pl_dtype", "as_torch", "to_storage", "from_storage", "pack_fp4",
           "unpack_fp4", "_types"]
