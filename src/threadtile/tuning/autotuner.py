"""``@threadtile.autotune``: a kernel whose compile-time parameters and launch shape are chosen
by timing each candidate configuration, once per key, and remembered on disk.

::

    @threadtile.autotune(configs=[threadtile.Config(tm=64, tn=64, num_warps=4),
                                  threadtile.Config(tm=128, tn=128, num_warps=8)],
                         key=["A", "B"])
    @ct.kernel
    def matmul(A, B, C, tm: ct.Constant[int], tn: ct.Constant[int]): ...

    matmul[lambda meta: (ct.cdiv(m, meta["tm"]), ct.cdiv(n, meta["tn"]))](A, B, C)

A launch passes every argument but the ones the configurations set. Its *key* is the values
of the ``key`` arguments (an array's shape and dtype, a number's value) and the dtypes of all
array arguments. The first launch with a new key tunes (:mod:`.engine`: each configuration
compiled and launched once, a failing one skipped with a :class:`TuningWarning`, then timed
with CUDA events), keeps the fastest in memory and on disk (:mod:`.store`), and launches it;
later launches with that key, in this process or another, launch the choice at once.

In the simulator (``threadtile.simulate()``, ``THREADTILE_SIMULATE=1``) nothing is timed: the
configurations are launched in order with every check on, and the first that runs is the
choice, and that run is the launch. The disk is neither read nor written there, unless a
``do_bench`` is given (then the simulator's launches are timed with it, and stored like the
GPU's).

``THREADTILE_AUTOTUNE`` holds words, comma-separated: ``force`` tunes each key again once per
process, ignoring (and then replacing) what the disk holds; ``verbose`` prints each
configuration's time and the choice.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import errors
from ..frontend.source import get_source
from ..jit import Kernel, Launch
from ..runtime import devices
from ..runtime.mode import requested
from . import engine, store

__all__ = ["autotune", "Autotuner", "Config", "Choice", "TuningWarning", "ENV",
           "DEFAULT_TIME_BUDGET_S", "WARMUP"]

ENV = "THREADTILE_AUTOTUNE"
DEFAULT_TIME_BUDGET_S = 60.0  # a matmul's dozen configurations compile and time in far less
WARMUP = 2  # untimed launches after the first, before a configuration is timed
FLAGS = ("force", "verbose")

# a configuration's launch options, by the kind of kernel that takes them
TILE_OPTIONS = ("num_warps", "occupancy", "max_registers")
THREAD_OPTIONS = ("block",)
OPTIONS = ("num_warps", "num_stages", "occupancy", "block", "max_registers")


class TuningWarning(UserWarning):
    """A configuration skipped (it failed to compile or run), or a search cut short."""


class Config:
    """One candidate: values of the kernel's ``Constant`` parameters and its launch shape.

    ``Config(tm=128, tn=64, num_warps=8)``, or Triton's spelling ``Config({"tm": 128, "tn":
    64}, num_warps=8)``. The launch options: ``num_warps``, ``occupancy`` and
    ``max_registers`` for tile kernels (their ``ct.kernel`` hints, through
    ``kernel.replace_hints``); ``block`` (an int or a tuple of up to three) for thread-level
    kernels. ``num_stages`` is refused: threadtile's compiler picks the stages of a k loop from
    the tile shapes and the shared memory. A plain dict in ``autotune``'s ``configs`` is read
    as ``Config(**d)``. ``kwargs`` holds the parameters; ``all_kwargs()`` them and the options.
    """

    __slots__ = ("kwargs", "num_warps", "num_stages", "occupancy", "block", "max_registers")

    def __init__(self, kwargs: Mapping[str, Any] | None = None, *, num_warps: int | None = None,
                 num_stages: int | None = None, occupancy: int | None = None,
                 block: int | tuple | None = None, max_registers: int | None = None,
                 **params: Any):
        given = dict(kwargs or {})
        twice = sorted(set(given) & set(params))
        if twice:
            raise TypeError(f"Config: {', '.join(twice)} given twice")
        self.kwargs: dict[str, Any] = {k: v.item() if isinstance(v, np.generic) else v
                                       for k, v in {**given, **params}.items()}
        self.num_warps, self.num_stages, self.occupancy = num_warps, num_stages, occupancy
        self.block = tuple(block) if isinstance(block, list) else block
        self.max_registers = max_registers

    @classmethod
    def of(cls, c) -> Config:
        """``c`` as a Config: a Config, or a mapping of parameters and options."""
        if isinstance(c, Config):
            return c
        if isinstance(c, Mapping):
            d = dict(c)
            return cls(**{k: d.pop(k) for k in OPTIONS if k in d}, **d)
        raise TypeError(f"a configuration is a threadtile.Config or a dict, got "
                        f"{type(c).__name__}")

    @property
    def options(self) -> dict[str, Any]:
        """The launch options that are set."""
        return {k: getattr(self, k) for k in OPTIONS if getattr(self, k) is not None}

    def all_kwargs(self) -> dict[str, Any]:
        """The parameters and the options that are set, in one dict (Triton's name)."""
        return {**self.kwargs, **self.options}

    def to_json(self) -> dict:
        """``{"kwargs": ..., "options": ...}``, tuples as lists."""
        return {"kwargs": _jsonable(self.kwargs), "options": _jsonable(self.options)}

    @classmethod
    def from_json(cls, doc: dict) -> Config:
        """The Config :meth:`to_json` describes."""
        return cls(_untuple(doc["kwargs"]), **_untuple(doc["options"]))

    def _items(self) -> tuple:
        return (tuple(sorted(self.kwargs.items())), tuple(sorted(self.options.items())))

    def __eq__(self, other) -> bool:
        return isinstance(other, Config) and self._items() == other._items()

    def __hash__(self) -> int:
        return hash(self._items())

    def __repr__(self) -> str:
        return "Config(" + ", ".join(f"{k}={v!r}" for k, v in self.all_kwargs().items()) + ")"


def _jsonable(d: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}


def _untuple(d: dict) -> dict:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in d.items()}


