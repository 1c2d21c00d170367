"""The kernel argument ABI, as data: what each kind of parameter is in memory, how a parameter
list is laid out, and how a launch argument (an :class:`~threadtile.runtime.arrays.ArgInfo`)
becomes the packed values of its parameter, with the checks and the errors users see. Every
launcher packs through this module: the general path of ``CompiledKernel.launch``, its
steady-state launchers (the C ``_fastlaunch.Launcher`` is built from :func:`launcher_specs`,
and its Python twin packs through :func:`spec_values`), ``RawKernel``, and the simulator's
argument checks.

Parameter kinds
---------------
A kernel is ``extern "C" __global__`` with one parameter per runtime argument, then the hidden
ones:

- an **array by value** (:class:`~threadtile.lang.types.ArrayType`; what
  ``backends/cuda/emit.py`` generates): ``{T* data; int64_t shape[N]; int64_t strides[N];}``
  with strides in elements, 8-byte aligned, 8 + 16*N bytes. Packed from ``ArgInfo.flat``,
  ``(ptr, *shape, *strides)``;
- a **scalar** (:class:`~threadtile.lang.types.Scalar`) as its C type with natural size and
  alignment: bool 1 byte, (b)float16 2, 32-bit types 4, 64-bit types 8. A bfloat16 is packed
  as its 16 bits;
- a **tuple** (:class:`~threadtile.lang.types.TupleType`, a tuple or namedtuple argument) as
  a C struct of its items (``tt_t2_i64_f64``: ``backends/cuda/cxx.py``), each at its natural
  alignment, the struct padded to its widest item's alignment; an empty tuple is 1 byte.
  Packed from ``ArgInfo.flat``, the items' values in order;
- a **bare pointer** (:data:`POINTER`), as ``RawKernel``'s hand-written kernels take an array
  (``float* x``): the 8-byte data address;
- a **tensor map** (:class:`~threadtile.runtime.tensormaps.TensorMapParam`), a hidden
  ``__grid_constant__ CUtensorMap`` after the arguments: 128 bytes, 64-byte aligned.

Layout
------
:func:`param_layout` gives a parameter list one ``struct.Struct`` (little-endian, alignment
padding as ``x`` bytes, no tail padding) and each parameter's offset and size. A launcher packs
into one buffer with it and hands ``cuLaunchKernel`` an array of pointers to each parameter's
offset (``kernelParams``): the driver reads each parameter's size from the kernel image, so
nothing is left to the ``extra``/``CU_LAUNCH_PARAM_BUFFER_SIZE`` convention. Where the driver's
offsets are known (``cuKernelGetParamInfo``, CUDA >= 12.4) they are checked on load
(:func:`driver_layout`): an ABI drift between the code generator and this packer is an error at
load instead of garbage in a kernel. The one known difference is adopted: the compiler aligns
a tensor map's *address* in the constant bank (64 bytes from a bank base of its own), not its
offset. ``RawKernel`` lays its parameters out at the driver's offsets (:func:`raw_params`).

Arguments
---------
:func:`values` checks each argument against its parameter and returns the packed values: an
array parameter takes an array of its dtype and rank (a C-contiguous one where the parameter
is ``layout == "C"``), a scalar parameter a scalar that converts without losing its meaning
(:func:`convert_scalar`: a Python int to an int32, an int to a float; not a float to an int).
Failures are ``TypeError`` naming the kernel and the argument; a value that does not fit its
C type is an ``OverflowError`` (:func:`pack_error`).

Steady-state specs
------------------
``CompiledKernel.direct`` binds a launcher to the argument kinds of one launch (torch tensors
and Python int/float/bool). :func:`launcher_specs` says what it checks and packs, one spec per
parameter: :class:`ArraySpec` (the exact tensor type, the dtype by identity, rank,
contiguity, at the layout's offset) or :class:`ScalarSpec` (``q`` int64, ``d`` double, ``?``
bool). The C launcher is built from these tuples; :func:`spec_values` is the same checks in
Python, and packs the same bytes through the layout's struct.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import NamedTuple

from ..errors import ThreadtileError
from ..lang.types import (
    ArrayType,
    Scalar,
    TupleType,
    bool_,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
)
from . import tensormaps
from .arrays import bf16_bits
from .tensormaps import TensorMapParam

__all__ = ["POINTER", "Pointer", "TensorMapParam", "Param", "ParamLayout", "param_layout",
           "param_format", "struct_code", "driver_layout", "values", "check", "check_count",
           "convert_scalar", "pack_error", "raw_params", "ArraySpec", "ScalarSpec", "ConstSpec",
           "launcher_specs", "spec_values"]


class Pointer:
    """The bare-pointer parameter kind: an array passed as its 8-byte data address."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "pointer"


