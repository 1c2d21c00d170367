"""IR -> readable CUDA C++.

Names come from the Python source; every statement is preceded by a ``#line`` directive that
points at its Python line, so NVRTC's errors, ``-lineinfo`` profiles and cuda-gdb all speak of
the Python file. Operators and intrinsics are spelled by the tables below: this backend differs
from the simulator by data, not by branches through the code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...ir import coop as ircoop
from ...ir import nodes as ir
from ...ir import raises
from ...ir.operands import COPIES
from ...lang.records import RecordType
from ...lang.types import (
    ArrayType,
    Scalar,
    float32,
    float64,
    int64,
)
from . import coop, intrinsics, needs, placement, records, tiles
from .cxx import PREC as _PREC
from .cxx import ctype, literal, tuple_definition, tuple_struct

HEADER = "threadtile.h"
HEADERS = Path(__file__).parent / "include"  # threadtile.h, tile.h and tile/

_SPECIAL = {"laneid": "int(tt::laneid())"}

_CXX_RESERVED = set("""alignas alignof and and_eq asm auto bitand bitor bool break case catch
char char16_t char32_t class compl const constexpr const_cast continue decltype default delete do
double dynamic_cast else enum explicit export extern false float for friend goto if inline int
long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast return short signed sizeof static static_assert static_cast struct
switch template this thread_local throw true try typedef typeid typename union unsigned using
virtual void volatile wchar_t while xor xor_eq threadIdx blockIdx blockDim gridDim warpSize dim3
tt printf min max abs int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
main""".split())
# a local named like a function the generated code calls would hide it: `double log = log(x);`
_CXX_RESERVED |= set(intrinsics.MATH) | {n + "f" for n in intrinsics.MATH} | {
    "isnan", "isinf", "isfinite", "llabs", "fabsf", "powf", "fmaf"}


def cxx_function_name(name: str) -> str:
    """The C++ name of a kernel or device function: its Python name, with ``_`` after a C++
    keyword or a name the generated code uses (a kernel may be called ``double``)."""
    return name + "_" if name in _CXX_RESERVED else name


@dataclass(frozen=True)
class CudaSource:
    """A module's CUDA C++ and what the host must know about it: the kernel's entry point, the
    dynamic shared memory its tile operations need at the start of the block's dynamic shared
    memory (``scratch``; ``scratch_sm90a`` where sm_90a's build without the portable k loop
    needs another amount, for the Hopper main loop of a matmul: tiles.scratch_sizes), and the
    hidden tensor-map parameters after the user's arguments, one ``(array parameter index,
    (box width, box height))`` each (runtime/tensormaps.py)."""

    text: str
    entry: str
    scratch: int = 0
    scratch_sm90a: int = 0
    tensormaps: tuple = ()
    cooperative: bool = False  # cg.this_grid(): launched with cuLaunchCooperativeKernel
    # jit(debug=True): the exceptions the kernel may raise, by the code tt_raised holds (the
    # records of ir/raises.py as ``[module, qualname, args, function, file, line]``)
    raises: tuple = ()
    # the block shape threadtile.coop's block primitives are compiled for (ir/coop.py): a
    # launch with another is refused
    coop_block: tuple = ()
    # per tensor map, the multiple of the rows of each batch a launch's 3-d array must be for
    # the Hopper loop of a batched k loop (its tiles then never cross a batch), 0 for none:
    # the launcher passes a zero map otherwise, which takes the build with the portable loop
    tensormap_rows: tuple = ()
    # a tile kernel's fixed block, where the compiler may ask ptxas for more blocks a
    # multiprocessor (blockfit.py: no Hopper k loop); 0 otherwise
    fit_threads: int = 0
    # the kernel's occupancy hint as asked (0: none), which the source's bounds spell scaled
    # where the compiler grew the block (blockfit.py tries the hint's own count first)
    fit_blocks: int = 0

    def scratch_for(self, arch: str, options: tuple = ()) -> int:
        """The dynamic shared memory the tile operations take on ``arch`` with compile
        ``options``: on sm_90a, for the build without the portable k loop (tiles.TMA_ONLY
        among the options) or with it."""
        if arch != "sm_90a" or not self.scratch_sm90a:
            return self.scratch
        if tiles.TMA_ONLY in options:
            return self.scratch_sm90a
        return max(self.scratch, self.scratch_sm90a)

    def to_json(self) -> dict:
        return {"text": self.text, "entry": self.entry, "scratch": self.scratch,
                "scratch_sm90a": self.scratch_sm90a,
                "tensormaps": [[a, list(box)] for a, box in self.tensormaps],
                "cooperative": self.cooperative, "raises": [list(r) for r in self.raises],
                "coop_block": list(self.coop_block),
                "tensormap_rows": list(self.tensormap_rows), "fit_threads": self.fit_threads,
                "fit_blocks": self.fit_blocks}

    @classmethod
    def from_json(cls, d: dict) -> CudaSource:
        return cls(d["text"], d["entry"], int(d["scratch"]), int(d["scratch_sm90a"]),
                   tuple((int(a), (int(w), int(h))) for a, (w, h) in d["tensormaps"]),
                   bool(d.get("cooperative", False)),
                   tuple(tuple(r) for r in d.get("raises", ())),
                   tuple(int(n) for n in d.get("coop_block", ())),
                   tuple(int(n) for n in d.get("tensormap_rows", ())),
                   int(d.get("fit_threads", 0)), int(d.get("fit_blocks", 0)))


def cooperative(module: ir.Module) -> bool:
    """Whether the kernel uses ``cg.this_grid()``: numba launches such a kernel
    cooperatively (the whole grid resident at once, so that a grid barrier can be met)."""
    return any(isinstance(e, ir.Call) and e.name.startswith("cg.")
               for e in ir.walk_module_exprs(module))


def emit_module(module: ir.Module, line_directives: bool = True) -> CudaSource:
    """The whole translation unit for ``module`` (includes, constants, device functions,
    kernel) with its host-side facts."""
    out = ["// Generated by threadtile from "
           f"{module.kernel.source_file or '<unknown>'}: {module.kernel.pyname}()"]
    if needs.uses_half(module):
        out += ["#include <cuda_fp16.h>", "#include <cuda_bf16.h>", "#define TT_HALF 1"]
        if needs.uses_narrow(module):
            out += ["#include <cuda_fp8.h>", "#include <cuda_fp4.h>", "#define TT_FP8 1"]
    if cooperative(module):
        out.append("#include <cooperative_groups.h>")
    out.append(f'#include "{HEADER}"')
    out += needs.complex_includes(module)
    out += coop.includes(module)
    has_tiles = tiles.uses_tiles(module)
    scratch = scratch_sm90a = 0
    if has_tiles:
        scratch, scratch_sm90a = tiles.scratch_sizes(module)
        out += tiles.prelude(module, scratch, scratch_sm90a)
    out.append("")
    if any(s.dynamic for f in module.kernel.all_functions() for s in ir.walk_stmts(f.body)
           if isinstance(s, ir.ArrayDecl)):
        out.append("extern __shared__ __align__(16) unsigned char tt_dynamic_smem[];")
    out += [records.definition(t) for t in needs.record_types(module)]
    for d in module.const_arrays:
        # C++ has no zero-length arrays: an empty one keeps one unread element (its shape,
        # which len() and .shape read, stays the array's own)
        dims = "".join(f"[{max(n, 1)}]" for n in d.shape)
        if isinstance(d.type.dtype, RecordType):
            flat = np.ascontiguousarray(d.init).reshape(-1)
            vals = ", ".join(records.initializer(d.type.dtype, flat[k:k + 1].tobytes())
                             for k in range(flat.size))
        else:
            vals = ", ".join(literal(v, d.type.dtype) for v in d.init.ravel().tolist())
        out.append(f"__constant__ {d.type.dtype.cname} {d.name}{dims} = {{{vals}}};")
    out += [tuple_definition(t) for t in needs.tuple_types(module)]
    statics = {d.name: d for d in module.const_arrays}
    formats: list[str] = []  # print()'s format strings, in constant memory as numba has them
    formats_at = len(out)
    raised: list[int] = []  # the ir/raises.py records the kernel reports, by their code
    coop_block = ircoop.required_block(module)
    # CUB's block primitives run with exactly their block: registers are allotted for it
    bounds = module.launch_bounds or (
        (coop_block[0] * coop_block[1] * coop_block[2],) if coop_block else None)
    for f in module.kernel.all_functions():
        out.append("")
        fe = FunctionEmitter(f, statics, line_directives)
        fe.formats = formats
        fe.raises, fe.report_raises = raised, module.report_raises
        fe.threads, fe.has_tiles = module.threads, has_tiles
        fe.occupancy = module.occupancy
        fe.launch_bounds = bounds
        fe.captured = {d.name: d for d in module.captured}
        if f is module.kernel:
            fe.tensormaps = tiles.tensormap_names(module)
            fe.operand_maps = tiles.operand_map_names(module)
            fe.external = not f.is_kernel  # a device function compiled on its own
        out.append(fe.emit())
    out[formats_at:formats_at] = [f'__constant__ char tt_fmt{k}[] = "{text}";'
                                  for k, text in enumerate(formats)] + (
        ["__device__ unsigned long long tt_raised[4];  // code + 1, thread, block (debug)"]
        if raised else [])
    maps = tiles.tensormap_params(module)
    asked = module.occupancy_asked or 0
    fit = module.threads if has_tiles and module.kernel.is_kernel and module.threads and \
        not tiles.hopper_loops(module) else 0
    return CudaSource("\n".join(out) + "\n", cxx_function_name(module.kernel.name), scratch,
                      scratch_sm90a, maps, cooperative(module),
                      tuple(raises.describe(k) for k in raised),
                      coop_block or (), tiles.tensormap_rows(module), fit, asked if fit else 0)


def _is_copy(s) -> bool:
    """Whether statement ``s`` assigns an mma operand's copy into shared memory."""
    return isinstance(s, ir.Assign) and isinstance(s.value, ir.TileOp) and \
        s.value.op in COPIES