@dataclass(frozen=True)
class Choice:
    """The configuration a key launches: ``config`` (and its ``index`` in the list),
    ``origin`` (``"tuned"``: timed in this process; ``"cache"``: read from disk, nothing
    timed; ``"first"``: the simulator's first configuration that ran), ``result`` (the
    search's :class:`~threadtile.tuning.TuningResult`, where it ran in this process) and
    ``seconds`` (what choosing took in this process: the search, or reading the disk)."""

    key: tuple
    config: Config
    index: int
    origin: str
    result: engine.TuningResult | None
    seconds: float


def autotune(configs: Sequence[Config | Mapping[str, Any]], key: Sequence[str] = (), *,
             reset_to_zero: Sequence[str] = (), restore_value: Sequence[str] = (),
             time_budget_s: float | None = DEFAULT_TIME_BUDGET_S, warmup: int = WARMUP,
             cache_results: bool = True,
             do_bench: Callable[[Callable[[], None]], float] | None = None):
    """Decorate a kernel (``@threadtile.jit`` or ``@ct.kernel``; ``@autotune`` goes above it)
    so that each launch takes the fastest of ``configs`` for its key (the module's docstring).

    - ``configs``: :class:`Config` s (or dicts). Every one sets the same ``Constant``
      parameters; a launch passes the kernel's other arguments.
    - ``key``: names of arguments whose values select a tuning entry (an array by its shape
      and dtype). The dtypes of all array arguments are always part of the key.
    - ``reset_to_zero``: arrays the kernel accumulates into, which the caller passes zeroed:
      zeroed before each launch tuning makes, so that the launch after it starts from zero.
    - ``restore_value``: arrays the kernel reads and updates in place: saved when tuning
      starts, restored before each of its launches and once more at its end.
      (Arrays a kernel only writes need neither: the chosen configuration's launch rewrites
      them. Any other array a tuning launch changes stays changed.)
    - ``time_budget_s``: a cap on one key's search, compiles included (None: no cap); the
      configurations not tried when it runs out are skipped with a :class:`TuningWarning`.
    - ``warmup``: untimed launches of each configuration after its first, before timing.
    - ``cache_results``: keep choices on disk (:mod:`threadtile.tuning.store`), so another
      process with the same kernel, device and key launches at once.
    - ``do_bench``: times one configuration instead of the CUDA-event sampling: called with
      ``launch`` (which prepares and enqueues one launch), it returns microseconds per launch.
      Given, it times the simulator's launches too.

    The result (:class:`Autotuner`) launches as the kernel does: ``k[grid](...)`` (a thread-
    level kernel: ``k[grid, block, stream, shared_bytes]``, ``block`` None or left out where
    the configs give it) or ``ct.launch(stream, grid, k, args)``; ``grid``, ``block`` and
    ``shared_bytes`` may be functions of ``meta``, a dict of the launch's arguments, the
    configuration's parameters and its options: ``grid=lambda meta: (cdiv(n, meta["tile"]),)``.
    """
    def decorate(kernel) -> Autotuner:
        return Autotuner(kernel, configs, key, reset_to_zero=reset_to_zero,
                         restore_value=restore_value, time_budget_s=time_budget_s,
                         warmup=warmup, cache_results=cache_results, do_bench=do_bench)
    return decorate


