"""Types of values inside kernels.

Scalar dtypes are named as in NumPy and numba (``threadtile.float32``...). Inside a kernel a dtype
is also a cast: ``float32(x)``, like ``np.float32(x)``. On the host a dtype can be given wherever
NumPy accepts one (``shared.array(16, float32)`` or ``shared.array(16, np.float32)``).

As in numba, a dtype also spells the types of a signature (``jit(void(float32[:], int32))``):
subscripted with slices it is an array type (``float32[:, ::1]``: 2-d, C-contiguous), called
on types it is a :class:`Signature` whose return type it is (lang/signatures.py reads every
spelling of a signature).

Arithmetic promotion (see docs/language.md, "Numbers"):

- two integers: the wider one; mixed signedness gives the signed type of the larger width;
- an integer and a float: the float's type (as in C), so float32 code stays float32; except
  float16, which takes NumPy's rule (with int8 float16, with int16 float32, wider float64);
- two floats: the wider one; float16 with bfloat16 gives float32;
- a complex and a real: the complex type wide enough for the real's float (complex64 with
  float64 is complex128; with an integer, complex64 stays complex64, as float32 does);
- Python literals are *weak* (NumPy's NEP 50): ``x * 0.5`` keeps ``x``'s type, ``x * 1j``
  is complex64 for a float32 ``x``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "Type", "Scalar", "ArrayType", "TupleType", "TileType", "NoneType", "tfloat32",
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128", "void", "SCALARS",
    "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float4_e2m1fn", "NARROW_FLOATS",
    "scalar_of", "promote",
    "Signature", "spell", "is_type_like", "is_numba_type",
]


class Type:
    """Base of every kernel type; instances are immutable and compared by value."""


@dataclass(frozen=True)
class Scalar(Type):
    """A scalar dtype: its Python-facing name, its C++ spelling, its kind and width in bits."""

    name: str
    cname: str
    kind: str  # 'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex
    bits: int

    def __repr__(self) -> str:
        return self.name

    @property
    def __name__(self) -> str:
        """cuTile's name of the dtype (``bool_`` for bool)."""
        return "bool_" if self.name == "bool" else self.name

    def __call__(self, *args):
        """``float32(x)``: a cast, on the host as in a kernel (``np.float32(x)``).
        ``float32(float32, int32[:])``, ``void()``: the :class:`Signature` with these
        argument types that returns this type (numba's spelling)."""
        if len(args) == 1 and not is_type_like(args[0]) and self.kind != "v":
            value = args[0]
            if self.name == "bfloat16":
                return float(np.float32(value))
            return self.numpy.type(value)
        for a in args:
            if not is_type_like(a):
                raise TypeError(f"{self.name}({', '.join(map(repr, args))}): a signature's "
                                f"arguments are types (float32, int32[:]...), got {a!r}")
        return Signature(tuple(args), self)

    def __getitem__(self, dims) -> ArrayType:
        """``float32[:]`` (1-d, any strides), ``float32[::1]`` (1-d, contiguous),
        ``float32[:, ::1]`` (2-d, C-contiguous): an array type, as numba spells it."""
        dims = dims if isinstance(dims, tuple) else (dims,)
        if self.kind == "v" or self.name == "tfloat32" or not dims:
            raise TypeError(f"{self.name}[...]: no array holds {self.name}")
        unit = []
        for d in dims:
            if not isinstance(d, slice) or d.start is not None or d.stop is not None or \
                    d.step not in (None, 1):
                raise TypeError(f"{self.name}[{_dims_text(dims)}]: an array type's axes are "
                                "written ':' (any stride) or '::1' (contiguous), as in "
                                "float32[:, ::1]")
            unit.append(d.step == 1)
        if sum(unit) > 1 or (sum(unit) == 1 and not (unit[-1] or unit[0])):
            raise TypeError(f"{self.name}[{_dims_text(dims)}]: '::1' marks the contiguous axis, "
                            "the last one (C order) or the first one (Fortran order)")
        # Fortran order has no layout of its own here: strided ("A") arrays include it
        return ArrayType(self, len(dims), "C" if unit[-1] else "A")

    @property
    def numpy(self) -> np.dtype:
        if self.name in NARROW_FLOATS:
            # stored as their bit patterns (NumPy has no 8-bit floats; ml_dtypes' are read too)
            return np.dtype(np.uint8)
        if self.name == "bfloat16":
            try:
                import ml_dtypes  # noqa: PLC0415  (optional; only bfloat16 NumPy arrays need it)
                return np.dtype(ml_dtypes.bfloat16)
            except ImportError:
                return np.dtype(np.uint16)  # same bits; arithmetic happens through float32
        return np.dtype({"bool": np.bool_}.get(self.name, self.name))

    @property
    def itemsize(self) -> int:
        return max(self.bits // 8, 1)

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def restricted(self) -> bool:
        """A float that tiles hold and convert but do no arithmetic on (cuTile's restricted
        floats): tfloat32, the 8-bit floats and float4_e2m1fn."""
        return self.name == "tfloat32" or self.name in NARROW_FLOATS

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def is_signed(self) -> bool:
        return self.kind in "ifc"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def real_type(self) -> Scalar:
        """The type of a complex number's parts (float32 for complex64); a real type's own."""
        return (float32 if self.bits == 64 else float64) if self.kind == "c" else self


bool_ = Scalar("bool", "bool", "b", 8)
int8 = Scalar("int8", "int8_t", "i", 8)
int16 = Scalar("int16", "int16_t", "i", 16)
int32 = Scalar("int32", "int32_t", "i", 32)
int64 = Scalar("int64", "int64_t", "i", 64)
uint8 = Scalar("uint8", "uint8_t", "u", 8)
uint16 = Scalar("uint16", "uint16_t", "u", 16)
uint32 = Scalar("uint32", "uint32_t", "u", 32)
uint64 = Scalar("uint64", "uint64_t", "u", 64)
float16 = Scalar("float16", "__half", "f", 16)
bfloat16 = Scalar("bfloat16", "__nv_bfloat16", "f", 16)
float32 = Scalar("float32", "float", "f", 32)
float64 = Scalar("float64", "double", "f", 64)
# complex numbers: two floats (threadtile.h's tt::complex<T>, laid out as NumPy's complex)
complex64 = Scalar("complex64", "tt::complex<float>", "c", 64)
complex128 = Scalar("complex128", "tt::complex<double>", "c", 128)
void = Scalar("void", "void", "v", 0)
# TensorFloat-32: a float32 rounded to 10 mantissa bits, what tensor cores read for float32
# inputs. Only tiles have it (``x.astype(tfloat32)`` before ``mma``); no array holds it.
tfloat32 = Scalar("tfloat32", "tt::tile::tf32", "f", 32)
# The narrow floats of tensor cores and block scaling (cuTile's restricted floats; lang/minifloat.py
# has their formats): arrays hold the 8-bit ones (torch.float8_e4m3fn...), one byte each;
# float4_e2m1fn only tiles hold (two to a byte through pack_to_bytes). Tiles convert them and
# feed them to mma; arithmetic on them is an error, as in cuTile.
float8_e4m3fn = Scalar("float8_e4m3fn", "__nv_fp8_e4m3", "f", 8)
float8_e5m2 = Scalar("float8_e5m2", "__nv_fp8_e5m2", "f", 8)
float8_e8m0fnu = Scalar("float8_e8m0fnu", "__nv_fp8_e8m0", "f", 8)
float4_e2m1fn = Scalar("float4_e2m1fn", "__nv_fp4_e2m1", "f", 4)
NARROW_FLOATS = frozenset({"float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float4_e2m1fn"})

SCALARS: dict[str, Scalar] = {
    t.name: t for t in (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                        float16, bfloat16, float32, float64, complex64, complex128,
                        float8_e4m3fn, float8_e5m2, float8_e8m0fnu)
}
_ALIASES = {"bool_": bool_, "float": float64, "int": int64, "half": float16, "double": float64,
            "intp": int64, "uintp": uint64, "byte": int8, "float_": float64,
            "complex": complex128, "complex_": complex128, "c8": complex64, "c16": complex128}


def scalar_of(obj) -> Scalar | None:
    """The Scalar for ``obj`` (a Scalar, a NumPy dtype or type, a torch dtype, a name, one of
    numba's scalar types), or None."""
    if isinstance(obj, Scalar):
        return obj
    if obj is bool:
        return bool_
    if obj is int:
        return int64
    if obj is float:
        return float64
    if obj is complex:
        return complex128
    if isinstance(obj, str):
        return SCALARS.get(obj) or _ALIASES.get(obj)
    if is_numba_type(obj):  # numba.cuda.types.float32...: by what it prints
        return SCALARS.get(str(obj)) or (bfloat16 if str(obj) == "__nv_bfloat16" else None)
    mod = type(obj).__module__
    if mod.startswith("torch"):
        return SCALARS.get(str(obj).removeprefix("torch.")) or _ALIASES.get(
            str(obj).removeprefix("torch."))
    try:
        dt = np.dtype(obj)
    except TypeError:
        return None
    if dt.name == "bfloat16":
        return bfloat16
    if dt.name in NARROW_FLOATS:  # ml_dtypes' float8_e4m3fn...
        return SCALARS.get(dt.name)
    if not dt.isnative:  # '>f4' on a little-endian machine: kernels read native order only
        return None
    return SCALARS.get(dt.name)


def promote(a: Scalar, b: Scalar) -> Scalar:
    """The type of ``a op b`` for two non-weak scalars (the rules in this module's docstring)."""
    if a == b:
        return a
    if a.kind == "b":
        return b if b.kind != "b" else a
    if b.kind == "b":
        return a
    if a.is_complex or b.is_complex:
        bits = max(x.real_type.bits if x.kind in "cf" else 0 for x in (a, b))
        return complex128 if bits > 32 else complex64
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            if a.bits == b.bits:  # float16 with bfloat16
                return float32
            return a if a.bits > b.bits else b
        f, i = (a, b) if a.is_float else (b, a)
        if f == float16 and i.kind != "b":
            # NumPy's (and numba's) rule for half precision: the float that holds the
            # integer's range (int16 in float16 would lose every value above 2048)
            return float16 if i.bits <= 8 else float32 if i.bits <= 16 else float64
        return f
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    signed, unsigned = (a, b) if a.kind == "i" else (b, a)
    if signed.bits > unsigned.bits:  # int32 with uint16: int32 holds both
        return signed
    # int32 with uint32 needs int64 to hold both (NumPy's rule); nothing holds int64 and uint64
    return {8: int16, 16: int32, 32: int64, 64: int64}[unsigned.bits]


@dataclass(frozen=True)
class ArrayType(Type):
    """An N-d array: element dtype, rank, memory space and whether its last axis is contiguous.

    ``layout`` is ``"C"`` when the whole array is C-contiguous (indexing needs no strides) and
    ``"A"`` for any strided layout. ``space`` is one of global, shared, local, const.
    """

    dtype: Scalar
    ndim: int
    layout: str = "A"
    space: str = "global"
    readonly: bool = False

    def __repr__(self) -> str:
        return f"{self.space} {self.dtype}[{', '.join(':' * self.ndim)}]{self.layout}"


def _dims_text(dims: tuple) -> str:
    return ", ".join(":" if d.step is None else "::1" if isinstance(d, slice) and d.step == 1
                     else repr(d) for d in dims)


@dataclass(frozen=True)
class TileType(Type):
    """A tile: a block-collective value of ``dtype`` with a compile-time ``shape`` (each axis a
    power of two; ``()`` for a 0-d tile). See docs/tiles.md for how tiles map to threads."""

    dtype: Scalar
    shape: tuple[int, ...]
    # how the CUDA backend spreads the tile over threads; chosen by ir/passes.py after lowering
    # ("blocked": tile.h's Tile; "mma": tensor-core accumulator fragments, tile.h's MmaTile).
    # The semantics do not depend on it: the simulator ignores it.
    layout: str = "blocked"

    def __repr__(self) -> str:
        lay = "" if self.layout == "blocked" else f", {self.layout}"
        return f"tile<{self.dtype}, ({', '.join(map(str, self.shape))}){lay}>"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class TupleType(Type):
    """A tuple of kernel values: a tuple argument, what a device function returns. ``names``
    are a namedtuple's field names (empty for a plain tuple)."""

    items: tuple[Type, ...]
    names: tuple[str, ...] = ()

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={t}" for n, t in zip(self.names, self.items)) if self.names \
            else ", ".join(map(repr, self.items)) + ("," if len(self.items) == 1 else "")
        return f"({inner})"


@dataclass(frozen=True)
class _NoneType(Type):
    def __repr__(self) -> str:
        return "none"


NoneType = _NoneType()


@dataclass(frozen=True)
class Signature:
    """The types a kernel or device function is compiled for (``jit(signature)``): ``args``,
    and ``return_type`` (None where it is left to inference; ``void`` for a kernel).

    Made by calling a dtype on types (``void(float32[:], int32)``); its arguments may still be
    numba's type objects there: ``lang.signatures.signature`` reads every spelling into one with
    threadtile types only."""

    args: tuple
    return_type: object = None

    def __repr__(self) -> str:
        return f"threadtile.Signature({self})"

    def __str__(self) -> str:
        args = ", ".join(spell(a) if isinstance(a, Type) else str(a) for a in self.args)
        if self.return_type is None:
            return f"({args})"
        r = self.return_type
        return f"{spell(r) if isinstance(r, Type) else r}({args})"


def is_type_like(obj) -> bool:
    """Whether ``obj`` may stand in a signature: a threadtile type or one of numba's type
    objects (read by what they print; threadtile never imports numba)."""
    return isinstance(obj, Type) or is_numba_type(obj)


def is_numba_type(obj) -> bool:
    """Whether ``obj`` is one of numba's type objects (an instance of its ``Type`` class)."""
    return any(c.__name__ == "Type" and (c.__module__ or "").startswith("numba")
               for c in type(obj).__mro__)


def spell(t: Type) -> str:
    """``t`` as a signature writes it: ``int32``, ``float32[:, ::1]``, ``Tuple(int32, float32)``."""
    if isinstance(t, Scalar):
        return "void" if t.kind == "v" else t.name
    if isinstance(t, ArrayType):
        dims = [":"] * t.ndim
        if t.layout == "C":
            dims[-1] = "::1"
        space = "" if t.space == "global" else f"{t.space} "
        return f"{space}{'readonly ' if t.readonly else ''}{t.dtype.name}[{', '.join(dims)}]"
    if isinstance(t, TupleType):
        return f"Tuple({', '.join(spell(i) for i in t.items)})"
    return repr(t)
