"""Random tile kernels (``import threadtile.tile as ct``) from a seed, well formed and race
free by construction (tile_prog.py says how), with a float64 reference (tile_ref.py).

What a program may hold: loads of tiles that do not divide their arrays (every padding mode,
``order="F"``), with block indices and loop counters in the tile index; the epilogue's stores
at the edges (the parts outside skipped); elementwise arithmetic in float16, bfloat16, float32
and int32 (``+ - * / // % & | ^ << >>``, ``maximum``/``minimum`` and the builtins, negation,
``abs``, ``~``), literals and block-uniform scalars mixed with tiles, broadcasting operands and
``broadcast_to``; casts (``astype``, ``ct.astype``, integer ``/`` to float32); the math
functions (``exp exp2 log log2 sqrt rsqrt tanh sin cos sinh cosh floor ceil``) with their
domains guarded; comparisons, ``where``, ``isnan``; ``sum``/``max``/``min``/``argmax``/
``argmin`` along an axis or all (``keepdims``), ``cumsum``; ``transpose`` (function and
method), ``permute``, ``reshape`` (also through 3-d tiles), ``expand_dims``/``x[:, None]``;
``@``, ``matmul`` and ``mma`` with float16/bfloat16 (and float32) operands and float32
accumulators, k loops of ``mma`` over ``bid``-indexed tiles; ``gather`` (index tiles from
``arange`` or from data, masks, out-of-bounds indices, padding values) from the inputs and from
the block's own region of a scatter array after ``scatter``s to it (unique indices, masks);
integer atomics (one operation per counter array) and float32 ``atomic_add``; stores of whole
and half tiles into the block's own region of an array, read back by later loads; ``cat``,
``extract``, ``insert``; ``if`` on block ids, ``for`` loops; int8, int64 and float64 now and
then; tiles of 2 to 64 rows and 1 to 32 columns, ``num_warps`` 1 to 8, grids of up to 3 x 2
blocks.

Rules that keep results well defined: divisors are ``abs(y) + 1`` (floats) or ``y % 5 + 1``,
``y % 5 - 6`` (integers); shift counts are masked to 0..31, to 0..63 or left as
they are (past the width or negative: every bit shifted out); ``exp``/``exp2``/``sinh``/
``cosh`` arguments are clamped, ``log``/``rsqrt`` take ``abs(x) + 1``, ``sqrt`` ``abs(x)``;
most float-to-int casts clamp to +-1000 first; tiles loaded with a block's index never lie
wholly outside their array (the index is taken modulo the array's tile count).
"""

from __future__ import annotations

import random

from .tile_prog import ArraySpec, E, TileProgram, TNode, TVar

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("int8", "int32", "int64")
DTYPES = FLOATS + INTS
CLAMP = {"int8": 100.0, "int32": 1000.0, "int64": 1000.0}  # float-to-int casts clamp first
PADS = ("ZERO", "NEG_ZERO", "NAN", "POS_INF", "NEG_INF", "UNDETERMINED")
MATH = ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sin", "cos", "sinh", "cosh",
        "floor", "ceil")
FLOAT_OPS = ("+", "-", "*", "/", "//", "%", "max", "min")
INT_OPS = ("+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>", "max", "min")
ATOMIC_OPS = ("add", "max", "min", "and", "or", "xor")
MAXD = 3


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def lit(dtype: str, value) -> E:
    return E("lit", dtype, (), attrs={"value": value})


