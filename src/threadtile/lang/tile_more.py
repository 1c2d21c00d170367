"""More of cuTile's kernel language (``import threadtile.tile as ct``): ``ensure_constant``,
``assert_``, ``divmod`` and the ``bitwise_*`` functions. Like lang/tile.py's, each object is a
stub the frontend recognises (frontend/tile_more.py lowers the calls); on the host it does
nothing.
"""

from __future__ import annotations

from .tile import _stub

__all__ = ["ensure_constant", "assert_", "divmod", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_not", "bitwise_lshift", "bitwise_rshift"]

NAMES = frozenset(__all__)

ensure_constant = _stub("ensure_constant", """ensure_constant(value, /) -> ``value``, which
must be known while the kernel compiles (a literal, a Constant parameter, arithmetic of those,
a dtype...); otherwise a ``TileStaticAssertionError`` at this line. Use it to make sure an
``if`` is decided at compile time.""")
assert_ = _stub("assert_", """assert_(cond, /, message=None) -> None: every element of the bool
tile (or the bool) ``cond`` must be true when the kernel runs. The simulator raises
``AssertionError(message)`` naming the kernel's line and the block; on the GPU a failed
assertion stops the kernel (a launch error). Slow: for debugging.""")
divmod = _stub("divmod", """divmod(x, y, /) -> ``(x // y, x % y)`` of integer tiles or numbers,
elementwise, with Python's rounding and sign rule (the builtin ``divmod`` is the same in
kernels). Floating-point operands are a ``TileTypeError``.""")
_BIT = "{name}(x, y, /) -> ``{sym}`` of integer (or bool) tiles or numbers, elementwise."
bitwise_and = _stub("bitwise_and", _BIT.format(name="bitwise_and", sym="x & y"))
bitwise_or = _stub("bitwise_or", _BIT.format(name="bitwise_or", sym="x | y"))
bitwise_xor = _stub("bitwise_xor", _BIT.format(name="bitwise_xor", sym="x ^ y"))
bitwise_lshift = _stub("bitwise_lshift", _BIT.format(name="bitwise_lshift", sym="x << y"))
bitwise_rshift = _stub("bitwise_rshift", _BIT.format(name="bitwise_rshift", sym="x >> y"))
bitwise_not = _stub("bitwise_not", """bitwise_not(x, /) -> ``~x`` of an integer or bool tile or
number, elementwise (of a bool: its logical not).""")
