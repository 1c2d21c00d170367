"""threadtile.coop's primitives (ir/coop.py) -> calls of the helper templates of
``include/coop/`` (CUB's block and warp classes behind them): ``CALLS``, one entry per
``coop.*`` name of the registry, and ``includes``, the sections a module needs."""

from __future__ import annotations

from ...ir import coop as ircoop
from ...ir import nodes as ir
from .cxx import PREC

_SECTIONS = {"reduce": "scan", "scan": "scan", "radix_sort": "sort", "merge_sort": "sort",
             "load": "memory", "store": "memory", "exchange": "memory"}


def includes(module: ir.Module) -> list[str]:
    """The ``#include`` lines of the coop sections ``module`` calls (each pulls in only its
    CUB headers: NVRTC parses every header it is given)."""
    used = sorted({_SECTIONS[c.name.rsplit(".", 1)[1]] for c in ircoop.calls(module)})
    return [f'#include "coop/{s}.h"' for s in used]


def _op(em, op, t: str, compare: bool = False) -> str:
    """The operator as a C++ callable: cub's own for sum/min/max, else a lambda calling the
    user's device function (converted to the dtype, or to bool for a comparator)."""
    if isinstance(op, str):
        return {"sum": "tt::coop::Sum{}", "min": "tt::coop::Min{}", "max": "tt::coop::Max{}"}[op]
    loc = op.loc
    a, b = em.n("tt_coop_a"), em.n("tt_coop_b")
    call = em.e(ir.CallFunc(op.return_type, loc, op, [ir.Var(op.params[0].type, loc, a),
                                                      ir.Var(op.params[1].type, loc, b)]))
    res = "bool" if compare else t
    return f"[](const {t}& {a}, const {t}& {b}) -> {res} {{ return ({res})({call}); }}"


def _group(x: ir.Call, with_bound: bool = True) -> str:
    bx, by, bz = x.attrs["block"]
    out = f"{bx}, {by}, {bz}"
    return out + f", {ircoop.scratch_bytes(x)}" if with_bound else out


def _reduce(em, x: ir.Call):
    t = x.type.cname
    op = x.attrs["op"]
    total = op == "sum"
    v = em.e(x.args[0])
    f = _op(em, "sum" if total else op, t)
    if x.name == "coop.warp.reduce":
        return (f"tt::coop::warp_reduce<{t}, {x.attrs['warp']}, {str(total).lower()}>({v}, "
                f"{f})"), PREC["atom"]
    return (f"tt::coop::block_reduce<{t}, {_group(x)}, {str(total).lower()}>({v}, {f})",
            PREC["atom"])


def _scan(em, x: ir.Call):
    op = x.attrs["op"]
    t = ircoop.dtype_of(x).cname
    mode = (0 if x.attrs["inclusive"] else 1) + (2 if op != "sum" else 0)
    f = _op(em, op if op != "sum" else "sum", t)
    n_vals = 2 if x.attrs["items"] else 1
    vals = [em.e(a) for a in x.args[:n_vals]]
    init = em.e(x.args[n_vals]) if len(x.args) > n_vals else f"{t}()"
    args = ", ".join([*vals, f, init])
    if x.name == "coop.warp.scan":
        return f"tt::coop::warp_scan<{t}, {x.attrs['warp']}, {mode}>({args})", PREC["atom"]
    return f"tt::coop::block_scan<{t}, {_group(x)}, {mode}>({args})", PREC["atom"]


def _radix_sort(em, x: ir.Call):
    t = ircoop.dtype_of(x).cname
    desc = str(x.attrs["descending"]).lower()
    args = ", ".join(em.e(a) for a in x.args)
    return f"tt::coop::block_radix_sort<{t}, {_group(x)}, {desc}>({args})", PREC["atom"]


def _merge_sort(em, x: ir.Call):
    t = ircoop.dtype_of(x).cname
    arrays = ", ".join(em.e(a) for a in x.args)
    cmp = _op(em, x.attrs["op"], t, compare=True)
    if x.name == "coop.warp.merge_sort":
        w = x.attrs["warp"]
        return (f"tt::coop::warp_merge_sort<{t}, {_group(x, False)}, {w}, "
                f"{ircoop.scratch_bytes(x)}>({arrays}, {cmp})"), PREC["atom"]
    return f"tt::coop::block_merge_sort<{t}, {_group(x)}>({arrays}, {cmp})", PREC["atom"]


def _load_store(em, x: ir.Call):
    t = ircoop.dtype_of(x).cname
    alg = ircoop.LOAD_ALGORITHMS.index(x.attrs["algorithm"])
    g, items, *rest = x.args
    valid = em.e(rest[0]) if x.attrs["valid"] else "0x7fffffff"
    if x.name == "coop.block.load":
        oob = em.e(rest[1]) if x.attrs["oob"] else f"{t}()"
        return (f"tt::coop::block_load<{t}, {_group(x)}, {alg}, "
                f"{str(x.attrs['oob']).lower()}>({em.view(g)}, {em.e(items)}, {valid}, {oob})",
                PREC["atom"])
    return (f"tt::coop::block_store<{t}, {_group(x)}, {alg}>({em.view(g)}, {em.e(items)}, "
            f"{valid})", PREC["atom"])


def _exchange(em, x: ir.Call):
    t = ircoop.dtype_of(x).cname
    to_blocked = str(x.attrs["kind"] == "striped_to_blocked").lower()
    args = ", ".join(em.e(a) for a in x.args)
    return f"tt::coop::block_exchange<{t}, {_group(x)}, {to_blocked}>({args})", PREC["atom"]


CALLS = {
    "coop.block.reduce": _reduce, "coop.warp.reduce": _reduce,
    "coop.block.scan": _scan, "coop.warp.scan": _scan,
    "coop.block.radix_sort": _radix_sort,
    "coop.block.merge_sort": _merge_sort, "coop.warp.merge_sort": _merge_sort,
    "coop.block.load": _load_store, "coop.block.store": _load_store,
    "coop.block.exchange": _exchange,
}