class FunctionEmitter:
    threads: int | None = None  # threads per block, when fixed (tile operations)
    has_tiles = False  # the module uses tile operations (and their dynamic shared scratch)
    tensormaps: dict = {}  # id of an mma_loop op -> its tensor-map parameters (the kernel's)
    operand_maps: dict = {}  # id of a load_operand TMA copies -> (its map's name, its mbarrier)
    after_copy: set  # ids of the load_operands that follow another operand's copy (block)
    occupancy: int | None = None  # blocks per SM for __launch_bounds__ (with threads)
    loops = 0  # the loops around the statement being emitted
    captured: dict = {}  # name -> ArrayDecl of the captured global device arrays
    launch_bounds: tuple[int, ...] | None = None  # jit(launch_bounds=...), as given
    external = False  # a device function as the module's root: extern "C", not inlined
    formats: list[str] = []  # the module's printf formats (emit_module gives each its own)
    raises: list[int] = []  # the raise records reported to the host, by code (debug=True)
    report_raises = False

    def raise_call(self, x: ir.Call) -> str:
        """A raise: reported to the host with the kernel's debug=True, else the thread stops
        (numba's behaviour in both); a ct.assert_ traps (a launch error) instead."""
        k = x.args[0].value
        if not self.report_raises:
            return "__trap()" if raises.traps(k) else 'asm volatile("exit;")'
        if k not in self.raises:
            self.raises.append(k)
        return f"tt::report_raise(tt_raised, {self.raises.index(k)})"

    def __init__(self, f: ir.Function, statics: dict[str, ir.ArrayDecl], lines: bool):
        self.f = f
        self.lines = lines
        self.statics = dict(statics)  # names that are C arrays: shared/local/constant
        self.out: list[str] = []
        self.indent = 1
        self.last_line = None
        self.names: dict[str, str] = {}
        for name in list(f.locals) + [p.name for p in f.params]:
            self.names[name] = name + "_" if name in _CXX_RESERVED or name.startswith(
                "tt_") else name
        self.nonneg = placement.nonneg_vars(f)
        self.declare_top, self.declare_inline, self.for_declares = placement.placement(f)
        self.taken = set(self.names.values())
        self.sites = 0  # tile.h's astype<U, Site>: a number per conversion in the source
        self.after_copy = set()

    def n(self, name: str) -> str:
        return self.names.get(name, name)

    def emit(self) -> str:
        f = self.f
        maps = [m for names in self.tensormaps.values() for m in names] + \
            [m for m, _ in self.operand_maps.values()]
        params = ", ".join([f"{ctype(p.type)} {self.n(p.name)}" for p in f.params
                            if not p.is_constant] +
                           [f"const __grid_constant__ tt::tile::sm90::TensorMap {m}"
                            for m in maps])
        pre: list[str] = []
        if f.is_kernel:
            bounds = ""
            if self.threads:  # a fixed block: registers are allotted for exactly that
                occ = f", {self.occupancy}" if self.occupancy else ""
                # k loops on the Hopper main loop: a build may add a producer warp
                extra = " + TT_PRODUCER_THREADS" if self.tensormaps else ""
                bounds = f"__launch_bounds__({self.threads}{extra}{occ}) "
                if self.tensormaps:  # ... and may pair its blocks in clusters (kloop_sm90.h)
                    bounds += "TT_CLUSTER_DIMS "
            elif self.launch_bounds:
                bounds = f"__launch_bounds__({', '.join(map(str, self.launch_bounds[:2]))}) "
                if len(self.launch_bounds) == 3:  # blocks per cluster: sm_90 on only
                    macro = f"TT_LAUNCH_BOUNDS_{f.name}"
                    pre = ["#if __CUDA_ARCH__ >= 900",
                           f"#define {macro} __launch_bounds__"
                           f"({', '.join(map(str, self.launch_bounds))})",
                           "#else", f"#define {macro} {bounds}", "#endif"]
                    bounds = f"{macro} "
            head = f'extern "C" __global__ void {bounds}{cxx_function_name(f.name)}({params})'
        elif self.external:  # PTX keeps it (with -rdc) as `.visible .func name`
            head = (f'extern "C" __device__ {ctype(f.return_type)} '
                    f'{cxx_function_name(f.name)}({params})')
        else:
            head = (f"__device__ __forceinline__ {ctype(f.return_type)} "
                    f"{cxx_function_name(f.name)}({params})")
        lines = list(pre)
        if self.lines:
            lines.append(f'#line {f.loc.line} "{f.source_file}"')
        lines.append(head + " {")
        self.out = lines
        for name in self.declare_top:
            t = f.locals[name]
            self.line(f"{ctype(t)} {self.n(name)};")
        self._declare_captured()
        producer = f.is_kernel and bool(self.tensormaps)
        if producer:  # the producer warp of a build with one leaves here (kloop_sm90.h)
            self.line("TT_PRODUCER_ENTRY();")
        if f.is_kernel and self.operand_maps:  # their mbarriers (tile/operands.h)
            self.line("TT_TMA_INIT();")
        self.block(f.body)
        if producer and not (f.body and isinstance(f.body[-1], ir.Return)):
            self.line("TT_PRODUCER_EXIT();")
        self.out.append("}")
        return "\n".join(self.out)

    def _declare_captured(self) -> None:
        """The global device arrays this function reads by name, at their compile-time
        address (frontend/captured.py)."""
        if not self.captured:
            return
        used = {e.name for s in ir.walk_stmts(self.f.body) for x in ir.stmt_exprs(s)
                for e in ir.walk_expr(x) if isinstance(e, ir.Var)}
        for name, d in self.captured.items():
            if name not in used:
                continue
            t = d.type.dtype.cname
            shape = ", ".join(f"{n}LL" for n in d.shape)
            strides = ", ".join(f"{n}LL" for n in d.init.strides)
            geo = f", {{{shape}}}, {{{strides}}}" if d.shape else ""  # 0-d: the pointer
            self.line(f"const {ctype(d.type)} {name}{{({t}*){d.init.ptr:#x}ULL{geo}}};")

    # -- statements ----------------------------------------------------------------------------

    def line(self, text: str, loc: ir.Loc | None = None) -> None:
        if loc is not None and self.lines and loc.line != self.last_line:
            self.out.append(f'#line {loc.line} "{loc.filename}"')
            self.last_line = loc.line
        self.out.append("  " * self.indent + text)

    def block(self, stmts: list[ir.Stmt]) -> None:
        prev = None
        for s in stmts:
            # an operand's copy right after another's needs no barrier of its own: the first
            # one's follows every read of both buffers (tile/operands.h, load_operand's Sync)
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.TileOp) and \
                    s.value.op == "load_operand" and _is_copy(prev):
                self.after_copy.add(id(s.value))
            getattr(self, "s_" + type(s).__name__)(s)
            prev = s

    def nested(self, stmts: list[ir.Stmt]) -> None:
        self.indent += 1
        self.block(stmts)
        self.indent -= 1

    def s_Assign(self, s: ir.Assign) -> None:
        # an array bound to a new name is a view value: a static C array (shared, local or
        # constant) has to be wrapped, else `auto c = const_0;` decays to a bare pointer
        v = self.view(s.value) if isinstance(s.value.type, ArrayType) else self.e(s.value)
        if id(s) in self.declare_inline:
            t = self.f.locals[s.name]
            decl = "auto" if isinstance(t, ArrayType) else ctype(t)
            self.line(f"{decl} {self.n(s.name)} = {v};", s.loc)
        else:
            self.line(f"{self.n(s.name)} = {v};", s.loc)

    def s_Store(self, s: ir.Store) -> None:
        self.line(f"{self.ref(s.array, s.indices)} = {self.e(s.value)};", s.loc)

    def s_ExprStmt(self, s: ir.ExprStmt) -> None:
        self.line(f"{self.e(s.value)};", s.loc)

    def s_If(self, s: ir.If, prefix: str = "if") -> None:
        cond = self._opaque_eq(s.cond) if _leaves_loop(s) else None
        self.line(f"{prefix} ({cond or self.e(s.cond)}) {{", s.loc)
        self.nested(s.then)
        if len(s.orelse) == 1 and isinstance(s.orelse[0], ir.If):
            self.out.append("  " * self.indent + "} else")
            self.s_If(s.orelse[0], prefix="if")
            return
        if s.orelse:
            self.line("} else {")
            self.nested(s.orelse)
        self.line("}")

    def _opaque_eq(self, c: ir.Expr) -> str | None:
        """An integer ``==`` or ``!=`` as ``tt::opaque_eq`` (threadtile.h), for an ``if`` that
        leaves its loop: ptxas (CUDA 13.4, 13.5; sm_80 to sm_90) turns a chain of such
        compares into a jump table whose ``break`` skips the loop body's ``BREAK`` and then
        takes the warp as converged after the loop, so a warp shuffle, vote or tensor-core
        instruction there runs with the warp split (the fuzzer's seed 82755). The compare
        through inline PTX is not matched as a switch."""
        if not (isinstance(c, ir.Compare) and c.op in ("==", "!=")):
            return None
        if not all(isinstance(x.type, Scalar) and x.type.kind in "iu" for x in (c.left, c.right)):
            return None
        a = _implicit(c.left, c.right)
        b = _implicit(c.right, a)
        eq = f"tt::opaque_eq({self.e(a)}, {self.e(b)})"
        return eq if c.op == "==" else "!" + eq

    def s_For(self, s: ir.For) -> None:
        t = ctype(self.f.locals[s.var])
        var = self.n(s.var)
        assigned = {x.name for x in ir.walk_stmts(s.body) if isinstance(x, ir.Assign)}
        # Python's loop variable is a copy of a hidden counter: assigning it in the body does
        # not change the iteration, and after the loop it holds the last value, not the stop.
        # The C++ loop counts in `var` itself only where neither difference can show.
        own = id(s) in self.for_declares and s.var not in assigned
        it = var if own else self.fresh(f"tt_{var}")
        inits = [f"{it} = {self.e(s.start)}"]
        # range() evaluates its bounds once, before the first iteration
        stop = self.e(s.stop)
        if not _invariant(s.stop, assigned | {s.var}):
            inits.append(f"{self.fresh(var + '_stop')} = {stop}")
            stop = inits[-1].split(" = ")[0]
        step = s.step
        if isinstance(step, ir.Const):
            cond = f"{it} < {stop}" if step.value > 0 else f"{it} > {stop}"
            inc = f"++{it}" if step.value == 1 else (f"--{it}" if step.value == -1 else
                                                      f"{it} += {self.e(step)}")
        else:
            st = self.fresh(var + "_step")
            inits.append(f"{st} = {self.e(step)}")
            cond = f"{st} > 0 ? {it} < {stop} : {it} > {stop}"
            inc = f"{it} += {st}"
        self.line(f"for ({t} {', '.join(inits)}; {cond}; {inc}) {{", s.loc)
        if not own:
            decl = f"{t} " if id(s) in self.for_declares else ""
            self.indent += 1
            self.line(f"{decl}{var} = {it};")
            self.indent -= 1
        self.loops += 1
        self.nested(s.body)
        self.loops -= 1
        self.line("}")
        # operands copied an iteration ahead (ir/prefetch.py): the last copy lands here
        for x in s.body:
            if isinstance(x, ir.Assign) and isinstance(x.value, ir.TileOp) and \
                    x.value.attrs.get("ahead"):
                self.line(f"tt::tile::operand_drain({self.n(x.name)});")

    def fresh(self, base: str) -> str:
        """``base``, or ``base`` with a number, whichever no variable of the function uses
        (the names made here are scoped to one for statement, so they need not differ)."""
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}{k}"
        return name

    def s_While(self, s: ir.While) -> None:
        self.line(f"while ({self.e(s.cond)}) {{", s.loc)
        self.loops += 1
        self.nested(s.body)
        self.loops -= 1
        self.line("}")

    def s_Break(self, s) -> None:
        self.line("break;", s.loc)

    def s_Continue(self, s) -> None:
        self.line("continue;", s.loc)

    def s_Return(self, s: ir.Return) -> None:
        if s.value is None:
            if self.f.is_kernel and self.tensormaps:  # the producer warp stops too
                self.line("{ TT_PRODUCER_EXIT(); return; }", s.loc)
                return
            self.line("return;", s.loc)
            return
        v = self.view(s.value) if isinstance(s.value.type, ArrayType) else self.e(s.value)
        self.line(f"return {v};", s.loc)

    def s_ArrayDecl(self, s: ir.ArrayDecl) -> None:
        name = self.n(s.name)
        t = s.type.dtype.cname
        if s.dynamic and self.has_tiles:  # after the tile operations' scratch
            self.line(f"{ctype(s.type)} {name} = {{({t}*)(tt_dynamic_smem + TT_SCRATCH_BYTES), "
                      f"{{int64_t((tt::dynamic_smem_size() - TT_SCRATCH_BYTES) / sizeof({t}))}}"
                      ", {1}};", s.loc)
            return
        if s.dynamic:
            self.line(f"{ctype(s.type)} {name} = {{({t}*)tt_dynamic_smem, "
                      f"{{int64_t(tt::dynamic_smem_size() / sizeof({t}))}}, {{1}}}};", s.loc)
            return
        self.statics[s.name] = s
        dims = "".join(f"[{n}]" for n in s.shape) or "[1]"
        space = "__shared__ " if s.type.space == "shared" else ""
        self.line(f"{space}{t} {name}{dims};", s.loc)

    def s_Print(self, s: ir.Print) -> None:
        # the pieces are concatenated: the frontend puts the spaces in
        fmt, args = [], []
        for it in s.items:
            if isinstance(it, str):
                fmt.append(it.replace("%", "%%").replace("\\", "\\\\").replace('"', '\\"')
                           .replace("\n", "\\n"))
                continue
            t = it.type
            v = self.e(it)
            if t.kind == "b":
                fmt.append("%s")
                args.append(f'({v}) ? "True" : "False"')
            elif t.is_int:
                fmt.append("%lld" if t.kind == "i" else "%llu")
                args.append(f"({'long long' if t.kind == 'i' else 'unsigned long long'})({v})")
            else:  # numba's format for floats: six decimals
                fmt.append("%f")
                args.append(f"(double)({self.as_float(it, v)})")
        tail = "".join(", " + a for a in args)
        self.formats.append("".join(fmt) + "\\n")
        self.line(f"printf(tt_fmt{len(self.formats) - 1}{tail});", s.loc)

    # -- expressions ---------------------------------------------------------------------------

    def e(self, x: ir.Expr, prec: int = 0) -> str:
        text, p = getattr(self, "x_" + type(x).__name__)(x)
        return f"({text})" if p < prec else text

    def x_Const(self, x: ir.Const):
        return literal(x.value, x.type), _PREC["atom"] if not (
            isinstance(x.value, (int, float)) and x.value < 0) else _PREC["unary"]

    def x_Var(self, x: ir.Var):
        return self.n(x.name), _PREC["atom"]

    def x_Special(self, x: ir.Special):
        return _SPECIAL.get(x.reg, f"int({x.reg})"), _PREC["atom"]

    def x_Cast(self, x: ir.Cast):
        src, dst = x.value.type, x.type
        if isinstance(x.value, ir.Special) and dst.is_int and dst.bits == 64 and \
                x.value.reg not in _SPECIAL:  # threadIdx.x: an unsigned int, widened directly
            return f"({dst.cname}){x.value.reg}", _PREC["unary"]
        if isinstance(dst, Scalar) and dst.is_complex:
            v = self.e(x.value)
            if isinstance(src, Scalar) and src.bits == 16 and src.is_float:
                v = f"float({v})"
            return f"{dst.cname}({v})", _PREC["atom"]
        v = self.e(x.value, _PREC["unary"])
        if isinstance(src, Scalar) and src.bits == 16 and src.is_float and not (
                dst.bits == 16 and dst.is_float and dst == src):
            v = f"float({self.e(x.value)})" if dst != float32 else f"float({self.e(x.value)})"
            if dst == float32:
                return v, _PREC["atom"]
        if dst.bits == 16 and dst.is_float and isinstance(src, Scalar) and not src.is_float:
            v = f"float({self.e(x.value)})"
        if dst.kind == "b":
            return f"bool({self.e(x.value)})", _PREC["atom"]
        if dst.kind in "iu" and isinstance(src, Scalar) and src.is_float and not src.is_complex:
            # cvt.rzi as the simulator models it (threadtile.h; a 16-bit float is a float above)
            return f"tt::f2i<{dst.cname}>({v})", _PREC["atom"]
        return f"({dst.cname})" + v, _PREC["unary"]

    def as_float(self, x: ir.Expr, v: str) -> str:
        return f"float({v})" if x.type.bits == 16 else v

    def x_UnaryOp(self, x: ir.UnaryOp):
        # ~ of a bool is NumPy's (and numba's) logical not; C++'s ~true is -2, true again
        op = "!" if x.op == "not" or (x.op == "~" and x.type.kind == "b") else x.op
        if op == "-" and x.type.kind == "i" and x.type.bits >= 32 and \
                not placement.fits(x.operand, x.type.bits - 1):
            return f"tt::wneg({self.e(x.operand)})", _PREC["atom"]
        inner = self.e(x.operand, _PREC["unary"])
        # - of a negation is not a pre-decrement: "- -x", never "--x" (nor "+ +x")
        text = op + (" " if op in "+-" and inner[:1] == op else "") + inner
        if x.type.is_int and x.type.bits < 32:  # as in x_BinOp
            return f"{x.type.cname}({text})", _PREC["atom"]
        return text, _PREC["unary"]

    def x_BinOp(self, x: ir.BinOp):
        text, p = self.binop(x)
        if x.type.is_int and x.type.bits < 32:
            # C++ computes on 8- and 16-bit integers in int: truncate back, so that uint8
            # 3 - 7 is 252 (as in NumPy) before a %, a comparison or a template helper sees it
            return f"{x.type.cname}({text})", _PREC["atom"]
        return text, p

    def binop(self, x: ir.BinOp):
        op, t = x.op, x.type
        a, b = x.left, x.right
        if op == "**" and t.is_complex:
            return f"tt::cpow({self.e(a)}, {self.e(b)})", _PREC["atom"]
        if op == "**":
            if isinstance(b, ir.Const) and b.value in (2, 3) and not t.is_int:
                s = self.e(a, _PREC["*"] + 1)
                return " * ".join([s] * int(b.value)), _PREC["*"]
            if t.is_int:
                return f"tt::ipow({self.e(a)}, {self.e(b)})", _PREC["atom"]
            if t.bits == 16:  # half-precision math computes in float (as calls.py's _math)
                return f"{t.cname}(powf(float({self.e(a)}), float({self.e(b)})))", \
                    _PREC["atom"]
            bb = self.e(b) if b.type == t else f"({t.cname})({self.e(b)})"
            return intrinsics.math_call("pow", t, [self.e(a), bb]), _PREC["atom"]
        if op in ("//", "%"):
            if t.is_int and (t.kind == "u" or (self.is_nonneg(a) and self.is_nonneg(b))):
                op = "/" if op == "//" else "%"
            else:
                fn = "tt::floordiv" if op == "//" else "tt::pymod"
                if t.bits == 16 and t.is_float:
                    return f"{t.cname}({fn}(float({self.e(a)}), float({self.e(b)})))", 16
                return f"{fn}({self.e(a)}, {self.e(b)})", _PREC["atom"]
        if op in ("<<", ">>") and t.is_int and not placement.count_in_range(b, t, self.nonneg):
            # a count the IR cannot bound below the width: Python's shift (threadtile.h)
            fn = "tt::shl" if op == "<<" else "tt::shr"
            return f"{fn}({self.e(a)}, {self.e(b)})", _PREC["atom"]
        # where C++ computes in a signed type that may overflow (int32/int64 values, and the int
        # a uint16 product is computed in), the operation wraps (threadtile.h, "wadd")
        signed = 31 if op == "*" and t.kind == "u" and t.bits == 16 else \
            t.bits - 1 if t.kind == "i" and t.bits >= 32 else None
        if signed and op in placement.WRAPPING and not placement.fits(x, signed):
            return f"{placement.WRAPPING[op]}({self.e(a)}, {self.e(b)})", _PREC["atom"]
        if op not in ("<<", ">>"):  # a shift's type is its left operand's: its cast stays
            a = _implicit(a, b)
            b = _implicit(b, a)  # against the left operand as emitted: one cast must stay
        p = _PREC[op]
        right_p = p + 1  # left-associative: a - (b - c) keeps its parentheses
        if op in ("&", "|", "^", "<<", ">>"):
            p_child = _PREC["atom"] - 1  # parenthesise mixes with arithmetic for clarity
            return f"{self.e(a, p_child)} {op} {self.e(b, p_child)}", p
        return f"{self.e(a, p)} {op} {self.e(b, right_p)}", p

    def x_Compare(self, x: ir.Compare):
        p = _PREC[x.op]
        a = _implicit(x.left, x.right)
        b = _implicit(x.right, a)
        return f"{self.e(a, p + 1)} {x.op} {self.e(b, p + 1)}", p

    def x_Logical(self, x: ir.Logical):
        op = "&&" if x.op == "and" else "||"
        p = _PREC[op]
        # a && b || c is legal C++ but reads badly: parenthesise any nested logical op
        return f"{self.e(x.left, _PREC['&&'] + 1)} {op} {self.e(x.right, _PREC['&&'] + 1)}", p

    def x_Select(self, x: ir.Select):
        p = _PREC["?:"]
        return (f"{self.e(x.cond, p + 1)} ? {self.e(x.if_true, p + 1)} : "
                f"{self.e(x.if_false, p + 1)}"), p

    def x_Load(self, x: ir.Load):
        return self.ref(x.array, x.indices), _PREC["atom"]

    def ref(self, arr: ir.Expr, indices: list[ir.Expr]) -> str:
        # indices are int64 in the IR; C++ converts any integer index the same way, so the
        # widening casts are left out of the text
        idx = [self.e(_unwiden(i)) for i in indices]
        if isinstance(arr, ir.Var) and arr.name in self.statics:
            return self.n(arr.name) + "".join(f"[{i}]" for i in idx)
        return f"{self.e(arr, _PREC['atom'])}({', '.join(idx)})"

    def x_ArrayDim(self, x: ir.ArrayDim):
        arr = x.array
        if isinstance(arr, ir.Var) and arr.name in self.statics:
            d = self.statics[arr.name]
            if x.attr == "shape":
                return str(d.shape[x.axis]), _PREC["atom"]
            stride = 1
            for n in d.shape[x.axis + 1:]:
                stride *= n
            return str(stride), _PREC["atom"]
        field = "shape" if x.attr == "shape" else "strides"
        return f"{self.e(arr, _PREC['atom'])}.{field}[{x.axis}]", _PREC["atom"]

    def view(self, arr: ir.Expr) -> str:
        """``arr`` as a tt::CArray/Array value (static C arrays get wrapped)."""
        if isinstance(arr, ir.Var) and arr.name in self.statics:
            d = self.statics[arr.name]
            strides, acc = [], 1
            for n in reversed(d.shape):
                strides.append(acc)
                acc *= n
            strides.reverse()
            first = self.n(arr.name) + "".join("[0]" for _ in d.shape)
            return (f"{ctype(d.type)}{{&{first}, {{{', '.join(map(str, d.shape))}}}, "
                    f"{{{', '.join(map(str, strides))}}}}}")
        return self.e(arr, _PREC["atom"])

    def x_ViewAs(self, x: ir.ViewAs):
        return f"tt::view_as<{x.type.dtype.cname}>({self.view(x.array)})", _PREC["atom"]

    def x_RawMemory(self, x: ir.RawMemory):
        # cuTile's raw memory: the base pointer, indexed by offsets with no bound to check
        return (f"{ctype(x.type)}{{{self.view(x.array)}.data, {{0x7fffffffffffffffLL}}, {{1}}}}",
                _PREC["atom"])

    def x_Reshape(self, x: ir.Reshape):
        dims = ", ".join(self.e(d) for d in x.shape)
        return f"tt::reshape<{len(x.shape)}>({self.view(x.array)}, {dims})", _PREC["atom"]

    def x_Slice(self, x: ir.Slice):
        base = x.array
        dim = lambda k: self.e(ir.ArrayDim(int64, x.loc, base, "shape", k))  # noqa: E731
        stride = lambda k: self.e(ir.ArrayDim(int64, x.loc, base, "strides", k))  # noqa: E731
        data = self.view(base) + ".data" if not (isinstance(base, ir.Var) and base.name in
                                                 self.statics) else None
        if data is None:
            first = self.n(base.name) + "".join("[0]" for _ in self.statics[base.name].shape)
            data = f"&{first}"
        offs, shapes, strides = [], [], []
        for k, part in enumerate(x.parts):
            if not isinstance(part, tuple):
                offs.append(f"{self.e(part, _PREC['*'])} * {stride(k)}")
                continue
            start, stop, step = part
            s0 = isinstance(start, ir.Const) and start.value == 0
            if s0 and _is_dim(stop, base, k):
                shapes.append(dim(k))
            elif s0:
                shapes.append(f"tt::slice_len(0, {self.e(stop)}, {self.e(step)}, {dim(k)})")
            else:
                st = f"tt::slice_start({self.e(start)}, {dim(k)})"
                offs.append(f"{st} * {stride(k)}")
                shapes.append(f"tt::slice_len({self.e(start)}, {self.e(stop)}, "
                              f"{self.e(step)}, {dim(k)})")
            sv = self.e(step, _PREC["*"])
            strides.append(stride(k) if sv == "1LL" or sv == "1" else f"{sv} * {stride(k)}")
        ptr = data + "".join(" + " + o for o in offs)
        if not shapes:  # a 0-d view (one record of a record array): its pointer alone
            return f"{ctype(x.type)}{{{ptr}}}", _PREC["atom"]
        return (f"{ctype(x.type)}{{{ptr}, {{{', '.join(shapes)}}}, {{{', '.join(strides)}}}}}",
                _PREC["atom"])

    def x_Field(self, x: ir.Field):
        # the records' memory seen as the field's elements: strides in records times the
        # record's size in field elements (lang/records.py checks it divides), then the
        # field's own C-order subarray axes
        base, at = x.array, x.array.type
        ft = x.type.dtype.cname
        ratio = at.dtype.itemsize // x.type.dtype.itemsize
        ptr = (f"reinterpret_cast<{ft}*>(reinterpret_cast<char*>({self.view(base)}.data) + "
               f"{x.offset})")
        shapes = [self.e(ir.ArrayDim(int64, x.loc, base, "shape", k)) for k in range(at.ndim)]
        strides = [f"{self.e(ir.ArrayDim(int64, x.loc, base, 'strides', k), _PREC['*'])} * "
                   f"{ratio}" for k in range(at.ndim)]
        sub = 1
        for n in reversed(x.shape):
            strides.insert(at.ndim, str(sub))
            sub *= n
        shapes += [str(n) for n in x.shape]
        if not shapes:
            return f"{ctype(x.type)}{{{ptr}}}", _PREC["atom"]
        return (f"{ctype(x.type)}{{{ptr}, {{{', '.join(shapes)}}}, {{{', '.join(strides)}}}}}",
                _PREC["atom"])

    def x_Call(self, x: ir.Call):
        return intrinsics.CALLS[x.name](self, x)

    def x_TileOp(self, x: ir.TileOp):
        return tiles.spell(self, x), _PREC["atom"]

    def x_MakeTuple(self, x: ir.MakeTuple):
        items = [self.view(i) if isinstance(i.type, ArrayType) else self.e(i) for i in x.items]
        return f"{tuple_struct(x.type)}{{{', '.join(items)}}}", _PREC["atom"]

    def x_TupleItem(self, x: ir.TupleItem):
        return f"{self.e(x.value, _PREC['atom'])}._{x.index}", _PREC["atom"]

    def x_CallFunc(self, x: ir.CallFunc):
        args = []
        for a in x.args:
            args.append(self.view(a) if isinstance(a.type, ArrayType) else self.e(a))
        return f"{cxx_function_name(x.func.name)}({', '.join(args)})", _PREC["atom"]

    def is_nonneg(self, e: ir.Expr) -> bool:
        return placement.is_nonneg(e, self.nonneg)


