"""Random thread-level kernels from a seed, well formed and race free by construction.

A ``Program`` is a kernel's statements as a tree of ``Node``s over a fixed prelude and epilogue.
Every variable is declared in the prelude and every statement only reassigns existing ones, so
removing any node (the minimizer's move) leaves a kernel that still compiles and is still
race free. The rules that make a kernel well defined on every target:

- each assignment casts to its variable's dtype (``v = np.int32(...)``): Python mode runs the
  kernel's own Python, where an uncast ``math.sin(np.float32)`` would be a float64;
- binary operators join values of one dtype only (NumPy's promotion of mixed types is not the
  IR's C-like one); other dtypes come in through explicit casts;
- integer literals are 0..100, which every integer dtype holds (NumPy 2 refuses a Python int
  out of range); divisors are ``b % 6 + 2`` or ``b % 6 - 6``, never 0 (-1 is one: the most
  negative value // -1 wraps to itself); shift counts
  are masked to the width, to twice the width, or left as they are (a count past the width,
  or a negative one, shifts every bit out: 0, or -1 for ``>>`` of a negative value); a float
  becomes an integer only inside a range the integer holds, and a non-negative one for
  unsigned types (else the GPU saturates where NumPy wraps);
- float results of math functions go to sink variables (``w_float32``) that nothing reads,
  so their last-bit differences between targets do not spread; ``+ - * /`` are IEEE exact;
- barriers and full-mask warp operations stand at the top level, before any early return;
  shared memory is written at the thread's own slot, then a barrier, then read at another
  thread's slot, then a barrier; atomics are order-independent integer ones whose return
  value is unused.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

INTS = ("int8", "uint8", "int32", "uint32", "int64")
FLOATS = ("float16", "float32", "float64")
DTYPES = INTS + FLOATS
WARP_DTYPES = ("int32", "uint32", "int64", "float32", "float64")
ATOMIC_DTYPES = ("int32", "uint32", "int64")
NVARS = 3          # v_<dtype>_0 .. v_<dtype>_2
NLOC = 4           # local array length
FULL = "0xFFFFFFFF"
BITS = {"int8": 8, "uint8": 8, "int32": 32, "uint32": 32, "int64": 64}
# the largest magnitude a float may have to be cast to this integer type
CAST_LIMIT = {"int8": 100, "uint8": 200, "int32": 60000, "uint32": 60000, "int64": 60000}
MATH = ("math.sin", "math.cos", "math.exp", "math.sqrt", "math.log", "math.tanh", "math.atan",
        "math.floor", "math.fabs")
DEVICE_FUNCS = '''
def dev_mix(a, b):
    return a * b + a


def dev_gap(a, b):
    if a < b:
        return b - a
    return a - b
'''


def ncols() -> int:
    """Columns of each output array: the variables, then the local array, then the sink."""
    return NVARS + NLOC + 1


@dataclass
class Node:
    """One statement (``lines``) or a block: ``lines`` is its header, ``body`` its children,
    ``orelse`` an ``else`` branch. ``kind``: ``stmt``, ``if``, ``for``, ``sync`` (a barrier or
    warp operation: top level only), ``return``."""

    kind: str
    lines: list[str]
    body: list[Node] = field(default_factory=list)
    orelse: list[Node] = field(default_factory=list)

    def render(self, indent: int) -> list[str]:
        pad = "    " * indent
        out = [pad + s for s in self.lines]
        if self.kind in ("if", "for"):
            out += render_block(self.body, indent + 1)
            if self.orelse:
                out.append(pad + "else:")
                out += render_block(self.orelse, indent + 1)
        return out

    def size(self) -> int:
        return 1 + sum(n.size() for n in self.body) + sum(n.size() for n in self.orelse)


def render_block(nodes: list[Node], indent: int) -> list[str]:
    out = [line for n in nodes for line in n.render(indent)]
    return out or ["    " * indent + "pass"]


@dataclass
class Program:
    """A generated kernel: its seed, dtypes, launch and statements."""

    seed: int
    dtypes: tuple[str, ...]
    block: int
    grid: int
    body: list[Node]

    @property
    def nthreads(self) -> int:
        return self.block * self.grid

    def size(self) -> int:
        return sum(n.size() for n in self.body)

    def params(self) -> list[str]:
        return ([f"in_{d}" for d in self.dtypes] + [f"out_{d}" for d in self.dtypes]
                + [f"cnt_{d}" for d in ATOMIC_DTYPES])

    def epilogue(self) -> list[str]:
        out = []
        for d in self.dtypes:
            out += [f"out_{d}[gid, {k}] = v_{d}_{k}" for k in range(NVARS)]
            out += [f"out_{d}[gid, {NVARS + k}] = loc_{d}[{k}]" for k in range(NLOC)]
            out.append(f"out_{d}[gid, {NVARS + NLOC}] = w_{d}")
        return out

    def prelude(self) -> list[str]:
        out = ["gid = cuda.grid(1)", "tid = cuda.threadIdx.x",
               "t32 = np.int32(in_int32[gid, 0] & 0) + np.int32(cuda.threadIdx.x)"]
        for d in self.dtypes:
            out += [f"v_{d}_{k} = in_{d}[gid, {k}]" for k in range(NVARS)]
            out.append(f"w_{d} = in_{d}[gid, 0]")
            out.append(f"loc_{d} = cuda.local.array({NLOC}, np.{d})")
            out += [f"loc_{d}[{k}] = in_{d}[gid, {k % NVARS}]" for k in range(NLOC)]
            out.append(f"sh_{d} = cuda.shared.array({self.block}, np.{d})")
        return out

    def source(self) -> str:
        """The kernel module's text: imports, device functions, ``kernel``."""
        head = ["import math", "", "import numpy as np", "", "import threadtile as cuda", ""]
        sig = ", ".join(self.params())
        lines = [f"def kernel({sig}):"]
        lines += ["    " + s for s in self.prelude()]
        lines += render_block(self.body, 1) if self.body else []
        lines += ["    " + s for s in self.epilogue()]
        return "\n".join(head + [DEVICE_FUNCS.strip(), "", "", "@cuda.jit"] + lines) + "\n"

    def inputs(self) -> dict[str, np.ndarray]:
        """Fresh input, output and counter arrays for one launch, from the seed."""
        rng = np.random.default_rng(self.seed)
        n = self.nthreads
        arrays: dict[str, np.ndarray] = {}
        for d in self.dtypes:
            dt = np.dtype(d)
            if dt.kind == "f":
                span = 8.0 if d == "float16" else 50.0
                a = rng.uniform(-span, span, (n, NVARS)).astype(dt)
                a.flat[rng.integers(0, a.size, 3)] = [0.0, -0.0, 0.5]
            else:
                info = np.iinfo(dt)
                a = rng.integers(info.min, info.max, (n, NVARS), dtype=dt, endpoint=True)
                a[:, 0] = rng.integers(-3 if info.min < 0 else 0, 40, n).astype(dt)
            arrays[f"in_{d}"] = a
        for d in self.dtypes:
            arrays[f"out_{d}"] = np.zeros((n, ncols()), d)
        for d in ATOMIC_DTYPES:
            arrays[f"cnt_{d}"] = np.zeros(self.grid, d)
        return arrays


