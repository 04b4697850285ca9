"""Helpers shared by the `hccl` module's tests: the dtypes, the inputs each rank makes (a
function of its rank, so every rank can compute every other rank's input and the exact
expected result), and the places a tensor can live in:

- ``host``: a host numpy array; for bfloat16, which numpy lacks, a host array handed over
  through ``__dlpack__`` (made here with ctypes),
- ``dlpack``: that ``__dlpack__`` array for every dtype,
- ``torch_cpu``: a torch CPU tensor (when torch imports),
- ``npu``: a torch_npu tensor on this process's NPU (when torch_npu imports and works).

Values are small integers, so sums and products are exact in every dtype (bfloat16 included)
and no integer overflows.
"""

import ctypes
import os

import numpy as np

DTYPES = [
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64",
]
OPS = ["Sum", "Prod", "Max", "Min"]

# CANN's data type × reduce op support (HCCL's CheckDataType and CheckReduceOp): the unsigned
# 8-, 16- and 32-bit types are moved but never reduced, and PROD is refused on int16 and
# bfloat16. A refused reduction is HCCL_E_NOT_SUPPORT on every rank, before any data moves.
NOT_REDUCED = {"uint8", "uint16", "uint32"}
NO_PROD = {"int16", "bfloat16"}


def reduction_supported(dtype, op):
    return dtype not in NOT_REDUCED and not (op == "Prod" and dtype in NO_PROD)


def values(rank, count, dtype, op="Sum", salt=0):
    """Rank `rank`'s input: `count` small integers (as float64), negative ones only for signed
    dtypes, and only 1, 2 (and -1) for products."""
    i = np.arange(count, dtype=np.int64)
    signed = not dtype.startswith("uint")
    if op == "Prod":
        v = np.where((rank + i + salt) % 4 == 0, 2, 1)
        if signed:
            v = np.where((rank * 3 + i + salt) % 5 == 1, -v, v)
    else:
        v = (rank * 7 + i * 3 + salt) % 6 + 1
        if signed:
            v = v - 3
    return v.astype(np.float64)


def reduce_np(arrays, op):
    """The element-wise reduction of `arrays` (float64 values; exact for these inputs)."""
    s = np.stack(arrays)
    return {"Sum": s.sum(0), "Prod": s.prod(0), "Max": s.max(0), "Min": s.min(0)}[op]


# --- bfloat16 through DLPack -------------------------------------------------------------

class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


class _ManagedVersioned(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", _DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


_LIVE = {}  # address of an exported struct -> what must outlive it until the deleter runs
DELETED = []  # addresses whose deleter ran (tests check that consumers call it)


@_DELETER
def _delete(addr):
    DELETED.append(addr)
    _LIVE.pop(addr, None)


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class DLArray:
    """A host array exported only through ``__dlpack__`` (legacy or versioned capsule), with
    its own dtype code: bfloat16 (code 4) is the reason it exists. ``strides`` may describe a
    non-contiguous view of the same memory, and ``readonly`` sets DLPack 1.0's read-only flag."""

    def __init__(self, bits, code, nbits, versioned=False, strides=None, shape=None, readonly=False):
        self.bits = np.ascontiguousarray(bits)
        self.code, self.nbits, self.versioned = code, nbits, versioned
        self.shape = list(shape if shape is not None else self.bits.shape)
        self.strides = strides
        self.readonly = readonly

    @classmethod
    def bfloat16(cls, vals, **kw):
        f = np.asarray(vals, dtype=np.float32)
        return cls((f.view(np.uint32) >> 16).astype(np.uint16), 4, 16, **kw)

    def to_float(self):
        return (self.bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        shape = (ctypes.c_int64 * len(self.shape))(*self.shape)
        strides = None
        if self.strides is not None:
            strides = (ctypes.c_int64 * len(self.strides))(*self.strides)
        t = _DLTensor(self.bits.ctypes.data, 1, 0, len(self.shape), self.code, self.nbits, 1,
                      shape, strides, 0)
        versioned = self.versioned and max_version is not None and tuple(max_version) >= (1, 0)
        if versioned:
            m = _ManagedVersioned(1, 0, None, _delete, 1 if self.readonly else 0, t)
            name = b"dltensor_versioned"
        else:
            m = _Managed(t, None, _delete)
            name = b"dltensor"
        addr = ctypes.addressof(m)
        _LIVE[addr] = (m, shape, strides, self.bits)
        return _capsule_new(addr, name, None)


# --- places ------------------------------------------------------------------------------

def torch_or_none():
    try:
        import torch
        return torch
    except Exception:
        return None


_NPU = None


def npu_works():
    """Whether torch_npu imports and a tensor round-trips through this rank's NPU."""
    global _NPU
    if _NPU is None:
        try:
            import torch
            import torch_npu  # noqa: F401
            import hccl
            torch.npu.set_device(hccl.get_device())
            _NPU = bool((torch.ones(2).npu().cpu() == 1).all())
        except Exception as e:  # reported by the fixture
            _NPU = e
    return _NPU is True


TORCH_DT = {
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8",
    "uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "float16": "float16",
    "bfloat16": "bfloat16", "float32": "float32", "float64": "float64",
}


def make(place, vals, dtype):
    """A tensor of `dtype` holding `vals` (float64 values) in `place`."""
    vals = np.asarray(vals, dtype=np.float64)
    if place == "host" and dtype != "bfloat16":
        return vals.astype(dtype)
    if place in ("host", "dlpack"):
        if dtype == "bfloat16":
            return DLArray.bfloat16(vals, versioned=True)
        a = vals.astype(dtype)
        kind = {"i": 0, "u": 1, "f": 2}[a.dtype.kind]
        return DLArray(a, kind, a.dtype.itemsize * 8, versioned=True)
    import torch
    t = torch.tensor(vals, dtype=torch.float64).to(getattr(torch, TORCH_DT[dtype]))
    return t if place == "torch_cpu" else t.npu()


def read(obj):
    """The values of a tensor made by `make`, as float64 numpy."""
    if isinstance(obj, np.ndarray):
        return obj.astype(np.float64)
    if isinstance(obj, DLArray):
        if obj.code == 4:
            return obj.to_float()
        return obj.bits.astype(np.float64)
    return obj.cpu().to(dtype=__import__("torch").float64).numpy()
