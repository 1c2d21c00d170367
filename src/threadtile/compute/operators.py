"""The operators of ``threadtile.compute``: cuda.compute's ``OpKind`` built-ins and Python
functions, each spelled twice, as a C++ functor for CUB and as Python for the host path.

A Python operator is compiled by threadtile's own compiler (the device function a ``@jit``
kernel would call), once per operator and argument types, and wrapped in a functor::

    def op(a, b):                      # float32(float32, float32)
        return a if abs(a) > abs(b) else b

becomes ``namespace tt_op0 { __device__ float op(float a, float b) {...} }`` and
``struct tt_fn0 { __device__ float operator()(float a, float b) const {...} }``.

Records (NumPy structured dtypes) are values threadtile's device functions cannot return, so
an operator over records writes its result into its last argument instead::

    def op(a, b, out):                 # each a 0-d record view: out.v = ..., a.i ...
        out.v = a.v + b.v

On the host (the simulator, NumPy arrays), the same function runs as Python on NumPy scalars
(``np.float32``: float32 arithmetic, as on the GPU) or on ``np.record`` views.
"""

from __future__ import annotations

import enum
import itertools
import re

import numpy as np

from ..inspection import device_source
from ..lang.records import RecordType, record_of
from ..lang.types import ArrayType, Scalar, Signature, scalar_of, void

__all__ = ["OpKind", "Operator", "as_operator", "ctype", "type_of", "FunctionSource"]


class OpKind(enum.Enum):
    """cuda.compute's built-in operators (``OpKind.PLUS``...). Prefer them to the equivalent
    Python function: CUB recognises some (a sum of integers reduces with fewer steps)."""

    PLUS = "plus"
    MULTIPLIES = "multiplies"
    MINIMUM = "minimum"
    MAXIMUM = "maximum"
    BIT_AND = "bit_and"
    BIT_OR = "bit_or"
    BIT_XOR = "bit_xor"
    LESS = "less"
    GREATER = "greater"
    EQUAL_TO = "equal_to"
    NOT_EQUAL_TO = "not_equal_to"
    IDENTITY = "identity"
    NEGATE = "negate"


# C++ of each built-in: the functor CUB gets (the libcu++ ones where CUB recognises them)
_CXX = {
    OpKind.PLUS: "::cuda::std::plus<>",
    OpKind.MULTIPLIES: "::cuda::std::multiplies<>",
    OpKind.MINIMUM: "tt_compute::minimum",
    OpKind.MAXIMUM: "tt_compute::maximum",
    OpKind.BIT_AND: "::cuda::std::bit_and<>",
    OpKind.BIT_OR: "::cuda::std::bit_or<>",
    OpKind.BIT_XOR: "::cuda::std::bit_xor<>",
    OpKind.LESS: "::cuda::std::less<>",
    OpKind.GREATER: "::cuda::std::greater<>",
    OpKind.EQUAL_TO: "::cuda::std::equal_to<>",
    OpKind.NOT_EQUAL_TO: "::cuda::std::not_equal_to<>",
    OpKind.IDENTITY: "tt_compute::identity",
    OpKind.NEGATE: "::cuda::std::negate<>",
}

# the same on the host, elementwise over NumPy arrays. MINIMUM/MAXIMUM pick as the C++ does
# (``b < a ? b : a``): with a NaN the first operand wins, not NumPy's NaN-propagating choice.
_HOST = {
    OpKind.PLUS: lambda a, b: a + b,
    OpKind.MULTIPLIES: lambda a, b: a * b,
    OpKind.MINIMUM: lambda a, b: np.where(b < a, b, a),
    OpKind.MAXIMUM: lambda a, b: np.where(a < b, b, a),
    OpKind.BIT_AND: lambda a, b: a & b,
    OpKind.BIT_OR: lambda a, b: a | b,
    OpKind.BIT_XOR: lambda a, b: a ^ b,
    OpKind.LESS: lambda a, b: a < b,
    OpKind.GREATER: lambda a, b: a > b,
    OpKind.EQUAL_TO: lambda a, b: a == b,
    OpKind.NOT_EQUAL_TO: lambda a, b: a != b,
    OpKind.IDENTITY: lambda a: a,
    OpKind.NEGATE: lambda a: -a,
}
_ARITY = {OpKind.IDENTITY: 1, OpKind.NEGATE: 1}

