"""The operation registry (ir/ops.py) against the backends' tables, and the verifier."""

import pytest
from kernels import tiles

from threadtile import float16, float32, int64
from threadtile.backends.cuda import intrinsics as cuda_intrinsics
from threadtile.backends.cuda import tiles as cuda_tiles
from threadtile.backends.sim import codegen as sim_codegen
from threadtile.backends.sim import tiles as sim_tiles
from threadtile.errors import KernelCompileError
from threadtile.ir import nodes as ir
from threadtile.ir import ops
from threadtile.ir.verify import verify
from threadtile.lang.types import ArrayType, TileType

F16 = ArrayType(float16, 2, "C")


@pytest.mark.parametrize(("what", "registry", "table"), [
    ("CUDA intrinsics", ops.INTRINSICS, cuda_intrinsics.CALLS),
    ("simulator intrinsics", ops.INTRINSICS, sim_codegen.CALLS),
    ("CUDA tile operations", ops.TILE_OPS, cuda_tiles.TILE_OPS),
    ("simulator tile operations", ops.TILE_OPS, sim_tiles.OPS),
])
def test_every_operation_has_a_spelling_and_a_handler(what, registry, table):
    missing = sorted(set(registry) - set(table))
    unknown = sorted(set(table) - set(registry))
    assert not missing, f"{what}: no entry for {missing}"
    assert not unknown, f"{what}: entries the registry does not list: {unknown}"


def test_registry_entries_are_complete():
    for spec in [*ops.INTRINSICS.values(), *ops.TILE_OPS.values()]:
        lo, hi = spec.arity
        assert 0 <= lo and (hi is None or hi >= lo), spec.name
        assert callable(spec.rule) and spec.doc, spec.name


def _loc():
    return ir.Loc("k.py", 3, 4, 9, "k")


def test_the_rules_catch_ill_typed_operations():
    loc = _loc()
    a = ir.Var(TileType(float32, (16, 8)), loc, "a")
    b = ir.Var(TileType(float32, (8, 4)), loc, "b")
    acc = ir.Var(TileType(float32, (16, 4)), loc, "acc")
    good = ir.TileOp(TileType(float32, (16, 4)), loc, "mma", [a, b, acc])
    assert ops.check(good) is None
    bad = ir.TileOp(TileType(float32, (16, 8)), loc, "mma", [a, b, acc])
    assert "result" in ops.check(bad)
    short = ir.TileOp(TileType(float32, (16, 4)), loc, "mma", [a, b])
    assert "takes 3 operands, got 2" in ops.check(short)
    no_attr = ir.TileOp(TileType(float32, (16, 8)), loc, "binop", [a, a])
    assert "lacks its attributes ['op']" in ops.check(no_attr)
    mixed = ir.TileOp(TileType(float32, (16, 8)), loc, "binop",
                      [a, ir.Const(int64, loc, 1)], {"op": "add"})
    assert "operand 1 must be a float32 scalar" in ops.check(mixed)
    sqrt = ir.Call(float32, loc, "sqrt", [ir.Const(int64, loc, 4)])
    assert "operands must be" in ops.check(sqrt)
    assert "no operation 'frobnicate'" in ops.check(ir.Call(float32, loc, "frobnicate", []))


def test_verify_reports_an_ill_typed_operation_at_its_line():
    module = tiles.matmul.specialization([F16, F16, F16], dict(tm=64, tn=64, tk=32)).module
    verify(module)  # what the pipeline made obeys the rules
    store = next(x for x in ir.walk_module_exprs(module)
                 if isinstance(x, ir.TileOp) and x.op == "store")
    store.attrs["shape"] = (1, 2)
    with pytest.raises(KernelCompileError, match="store operation is ill-typed") as e:
        verify(module)
    assert e.value.loc.line == store.loc.line


def test_the_k_loop_is_one_operation_in_the_ir():
    """The IR both backends take holds the k loop as one mma_loop with the loads and the mma it
    stands for; the loop itself is gone."""
    module = tiles.matmul.specialization([F16, F16, F16], dict(tm=64, tn=64, tk=32)).module
    loops = [x for x in ir.walk_module_exprs(module)
             if isinstance(x, ir.TileOp) and x.op == "mma_loop"]
    assert len(loops) == 1
    op = loops[0]
    assert [op.attrs[k].op for k in ("a", "b", "mma")] == ["load", "load", "mma"]
    assert not any(isinstance(s, ir.For) for s in ir.walk_stmts(module.kernel.body))
    # 64x64x32 16-bit on 4 warps: the Hopper main loop applies (64-byte swizzle of A)
    assert op.attrs["hopper"] is True and op.attrs["cast"] is None
