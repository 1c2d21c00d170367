"""One more block a multiprocessor: the compiler's occupancy rule for tile kernels.

ptxas gives a kernel the registers its own heuristics settle on, with no number of resident
blocks in mind unless ``__launch_bounds__`` names one. For a tile kernel that can leave the
multiprocessor almost empty: Llama's prefill attention (4 warps, 64x64 tiles, examples/llama)
gets 211 registers a thread from ptxas, so 2 blocks (8 warps) a multiprocessor, where 168
registers hold 3 blocks for 80 bytes of spills; with 3 blocks it runs at 326 TFLOP/s
against 284 (H200). Which of the two is faster is the rule's guess, not a measurement:

For a tile kernel of a fixed block with no ``occupancy`` asked for (the ``@ct.kernel``
hint, which wins), on an architecture whose limits ir/resources.py knows, and without a
``--maxrregcount`` among the options: where registers alone hold the resident warps to
:data:`MAX_WARPS` or fewer, the other limits leave room for another block, and that block
would leave each thread at least :data:`MIN_SHARE` of the registers ptxas chose, the kernel
is compiled again with ``__launch_bounds__(threads, blocks + 1)``. That build is kept when
ptxas fits the block count with at most :data:`SPILL_LIMIT` bytes of spill stores a thread;
the first build is kept otherwise (``THREADTILE_BLOCKFIT=0`` keeps it always: a way to
compare). The first compile asks for ptxas's report (``-Xptxas=-v``), which costs nothing;
the second runs only where the rule applies, and doubles that kernel's first call (the
prefill attention 0.83 -> 1.62 s on a 2-core machine; a warm start reads the chosen cubin
from the cache).

Where another block costs almost nothing, at most :data:`NEAR_SHARE` of the registers ptxas
chose (132 -> 128), it is tried for any tile kernel of a fixed block, however many warps it
holds and with an ``occupancy`` hint too (the hint counts as the fewest blocks wanted, as
cuTile's "expected" blocks): cuTile's attention sample with 64x64 tiles of head dimension 64
gets 132 registers (3 blocks of 4 warps, the hint asks 2) and runs causal at 302 TFLOP/s,
at 4 blocks of 128 registers without spills at 344 (H200).

A kernel whose ``occupancy`` hint the compiler scaled down to the larger block it picked
(compiler.py: the hint counts blocks of 4 warps; cuTile's counts blocks of whatever size its
compiler picks) is compiled first with the hint's own count of the larger blocks,
``__launch_bounds__(threads, hint)``, and that build is kept where the blocks fit with at
most :data:`HINT_SPILL_LIMIT` bytes of spill stores a thread; the source's scaled bounds
otherwise. cuTile's attention sample asks for 2 blocks, and its 128-row tiles take 8 warps
(H200, float16, 4096 tokens): 128x64 tiles, head dimension 128, at 2 blocks of 8 warps have
128 registers and 28 bytes of spills (84 causal) where the scaled bound left 140 (168) and 1
block: 363 -> 505 TFLOP/s (326 -> 433 causal); 128x128 tiles of head dimension 64, 92 (192)
bytes: 302 -> 435 (269 -> 351). Those of head dimension 128 would spill 1052 (916) bytes and
run at 158 TFLOP/s against 435 (189 against 383): they keep 1 block.

Where a build for more blocks does not fit, the same source without its lines marked
:data:`OPTIONAL` is tried for them before the fewer blocks are kept (the refill of an
operand buffer without a block barrier, backends/cuda/tiles.py ``refill_wait``, costs
registers: head dimension 64, 128x128 tiles, causal, spills 288 bytes with it at 2 blocks
and 204 without).

The choice is made per architecture and options, at compile time without a GPU, so that
``kernel.resources(arch=...)`` reports the build a launch runs; the cubin cache keeps the
chosen cubin under the source's key (with the rule's numbers in it). An AOT package's cubins
are the chosen builds; its ``.cu`` files keep the plain bounds (``nvcc`` on them makes
ptxas's own choice).
"""

