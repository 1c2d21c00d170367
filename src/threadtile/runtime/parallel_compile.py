"""Several cubins compiled at once, in worker processes (the autotuner's configurations).

NVRTC serializes the compiles of one process, so a dozen configurations of a tile matmul took
a dozen seconds cold, one after another. :func:`compile_many` hands the compiles that the
cubin cache lacks to up to one worker process per CPU (``python -m threadtile.blockfit``,
the jobs as JSON on its standard input: no ``multiprocessing``, which would import the
user's ``__main__`` again in every worker), each
writing its cubins into the same cache; the launches that follow find them there. A job that
fails is left alone: the launch compiles it again and reports its error as usual.
``THREADTILE_PARALLEL_COMPILE=0`` turns it off.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass

from . import cache

ENV = "THREADTILE_PARALLEL_COMPILE"


@dataclass(frozen=True)
class Job:
    """One cubin: its cache key, the CUDA source and how to compile it (``entry``,
    ``threads``, ``scratch`` and ``blocks``: for the occupancy rule, blockfit.py)."""

    key: str
    text: str
    arch: str
    entry: str
    options: tuple[str, ...] = ()
    threads: int = 0
    scratch: int = 0
    blocks: int = 0


def compile_many(jobs: list[Job], *, worker: str, workers: int | None = None,
                 timeout: float | None = 600.0) -> int:
    """Compile the ``jobs`` whose cubins are not in the cache, in parallel processes; returns
    how many cubins the workers wrote. Nothing happens for fewer than two missing jobs, with
    ``THREADTILE_PARALLEL_COMPILE=0``, or on one CPU. ``worker`` is the module each process
    runs (``python -m``), which serves the jobs through :func:`serve` with the compile the
    compiler's own path makes (``threadtile.blockfit``: the occupancy rule's), so that the
    cubins cached are the ones a launch would have built."""
    seen: set[str] = set()
    todo = []
    for j in jobs:
        if j.key not in seen and cache.get(j.key) is None:
            seen.add(j.key)
            todo.append(j)
    n = min(len(todo), workers or os.cpu_count() or 1)
    if os.environ.get(ENV, "1") == "0" or len(todo) < 2 or n < 2:
        return 0
    env = dict(os.environ, **{cache.ENV: str(cache.cache_root())})
    procs = []
    for w in range(n):
        part = [j.__dict__ | {"options": list(j.options)} for j in todo[w::n]]
        try:
            p = subprocess.Popen([sys.executable, "-m", worker], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        except OSError:
            break
        p.stdin.write(json.dumps(part).encode())
        p.stdin.close()
        procs.append(p)
    written = 0
    for p in procs:  # (each writes one short line: its pipe cannot fill)
        try:
            p.wait(timeout=timeout)
            written += int(p.stdout.read().decode().strip() or 0)
        except (subprocess.TimeoutExpired, ValueError):
            p.kill()
            p.wait()
        finally:
            p.stdout.close()
    return written


def serve(compile_job) -> None:
    """A worker's loop: the jobs from standard input, each compiled by ``compile_job(job)``
    (the job as a dict: ``key``, ``text``, ``arch``, ``entry``, ``options``, ``threads``,
    ``scratch``) into the cache; prints how many it wrote."""
    done = 0
    for j in json.loads(sys.stdin.buffer.read().decode()):
        j["options"] = tuple(j["options"])
        try:
            cubin = compile_job(j)
        except Exception:  # noqa: BLE001  (the launch compiles it again and reports it)
            continue
        done += bool(cache.put(j["key"], bytes(cubin)))
    print(done)