class Autotuner:
    """An autotuned kernel (made by :func:`autotune`). ``best_config``: the last launch's
    configuration; ``choices`` (``cache``: their configs) by key, for the current mode
    (timed, or the simulator's first that runs); ``cached()``: the choices on disk for this
    kernel's source. Other attributes are the kernel's (``cuda_source``, ``py_func``...)."""

    def __init__(self, kernel, configs, key=(), *, reset_to_zero=(), restore_value=(),
                 time_budget_s: float | None = DEFAULT_TIME_BUDGET_S, warmup: int = WARMUP,
                 cache_results: bool = True, do_bench=None):
        if isinstance(kernel, Autotuner):
            raise TypeError("autotune: the kernel is already autotuned; give one @autotune "
                            "the whole list of configurations")
        if not isinstance(kernel, Kernel) or kernel.device:
            raise TypeError(f"autotune decorates a kernel (@threadtile.jit or @ct.kernel; "
                            f"put @autotune above it), got {kernel!r}")
        functools.update_wrapper(self, kernel.py_func)
        self.kernel = kernel
        name = self.name = kernel.py_func.__name__
        if isinstance(configs, (Config, Mapping)) or not isinstance(configs, Sequence):
            raise TypeError(f"autotune({name}): configs is a list of threadtile.Config")
        self.configs = [Config.of(c) for c in configs]
        if not self.configs:
            raise ValueError(f"autotune({name}): configs is empty; give at least one "
                             "threadtile.Config")
        self.tuned = tuple(self.configs[0].kwargs)
        params = kernel.param_names
        for i, c in enumerate(self.configs):
            self._check_config(i, c)
        self.key = _names(key, "key", name, params)
        self.reset_to_zero = _names(reset_to_zero, "reset_to_zero", name, params)
        self.restore_value = _names(restore_value, "restore_value", name, params)
        for what, names in (("key", self.key), ("reset_to_zero", self.reset_to_zero),
                            ("restore_value", self.restore_value)):
            set_by_configs = [n for n in names if n in self.tuned]
            if set_by_configs:
                raise ValueError(f"autotune({name}): {what} names {set_by_configs[0]!r}, "
                                 "which the configurations set")
        if time_budget_s is not None and not time_budget_s > 0:
            raise ValueError(f"autotune({name}): time_budget_s must be > 0 (or None), got "
                             f"{time_budget_s!r}")
        if not isinstance(warmup, int) or warmup < 0:
            raise ValueError(f"autotune({name}): warmup must be an int >= 0, got {warmup!r}")
        self.time_budget_s, self.warmup = time_budget_s, warmup
        self.cache_results, self.do_bench = bool(cache_results), do_bench
        self.runtime_params = [n for n in params if n not in self.tuned]  # what a launch passes
        self._key_pos = [self.runtime_params.index(n) for n in self.key]
        self._kernels: dict[int, Kernel] = {}  # a configuration's kernel (its hints)
        self._choices: dict[tuple, Choice] = {}  # by (timed, key)
        self._launches: dict[tuple, Launch] = {}
        self._identity: tuple | None = None
        self.last_choice: Choice | None = None

    def _check_config(self, i: int, c: Config) -> None:
        k, name = self.kernel, self.name
        where = f"autotune({name}): configs[{i}] {c}"
        for p in c.kwargs:
            if p not in k.param_names:
                raise ValueError(f"{where}: {name} has no parameter {p!r}; its parameters are "
                                 f"{', '.join(k.param_names)}")
            if p not in k.constants:
                raise ValueError(f"{where}: {p!r} is not a Constant parameter, so no "
                                 f"configuration can choose it; annotate it ({p}: "
                                 "Constant[int]) or pass it at the launch")
            if not _number_or_tuple(c.kwargs[p]):
                raise TypeError(f"{where}: {p}={c.kwargs[p]!r}; a Constant's value is an int, "
                                "float or bool (or a tuple of them)")
        if set(c.kwargs) != set(self.tuned):
            raise ValueError(f"{where} sets {sorted(c.kwargs)}, configs[0] sets "
                             f"{sorted(self.tuned)}: every configuration sets the same "
                             "parameters")
        if c.num_stages is not None:
            raise ValueError(f"{where}: num_stages is not a hint threadtile's compiler takes "
                             "(it picks a k loop's stages from the tile shapes and shared "
                             "memory); leave it out")
        if c.block is not None and not (_number_or_tuple(c.block) and all(
                isinstance(b, int) and b > 0 for b in np.atleast_1d(c.block).tolist())):
            raise TypeError(f"{where}: block={c.block!r}; a block is an int or a tuple of "
                            "up to three ints")
        allowed = TILE_OPTIONS if k.tile else THREAD_OPTIONS
        for opt in c.options:
            if opt not in allowed:
                kind = "a tile kernel" if k.tile else "a thread-level kernel"
                hint = ("its block is 32 * num_warps: give num_warps" if k.tile else
                        "its launch shape is its block: give block")
                raise ValueError(f"{where}: {opt} is not an option of {kind} ({hint})")

    # -- launching -----------------------------------------------------------------------------

    def __getitem__(self, config) -> _TunedLaunch:
        if self.kernel.tile or callable(config) or not isinstance(config, tuple):
            return _TunedLaunch(self, config, None, None, 0)
        if not 2 <= len(config) <= 4:
            raise TypeError(f"launch {self.name} with {self.name}[grid], [grid, block], "
                            "[grid, block, stream] or [grid, block, stream, shared_bytes] "
                            "(block None where the configs give it)")
        stream = config[2] if len(config) > 2 else None
        shared = config[3] if len(config) > 3 else 0
        return _TunedLaunch(self, config[0], config[1], stream, shared)

    def launch(self, stream, grid, args) -> None:
        """``ct.launch(stream, grid, kernel, args)`` of an autotuned tile kernel."""
        if not self.kernel.tile:
            raise TypeError("ct.launch() launches a @ct.kernel; launch thread-level kernels "
                            "with kernel[grid, block, stream](...)")
        if not isinstance(args, (tuple, list)):
            raise TypeError("ct.launch(stream, grid, kernel, args): args must be a tuple")
        self.run(grid, None, stream, 0, tuple(args), {})

    def __call__(self, *args, **kwargs):
        raise ValueError(f"{self.name} is an autotuned kernel: launch it with "
                         f"{self.name}[grid](...)")

    def run(self, grid, block, stream, shared, args: tuple, kwargs: dict) -> None:
        """One launch: the choice for the arguments' key (tuning first where there is none),
        launched with ``grid``, ``block`` (thread-level kernels), ``stream`` and
        ``shared`` (dynamic shared memory), each maybe a function of ``meta``."""
        values = self._bind(args, kwargs)
        key = self._key(values)
        timed = self.do_bench is not None or not requested()
        choice = self._choices.get((timed, key))
        launched = False
        if choice is None:
            choice, launched = self._choose(key, values, (grid, block, stream, shared), timed)
            self._choices[(timed, key)] = choice
        self.last_choice = choice
        if not launched:
            launch, full = self._prepare_launch(choice.index, values, grid, block, stream,
                                                shared)
            launch(*full)

    def _bind(self, args: tuple, kwargs: dict) -> list:
        """The launch's arguments in ``runtime_params`` order (TypeErrors naming what is
        wrong)."""
        names = self.runtime_params
        if len(args) > len(names):
            raise TypeError(f"{self.name}[...]() takes {len(names)} arguments "
                            f"({', '.join(names)}; {', '.join(self.tuned)} come from the "
                            f"configurations), got {len(args)}")
        values = list(args) + [_MISSING] * (len(names) - len(args))
        for k, v in kwargs.items():
            if k in self.tuned:
                raise TypeError(f"{self.name}: {k!r} is chosen by the autotuner (its "
                                "configurations set it); leave it out of the launch")
            if k not in names:
                raise TypeError(f"{self.name}() has no parameter {k!r}")
            i = names.index(k)
            if values[i] is not _MISSING:
                raise TypeError(f"{self.name}() got {k!r} twice")
            values[i] = v
        missing = [n for n, v in zip(names, values) if v is _MISSING]
        if missing:
            raise TypeError(f"{self.name}[...]() is missing {', '.join(missing)} (it takes "
                            f"{', '.join(names)}; {', '.join(self.tuned)} come from the "
                            "configurations)")
        return values

    def _key(self, values: list) -> tuple:
        key = tuple(_key_value(values[i], self.key[j]) for j, i in enumerate(self._key_pos))
        return key + (tuple(_dtype_name(v.dtype) for v in values if _is_array(v)),)

    def kernel_for(self, index: int) -> Kernel:
        """The kernel of ``configs[index]``: this one, or a copy with its hints
        (``replace_hints``); made once."""
        k = self._kernels.get(index)
        if k is None:
            opts = {o: v for o, v in self.configs[index].options.items() if o != "block"}
            k = self.kernel.replace_hints(**opts) if opts else self.kernel
            self._kernels[index] = k
        return k

    def meta(self, index: int, values: list) -> dict:
        """What ``grid``/``block``/``shared_bytes`` functions get: the launch's arguments by
        name, the configuration's parameters and its options."""
        return {**dict(zip(self.runtime_params, values)), **self.configs[index].all_kwargs()}

    def _prepare_launch(self, index: int, values: list, grid, block, stream,
                        shared) -> tuple[Launch, list]:
        cfg, k = self.configs[index], self.kernel_for(index)
        if callable(grid) or callable(block) or callable(shared):
            meta = self.meta(index, values)
            grid = grid(meta) if callable(grid) else grid
            block = block(meta) if callable(block) else block
            shared = shared(meta) if callable(shared) else shared
        if k.tile:
            shape = (grid, k.block_threads, stream)
        else:
            block = cfg.block if cfg.block is not None else block
            if block is None:
                raise errors.LaunchError(
                    f"{self.name}: {cfg} gives no block: give Config(block=...) or launch "
                    f"with {self.name}[grid, block]")
            shape = (grid, block, stream, shared)
        try:
            cache_key = (index, _hashable(shape))
            launch = self._launches.get(cache_key)
        except TypeError:
            cache_key, launch = None, None
        if launch is None:
            launch = Launch(k, shape)
            if cache_key is not None and len(self._launches) < 256:
                self._launches[cache_key] = launch
        it = iter(values)
        full = [cfg.kwargs[n] if n in cfg.kwargs else next(it) for n in k.param_names]
        return launch, full

    # -- choosing ------------------------------------------------------------------------------

    def _choose(self, key: tuple, values: list, shape: tuple,
                timed: bool) -> tuple[Choice, bool]:
        """The choice for ``key``: from disk, or by a search; and whether the search's last
        launch was this launch (the simulator's first configuration that ran)."""
        t0 = time.perf_counter()
        flags = _flags()
        verbose = "verbose" in flags
        entry = None
        if timed and self.cache_results:
            entry = self._entry(key)
            if entry is not None and "force" not in flags:
                choice = self._read(entry, key, t0)
                if choice is not None:
                    if verbose:
                        print(f"autotune {self.name} {_spell_key(key)}: {choice.config} "
                              "(from the cache)")
                    return choice, False
        arrays = {n: values[self.runtime_params.index(n)]
                  for n in self.reset_to_zero + self.restore_value}
        for n, a in arrays.items():
            if not _is_array(a):
                raise TypeError(f"{self.name}: reset_to_zero and restore_value name arrays; "
                                f"{n!r} is a {type(a).__name__}")
        saved = {n: _save(arrays[n]) for n in self.restore_value}
        errs: list[BaseException] = []

        def prepare() -> None:
            for n, a in saved.items():
                _restore(arrays[n], a)
            for n in self.reset_to_zero:
                _zero(arrays[n])

        def make_trial(cfg: Config) -> _Trial:
            i = next(j for j, c in enumerate(self.configs) if c is cfg)
            launch, full = self._prepare_launch(i, values, *shape)
            return _Trial(prepare, launch, full)

        def failed(cfg: Config, e: BaseException) -> None:
            errs.append(e)
            _warn(f"autotune {self.name}: {cfg} skipped: {type(e).__name__}: "
                  f"{engine.first_line(str(e))}")

        if verbose:
            how = "timing" if timed else "the simulator: the first that runs"
            print(f"autotune {self.name} {_spell_key(key)}: {len(self.configs)} "
                  f"configurations ({how})")
        if not requested():  # the configurations' cubins compiled at once, in processes
            from ..builds import precompile  # noqa: PLC0415

            precompile((launch.kernel, full) for launch, full in (
                self._prepare_launch(i, values, *shape) for i in range(len(self.configs))))
        try:
            stream = _timing_stream(shape[2], values) if not requested() else shape[2]
            result = engine.search(self.configs, make_trial, stream, timed=timed,
                                   do_bench=self.do_bench, warmup=self.warmup if timed else 0,
                                   time_budget_s=self.time_budget_s, on_failure=failed,
                                   progress=print if verbose else None)
        except ValueError:
            prepare()
            first = errs[0] if errs else None
            if first is not None and all((type(e), str(e)) == (type(first), str(first))
                                         for e in errs):
                raise first from None  # every configuration failed alike: the launch is at fault
            raise ValueError(f"autotune {self.name}: none of the {len(self.configs)} "
                             "configurations ran:\n" + "\n".join(
                                 f"  {c}: {type(e).__name__}: {engine.first_line(str(e))}"
                                 for c, e in zip(self.configs, errs))) from None
        if timed:
            prepare()  # the launch that follows starts from the caller's values
        if result.skipped:
            _warn(f"autotune {self.name}: the time budget ({self.time_budget_s:g} s) ran out "
                  f"with {len(result.skipped)} of {len(self.configs)} configurations not "
                  f"tried; raise time_budget_s (and set {ENV}=force to tune again)")
        cfg = result.best.config
        index = next(j for j, c in enumerate(self.configs) if c is cfg)
        seconds = time.perf_counter() - t0
        choice = Choice(key, cfg, index, "tuned" if timed else "first", result, seconds)
        if verbose:
            print(f"autotune {self.name} {_spell_key(key)}: chose {cfg} in {seconds:.2f} s")
        if entry is not None:
            self._write(entry, key, result, seconds)
        return choice, not timed

    def identity(self) -> tuple | None:
        """What names this kernel in a disk entry: its module and qualified name, a SHA-256 of
        its source, its compile options, the configurations; None where it has no source."""
        if self._identity is None:
            fn, k = self.kernel.py_func, self.kernel
            try:
                text = get_source(fn).text
            except errors.KernelCompileError:
                return None
            self._identity = (
                f"{fn.__module__}.{fn.__qualname__}", hashlib.sha256(text.encode()).hexdigest(),
                f"tile={k.tile} num_warps={k.num_warps} occupancy={k.occupancy} "
                f"auto_warps={k.auto_warps} hints={sorted((k.hints or {}).items(), key=str)}",
                " ".join(k.options),
                json.dumps([c.to_json() for c in self.configs], sort_keys=True))
        return self._identity

    def _entry(self, key: tuple) -> str | None:
        ident = self.identity()
        if ident is None:
            return None
        dev = devices.get_current_device()
        return store.entry_key(ident, dev.name, tuple(dev.compute_capability), key)

    def _read(self, entry: str, key: tuple, t0: float) -> Choice | None:
        rec = store.load(entry)
        if rec is None:
            return None
        try:
            cfg = Config.from_json(rec.config)
        except (KeyError, TypeError):
            return None
        if cfg not in self.configs:  # (a hash collision, or an entry edited by hand)
            return None
        return Choice(key, cfg, self.configs.index(cfg), "cache", None,
                      time.perf_counter() - t0)

    def _write(self, entry: str, key: tuple, result: engine.TuningResult,
               seconds: float) -> None:
        ident = self.identity()
        dev = devices.get_current_device()
        rec = store.TuningRecord(
            kernel=ident[0], source_sha=ident[1], device=dev.name,
            compute_capability=tuple(dev.compute_capability), key=key,
            config=result.best.config.to_json(),
            timings=tuple((m.config.to_json(), m.mean_us, m.num_samples)
                          for m in result.successes if math.isfinite(m.mean_us)),
            failures=tuple((c.to_json(), f"{t.__name__}: {engine.first_line(msg)}")
                           for c, t, msg in result.failures),
            complete=not result.skipped,
            tuned_at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            tuning_s=seconds, entry=entry)
        store.save(rec)

    # -- introspection -------------------------------------------------------------------------

    @property
    def best_config(self) -> Config | None:
        """The configuration of the last launch (None before any)."""
        return None if self.last_choice is None else self.last_choice.config

    @property
    def choices(self) -> dict[tuple, Choice]:
        """The choices made or read in this process, by key, for the current mode (timed;
        or, in the simulator without ``do_bench``, the first that runs)."""
        timed = self.do_bench is not None or not requested()
        return {k: c for (t, k), c in self._choices.items() if t == timed}

    @property
    def cache(self) -> dict[tuple, Config]:
        """``choices``' configurations, by key (Triton's ``kernel.cache``)."""
        return {k: c.config for k, c in self.choices.items()}

    def cached(self) -> list[store.TuningRecord]:
        """The choices on disk for this kernel as its source is now (any device, any key)."""
        ident = self.identity()
        if ident is None:
            return []
        return [r for r in store.list_cached(ident[0]) if r.source_sha == ident[1]]

    def __getattr__(self, name: str):
        if name == "kernel":  # (not set yet: during __init__)
            raise AttributeError(name)
        return getattr(self.kernel, name)

    def __repr__(self) -> str:
        return f"<threadtile autotuned kernel {self.kernel.py_func.__qualname__} " \
               f"({len(self.configs)} configs, key={self.key})>"


