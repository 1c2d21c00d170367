"""``jit``'s options: numba's, checked and normalised as numba does (its errors, its
defaults), and the NVRTC flags they become. docs/language.md ("@jit") has a table of what each
means in threadtile."""

from __future__ import annotations

import numpy as np

# numba's options of cuda.jit, with their defaults; docs/language.md ("@jit") has a table of
# what each means in threadtile. lineinfo, fastmath and max_registers are Kernel's arguments.
NUMBA_OPTIONS = {
    "debug": False, "opt": True, "inline": "never", "forceinline": False, "cache": False,
    "launch_bounds": None, "link": (), "extensions": (), "boundscheck": None, "lto": None,
    "shared_memory_carveout": None,
}
_CARVEOUTS = {"default": -1, "maxl1": 0, "maxshared": 100}


def numba_options(given: dict, device: bool) -> dict:
    """numba's options checked and normalised, or the errors numba raises for bad ones."""
    unknown = set(given) - set(NUMBA_OPTIONS)
    if unknown:
        raise TypeError(f"unknown jit option{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(sorted(unknown))}")
    o = {**NUMBA_OPTIONS, **{k: v for k, v in given.items() if v is not None}}
    o["debug"], o["opt"], o["cache"] = bool(o["debug"]), bool(o["opt"]), bool(o["cache"])
    o["forceinline"] = bool(o["forceinline"])
    if isinstance(o["inline"], bool):
        o["inline"] = "always" if o["inline"] else "never"
    if o["inline"] not in ("never", "always") and not callable(o["inline"]):
        raise ValueError(f"inline={o['inline']!r}: 'never', 'always' or a cost model function")
    if o["link"]:
        raise ValueError(f"link={o['link']!r}: threadtile does not link PTX, CUDA C++ or object "
                         "files into a kernel; write the function in Python (@jit(device="
                         "True)), or the whole kernel in CUDA C++ (threadtile.RawKernel)")
    o["extensions"] = tuple(o["extensions"] or ())
    for ext in o["extensions"]:
        if not callable(getattr(ext, "prepare_args", None)):
            raise ValueError(f"extensions: {ext!r} has no prepare_args(ty, val, *, stream, "
                             "retr) method")
    if o["boundscheck"]:
        raise ValueError("boundscheck=True: kernels compiled for the GPU do not check their "
                         "indices; run the launch under threadtile.simulate(), which checks "
                         "every index of every array")
    o["launch_bounds"] = _launch_bounds(o["launch_bounds"])
    if o["launch_bounds"] and device:
        raise ValueError("launch_bounds bound a kernel's launches: a device function has none")
    c = o["shared_memory_carveout"]
    if isinstance(c, str):
        if c.lower() not in _CARVEOUTS:
            raise ValueError(f"Invalid carveout value: {c!r}; give an int from -1 to 100 or one "
                             f"of {', '.join(map(repr, _CARVEOUTS))}")
        c = _CARVEOUTS[c.lower()]
    elif c is not None:
        if not isinstance(c, (int, np.integer)) or isinstance(c, bool) or not -1 <= c <= 100:
            raise ValueError(f"shared_memory_carveout={c!r}: the percentage of the unified "
                             "L1/shared memory to give shared memory must be between -1 and "
                             "100 (-1: the driver's default)")
        c = int(c)
    o["shared_memory_carveout"] = c
    return o


def _launch_bounds(lb) -> tuple[int, ...] | None:
    if lb is None:
        return None
    t = (lb,) if isinstance(lb, (int, np.integer)) else tuple(lb) if isinstance(
        lb, (tuple, list)) else None
    if t is None or not all(isinstance(v, (int, np.integer)) and v > 0 for v in t):
        raise ValueError(f"launch_bounds={lb!r}: an int (the most threads per block) or a "
                         "tuple of positive ints (that, the fewest blocks per multiprocessor, "
                         "the most blocks per cluster)")
    if not 1 <= len(t) <= 3:
        raise ValueError(f"launch_bounds={lb!r}: Got {len(t)} launch bounds: at most 3 (the "
                         "most threads per block, the fewest blocks per multiprocessor, the "
                         "most blocks per cluster)")
    if t[0] > 1024:
        raise ValueError(f"launch_bounds={lb!r}: a block has at most 1024 threads")
    return tuple(int(v) for v in t)


def nvrtc_options(lineinfo: bool, fastmath: bool, max_registers, opts: dict) -> tuple:
    """NVRTC's flags for jit's options."""
    out = []
    if opts["debug"]:  # device debug information; optimised code too where opt stays on
        out += ["-G"] + (["-dopt=on"] if opts["opt"] else [])
    elif not opts["opt"]:
        out.append("--ptxas-options=-O0")
    if lineinfo and not opts["debug"]:
        out.append("-lineinfo")
    if fastmath:
        out.append("--use_fast_math")
    if max_registers:
        out.append(f"--maxrregcount={int(max_registers)}")
    return tuple(out)