#: the C++ of the built-ins threadtile adds (CUB's own minimum/maximum changed namespaces)
PRELUDE = """namespace tt_compute {
struct minimum {
  template <class T> __device__ __forceinline__ T operator()(const T& a, const T& b) const {
    return b < a ? b : a;
  }
};
struct maximum {
  template <class T> __device__ __forceinline__ T operator()(const T& a, const T& b) const {
    return a < b ? b : a;
  }
};
struct identity {
  template <class T> __device__ __forceinline__ T operator()(const T& a) const { return a; }
};
}  // namespace tt_compute
"""


def type_of(dtype) -> Scalar | RecordType:
    """threadtile's type for a NumPy dtype (a number or a record); TypeError otherwise."""
    t = _TYPES.get(dtype) if isinstance(dtype, np.dtype) else None
    if t is None:
        dt = np.dtype(dtype)
        t = _type_of(dt)
        if len(_TYPES) < 1024:
            _TYPES[dt] = t
    return t


_TYPES: dict = {}  # dtype -> type_of's answer (every call of an algorithm asks, often twice)


def _type_of(dt: np.dtype) -> Scalar | RecordType:
    rec = record_of(dt)
    if rec is not None:
        return rec
    s = scalar_of(dt)
    if s is None or s.kind not in "biuf":
        raise TypeError(f"threadtile.compute works on numbers and records, not {dt}")
    return s


def ctype(t: Scalar | RecordType) -> str:
    """The C++ spelling of a type (a record's struct name)."""
    return t.cname


class FunctionSource:
    """A Python operator compiled for some argument types: the C++ to paste into a translation
    unit (``code``, in its own namespace), the record structs it needs (``structs``, by name:
    a unit defines each once), its includes and the functor's name."""

    _ids = itertools.count()

    def __init__(self, fn, arg_types: tuple, ret):
        self.fn = fn
        self.arg_types = tuple(arg_types)
        self.ret = ret
        self.out_param = isinstance(ret, RecordType)
        ns = f"tt_op{next(self._ids)}"
        if self.out_param:  # records: op(a, b, out) over 0-d views
            views = tuple(ArrayType(t, 0) if isinstance(t, RecordType) else t
                          for t in self.arg_types) + (ArrayType(ret, 0),)
            sig = Signature(views, void)
        else:
            sig = Signature(tuple(ArrayType(t, 0) if isinstance(t, RecordType) else t
                                  for t in self.arg_types), ret)
        text, entry, root = device_source(fn, sig)
        if self.ret is None:
            self.ret = root.return_type
        self.includes, self.structs, body = _split(text)
        head = 'extern "C" __device__ '
        if head not in body:
            raise RuntimeError("threadtile.compute: the device function's C++ has changed shape "
                               f"(no {head!r}); update compute/operators.py")
        body = body.replace(head, "__device__ __forceinline__ ", 1)
        if not entry.isidentifier():  # a lambda: the emitter keeps Python's name for it
            body = body.replace(f" {entry}(", " tt_lambda(", 1)
            entry = "tt_lambda"
        self.entry = f"{ns}::{entry}"
        self.name = f"tt_fn{ns[5:]}"
        self.code = f"namespace {ns} {{\n{body.strip()}\n}}  // namespace {ns}\n" + self._functor()

    def _functor(self) -> str:
        params = ", ".join(f"{ctype(t)} a{k}" for k, t in enumerate(self.arg_types))
        args = [f"tt::Array<{ctype(t)}, 0>{{&a{k}}}" if isinstance(t, RecordType) else f"a{k}"
                for k, t in enumerate(self.arg_types)]
        if self.out_param:
            r = ctype(self.ret)
            body = (f"{r} r; {self.entry}({', '.join(args + [f'tt::Array<{r}, 0>{{&r}}'])}); "
                    "return r;")
        else:
            body = f"return {self.entry}({', '.join(args)});"
        return (f"struct {self.name} {{\n  __device__ __forceinline__ {ctype(self.ret)} "
                f"operator()({params}) const {{ {body} }}\n}};\n")