class _TunedLaunch:
    """``tuned[grid]`` (or ``[grid, block, stream, shared_bytes]``), ready to be called."""

    __slots__ = ("tuner", "grid", "block", "stream", "shared")

    def __init__(self, tuner: Autotuner, grid, block, stream, shared):
        self.tuner, self.grid, self.block, self.stream, self.shared = (
            tuner, grid, block, stream, shared)

    def __call__(self, *args, **kwargs) -> None:
        self.tuner.run(self.grid, self.block, self.stream, self.shared, args, kwargs)


class _Trial:
    """A configuration's launch as the engine runs it."""

    __slots__ = ("prepare", "go", "args")

    def __init__(self, prepare, launch: Launch, args: list):
        self.prepare, self.go, self.args = prepare, launch, args

    def launch(self) -> None:
        self.go(*self.args)


_MISSING = object()


def _names(names, what: str, kernel: str, params: list[str]) -> list[str]:
    if isinstance(names, str):
        names = [names]
    out = list(names)
    for n in out:
        if n not in params:
            raise ValueError(f"autotune({kernel}): {what} names {n!r}, which is not a "
                             f"parameter of {kernel} ({', '.join(params)})")
    return out


def _number_or_tuple(v) -> bool:
    if isinstance(v, tuple):
        return all(isinstance(x, (bool, int, float)) for x in v)
    return isinstance(v, (bool, int, float))


