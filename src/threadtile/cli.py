"""The ``threadtile`` command: ``info``, ``cache info|clear``, ``demo``, ``export``,
``--version``.

``info`` never needs a GPU: it reports the compiler side (NVRTC, headers, cache) and, when a
driver and device are present, the GPU. ``demo`` and ``export`` are modules of their own
(``threadtile.demo``, ``threadtile.export``), imported only when run, which parse their own
arguments (``threadtile export --help`` is export's help).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import platform
import sys

from .version import __version__

__all__ = ["main"]


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _fmt_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def cmd_info(args) -> int:
    import threadtile  # noqa: PLC0415

    rows = [("threadtile", getattr(threadtile, "__version__", "?")),
            ("python", platform.python_version()),
            ("numpy", _version("numpy") or "missing")]
    for dist in ("cuda-core", "cuda-bindings", "cuda-pathfinder", "nvidia-cuda-nvrtc",
                 "nvidia-cuda-runtime", "nvidia-cuda-cccl", "nvidia-cuda-crt"):
        rows.append((dist, _version(dist) or "not installed"))
    for mod in ("torch", "cupy", "numba", "ml_dtypes"):
        # find_spec does not import: `info` stays fast and cannot crash on a broken install
        rows.append((mod, "available" if importlib.util.find_spec(mod) else "not installed"))
    from .runtime import cache, nvrtc  # noqa: PLC0415

    try:
        rows.append(("NVRTC", ".".join(map(str, nvrtc.nvrtc_version()))))
        rows.append(("NVRTC targets", " ".join(nvrtc.supported_archs()) or "?"))
    except Exception as e:  # noqa: BLE001  (report, do not crash)
        rows.append(("NVRTC", f"unavailable ({e})"))
    for i, d in enumerate(nvrtc.include_dirs()):
        rows.append(("headers" if i == 0 else "", d))
    ci = cache.info()
    rows.append(("cache", f"{ci['path']} ({ci['entries']} entries, "
                          f"{_fmt_bytes(ci['bytes'])})"))
    from .runtime import driver  # noqa: PLC0415

    if driver.gpu_available():
        for i in range(driver.device_count()):
            d = driver.get_device(i)
            rows.append((f"GPU {i}", f"{d.name}, {d.arch} (compute capability "
                                     f"{d.compute_capability[0]}.{d.compute_capability[1]}), "
                                     f"{d.multiprocessor_count} SMs, "
                                     f"{_fmt_bytes(d.total_memory)}"))
            rows.append(("", f"max {d.max_threads_per_block} threads/block, shared memory "
                             f"{d.max_shared_per_block // 1024} KiB/block "
                             f"({d.max_shared_per_block_optin // 1024} KiB opt-in)"))
        rows.append(("CUDA driver", ".".join(map(str, driver.driver_version()))))
    else:
        rows.append(("GPU", "none found (kernels still compile to cubin; run them under "
                            "threadtile.simulate())"))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    return 0


def cmd_cache(args) -> int:
    from .runtime import cache  # noqa: PLC0415

    if args.action == "clear":
        r = cache.clear_report(all_versions=args.all)
        n = r.removed
        print(f"removed {n} cached kernel{'s' if n != 1 else ''} from "
              f"{cache.cache_root() if args.all else cache.cache_dir()}")
        if r.failed:
            print(f"threadtile cache clear: could not delete {len(r.failed)} "
                  f"path{'s' if len(r.failed) != 1 else ''}:", file=sys.stderr)
            for path, why in r.failed:
                print(f"  {path}: {why}", file=sys.stderr)
            return 1
        return 0
    ci = cache.info()
    print(f"path     {ci['path']}")
    print(f"entries  {ci['entries']}")
    print(f"size     {_fmt_bytes(ci['bytes'])}")
    if ci.get("other_versions_bytes"):
        print(f"older versions  {_fmt_bytes(ci['other_versions_bytes'])} "
              "(threadtile cache clear --all removes them)")
    return 0


def _delegate(module: str, what: str):
    """A subcommand implemented in ``threadtile.<module>:main(argv)``, imported only when run."""

    def run(args) -> int:
        try:
            mod = importlib.import_module(f"threadtile.{module}")
        except ModuleNotFoundError as e:
            if e.name not in (f"threadtile.{module}",):
                raise
            print(f"threadtile {module}: {what} is not available in this version "
                  f"(no threadtile.{module} module)", file=sys.stderr)
            return 2
        main_fn = getattr(mod, "main", None)
        if main_fn is None:
            print(f"threadtile {module}: threadtile.{module} has no main()", file=sys.stderr)
            return 2
        return int(main_fn(list(args.rest)) or 0)

    return run


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="threadtile", description="GPU kernels for Python "
                                "programmers: simulate on the CPU, JIT to CUDA with NVRTC.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    s = sub.add_parser("info", help="versions, NVRTC, headers, cache and GPUs")
    s.set_defaults(func=cmd_info)
    s = sub.add_parser("cache", help="the on-disk kernel cache")
    s.add_argument("action", nargs="?", choices=("info", "clear"), default="info")
    s.add_argument("--all", action="store_true",
                   help="with clear: also entries of other threadtile/NVRTC versions")
    s.set_defaults(func=cmd_cache)
    p.add_argument("--version", action="version", version=f"threadtile {__version__}")
    for name, (what, help_) in _DELEGATED.items():
        s = sub.add_parser(name, help=help_, add_help=False)
        s.add_argument("rest", nargs=argparse.REMAINDER)
        s.set_defaults(func=_delegate(name, what))
    return p


# commands whose module parses its own arguments: name -> (what it does, its help line)
_DELEGATED = {
    "demo": ("the demo", "a tiled matmul: Python source, CUDA C++, simulator, GPU"),
    "export": ("exporting kernels", "compile kernels ahead of time into a package that "
               "launches without threadtile (CUDA C++ and headers, cubins, Python loader, "
               "C header); threadtile export --help"),
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``threadtile`` console script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in _DELEGATED:  # all the rest is theirs, --help included
        return _delegate(argv[0], _DELEGATED[argv[0]][0])(argparse.Namespace(rest=argv[1:]))
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