from __future__ import annotations

import os
import re
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .ir.resources import arch_limits, occupancy
from .runtime import nvrtc

__all__ = ["Fitted", "compile_fitted", "fitted_report", "more_blocks", "bounded", "ptxas_log",
           "ptxas_report", "rule", "without_optional"]

ENV = "THREADTILE_BLOCKFIT"  # "0": never (ptxas's own choice everywhere), to compare
MAX_WARPS = 8  # resident warps a multiprocessor at or under which another block is tried
MIN_SHARE = 0.75  # the registers a thread the tighter build has, over ptxas's own choice
NEAR_SHARE = 0.96  # ... at or above which another block is tried for any warps or hint
SPILL_LIMIT = 128  # bytes of spill stores a thread the tighter build may have
HINT_SPILL_LIMIT = 256  # ... where it is built for an occupancy hint as asked
# a source line that makes the kernel faster at the blocks it has, and that the build for
# more blocks may drop where those blocks do not fit with it (backends/cuda/tiles.py
# REFILL_WAIT: its mbarriers cost registers)
OPTIONAL = "// blockfit: optional"

_REPORT = {"num_regs": r"Used (\d+) registers", "shared_size_bytes": r"(\d+) bytes smem",
           "local_size_bytes": r"(\d+) bytes stack frame",
           "spill_stores": r"(\d+) bytes spill stores", "spill_loads": r"(\d+) bytes spill loads",
           "barriers": r"used (\d+) barriers"}


@dataclass(frozen=True)
class Fitted:
    """A kernel's cubin for one architecture and its options: ``text`` is the source it was
    compiled from, ``blocks`` the blocks a multiprocessor the rule asked ptxas for (None where
    the kernel kept ptxas's own choice), ``report`` ptxas's report on the entry point
    (:func:`ptxas_report`; empty where it was not asked for)."""

    cubin: bytes
    text: str
    blocks: int | None
    report: dict


def rule() -> str:
    """The rule's numbers, for the cubin cache's key."""
    if os.environ.get(ENV) == "0":
        return "blockfit off"
    return (f"blockfit {MAX_WARPS} {MIN_SHARE} {NEAR_SHARE} {SPILL_LIMIT} {HINT_SPILL_LIMIT}"
            " optional")


def ptxas_report(log: str, entry: str) -> dict[str, int] | None:
    """ptxas's numbers on ``entry`` from an NVRTC log made with ``-Xptxas=-v``:
    ``num_regs``, ``shared_size_bytes`` (static), ``local_size_bytes`` (the stack frame),
    ``spill_stores``, ``spill_loads`` (bytes) and ``barriers``, 0 for what it does not
    mention; None where the log has no report on ``entry``."""
    marker = f"entry function '{entry}'"
    if marker not in log:
        return None
    part = log.split(marker, 1)[-1]
    out = {}
    for key, pattern in _REPORT.items():
        m = re.search(pattern, part)
        out[key] = int(m[1]) if m else 0
    return out


def ptxas_log(text: str, arch: str, options: tuple[str, ...], entry: str) -> tuple[bytes, str]:
    """``text`` compiled for ``arch`` with ptxas's report (``-Xptxas=-v``): the cubin and a
    log that reports on ``entry``. Where NVRTC took the cubin from the CUDA compute cache (a
    driver is present), ptxas did not run and reported nothing: the log then comes from a
    second compile with a variable of a name never seen before, which changes the PTX and
    nothing of the kernel's own code."""
    opts = tuple(options) + ("-Xptxas=-v",)
    cubin = nvrtc.compile_cubin(text, arch, name=f"{entry}.cu", options=opts)
    log = cubin.log
    if f"entry function '{entry}'" not in log:
        salt = f"\n__device__ int tt_ptxas_report_{uuid.uuid4().hex};\n"
        log = nvrtc.compile_cubin(text + salt, arch, name=f"{entry}.cu", options=opts).log
    return cubin, log