def _flags() -> set[str]:
    words = {w.strip().lower() for w in os.environ.get(ENV, "").replace(",", " ").split()}
    bad = sorted(words - set(FLAGS))
    if bad:
        _warn(f"{ENV}={os.environ.get(ENV)!r}: unknown word(s) {', '.join(bad)}; it takes "
              f"{', '.join(FLAGS)}")
    return words


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _warn(message: str) -> None:
    """A TuningWarning at the user's line: the first frame outside threadtile."""
    f, level = sys._getframe(1), 2
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE):
        f, level = f.f_back, level + 1
    warnings.warn(message, TuningWarning, stacklevel=level)


def _is_array(v) -> bool:
    return hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, np.generic)


@functools.lru_cache(maxsize=64)
def _dtype_name(dt) -> str:
    try:
        return np.dtype(dt).name
    except TypeError:  # torch's dtypes: "torch.float16"
        return str(dt).rsplit(".", 1)[-1]


def _timing_stream(stream, values: list):
    """The stream the launches go to, for the engine's events: ``stream``, or where it is
    None the current stream of the first torch or CuPy array's framework (as the launcher
    takes it), else None (the legacy default stream)."""
    if stream is not None:
        return stream
    for v in values:
        mod = type(v).__module__.split(".", 1)[0]
        if mod == "torch" and getattr(v, "is_cuda", False):
            return sys.modules["torch"].cuda.current_stream(v.device).cuda_stream
        if mod == "cupy":
            return sys.modules["cupy"].cuda.get_current_stream().ptr
    return None


