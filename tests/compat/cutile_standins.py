"""Stand-ins for the few cuTile internals that its tests call to decide what to expect.

cutile_suite.py runs cuTile's tests with cuTile's internal modules replaced by stand-ins that
raise when used (``CutileInternal``). A few internal helpers only compute what a test
expects; those get an implementation here, written from cuTile's documentation, not from
threadtile's own code, so that the tests check threadtile against cuTile's rules:

- ``to_dtype(x)``: a dtype of ``threadtile.tile`` for a torch or threadtile dtype;
- ``_is_implicit_cast_ok(src, dst)``: whether cuTile converts ``src`` to ``dst`` without an
  ``astype``, which is where the two dtypes promote to ``dst`` (cuTile's docs, "Arithmetic
  Promotion"): categories bool < integral < floating point, and a dtype of a lower category
  converts to any dtype of a higher one; within a category a narrower dtype converts to a
  wider one, except between signed and unsigned integers and between float16 and bfloat16,
  which need an explicit cast; tfloat32 and the float8/float4 dtypes convert only to
  themselves.
"""

from __future__ import annotations

_FLOATS = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}


def _name(dtype) -> str:
    name = getattr(dtype, "name", None) or str(dtype).removeprefix("torch.")
    return "bool_" if name in ("bool", "bool_") else name


def to_dtype(x):
    """``threadtile.tile``'s dtype of the same name as ``x`` (a torch or threadtile dtype)."""
    import threadtile.tile as tt

    name = _name(x)
    if not hasattr(tt, name):
        raise TypeError(f"{x} is not a dtype")
    return getattr(tt, name)


def _category(name: str) -> int | None:
    if name == "bool_":
        return 0
    if name[:3] in ("int", "uin"):
        return 1
    return 2 if name in _FLOATS else None  # (restricted floats: no category here)


def _bits(name: str) -> int:
    return _FLOATS.get(name) or int(name.removeprefix("u").removeprefix("int"))


def is_implicit_cast_ok(src, dst) -> bool:
    """cuTile's implicit conversion rule (this module's docstring)."""
    s, d = _name(src), _name(dst)
    if s == d:
        return True
    cs, cd = _category(s), _category(d)
    if cs is None or cd is None or cs > cd:
        return False
    if cs < cd:
        return True
    if cs == 1:  # integers: the same signedness, no narrower
        return s.startswith("u") == d.startswith("u") and _bits(s) <= _bits(d)
    if {s, d} == {"float16", "bfloat16"}:
        return False
    return cs == 0 or _bits(s) < _bits(d)