_FUNCTIONS: dict = {}  # (operator key, argument types, return type) -> (function, source)

_RECORD_START = re.compile(r"^// Record\(")


def _split(text: str) -> tuple[list[str], dict[str, str], str]:
    """The emitter's translation unit as (preprocessor lines, record structs by name, the rest).
    """
    includes, structs, rest = [], {}, []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(("#include", "#define")):
            includes.append(line)
        elif _RECORD_START.match(line):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("};"):
                j += 1
            j += 1
            while j < len(lines) and lines[j].startswith("static_assert("):
                j += 1
            block = "\n".join(lines[i:j])
            name = re.search(r"struct (?:__align__\(\d+\) )?(\w+)", block).group(1)
            structs[name] = block
            i = j
            continue
        elif not line.startswith("// Generated by threadtile"):
            rest.append(line)
        i += 1
    return includes, structs, "\n".join(rest)


class Operator:
    """An operator of an algorithm: an :class:`OpKind` or a Python function.

    ``cxx(arg_types, ret)`` gives ``(functor type, FunctionSource or None)``; ``host`` applies
    it on the host: elementwise over arrays for a built-in, element by element for a function.
    """

    def __init__(self, op):
        if isinstance(op, Operator):
            op = op.op
        if not (isinstance(op, OpKind) or callable(op)):
            raise TypeError(f"an operator is an OpKind or a Python function, not {op!r}")
        self.op = op

    @property
    def is_builtin(self) -> bool:
        return isinstance(self.op, OpKind)

    def key(self) -> tuple:
        """What makes two operators compile to the same C++: the OpKind, or the function's code
        with the values it closes over (by identity where unhashable)."""
        if self.is_builtin:
            return ("kind", self.op.value)
        fn = self.op
        code = getattr(fn, "__code__", None)
        return ("fn", id(fn) if code is None else (code, id(fn)))

    def cxx(self, arg_types: tuple, ret) -> tuple[str, FunctionSource | None]:
        if self.is_builtin:
            arity = _ARITY.get(self.op, 2)
            if arity != len(arg_types):
                raise TypeError(f"OpKind.{self.op.name} takes {arity} operand(s), this algorithm "
                                f"gives its operator {len(arg_types)}")
            if any(isinstance(t, RecordType) for t in arg_types):
                raise TypeError(f"OpKind.{self.op.name} works on numbers; an operator over "
                                "records is a Python function (docs/algorithms.md)")
            return _CXX[self.op], None
        k = (self.key(), tuple(arg_types), ret)
        hit = _FUNCTIONS.get(k)
        if hit is None:  # the function is kept with its C++: its id is not reused meanwhile
            hit = _FUNCTIONS[k] = (self.op, FunctionSource(self.op, arg_types, ret))
        return hit[1].name, hit[1]

    def host(self, *args):
        """Apply on the host: a built-in over whole arrays, a function on one set of items."""
        if self.is_builtin:
            return _HOST[self.op](*args)
        return self.op(*args)

    def host_records(self, out_dtype: np.dtype, *args):
        """A record operator on the host: ``op(a, b, out)`` into a fresh record, returned."""
        out = np.zeros(1, out_dtype).view(np.recarray)
        self.op(*args, out[0])
        return out[0]

    def __repr__(self) -> str:
        name = self.op.name if self.is_builtin else getattr(self.op, "__name__", "op")
        return f"<Operator {name}>"


def as_operator(op) -> Operator:
    """``op`` (an OpKind, a Python function or an Operator) as an :class:`Operator`."""
    return op if isinstance(op, Operator) else Operator(op)