def _key_value(v, name: str):
    """A key argument's part of the key: an array's shape and dtype, a number's value."""
    if _is_array(v):
        return (tuple(int(s) for s in v.shape), _dtype_name(v.dtype))
    if isinstance(v, np.generic):
        v = v.item()
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (tuple, list)):
        return tuple(_key_value(x, name) for x in v)
    raise TypeError(f"autotune key {name!r} is a {type(v).__name__}: a key is made of "
                    "numbers, strings, arrays (their shape and dtype) and tuples of them")


def _hashable(shape: tuple):
    """A launch shape as a dictionary key (grid and block lists as tuples)."""
    return tuple(tuple(x) if isinstance(x, list) else x for x in shape)


def _spell_key(key: tuple) -> str:
    return "key=" + repr(key)


def _save(a):
    if hasattr(a, "clone"):  # torch
        return a.clone()
    if hasattr(a, "copy_to_host"):  # threadtile's and numba's device arrays
        return a.copy_to_host()
    return a.copy()  # NumPy, CuPy


def _restore(a, saved) -> None:
    if hasattr(a, "copy_"):
        a.copy_(saved)
    elif hasattr(a, "copy_to_device"):
        a.copy_to_device(saved)
    else:
        a[...] = saved


def _zero(a) -> None:
    if hasattr(a, "zero_"):
        a.zero_()
    elif hasattr(a, "copy_to_device"):
        a.copy_to_device(np.zeros(a.shape, a.dtype))
    else:
        a[...] = 0
