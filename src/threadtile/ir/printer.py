"""The IR as text, for debugging and tests (``kernel.ir(...)``)."""

from __future__ import annotations

from . import nodes as ir


def format_expr(e: ir.Expr) -> str:
    if isinstance(e, ir.Const):
        return repr(e.value) + ("?" if e.weak else f":{e.type}")
    if isinstance(e, ir.Var):
        return e.name
    if isinstance(e, ir.Special):
        return e.reg
    if isinstance(e, ir.BinOp):
        return f"({format_expr(e.left)} {e.op} {format_expr(e.right)}):{e.type}"
    if isinstance(e, (ir.Compare, ir.Logical)):
        return f"({format_expr(e.left)} {e.op} {format_expr(e.right)})"
    if isinstance(e, ir.UnaryOp):
        return f"({e.op} {format_expr(e.operand)})"
    if isinstance(e, ir.Select):
        return (f"({format_expr(e.if_true)} if {format_expr(e.cond)} else "
                f"{format_expr(e.if_false)})")
    if isinstance(e, ir.Cast):
        return f"{e.type}({format_expr(e.value)})"
    if isinstance(e, ir.Load):
        return f"{format_expr(e.array)}[{', '.join(map(format_expr, e.indices))}]"
    if isinstance(e, ir.ArrayDim):
        return f"{format_expr(e.array)}.{e.attr}[{e.axis}]"
    if isinstance(e, ir.Slice):
        parts = [":".join(map(format_expr, p)) if isinstance(p, tuple) else format_expr(p)
                 for p in e.parts]
        return f"{format_expr(e.array)}[{', '.join(parts)}]"
    if isinstance(e, ir.ViewAs):
        return f"{format_expr(e.array)}.view({e.type.dtype})"
    if isinstance(e, ir.RawMemory):
        return f"{format_expr(e.array)}.get_raw_memory()"
    if isinstance(e, ir.Reshape):
        return f"{format_expr(e.array)}.reshape({', '.join(map(format_expr, e.shape))})"
    if isinstance(e, ir.Field):
        return f"{format_expr(e.array)}.{e.name}"
    if isinstance(e, ir.Call):
        attrs = "".join(f", {k}={_attr(v)}" for k, v in e.attrs.items())
        return f"{e.name}({', '.join(map(format_expr, e.args))}{attrs}):{e.type}"
    if isinstance(e, ir.TileOp):
        attrs = "".join(f", {k}={_attr(v)}" for k, v in e.attrs.items())
        return f"tile.{e.op}({', '.join(map(format_expr, e.args))}{attrs}):{e.type}"
    if isinstance(e, ir.MakeTuple):
        return "(" + "".join(format_expr(x) + ", " for x in e.items) + ")"
    if isinstance(e, ir.TupleItem):
        return f"{format_expr(e.value)}[{e.index}]"
    if isinstance(e, ir.CallFunc):
        return f"{e.func.name}({', '.join(map(format_expr, e.args))}):{e.type}"
    return repr(e)


def _attr(v) -> str:
    if isinstance(v, ir.Expr):  # the operations an mma_loop stands for
        return format_expr(v)
    if isinstance(v, tuple):
        return repr(v)
    if isinstance(v, ir.Function):  # a coop primitive's user operator
        return v.name
    return str(v) if hasattr(v, "kind") else repr(v)  # a dtype by its name


def format_body(body: list[ir.Stmt], indent: int = 1) -> list[str]:
    pad = "  " * indent
    out: list[str] = []
    for s in body:
        if isinstance(s, ir.Assign):
            out.append(f"{pad}{s.name} = {format_expr(s.value)}")
        elif isinstance(s, ir.Store):
            idx = ", ".join(map(format_expr, s.indices))
            out.append(f"{pad}{format_expr(s.array)}[{idx}] = {format_expr(s.value)}")
        elif isinstance(s, ir.ExprStmt):
            out.append(pad + format_expr(s.value))
        elif isinstance(s, ir.If):
            out.append(f"{pad}if {format_expr(s.cond)}:")
            out += format_body(s.then, indent + 1)
            if s.orelse:
                out.append(f"{pad}else:")
                out += format_body(s.orelse, indent + 1)
        elif isinstance(s, ir.For):
            out.append(f"{pad}for {s.var} in range({format_expr(s.start)}, "
                       f"{format_expr(s.stop)}, {format_expr(s.step)}):")
            out += format_body(s.body, indent + 1)
        elif isinstance(s, ir.While):
            out.append(f"{pad}while {format_expr(s.cond)}:")
            out += format_body(s.body, indent + 1)
        elif isinstance(s, ir.Return):
            out.append(pad + "return" + (f" {format_expr(s.value)}" if s.value else ""))
        elif isinstance(s, ir.ArrayDecl):
            dyn = " dynamic" if s.dynamic else ""
            out.append(f"{pad}{s.name} = {s.type.space}.array({s.shape}, {s.type.dtype}){dyn}")
        elif isinstance(s, ir.Print):
            out.append(pad + "print(" + ", ".join(
                repr(i) if isinstance(i, str) else format_expr(i) for i in s.items) + ")")
        else:
            out.append(pad + type(s).__name__.lower())
    return out


def format_function(f: ir.Function) -> str:
    params = ", ".join(f"{p.name}: {p.type}" + (f" = {p.constant}" if p.is_constant else "")
                       for p in f.params)
    kind = "kernel" if f.is_kernel else "device"
    head = f"{kind} {f.name}({params}) -> {f.return_type}"
    locs = ", ".join(f"{k}: {v}" for k, v in f.locals.items())
    return "\n".join([head, f"  # locals: {locs}"] + format_body(f.body))


def format_module(m: ir.Module) -> str:
    return "\n\n".join(format_function(f) for f in m.kernel.all_functions())