def _unwiden(e: ir.Expr) -> ir.Expr:
    if isinstance(e, ir.Cast) and isinstance(e.value.type, Scalar) and e.value.type.is_int and \
            e.type.is_int and e.value.type.bits <= e.type.bits:
        return e.value
    return e


def _implicit(e: ir.Expr, other: ir.Expr) -> ir.Expr:
    """Drop a cast that C++'s usual arithmetic conversions would apply anyway: a signed integer
    widened to the other operand's signed integer or floating type. ``other`` must be the
    operand as it will be emitted: in ``float64(k) / float64(tw)`` only one cast may go, else
    C++ divides two integers."""
    if not isinstance(e, ir.Cast) or not isinstance(e.value.type, Scalar):
        return e
    src, dst = e.value.type, e.type
    if other.type != dst or src.kind != "i" or isinstance(e.value, ir.Special):
        return e
    if (dst.kind == "i" and dst.bits >= src.bits) or dst in (float32, float64):
        return e.value
    return e


def _is_dim(e: ir.Expr, base: ir.Expr, k: int) -> bool:
    return isinstance(e, ir.ArrayDim) and e.array is base and e.axis == k and e.attr == "shape"


def _leaves_loop(s: ir.If) -> bool:
    """Whether an ``if`` holds a ``break`` or ``continue`` of its loop (in its branches or
    their nested ``if``s, not in a loop of their own)."""
    def walk(stmts) -> bool:
        for x in stmts:
            if isinstance(x, (ir.Break, ir.Continue)):
                return True
            if isinstance(x, ir.If) and (walk(x.then) or walk(x.orelse)):
                return True
        return False
    return walk(s.then) or walk(s.orelse)


def _invariant(e: ir.Expr, assigned: set[str]) -> bool:
    return not any(isinstance(x, ir.Var) and x.name in assigned for x in ir.walk_expr(e)) and \
        not any(isinstance(x, (ir.Call, ir.CallFunc, ir.Load)) for x in ir.walk_expr(e))