def bcast_shapes(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Shapes NumPy broadcasts to ``shape`` (other than itself)."""
    if len(shape) == 2:
        p, q = shape
        out = [(p, 1), (1, q), (q,), ()]
    elif len(shape) == 1:
        out = [(1,), ()]
    else:
        out = []
    return [s for s in out if s != shape]


class TileGen:
    """The generator's state for one program."""

    def __init__(self, seed: int, max_stmts: int = 10):
        r = self.rng = random.Random(seed)
        self.seed = seed
        self.max_stmts = max_stmts
        self.M = r.choice((8, 16, 16, 32, 64, 2))
        self.N = r.choice((4, 8, 8, 16, 32, 1, 2))
        self.K = r.choice((8, 16, 16, 32))
        self.num_warps = r.choice((None, None, 1, 2, 8))  # the elements' spread over threads
        self.grid = (r.choice((1, 2, 3)), r.choice((1, 2)))
        self.dtypes = ["float32"] + r.sample(["float16", "bfloat16", "int32"], r.randint(1, 3))
        if r.random() < 0.3:
            self.dtypes.append(r.choice(("int8", "int64", "float64")))
        self.arrays: dict[str, ArraySpec] = {}
        self.tvars: list[TVar] = []
        self.loop_vars: list[str] = []
        self.nloops = 0
        self.atomic_op = r.choice(ATOMIC_OPS)

    # ---- arrays -----------------------------------------------------------------------------
    def array(self, name: str, dtype: str, shape: tuple[int, ...], kind: str) -> ArraySpec:
        if name not in self.arrays:
            self.arrays[name] = ArraySpec(name, dtype, shape, kind)
        return self.arrays[name]

    def edge(self, n: int, tiles: int) -> int:
        """An extent of ``tiles`` tiles of ``n``, the last one partial more often than not."""
        return tiles * n - self.rng.choice((0, self.rng.randrange(n), self.rng.randrange(n)))

    def input2(self, d: str) -> ArraySpec:
        gx, gy = self.grid
        if f"in2_{d}" not in self.arrays:
            r_ = max(1, self.edge(self.M, gx))
            c_ = max(1, self.edge(self.N, gy))
            return self.array(f"in2_{d}", d, (r_, c_), "in")
        return self.arrays[f"in2_{d}"]

    def input1(self, d: str) -> ArraySpec:
        if f"in1_{d}" not in self.arrays:
            return self.array(f"in1_{d}", d, (max(1, self.edge(self.M, self.grid[0])),), "in")
        return self.arrays[f"in1_{d}"]

    def scatter_array(self, d: str) -> ArraySpec:
        gx, gy = self.grid
        if f"sc_{d}" not in self.arrays:
            return self.array(f"sc_{d}", d, (self.edge(self.M, gx), self.edge(self.N, gy)), "sc")
        return self.arrays[f"sc_{d}"]

    # ---- block-uniform integers -------------------------------------------------------------
    def tile_index(self, axis: int, ntiles: int) -> str:
        """A tile index in 0..ntiles-1 from the block id (and a loop counter)."""
        r = self.rng
        base = f"ct.bid({axis})"
        if self.loop_vars and r.random() < 0.4:
            base = f"({base} + {r.choice(self.loop_vars)})"
        elif r.random() < 0.2:
            base = f"({base} + {r.randint(1, 2)})"
        return base if ntiles >= self.grid[axis] and "+" not in base else f"{base} % {ntiles}"

    def scalar_int(self) -> E:
        r = self.rng
        texts = ["ct.bid(0)", "ct.bid(1)", f"ct.bid(0) * {r.randint(2, 5)} + {r.randint(0, 3)}"]
        texts += self.loop_vars
        return E("scalar", "int32", (), attrs={"text": r.choice(texts)})

    # ---- the block's own region of the scatter and main output arrays ---------------------
    def own_shapes(self) -> list[tuple[int, int]]:
        """The block's (M, N) tile and its halves."""
        M, N = self.M, self.N
        return [(M, N)] + [s for s in ((M // 2, N), (M, N // 2)) if 0 not in s]

    def own_arrays(self, d: str) -> list[str]:
        """Arrays of ``d`` tiled like the grid: a block reads back what it stored there."""
        out = [f"sc_{d}"] if f"sc_{d}" in self.arrays else []
        return out + [v.out for v in self.tvars if v.dtype == d and v.main and not v.order]

    def own_index(self, shape, array: str) -> tuple[str, str]:
        """The index of ``shape`` (one of ``own_shapes``) inside the block's own region: the
        second half only where the last block's second half is not wholly outside."""
        r = self.rng
        dims, grid = self.arrays[array].shape, self.grid
        ax = 0 if shape[0] < self.M else 1
        full = (self.M, self.N)[ax]
        halves = ["0"]
        if dims[ax] > (grid[ax] - 1) * full + full // 2:
            halves += ["1"] + [f"{i} % 2" for i in self.loop_vars]
        half = r.choice(halves)
        if shape[0] < self.M:
            return (f"ct.bid(0) * 2 + {half}", "ct.bid(1)")
        if shape[1] < self.N:
            return ("ct.bid(0)", f"ct.bid(1) * 2 + {half}")
        return ("ct.bid(0)", "ct.bid(1)")

    def store(self) -> TNode | None:
        """A store into the block's own region (read back by later loads, overwritten by the
        epilogue's store of a main variable)."""
        r = self.rng
        d = r.choice(self.dtypes)
        own = self.own_arrays(d)
        if not own:
            return None
        shape = r.choice(self.own_shapes())
        arr = r.choice(own)
        return TNode("store", exprs=[self.expr(d, shape, 1)],
                     attrs={"array": arr, "index": self.own_index(shape, arr)})

    # ---- leaves -----------------------------------------------------------------------------
    def load(self, d: str, shape: tuple[int, ...]) -> E:
        r = self.rng
        pad = r.choice(PADS)
        if len(shape) == 2:
            arr = self.input2(d)
            order = (1, 0) if r.random() < 0.2 else (0, 1)
            dims = [arr.shape[order[0]], arr.shape[order[1]]]
            index = [self.tile_index(a, cdiv(dims[a], shape[a])) for a in (0, 1)]
        elif len(shape) == 1:
            arr, order = self.input1(d), (0,)
            index = [self.tile_index(0, cdiv(arr.shape[0], shape[0]))]
        else:
            arr, order = self.input2(d), (0, 1)
            index = [self.tile_index(a, arr.shape[a]) for a in (0, 1)]
        return E("load", d, shape, attrs={"array": arr.name, "index": tuple(index),
                                          "order": order, "padding": pad,
                                          "bare": r.random() < 0.5})

    def full(self, d: str, shape) -> E:
        v = self.rng.randint(-3, 9) if d in INTS else self.rng.choice((0.5, 1.5, -2.0, 0.25))
        return E("full", d, shape, attrs={"value": v})

    def literal(self, d: str) -> E:
        r = self.rng
        return lit(d, r.randint(0, 20) if d in INTS else r.choice((0.5, 1.5, 2.0, 0.25, 3.0)))

    def iota(self, shape) -> E:
        """An int32 tile from ``arange`` (reshaped to 2-d shapes)."""
        n = 1
        for s in shape:
            n *= s
        a = E("arange", "int32", (n,))
        return a if len(shape) == 1 else E("reshape", "int32", shape, [a])

    def leaf(self, d: str, shape, depth: int) -> E:
        r = self.rng
        same = [v for v in self.tvars if v.dtype == d and v.shape == shape]
        wider = [v for v in self.tvars if v.dtype == d and v.shape in bcast_shapes(shape)]
        x = r.random()
        if same and x < 0.5:
            v = r.choice(same)
            return E("var", d, shape, attrs={"name": v.name})
        if wider and x < 0.6:
            v = r.choice(wider)
            return E("bcast", d, shape, [E("var", d, v.shape, attrs={"name": v.name})])
        own = self.own_arrays(d) if shape in self.own_shapes() else []
        if own and x < 0.72:
            arr = r.choice(own)
            return E("load", d, shape, attrs={"array": arr, "index": self.own_index(shape, arr),
                                              "order": (0, 1), "padding": r.choice(PADS)})
        if x < 0.8 or shape == ():
            return self.load(d, shape)
        if d == "int32" and x < 0.9:
            return self.iota(shape)
        if x < 0.93 and depth < MAXD and shape:
            return self.gather(d, shape, depth)
        return self.full(d, shape)

    # ---- expressions ------------------------------------------------------------------------
    def operand(self, d: str, shape, depth: int) -> E:
        """The second operand of a binary operation: a tile of ``shape`` or of one that
        broadcasts to it, a literal, a block-uniform integer."""
        r = self.rng
        x = r.random()
        if x < 0.55:
            return self.expr(d, shape, depth + 1)
        if x < 0.75 and bcast_shapes(shape):
            return self.expr(d, r.choice(bcast_shapes(shape)), depth + 1)
        if d == "int32" and x < 0.85:  # (a strict int32: with int8 it would promote)
            return self.scalar_int()
        return self.literal(d)

    def divisor(self, d: str, shape, depth: int) -> E:
        y = self.operand(d, shape, depth)
        if y.op == "lit":
            return lit(d, 3 if d in INTS else 1.5)
        if d in INTS:
            y = E("bin", d, y.shape, [y, lit(d, 5)], {"sym": "%"})
            return E("bin", d, y.shape, [y, lit(d, self.rng.choice((1, -6)))], {"sym": "+"})
        return E("bin", d, y.shape, [E("un", d, y.shape, [y], {"fn": "abs"}), lit(d, 1.0)],
                 {"sym": "+"})

    def binary(self, d: str, shape, depth: int) -> E:
        r = self.rng
        sym = r.choice(INT_OPS if d in INTS else FLOAT_OPS)
        a = self.expr(d, shape, depth + 1)
        if sym in ("/", "//", "%"):
            b = self.divisor(d, shape, depth)
        elif sym in ("<<", ">>"):
            b = self.operand(d, shape, depth)
            k = r.random()  # a count within the width, past it, or any (negative too)
            if k < 0.85:
                b = E("bin", d, b.shape, [b, lit(d, 31 if k < 0.6 else 63)], {"sym": "&"})
        else:
            b = self.operand(d, shape, depth)
            if r.random() < 0.3 and sym not in ("-",):
                a, b = b, a  # the literal or the narrow operand on the left
        out = E("bin", d, shape, [a, b], {"sym": sym, "builtin": r.random() < 0.3})
        if a.shape != shape and b.shape != shape:  # two operands narrower than the result
            out = E("bcast", d, shape, [E("bin", d, a.shape, [a, b], out.attrs)])
        return out

    def math(self, d: str, shape, depth: int) -> E:
        r = self.rng
        fn = r.choice(MATH)
        x = self.expr(d, shape, depth + 1)

        def absx():
            return E("un", d, shape, [x], {"fn": "abs"})

        if fn in ("exp", "exp2"):
            x = E("bin", d, shape, [x, lit(d, 4.0 if fn == "exp" else 6.0)], {"sym": "min"})
        elif fn in ("log", "log2", "rsqrt"):
            x = E("bin", d, shape, [absx(), lit(d, 1.0)], {"sym": "+"})
        elif fn == "sqrt":
            x = absx()
        elif fn in ("sinh", "cosh"):
            x = E("bin", d, shape, [E("bin", d, shape, [x, lit(d, -4.0)], {"sym": "max"}),
                                    lit(d, 4.0)], {"sym": "min"})
        return E("math", d, shape, [x], {"fn": fn})

    def cast(self, d: str, shape, depth: int) -> E:
        r = self.rng
        src = r.choice([t for t in self.dtypes if t != d] or [d])
        if src == d:
            return self.expr(d, shape, depth + 1)
        x = self.expr(src, shape, depth + 1)
        if d in INTS and src in FLOATS and r.random() < 0.7:
            c = CLAMP[d]
            x = E("bin", src, shape, [E("bin", src, shape, [x, lit(src, -c)],
                                        {"sym": "max"}), lit(src, c)], {"sym": "min"})
        return E("cast", d, shape, [x], {"func": r.random() < 0.3})

    def cond(self, shape, depth: int) -> E:
        """A bool tile of ``shape`` (or of one broadcasting to it)."""
        r = self.rng
        if shape and r.random() < 0.3:
            shape = r.choice(bcast_shapes(shape) or [shape])
        d = r.choice(self.dtypes)
        if d in FLOATS and r.random() < 0.15:
            return E("isnan", "bool", shape, [self.expr(d, shape, depth + 1)])
        a = self.expr(d, shape, depth + 1)
        b = self.operand(d, shape, depth)
        return E("cmp", "bool", shape, [a, b], {"sym": r.choice(("<", "<=", ">", ">=", "==",
                                                                 "!="))})

    def reduction(self, d: str, shape, depth: int) -> E | None:
        r = self.rng
        fn = r.choice(("argmax", "argmin") if d == "int32" and r.random() < 0.3
                      else ("sum", "max", "min"))
        src = r.choice(self.dtypes) if fn.startswith("arg") else d
        x = r.choice((4, 8, 16))
        if shape == ():
            s = r.choice(((x,), (self.M, self.N), (x, self.N)))
            return E("red", d, shape, [self.expr(src, s, depth + 1)],
                     {"fn": fn, "axis": None, "keepdims": False})
        if len(shape) == 1:
            axis = r.randint(0, 1)
            s = (shape[0], x) if axis == 1 else (x, shape[0])
            return E("red", d, shape, [self.expr(src, s, depth + 1)],
                     {"fn": fn, "axis": axis, "keepdims": False})
        if shape[1] == 1:
            return E("red", d, shape, [self.expr(src, (shape[0], x), depth + 1)],
                     {"fn": fn, "axis": 1, "keepdims": True})
        if shape[0] == 1:
            return E("red", d, shape, [self.expr(src, (x, shape[1]), depth + 1)],
                     {"fn": fn, "axis": 0, "keepdims": True})
        return None

    def reshaped(self, d: str, shape, depth: int) -> E | None:
        r = self.rng
        n = 1
        for s in shape:
            n *= s
        if n < 4:
            return None
        if len(shape) == 2 and r.random() < 0.5:
            # a shuffle through a 3-d tile: reshape, permute, reshape back
            a = r.choice([v for v in (2, 4) if n % (v * 2) == 0] or [2])
            b = n // a // 2
            perm = r.choice(((1, 0, 2), (2, 1, 0), (0, 2, 1), (1, 2, 0)))
            s3 = (a, b, 2)
            p3 = tuple(s3[i] for i in perm)
            x = E("reshape", d, s3, [self.expr(d, (n,) if r.random() < 0.5 else shape,
                                              depth + 1)])
            return E("reshape", d, shape, [E("permute", d, p3, [x], {"axes": perm})])
        other = r.choice([(n,), (n // 2, 2), (2, n // 2), (n // 4, 4)])
        if other == shape:
            other = (n // 2, 2) if shape != (n // 2, 2) else (n,)
        return E("reshape", d, shape, [self.expr(d, other, depth + 1)])

    def product(self, d: str, shape, depth: int) -> E:
        r = self.rng
        x = r.choice((self.K, 8, 16))
        p, q = shape
        if d == "float64":
            return E("matmul", d, shape, [self.expr(d, (p, x), depth + 1),
                                          self.expr(d, (x, q), depth + 1)], {"func": True})
        if d == "float32" and r.random() < 0.7:
            e = r.choice(("float16", "bfloat16", "float16", "bfloat16", "float32"))
            return E("mma", d, shape, [self.expr(e, (p, x), depth + 1),
                                       self.expr(e, (x, q), depth + 1),
                                       self.expr(d, shape, depth + 1)])
        return E("matmul", d, shape, [self.expr(d, (p, x), depth + 1),
                                      self.expr(d, (x, q), depth + 1)],
                 {"func": r.random() < 0.5})

    def part(self, d: str, shape, depth: int) -> E:
        """``cat`` of two halves, ``extract`` of a cell of a twice larger tile, ``insert``
        of a half into a tile (the cell index constant or from the block id)."""
        r = self.rng
        axes = [a for a in (0, 1) if shape[a] >= 2]
        if not axes:
            return self.binary(d, shape, depth)
        ax = r.choice(axes)
        half = tuple(s // 2 if a == ax else s for a, s in enumerate(shape))
        cell = r.choice(("0", "1", "ct.bid(0) % 2", "ct.bid(1) % 2"))
        index = tuple(cell if a == ax else "0" for a in (0, 1))
        x = r.random()
        if x < 0.35:
            return E("cat", d, shape, [self.expr(d, half, depth + 1),
                                       self.expr(d, half, depth + 1)], {"axis": ax})
        if x < 0.7:
            big = tuple(s * 2 if a == ax else s for a, s in enumerate(shape))
            return E("extract", d, shape, [self.expr(d, big, depth + 1)], {"index": index})
        return E("insert", d, shape, [self.expr(d, shape, depth + 1),
                                      self.expr(d, half, depth + 1)], {"index": index})

    def gather(self, d: str, shape, depth: int) -> E:
        r = self.rng
        own = (shape == (self.M, self.N) and f"sc_{d}" in self.arrays and r.random() < 0.5)
        arr = (self.arrays[f"sc_{d}"] if own else self.input2(d) if len(shape) == 2
               else self.input1(d))
        idx = []
        for axis, n in enumerate(shape):
            if own:
                mul = r.choice((1, 3, 5, 7))
                i = E("bin", "int32", (n,), [E("bin", "int32", (n,), [self.iota((n,)),
                                                                      lit("int32", mul)],
                                               {"sym": "*"}), lit("int32", r.randint(0, 9))],
                      {"sym": "+"})
                i = E("bin", "int32", (n,), [i, lit("int32", n)], {"sym": "%"})
                base = E("scalar", "int32", (), attrs={"text": f"ct.bid({axis}) * {n}"})
                i = E("bin", "int32", (n,), [base, i], {"sym": "+"})
            elif r.random() < 0.6:
                step = r.choice((1, 1, 2, 3, -1))
                i = E("bin", "int32", (n,), [E("bin", "int32", (n,), [self.iota((n,)),
                                                                      lit("int32", abs(step))],
                                               {"sym": "*"}), self.scalar_int()],
                      {"sym": "+" if step > 0 else "-"})
                if step < 0:
                    i = E("bin", "int32", (n,), [self.scalar_int(), self.iota((n,))],
                          {"sym": "-"})
            else:
                i = E("bin", "int32", shape, [self.expr("int32", shape, depth + 1),
                                              lit("int32", arr.shape[axis] + r.randint(0, 2))],
                      {"sym": "%"})
            if len(shape) == 2 and i.shape != shape:
                i = E("expand", "int32", (n, 1) if axis == 0 else (1, n), [i],
                      {"axis": 1 if axis == 0 else 0})
            idx.append(i)
        mask = r.random() < 0.4
        args = idx + ([self.cond(shape, depth + 1)] if mask else [])
        pad = r.randint(-3, 3) if d in INTS else r.choice((0, 0.5, -1.5, 2))
        return E("gather", d, shape, args, {"array": arr.name, "nidx": len(idx), "mask": mask,
                                            "pad": pad})

    def expr(self, d: str, shape, depth: int = 0) -> E:
        r = self.rng
        if depth >= MAXD or r.random() < 0.2:
            return self.leaf(d, shape, depth)
        kinds = ["bin"] * 5 + ["un", "cast", "cast", "where", "red", "red"]
        if d in FLOATS:
            kinds += ["math"] * 3
        elif len(shape) <= 1:
            kinds += ["idx"]
        if shape:
            kinds += ["cumsum", "reshape", "gather"]
        if len(shape) == 2:
            kinds += ["transpose", "expand", "part"]
            if d in FLOATS:
                kinds += ["product"] * 2
        if d == "float32":
            kinds += ["idiv"]
        k = r.choice(kinds)
        if k == "bin":
            return self.binary(d, shape, depth)
        if k == "un":
            fn = r.choice(("neg", "abs", "invert") if d in INTS else ("neg", "abs"))
            return E("un", d, shape, [self.expr(d, shape, depth + 1)], {"fn": fn})
        if k == "math":
            return self.math(d, shape, depth)
        if k == "cast":
            return self.cast(d, shape, depth)
        if k == "where":
            b = self.expr(d, shape, depth + 1) if r.random() < 0.7 else self.literal(d)
            return E("where", d, shape, [self.cond(shape, depth), self.expr(d, shape, depth + 1),
                                         b])
        if k == "red":
            return self.reduction(d, shape, depth) or self.binary(d, shape, depth)
        if k == "cumsum":
            return E("cumsum", d, shape, [self.expr(d, shape, depth + 1)],
                     {"axis": r.randrange(len(shape))})
        if k == "reshape":
            return self.reshaped(d, shape, depth) or self.leaf(d, shape, depth)
        if k == "gather":
            return self.gather(d, shape, depth)
        if k == "transpose":
            x = self.expr(d, shape[::-1], depth + 1)
            if r.random() < 0.3:
                return E("permute", d, shape, [x], {"axes": (1, 0)})
            return E("transpose", d, shape, [x], {"method": r.random() < 0.5})
        if k == "expand":
            if shape[1] == 1:
                return E("expand", d, shape, [self.expr(d, (shape[0],), depth + 1)],
                         {"axis": 1, "func": r.random() < 0.3})
            if shape[0] == 1:
                return E("expand", d, shape, [self.expr(d, (shape[1],), depth + 1)],
                         {"axis": 0, "func": r.random() < 0.3})
            return self.binary(d, shape, depth)
        if k == "product":
            return self.product(d, shape, depth)
        if k == "part":
            return self.part(d, shape, depth)
        if k == "idiv":
            return E("bin", d, shape, [self.expr("int32", shape, depth + 1),
                                       self.divisor("int32", shape, depth)], {"sym": "/"})
        if k == "idx":  # argmax / argmin
            return self.reduction(d, shape, depth) or self.leaf(d, shape, depth)
        raise AssertionError(k)

    # ---- statements -------------------------------------------------------------------------
    def assign(self) -> TNode:
        v = self.rng.choice(self.tvars)
        return TNode("assign", v.name, [self.expr(v.dtype, v.shape)])

    def scatter(self) -> TNode:
        r = self.rng
        d = r.choice(self.dtypes)
        arr = self.scatter_array(d)
        idx = []
        for axis, n in enumerate((self.M, self.N)):
            mul = r.choice((1, 3, 5, 7))  # odd: a permutation of the block's rows
            i = E("bin", "int32", (n,), [E("bin", "int32", (n,), [self.iota((n,)),
                                                                  lit("int32", mul)],
                                           {"sym": "*"}), lit("int32", r.randint(0, 9))],
                  {"sym": "+"})
            i = E("bin", "int32", (n,), [i, lit("int32", n)], {"sym": "%"})
            i = E("bin", "int32", (n,), [E("scalar", "int32", (), attrs={
                "text": f"ct.bid({axis}) * {n}"}), i], {"sym": "+"})
            idx.append(E("expand", "int32", (n, 1) if axis == 0 else (1, n), [i],
                         {"axis": 1 if axis == 0 else 0}))
        shape = (self.M, self.N)
        vshape = shape if r.random() < 0.8 else r.choice(bcast_shapes(shape))
        exprs = idx + [self.expr(d, vshape, 1)]
        mask = r.random() < 0.4
        if mask:
            exprs.append(self.cond(shape, 1))
        return TNode("scatter", exprs=exprs, attrs={"array": arr.name, "nidx": 2, "mask": mask})

    def atomic(self) -> TNode:
        r = self.rng
        flt = r.random() < 0.3
        d = "float32" if flt else "int32"
        name = "cnt_f" if flt else "cnt_i"
        self.array(name, d, (8,), "cnt")
        shape = r.choice(((self.M,), (self.M, self.N), (self.N,), ()))
        idx = self.expr("int32", shape, 1)
        idx = E("bin", "int32", shape, [idx, lit("int32", 8)], {"sym": "%"})
        upd = self.expr(d, shape if r.random() < 0.8 else (), 1)
        return TNode("atomic", exprs=[idx, upd],
                     attrs={"array": name, "op": "add" if flt else self.atomic_op})

    def kloop(self) -> TNode | None:
        r = self.rng
        accs = [v for v in self.tvars if v.dtype == "float32" and len(v.shape) == 2]
        if not accs:
            return None
        v = r.choice(accs)
        (p, q), e, K = v.shape, r.choice(("float16", "bfloat16")), self.K
        kt = r.randint(1, 3)
        n = self.nloops
        self.nloops += 1
        gx, gy = self.grid
        a = self.array(f"mA{n}", e, (self.edge(p, gx), kt * K - r.choice((0, 0, r.randrange(K)))),
                       "mat")
        b = self.array(f"mB{n}", e, (a.shape[1], self.edge(q, gy)), "mat")
        k = f"k{n}"
        lo = E("load", e, (p, K), attrs={"array": a.name, "order": (0, 1), "padding": "ZERO",
                                         "index": (self.tile_index(0, cdiv(a.shape[0], p)), k)})
        ro = E("load", e, (K, q), attrs={"array": b.name, "order": (0, 1), "padding": "ZERO",
                                         "index": (k, self.tile_index(1, cdiv(b.shape[1], q)))})
        if r.random() < 0.35:  # operands from (batch, seq, heads, dim) arrays, as attention's
            lo, ro = self.bshd_operands(n, e, a, b, p, q, k)
        body = TNode("assign", v.name, [E("mma", "float32", v.shape,
                                          [lo, ro, E("var", "float32", v.shape,
                                                     attrs={"name": v.name})])])
        return TNode("for", k, attrs={"text": str(kt)}, body=[body])

    def bshd_operands(self, n: int, e: str, a, b, p: int, q: int, k: str) -> tuple[E, E]:
        """A and B of a k loop read from 4-d arrays (2, rows, 3, K) and (2, cols, 3, K), one
        batch and head of each: A as a (1, p, 1, K) tile, B transposed by its load's order,
        ``shape=(1, 1, K, q), order=(0, 2, 3, 1)`` (K^T of a key cache), each reshaped to the
        2-d operand."""
        r, K = self.rng, self.K
        a4 = self.array(f"mA{n}q", e, (2, a.shape[0], 3, a.shape[1]), "mat")
        b4 = self.array(f"mB{n}q", e, (2, b.shape[1], 3, a.shape[1]), "mat")
        bat, head = str(r.randint(0, 1)), str(r.randint(0, 2))
        la = E("load", e, (1, p, 1, K), attrs={
            "array": a4.name, "order": (0, 1, 2, 3), "padding": "ZERO",
            "index": (bat, self.tile_index(0, cdiv(a.shape[0], p)), head, k)})
        lb = E("load", e, (1, 1, K, q), attrs={
            "array": b4.name, "order": (0, 2, 3, 1), "padding": "ZERO",
            "index": (bat, head, k, self.tile_index(1, cdiv(b.shape[1], q)))})
        del self.arrays[a.name], self.arrays[b.name]  # (their shapes only)
        return E("reshape", e, (p, K), [la]), E("reshape", e, (K, q), [lb])

    def block_cond(self) -> str:
        r = self.rng
        return r.choice(("ct.bid(0) % 2 == 0", "ct.bid(1) == 0", "ct.bid(0) == ct.bid(1)",
                         f"ct.bid(0) < {r.randint(1, 2)}", "ct.bid(0) + ct.bid(1) != 1"))

    def stmts(self, n: int, depth: int) -> list[TNode]:
        r = self.rng
        out: list[TNode] = []
        for _ in range(n):
            x = r.random()
            if x < 0.08 and depth < 2:
                node = TNode("if", attrs={"text": self.block_cond()},
                             body=self.stmts(r.randint(1, 2), depth + 1))
                if r.random() < 0.5:
                    node.orelse = self.stmts(1, depth + 1)
                out.append(node)
            elif x < 0.16 and depth < 2:
                name = f"i{self.nloops}"
                self.nloops += 1
                count = r.choice(("2", "3", "ct.bid(0) + 1", "1"))
                self.loop_vars.append(name)
                body = self.stmts(r.randint(1, 2), depth + 1)
                self.loop_vars.pop()
                out.append(TNode("for", name, attrs={"text": count}, body=body))
            elif x < 0.24:
                out.append(self.kloop() or self.assign())
            elif x < 0.34:
                out.append(self.scatter())
            elif x < 0.42:
                out.append(self.atomic())
            elif x < 0.48:
                out.append(self.store() or self.assign())
            else:
                out.append(self.assign())
        return out

    def variables(self) -> None:
        r = self.rng
        M, N = self.M, self.N
        shapes = [(M, N), (M, N), (N, M), (M, 1), (1, N), (M,), (N,), ()]
        nvars = r.randint(3, 6)
        kinds = [(d, (M, N)) for d in self.dtypes[:2]]  # a main tile in two dtypes at least
        kinds += [(r.choice(self.dtypes), r.choice(shapes)) for _ in range(nvars - len(kinds))]
        gx, gy = self.grid
        for i, (d, shape) in enumerate(kinds):
            name = f"t{i}"
            main = shape == (M, N)
            order = (1, 0) if main and r.random() < 0.25 else None
            if main:
                out = (self.edge(M, gx), self.edge(N, gy))
                out = out[::-1] if order else out
            else:
                out = (gx, gy) + shape[:-1] + (
                    (max(1, shape[-1] - r.choice((0, r.randrange(shape[-1])))),)
                    if shape else ())
            init = self.load(d, shape)
            self.array(f"out_{name}", d, out, "out")
            self.tvars.append(TVar(name, d, shape, init, f"out_{name}", main, order))

    def program(self) -> TileProgram:
        self.variables()
        body = self.stmts(self.rng.randint(3, self.max_stmts), 0)
        order = {"in": 0, "mat": 1, "sc": 2, "cnt": 3, "out": 4}
        arrays = sorted(self.arrays.values(), key=lambda a: order[a.kind])
        return TileProgram(self.seed, self.grid, arrays, self.tvars, body, self.num_warps)


def generate(seed: int, max_stmts: int = 10) -> TileProgram:
    """The tile program of ``seed``: the same seed gives the same program."""
    return TileGen(seed, max_stmts).program()