POINTER = Pointer()

# a kernel parameter: one of the kinds above
Param = ArrayType | Scalar | TupleType | Pointer | TensorMapParam


# ----------------------------------------------------------------------------------------------
# Layout
# ----------------------------------------------------------------------------------------------

_CODES = {"bool": "?", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i",
          "uint32": "I", "int64": "q", "uint64": "Q", "float16": "e",
          "bfloat16": "H",  # the raw bits; convert_scalar makes them
          "float32": "f", "float64": "d"}


def struct_code(t: Scalar) -> str:
    """The ``struct`` format character for scalar type ``t``."""
    try:
        return _CODES[t.name]
    except KeyError:
        raise TypeError(f"kernels cannot take a {t} parameter") from None


def param_format(p: Param) -> tuple[str, int, int]:
    """(``struct`` format, size, alignment) of one parameter."""
    if isinstance(p, ArrayType):
        return "Q" + "q" * (2 * p.ndim), 8 + 16 * p.ndim, 8
    if isinstance(p, Scalar) and p.is_complex:  # two floats, aligned as the pair (complex.h)
        return ("2f", 8, 8) if p.bits == 64 else ("2d", 16, 16)
    if isinstance(p, Scalar):
        c = struct_code(p)
        n = struct.calcsize("<" + c)
        return c, n, n
    if p is POINTER:
        return "Q", 8, 8
    if isinstance(p, TupleType):
        return _struct_format(p)
    if isinstance(p, TensorMapParam):
        return f"{tensormaps.SIZE}s", tensormaps.SIZE, tensormaps.ALIGN
    raise TypeError(f"kernel parameters are arrays, scalars, pointers or tensor maps, got {p!r}")


def _struct_format(t: TupleType) -> tuple[str, int, int]:
    """A tuple parameter is a C struct of its items: each at its natural alignment, the
    struct aligned as its widest item and padded to a multiple of that (an empty struct is
    one byte, as in C++)."""
    if not t.items:
        return "x", 1, 1
    fmt, off, align = [], 0, 1
    for x in t.items:
        f, size, a = param_format(x)
        pad = -off % a
        fmt.append(f"{pad}x" * bool(pad) + f)
        off += pad + size
        align = max(align, a)
    tail = -off % align
    return "".join(fmt) + f"{tail}x" * bool(tail), off + tail, align


class ParamLayout(NamedTuple):
    """A parameter list's packing: the ``struct.Struct`` (little-endian, explicit padding) and
    each parameter's byte offset and size."""

    struct: struct.Struct
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        return self.struct.size


def param_layout(params: Sequence[Param], at: Sequence[int] | None = None) -> ParamLayout:
    """The :class:`ParamLayout` of ``params``; ``at`` gives each parameter's offset where the
    driver reports them, else each is placed at its natural alignment."""
    fmt, offsets, sizes, off = ["<"], [], [], 0
    for i, p in enumerate(params):
        f, size, align = param_format(p)
        pad = -off % align if at is None else at[i] - off
        if pad < 0:
            raise ThreadtileError(f"parameter {i} overlaps the one before it at offset {off}")
        if pad:
            fmt.append(f"{pad}x")
            off += pad
        offsets.append(off)
        sizes.append(size)
        fmt.append(f)
        off += size
    return ParamLayout(struct.Struct("".join(fmt)), tuple(offsets), tuple(sizes))


def driver_layout(entry: str, params: Sequence[Param], layout: ParamLayout, info: list | None,
                  nargs: int) -> ParamLayout:
    """The layout to pack with once the driver has said where it reads each parameter
    (``info``: ``[(offset, size)]``, or None when it cannot tell): ``layout`` when they agree,
    a layout at the driver's offsets when only the hidden parameters after the ``nargs``
    arguments moved (tensor maps), else a :class:`ThreadtileError`."""
    if info is None:
        return layout
    mine = list(zip(layout.offsets, layout.sizes))
    if info == mine:
        return layout
    if len(info) == len(mine) and len(mine) > nargs and info[:nargs] == mine[:nargs] and \
            [n for _o, n in info] == list(layout.sizes):
        return param_layout(params, [o for o, _n in info])
    raise ThreadtileError(
        f"kernel {entry!r}: the driver's parameter layout {info} (offset, size) differs from "
        f"the one threadtile packs {mine} for {list(params)}; this is a threadtile bug "
        "(generated code and launcher disagree)")