def compile_reported(text: str, arch: str, options: tuple[str, ...],
                     entry: str) -> tuple[bytes, dict[str, int]]:
    """``text`` compiled for ``arch`` (:func:`ptxas_log`) with ptxas's numbers on ``entry``
    (:func:`ptxas_report`)."""
    cubin, log = ptxas_log(text, arch, options, entry)
    return cubin, ptxas_report(log, entry) or dict.fromkeys(_REPORT, 0)


def more_blocks(arch: str, threads: int, dynamic_shared: int, report: dict,
                options: tuple[str, ...] = (), hinted: bool = False) -> int | None:
    """The blocks a multiprocessor to ask ptxas for, by the rule above, for a kernel of
    ``threads`` threads a block with ``dynamic_shared`` bytes of dynamic shared memory, of
    which ptxas reported ``report`` (``hinted``: the kernel has an occupancy hint, which
    leaves it the near-free step alone); None where the rule leaves the kernel as it is."""
    lim = arch_limits(arch)
    regs = report.get("num_regs", 0)
    if lim is None or not threads or regs <= 0 or any("maxrregcount" in o for o in options):
        return None
    shared = dynamic_shared + report.get("shared_size_bytes", 0)
    barriers = report.get("barriers", 0)
    occ = occupancy(lim, threads, regs, shared, barriers)
    if occ.blocks < 1 or "registers" not in occ.limited_by:
        return None
    want = occ.blocks + 1
    if any(v is not None and v < want for k, v in occ.limits.items() if k != "registers"):
        return None
    budget = next((r for r in range(regs - 1, 15, -1)
                   if (occupancy(lim, threads, r, shared, barriers).limits["registers"] or 0)
                   >= want), 0)
    if budget >= NEAR_SHARE * regs:
        return want
    few = occ.blocks * occ.warps_per_block <= MAX_WARPS
    return want if few and not hinted and budget >= MIN_SHARE * regs else None


def bounded(text: str, entry: str, threads: int, blocks: int) -> str | None:
    """``text`` with its kernel's ``__launch_bounds__(threads)`` (or ``(threads, n)``) asking
    for ``blocks`` blocks a multiprocessor; None where the source does not spell its bounds
    that way."""
    spelled = re.findall(rf"__launch_bounds__\({threads}(?:, \d+)?\) {re.escape(entry)}\(", text)
    if len(spelled) != 1 or text.count(spelled[0]) != 1:
        return None
    return text.replace(spelled[0], f"__launch_bounds__({threads}, {blocks}) {entry}(")


def compile_fitted(text: str, entry: str, arch: str, options: tuple[str, ...] = (),
                   threads: int = 0, dynamic_shared: int = 0, blocks: int = 0) -> Fitted:
    """The cubin of ``text`` for ``arch``: plainly where ``threads`` is 0 (the kernel is not
    one the rule is for), else by the rule above; ``blocks`` is an occupancy hint to try
    first (the hint as asked, where the source spells it scaled down), 0 for none. The
    choice and ptxas's report on it are remembered for :func:`fitted_report` (a build then a
    ``resources()`` compile once)."""
    options = tuple(options)
    if not threads or arch_limits(arch) is None or os.environ.get(ENV) == "0":
        cubin = nvrtc.compile_cubin(text, arch, name=f"{entry}.cu", options=options)
        return Fitted(cubin, text, None, {})
    fit = _fit(text, entry, arch, options, threads, dynamic_shared, blocks)
    _remember((text, entry, arch, options, threads, dynamic_shared, blocks, rule()), fit.text,
              fit.report)
    return fit


_REPORTS: dict = {}  # the compiled source and ptxas's report, by compile_fitted's arguments and
_LOCK = threading.Lock()  # the rule (the 64 most recent)


def _remember(key: tuple, text: str, report: dict) -> None:
    with _LOCK:
        _REPORTS[key] = (text, report)
        while len(_REPORTS) > 64:  # (the oldest first)
            del _REPORTS[next(iter(_REPORTS))]