class Gen:
    """The generator's state for one program: its random stream and dtypes."""

    def __init__(self, seed: int, max_stmts: int = 14):
        self.rng = random.Random(seed)
        self.seed = seed
        r = self.rng
        extra = [d for d in DTYPES if d != "int32"]
        self.dtypes = ("int32",) + tuple(sorted(r.sample(extra, r.randint(2, 4)),
                                                key=DTYPES.index))
        self.block = r.choice((32, 64, 64, 48))
        self.grid = r.choice((1, 2))
        self.max_stmts = max_stmts
        self.loop_vars: list[str] = []
        self.nloops = 0
        self.in_cond = 0  # inside a conditional expression: no device calls (refused there)
        # one operation per counter: add, max, xor... each commute with themselves, not with
        # each other, so a counter mixing two would depend on the atomics' order
        self.atomic_op = {d: r.choice(("add", "add", "max", "min", "xor", "or_", "and_"))
                          for d in ATOMIC_DTYPES}

    # ---- expressions ------------------------------------------------------------------------

    def var(self, d: str) -> str:
        return f"v_{d}_{self.rng.randrange(NVARS)}"

    def cast(self, d: str, depth: int) -> str:
        """A value of another dtype (or a loop counter, a lane id) cast to ``d``."""
        r = self.rng
        src = r.choice(self.dtypes)
        if self.loop_vars and r.random() < 0.3:
            return f"np.{d}({r.choice(self.loop_vars)})"
        e = self.expr(src, depth + 1)
        if src in FLOATS and d in INTS:
            lim = CAST_LIMIT[d]
            lo = f"0 <= {e} < {lim}" if d.startswith("u") else f"abs({e}) < {lim}"
            return f"(np.{d}({e}) if {lo} else np.{d}(7))"
        return f"np.{d}({e})"

    def leaf(self, d: str, depth: int) -> str:
        r = self.rng
        x = r.random()
        if x < 0.45:
            return self.var(d)
        if x < 0.6:
            lit = r.randint(0, 100) if d in INTS else r.choice((0.5, 1.5, 3.0, 0.25))
            return f"np.{d}({lit})"
        if x < 0.7:
            return f"loc_{d}[{self.index()}]"
        if x < 0.8:
            return f"in_{d}[gid, {r.randrange(NVARS)}]"
        return self.cast(d, depth)

    def index(self) -> str:
        """An index 0..NLOC-1: Python's ``%`` of an integer variable is never negative."""
        d = self.rng.choice([t for t in self.dtypes if t in INTS])
        return f"{self.var(d)} % {NLOC}"

    def expr(self, d: str, depth: int = 0) -> str:
        r = self.rng
        if depth >= 3 or r.random() < 0.3:
            return self.leaf(d, depth)
        op = r.choice(["+", "-", "*", "cond"] + (
            ["//", "%", "&", "|", "^", "<<", ">>", "min", "max", "neg"] if d in INTS
            else ["/", "%", "neg"]) + ([] if self.in_cond else ["dev"]))
        self.in_cond += op == "cond"
        a, b = self.expr(d, depth + 1), self.expr(d, depth + 1)
        c = self.cond() if op == "cond" else ""
        self.in_cond -= op == "cond"
        if op in ("//", "%") and d in INTS:
            neg = not d.startswith("u") and r.random() < 0.5
            div = f"({b} % 6 - 6)" if neg else f"({b} % 6 + 2)"  # -1 too: MIN // -1 wraps
            return f"({a} {op} {div})"
        if op == "%":
            return f"({a} % (abs({b}) + np.{d}(1)))"
        if op in ("<<", ">>"):  # a count within the width, past it, or any (negative too)
            w, k = BITS[d], r.random()
            count = f"({b} & {w - 1})" if k < 0.6 else f"({b} & {2 * w - 1})" if k < 0.85 else b
            return f"({a} {op} {count})"
        if op in ("min", "max"):
            return f"{op}({a}, {b})"
        if op == "neg":
            return f"(-{a})"
        if op == "dev":
            return f"np.{d}({r.choice(('dev_mix', 'dev_gap'))}({a}, {b}))"
        if op == "cond":
            return f"({a} if {c} else {b})"
        return f"({a} {op} {b})"

    def cond(self) -> str:
        r = self.rng
        x = r.random()
        if x < 0.3:
            return f"t32 % {r.randint(2, 5)} == {r.randint(0, 1)}"
        d = r.choice(self.dtypes)
        if x < 0.5 and d in INTS:
            return f"({self.var(d)} & 1) == 0"
        return f"{self.expr(d, 2)} {r.choice(('<', '<=', '>', '!=', '=='))} {self.expr(d, 2)}"

    # ---- statements -------------------------------------------------------------------------

    def assign(self) -> Node:
        r = self.rng
        d = r.choice(self.dtypes)
        x = r.random()
        if x < 0.15:
            return Node("stmt", [f"loc_{d}[{self.index()}] = np.{d}({self.expr(d)})"])
        if x < 0.3 and d in FLOATS:
            fn = r.choice(MATH)
            arg = self.expr(d, 1)
            arg = {"math.exp": f"min({arg}, np.{d}(10))", "math.sqrt": f"abs({arg})",
                   "math.log": f"abs({arg}) + np.{d}(1)"}.get(fn, arg)
            return Node("stmt", [f"w_{d} = np.{d}({fn}({arg}))"])
        if x < 0.4:
            op = r.choice(("+=", "-=", "*=", "^=") if d in INTS else ("+=", "-=", "*="))
            return Node("stmt", [f"{self.var(d)} {op} {self.expr(d, 1)}"])
        return Node("stmt", [f"{self.var(d)} = np.{d}({self.expr(d)})"])

    def atomic(self) -> Node:
        r = self.rng
        d = r.choice(ATOMIC_DTYPES)
        op = self.atomic_op[d]
        src = r.choice(self.dtypes)
        return Node("stmt", [f"cuda.atomic.{op}(cnt_{d}, cuda.blockIdx.x, "
                             f"np.{d}({self.expr(src, 2) if src in INTS else self.var('int32')}))"])

    def stmts(self, n: int, depth: int, in_loop: bool) -> list[Node]:
        r = self.rng
        out: list[Node] = []
        for _ in range(n):
            x = r.random()
            if x < 0.15 and depth < 2:
                node = Node("if", [f"if {self.cond()}:"], self.stmts(r.randint(1, 3), depth + 1,
                                                                      in_loop))
                if r.random() < 0.5:
                    node.orelse = self.stmts(r.randint(1, 2), depth + 1, in_loop)
                out.append(node)
            elif x < 0.27 and depth < 2:
                out.append(self.loop(depth))
            elif x < 0.33 and in_loop:
                out.append(Node("if", [f"if {self.cond()}:"],
                                [Node("stmt", [r.choice(("break", "continue"))])]))
            elif x < 0.4:
                out.append(self.atomic())
            else:
                out.append(self.assign())
        return out

    def loop(self, depth: int) -> Node:
        r = self.rng
        name = f"i{self.nloops}"
        self.nloops += 1
        stop = r.choice((str(r.randint(1, 4)), "t32 % 4", f"{self.var('int32')} % 3 + 1"))
        head = f"for {name} in range({stop}):" if r.random() < 0.7 else \
            f"for {name} in range({r.randint(0, 3)}, {stop}, -1):"
        self.loop_vars.append(name)
        body = self.stmts(r.randint(1, 3), depth + 1, True)
        self.loop_vars.pop()
        return Node("for", [head], body)

    def sync(self) -> Node:
        """A barrier or full-mask warp operation (top level only)."""
        r = self.rng
        x = r.random()
        if x < 0.5:
            d = r.choice(self.dtypes)
            other = f"({'tid'} + {r.randint(1, self.block - 1)}) % {self.block}"
            op = r.choice(("+", "-", "*") if d in FLOATS else ("+", "^", "-"))
            dst = self.var(d)
            return Node("sync", [f"sh_{d}[tid] = {self.var(d)}", "cuda.syncthreads()",
                                 f"{dst} = np.{d}({dst} {op} sh_{d}[{other}])",
                                 "cuda.syncthreads()"])
        if x < 0.8:
            d = r.choice([t for t in self.dtypes if t in WARP_DTYPES])
            # a source lane past a partial last warp does not exist: its value is undefined
            # on the GPU (H100: 0), so such programs keep their sources inside the warp
            part = self.block % 32
            kinds = [("shfl_up_sync", r.randint(1, 8))]
            if part:
                kinds += [("shfl_xor_sync", r.choice([x for x in (1, 2, 4, 8) if x < part])),
                          ("shfl_sync", r.randint(0, part - 1))]
            else:
                kinds += [("shfl_xor_sync", r.choice((1, 2, 4, 16))),
                          ("shfl_down_sync", r.randint(1, 8)),
                          ("shfl_sync", r.randint(0, 31))]
            kind, arg = r.choice(kinds)
            dst = self.var(d)
            return Node("sync", [f"{dst} = cuda.{kind}({FULL}, {self.var(d)}, {arg})"])
        vote = r.choice(("ballot_sync", "any_sync", "all_sync"))
        val = f"cuda.{vote}({FULL}, {self.cond()})"
        if vote == "ballot_sync":
            val = f"({val} & 0xFFFF)"
        dst = self.var("int32")
        return Node("sync", [f"{dst} = np.int32({dst} ^ np.int32({val}))"])

    def early_return(self, epilogue: list[str]) -> Node:
        return Node("if", [f"if {self.cond()}:"], [Node("return", epilogue + ["return"])])

    def program(self) -> Program:
        r = self.rng
        prog = Program(self.seed, self.dtypes, self.block, self.grid, [])
        body: list[Node] = []
        n = r.randint(4, self.max_stmts)
        for _ in range(n):
            if r.random() < 0.25:
                body.append(self.sync())
            else:
                body += self.stmts(1, 0, False)
        tail = self.stmts(r.randint(0, 3), 0, False)
        if r.random() < 0.5:
            tail.insert(r.randint(0, len(tail)), self.early_return(prog.epilogue()))
        prog.body = body + tail
        return prog


def generate(seed: int, max_stmts: int = 14) -> Program:
    """The program of ``seed``: the same seed gives the same program."""
    return Gen(seed, max_stmts).program()