# ----------------------------------------------------------------------------------------------
# Arguments
# ----------------------------------------------------------------------------------------------

def _where(entry: str, i: int) -> str:
    return f"kernel {entry!r} argument {i}"


def _s(n: int) -> str:
    return "s" if n != 1 else ""


def check_count(entry: str, n: int, got: int) -> None:
    """TypeError unless a kernel of ``n`` parameters was given ``got`` arguments."""
    if got != n:
        raise TypeError(f"kernel {entry!r} takes {n} argument{_s(n)}, got {got}")


def convert_scalar(info, p: Scalar, where: str) -> bool | int | float | complex:
    """The packable value of scalar argument ``info`` for parameter type ``p``: a bool takes a
    bool, an integer an int or bool, a float any number; anything else is a TypeError."""
    src = info.dtype
    ok = (p.kind == "b" and src.kind == "b") or (
        p.kind in "iu" and src.kind in "biu") or (p.kind == "f" and src.kind in "biuf") or (
        p.kind == "c" and src.kind in "biufc")
    if not ok:
        raise TypeError(f"{where} must be a {p} scalar, got {info.value!r} ({src}): "
                        f"a {src} does not convert to {p} without losing its meaning")
    v = info.value
    if p.name == "bfloat16":
        # a bfloat16 argument is described with its bits already
        return info.flat[0] if src.name == "bfloat16" else bf16_bits(float(v))
    if p.kind == "f":
        return float(v)
    if p.kind == "c":
        return complex(v)
    if p.kind == "b":
        return bool(v)
    return int(v)


def _param_values(p, info, entry: str, i: int):
    """The packed values of argument ``info`` for parameter ``p`` (a sequence)."""
    if isinstance(p, ArrayType):
        if info.kind != "array":
            raise TypeError(f"{_where(entry, i)} must be an array of {p.dtype} with {p.ndim} "
                            f"dimension{_s(p.ndim)}, got a scalar ({info.dtype})")
        if info.dtype != p.dtype or info.ndim != p.ndim:
            raise TypeError(f"{_where(entry, i)} must be a {p.ndim}-d array of {p.dtype}, got "
                            f"a {info.ndim}-d array of {info.dtype}")
        if p.layout == "C" and info.layout != "C":
            raise TypeError(f"{_where(entry, i)} must be C-contiguous (the kernel was compiled "
                            "for a contiguous array); pass .contiguous() / "
                            "np.ascontiguousarray(), or compile for strided arrays")
        return info.flat
    if isinstance(p, Scalar):
        if info.kind != "scalar":
            raise TypeError(f"{_where(entry, i)} must be a {p} scalar, got a {info.ndim}-d "
                            f"array of {info.dtype}")
        v = convert_scalar(info, p, _where(entry, i))
        return (v.real, v.imag) if p.is_complex else (v,)
    if isinstance(p, TupleType):
        if info.kind != "tuple" or len(info.value) != len(p.items):
            raise TypeError(f"{_where(entry, i)} must be a tuple of {len(p.items)} "
                            f"item{_s(len(p.items))} ({p}), got {_kind(info)}")
        vals: list = []
        for x, item in zip(p.items, info.value):
            vals += _param_values(x, item, entry, i)
        return vals
    if p is POINTER:
        if info.kind != "array":
            raise TypeError(f"{_where(entry, i)} must be an array (passed as a pointer), got a "
                            f"scalar ({info.value!r})")
        return (info.ptr,)
    raise TypeError(f"kernel {entry!r} parameter {i}: {p!r} is not an argument's parameter")


def _kind(info) -> str:
    if info.kind == "tuple":
        return f"a tuple of {len(info.value)}"
    if info.kind == "array":
        return f"a {info.ndim}-d array of {info.dtype}"
    return f"a {info.dtype} scalar"