def _tighter(tight: str, entry: str, arch: str, options: tuple[str, ...], threads: int,
             dynamic_shared: int, want: int, spills: int = SPILL_LIMIT) -> Fitted | None:
    """``tight`` (a source bounded for ``want`` blocks a multiprocessor) built, where ptxas
    fits the blocks with at most ``spills`` bytes of spill stores a thread, else the same
    without its :data:`OPTIONAL` lines where that fits (both compiles at once); None
    otherwise."""
    plain = without_optional(tight)
    if plain == tight:
        return _fits(tight, entry, arch, options, threads, dynamic_shared, want, spills)
    with ThreadPoolExecutor(1) as pool:
        second = pool.submit(_fits, plain, entry, arch, options, threads, dynamic_shared, want,
                             spills)
        return _fits(tight, entry, arch, options, threads, dynamic_shared, want, spills) or \
            second.result()


def _fits(tight: str, entry: str, arch: str, options: tuple[str, ...], threads: int,
          dynamic_shared: int, want: int, spills: int) -> Fitted | None:
    cubin, rep = compile_reported(tight, arch, options, entry)
    occ = occupancy(arch_limits(arch), threads, rep["num_regs"],
                    dynamic_shared + rep["shared_size_bytes"], rep["barriers"])
    if rep["spill_stores"] <= spills and occ.blocks >= want:
        return Fitted(cubin, tight, want, rep)
    return None


def without_optional(text: str) -> str:
    """``text`` without its lines marked :data:`OPTIONAL`."""
    return "".join(line for line in text.splitlines(keepends=True)
                   if not line.rstrip().endswith(OPTIONAL))


def _fit(text: str, entry: str, arch: str, options: tuple[str, ...], threads: int,
         dynamic_shared: int, blocks: int = 0) -> Fitted:
    tight = bounded(text, entry, threads, blocks) if blocks else None
    if tight is not None and tight != text:
        # the hint as asked, else the source's own (scaled) bounds: both builds at once
        # (NVRTC leaves the interpreter free), so that the first call takes the longer one
        with ThreadPoolExecutor(2) as pool:
            asked = pool.submit(_tighter, tight, entry, arch, options, threads,
                                dynamic_shared, blocks, HINT_SPILL_LIMIT)
            cubin, rep = compile_reported(text, arch, options, entry)
            first = asked.result() or Fitted(cubin, text, None, rep)
    else:
        cubin, rep = compile_reported(text, arch, options, entry)
        first = Fitted(cubin, text, None, rep)
    want = more_blocks(arch, threads, dynamic_shared, first.report, options, bool(blocks))
    tight = bounded(first.text, entry, threads, want) if want else None
    fit = _tighter(tight, entry, arch, options, threads, dynamic_shared, want) if tight else None
    return fit or first


def fitted_report(text: str, entry: str, arch: str, options: tuple[str, ...], threads: int,
                  dynamic_shared: int, blocks: int = 0) -> tuple[str, dict]:
    """The source :func:`compile_fitted` compiles and ptxas's report on it (a report is
    always made here), for ``kernel.resources()``; once per source, arch, options, hint and
    rule (a build's own compile counts)."""
    key = (text, entry, arch, tuple(options), threads, dynamic_shared, blocks, rule())
    with _LOCK:
        known = _REPORTS.get(key)
    if known is not None:
        return known
    fit = compile_fitted(text, entry, arch, tuple(options), threads, dynamic_shared, blocks)
    report = fit.report or compile_reported(fit.text, arch, tuple(options), entry)[1]
    _remember(key, fit.text, report)
    return fit.text, report


def _compile_job(j: dict) -> bytes:
    return compile_fitted(j["text"], j["entry"], j["arch"], j["options"], j["threads"],
                          j["scratch"], j.get("blocks", 0)).cubin


if __name__ == "__main__":  # a parallel compile's worker (builds.precompile)
    from .runtime import parallel_compile

    parallel_compile.serve(_compile_job)
