"""The autotuner's choices on disk: one entry per kernel, device and key, so that a second
process launches the chosen configuration without timing anything.

Entries live in threadtile's cache folder (``runtime/cache.py``: ``$THREADTILE_CACHE_DIR``,
else ``~/.cache/threadtile``), in the ``autotune`` namespace of this threadtile and NVRTC
version's folder, written and read with the cache's defences: a temporary file
``os.replace``d into place, a checksum, bounded reads, a damaged entry a miss.

An entry's cache key hashes, each field length-prefixed (``cache.make_key``): the version
salt; the device's name and compute capability; the kernel's module, qualified name and a
SHA-256 of its source text, and its compile options; the list of configurations; the key
values. So an edited kernel, another GPU, another list of configurations or another threadtile
misses and is tuned afresh. What the entry holds is JSON (:class:`TuningRecord`); the chosen
configuration is used only if it is still one of the kernel's (``Autotuner`` checks).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..runtime import cache

__all__ = ["NAMESPACE", "TuningRecord", "entry_key", "load", "save", "list_cached", "clear"]

NAMESPACE = "autotune"
FORMAT = 1  # the entries' layout: a new one misses on the old


@dataclass(frozen=True)
class TuningRecord:
    """One stored choice: ``kernel`` (``module.qualname``), ``source_sha`` (of the kernel's
    source when it was tuned), ``device`` and ``compute_capability``, the ``key`` values,
    the chosen ``config`` (as ``Config.to_json``), ``timings`` (``(config, mean_us,
    num_samples)`` of each configuration measured), ``failures`` (``(config, error)``),
    ``complete`` (False where the time budget stopped the search early), ``tuned_at`` (UTC,
    ISO 8601), ``tuning_s`` (seconds the search took) and ``entry`` (its cache key)."""

    kernel: str
    source_sha: str
    device: str
    compute_capability: tuple[int, int]
    key: tuple
    config: dict
    timings: tuple
    failures: tuple
    complete: bool
    tuned_at: str
    tuning_s: float
    entry: str

    @classmethod
    def from_json(cls, doc: dict, entry: str) -> TuningRecord:
        """The record of a stored document (a KeyError/TypeError/ValueError if malformed)."""
        return cls(kernel=str(doc["kernel"]), source_sha=str(doc["source_sha"]),
                   device=str(doc["device"]),
                   compute_capability=tuple(int(x) for x in doc["compute_capability"]),
                   key=_tuples(doc["key"]), config=dict(doc["config"]),
                   timings=tuple((dict(c), float(t), int(n)) for c, t, n in doc["timings"]),
                   failures=tuple((dict(c), str(e)) for c, e in doc["failures"]),
                   complete=bool(doc["complete"]), tuned_at=str(doc["tuned_at"]),
                   tuning_s=float(doc["tuning_s"]), entry=entry)

    def to_json(self) -> dict:
        """The document stored on disk (``entry`` is its file's key, not stored)."""
        return {"format": FORMAT, "kernel": self.kernel, "source_sha": self.source_sha,
                "device": self.device, "compute_capability": list(self.compute_capability),
                "key": _lists(self.key), "config": self.config,
                "timings": [[c, t, n] for c, t, n in self.timings],
                "failures": [[c, e] for c, e in self.failures], "complete": self.complete,
                "tuned_at": self.tuned_at, "tuning_s": self.tuning_s}


def _lists(v):
    return [_lists(x) for x in v] if isinstance(v, (tuple, list)) else v


def _tuples(v):
    return tuple(_tuples(x) for x in v) if isinstance(v, list) else v


def entry_key(identity: tuple, device: str, compute_capability: tuple[int, int],
              key: tuple) -> str:
    """The cache key of the entry for a kernel (``identity``: its name, source hash, options
    and configurations, as strings), a device and the key values (numbers, strings, None and
    tuples of them)."""
    return cache.make_key("autotune", str(FORMAT), device, tuple(compute_capability),
                          tuple(identity), key)


def load(entry: str) -> TuningRecord | None:
    """The record under ``entry``, or None (absent, damaged, or of another format)."""
    data = cache.get(entry, NAMESPACE)
    if data is None:
        return None
    try:
        doc = json.loads(data)
        if doc.get("format") != FORMAT:
            return None
        return TuningRecord.from_json(doc, entry)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None  # a damaged or foreign entry is a miss


def save(record: TuningRecord) -> bool:
    """Store ``record`` under its ``entry`` key; False where the cache cannot be written."""
    return cache.put(record.entry, json.dumps(record.to_json()).encode(), NAMESPACE)


def _name(kernel) -> str | None:
    if kernel is None or isinstance(kernel, str):
        return kernel
    fn = getattr(kernel, "py_func", None) or kernel
    return f"{fn.__module__}.{fn.__qualname__}"


def list_cached(kernel=None) -> list[TuningRecord]:
    """The stored choices of this threadtile version, oldest first: all of them, or those of
    ``kernel`` (an autotuned kernel, a kernel or a ``"module.qualname"`` string; entries made
    from earlier versions of its source are listed too: compare ``source_sha``)."""
    want = _name(kernel)
    out = []
    for k in cache.keys(NAMESPACE):
        r = load(k)
        if r is not None and (want is None or r.kernel == want):
            out.append(r)
    return sorted(out, key=lambda r: r.tuned_at)


def clear(kernel=None) -> int:
    """Delete the stored choices (all, or ``kernel``'s, as :func:`list_cached` selects them);
    returns how many were deleted. ``threadtile cache clear`` deletes them with the kernels."""
    want = _name(kernel)
    n = 0
    for k in cache.keys(NAMESPACE):
        if want is not None:
            r = load(k)
            if r is None or r.kernel != want:
                continue
        n += cache.discard(k, NAMESPACE)
    return n