def values(entry: str, params: Sequence[Param], infos: Sequence) -> list:
    """Check every argument against its parameter and return the packed values of the whole
    list, converting what converts safely. Raises TypeError naming the argument otherwise."""
    check_count(entry, len(params), len(infos))
    vals: list = []
    for i, (info, p) in enumerate(zip(infos, params)):
        vals += _param_values(p, info, entry, i)
    return vals


def check(entry: str, params: Sequence[Param], infos: Sequence) -> None:
    """The checks of :func:`values`, for a launch that packs nothing (the simulator)."""
    values(entry, params, infos)


def pack_error(entry: str, params: Sequence[Param], infos: Sequence,
               e: Exception) -> Exception:
    """The error to raise when ``struct`` refused the values of ``infos`` (``e``): an
    OverflowError naming the first scalar that does not fit its parameter."""
    for i, (info, p) in enumerate(zip(infos, params)):
        if info.kind == "scalar" and isinstance(p, Scalar):
            try:
                struct.pack("<" + struct_code(p), convert_scalar(info, p, _where(entry, i)))
            except (struct.error, TypeError):
                return OverflowError(f"{_where(entry, i)}: {info.value!r} does not fit in {p}")
    return TypeError(f"kernel {entry!r}: could not pack the arguments ({e})")


# ----------------------------------------------------------------------------------------------
# RawKernel: parameters from the driver's sizes
# ----------------------------------------------------------------------------------------------

_INTS = {1: int8, 2: int16, 4: int32, 8: int64}
_FLOATS = {4: float32, 8: float64}
_WEAK = (int, float, bool)  # Python numbers adapt to their parameter's size


def raw_params(entry: str, info: list | None, infos: Sequence) -> tuple[list, list | None]:
    """The parameter list of a hand-written kernel for these arguments, and the offsets to lay
    it out at (``info``: the driver's ``[(offset, size)]``, or None when it cannot tell). An
    array argument is a :data:`POINTER`; a Python number takes the scalar type of its
    parameter's size, a NumPy scalar must be of that size. Raises TypeError otherwise."""
    n = len(infos)
    if info is not None:
        check_count(entry, len(info), n)
    params = []
    for i, a in enumerate(infos):
        weak = type(a.value) in _WEAK
        if info is not None:
            size = info[i][1]
        elif a.kind == "array":
            size = 8
        elif weak:
            raise TypeError(f"{_where(entry, i)}: this driver does not report kernel parameter "
                            "sizes (CUDA < 12.4), so a Python int or float is ambiguous; pass a "
                            "NumPy scalar such as np.int32(n) or np.float32(x)")
        else:
            size = a.dtype.itemsize
        if a.kind == "array":
            if size != 8:
                raise TypeError(f"{_where(entry, i)} is an array (passed as an 8-byte pointer), "
                                f"but the kernel's parameter {i} is {size} bytes")
            params.append(POINTER)
        else:
            params.append(_raw_scalar(a, size, entry, i, weak))
    return params, (None if info is None else [o for o, _n in info])


def _raw_scalar(a, size: int, entry: str, i: int, weak: bool) -> Scalar:
    s = a.dtype
    if weak:
        if s.kind == "b" and size == 1:
            return bool_
        if s.kind in "bi" and size in _INTS:
            return _INTS[size]
        if s.kind == "f" and size in _FLOATS:
            return _FLOATS[size]
        kind = {"b": "a bool", "i": "an int", "f": "a float"}[s.kind]
        raise TypeError(f"{_where(entry, i)} is {kind} ({a.value!r}), but the kernel's "
                        f"parameter is {size} bytes; pass a NumPy scalar of the parameter's type")
    if s.itemsize != size:
        raise TypeError(f"{_where(entry, i)} is a {s} ({s.itemsize} bytes), but the kernel's "
                        f"parameter is {size} bytes")
    return s


# ----------------------------------------------------------------------------------------------
# Steady-state specs
# ----------------------------------------------------------------------------------------------

class ArraySpec(NamedTuple):
    """An array parameter of a steady-state launcher: arguments of exactly ``type``, whose
    ``dtype`` is this object, of rank ``ndim``, contiguous exactly when ``contiguous`` (a
    layout-"C" parameter), packed at ``offset``."""

    kind: str  # "array"
    offset: int
    ndim: int
    contiguous: bool
    type: type
    dtype: object
    narrow: bool = False  # extents and strides fit int32 (a tile kernel's array indexed so)


class ConstSpec(NamedTuple):
    """A tile kernel's ``Constant`` argument, compiled into the kernel: arguments of exactly
    ``type`` equal to ``value``; it packs nothing."""

    kind: str  # "const"
    offset: int  # 0
    ndim: int  # 0
    contiguous: bool  # False
    type: type
    value: object


_CONST_TYPES = (int, float, bool, str)


class ScalarSpec(NamedTuple):
    """A scalar parameter of a steady-state launcher: ``code`` ``q`` (a Python int as int64),
    ``d`` (a float as double) or ``?`` (a bool), packed at ``offset``."""

    code: str
    offset: int


# the scalar parameters a steady-state launcher packs, by the Python type it accepts for them
_SPEC_SCALARS = {"int64": ("q", int), "float64": ("d", float), "bool": ("?", bool)}
_SPEC_PYTYPES = {"q": int, "d": float, "?": bool}


def launcher_specs(params: Sequence[Param], layout: ParamLayout, args: tuple,
                   infos: Sequence, consts: dict | None = None,
                   narrow: Sequence[bool] = ()) -> tuple[tuple, int] | None:
    """(specs, device) of a steady-state launcher for arguments of the kinds of ``args``
    (described as ``infos``, which a launch accepted), or None where it does not apply: it
    takes torch tensors on one device for array parameters and Python int/float/bool for
    int64/float64/bool parameters, nothing else. ``consts``: a tile kernel's Constant
    arguments by their position among all of its arguments (int, float, bool or str values:
    ConstSpecs there); ``narrow``: per parameter, whether an array's extents and strides must
    fit int32."""
    if len(args) != len(params) or not args:
        return None
    dev = infos[0].device if infos[0].kind == "array" else -1
    specs = []
    for a, info, p, off in zip(args, infos, params, layout.offsets):
        if isinstance(p, ArrayType):
            if info.framework != "torch" or type(a).__name__ != "Tensor" or info.device != dev:
                return None
            specs.append(ArraySpec("array", off, p.ndim, p.layout == "C", type(a), a.dtype,
                                   bool(narrow) and narrow[len(specs)]))
        elif isinstance(p, Scalar) and p.name in _SPEC_SCALARS:
            code, py = _SPEC_SCALARS[p.name]
            if type(a) is not py:
                return None
            specs.append(ScalarSpec(code, off))
        else:
            return None
    if dev < 0:
        return None
    for pos in sorted(consts or ()):
        v = consts[pos]
        if type(v) not in _CONST_TYPES or pos > len(specs):
            return None
        specs.insert(pos, ConstSpec("const", 0, 0, False, type(v), v))
    return tuple(specs), dev


def spec_values(specs: tuple, args: tuple, dev: int) -> list | None:
    """What a steady-state launcher packs for ``args``, in parameter order (the layout's struct
    packs them), or None when an argument is not exactly of its spec's kind: the checks of the
    C launcher (``_fastlaunch.c``), which declines the same arguments (it makes every check
    before reading any value; this reads each argument once checked, which is cheaper in
    Python). A contiguous array of rank 1 to 3 takes its strides from its shape (which is what
    its layout means, also when an axis of length 1 has an odd stride), the others from
    ``stride()``. Plain tuples for ``specs`` unpack faster than the named ones."""
    if not isinstance(args, tuple) or len(args) != len(specs):
        return None
    vals: list = []
    for s, a in zip(specs, args):
        if s[0] != "array":
            if s[0] == "const":
                if type(a) is not s[4] or a != s[5]:
                    return None
                continue
            if type(a) is not _SPEC_PYTYPES[s[0]]:
                return None
            vals.append(a)
            continue
        _, _, n, contiguous, tp, dtype, narrow = s
        if type(a) is not tp or a.dtype is not dtype or a.get_device() != dev:
            return None
        shape = a.shape
        if not isinstance(shape, tuple) or len(shape) != n or \
                (not a.is_contiguous()) is contiguous:
            return None
        vals.append(a.data_ptr())
        vals += shape
        at = len(vals)
        if contiguous and 1 <= n <= 3:
            vals += (1,) if n == 1 else (shape[1], 1) if n == 2 else (
                shape[1] * shape[2], shape[2], 1)
        else:
            vals += a.stride()
        if narrow and any(not -2**31 <= v < 2**31 for v in vals[at - n:]):
            return None
    return vals
