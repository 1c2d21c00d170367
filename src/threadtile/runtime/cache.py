"""The on-disk cache of compiled kernels (cubins), shared by every process of one user.

Layout: ``<root>/<salt>/<key[:2]>/<key>.bin`` where root is ``$THREADTILE_CACHE_DIR``, else
``$XDG_CACHE_HOME/threadtile``, else ``~/.cache/threadtile``, and salt names the threadtile and
NVRTC versions, so an upgrade starts a fresh folder instead of reading stale entries.

Why each defensive step is there:

- Keys hash *length-prefixed* fields: without the lengths, ``("ab", "c")`` and ``("a", "bc")``
  would hash alike.
- An entry is written to a temporary file in the same folder, then ``os.replace``d: the rename
  is atomic on POSIX (and on Windows for files), so a reader sees the old entry, no entry, or the
  whole new one, never a half-written file, even with processes racing to fill the same key.
- Each entry starts with a header (magic, payload length, SHA-256 of the payload). A truncated
  or corrupted file (disk full, a killed writer on a filesystem without atomic rename, bit rot)
  fails the check, is deleted and reads as a miss. A cache must never turn into a crash: every
  OS error reading or writing is a miss or a skipped write.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
from pathlib import Path

from ..version import __version__

__all__ = ["cache_root", "cache_dir", "make_key", "get", "put", "info", "clear", "salt"]

_MAGIC = b"TTCACHE1"
# magic, payload length, SHA-256 of the payload
_HEADER = struct.Struct("<8sQ32s")
_SUFFIX = ".bin"


def _package_version() -> str:
    return __version__


def _nvrtc_version() -> str:
    try:
        import hashlib  # noqa: PLC0415

        from .nvrtc import compiler_id  # noqa: PLC0415

        return hashlib.sha256(compiler_id().encode()).hexdigest()[:12]
    except Exception:  # noqa: BLE001  (no NVRTC: entries still get a stable salt)
        return "none"


def salt() -> str:
    """The version salt mixed into every key and naming the cache subfolder."""
    return f"tt{_package_version()}-nvrtc{_nvrtc_version()}"


def cache_root() -> Path:
    """The cache's root folder (not created here)."""
    env = os.environ.get("THREADTILE_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "threadtile"


def cache_dir() -> Path:
    """The folder holding this version's entries: ``cache_root() / salt()``."""
    return cache_root() / _safe(salt())


def _safe(s: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in s)


def make_key(*parts) -> str:
    """A hex SHA-256 over the version salt and ``parts``, each field length-prefixed.

    Parts may be ``str``, ``bytes``, ints, floats, None, or tuples/lists of those (tuples nest
    with their own length prefix, so ``("a", ("b",))`` and ``("a", "b")`` differ).
    """
    h = hashlib.sha256()
    _feed(h, salt())
    _feed(h, parts)
    return h.hexdigest()


def _feed(h, part) -> None:
    if isinstance(part, (bytes, bytearray, memoryview)):
        tag, data = b"b", bytes(part)
    elif isinstance(part, str):
        tag, data = b"s", part.encode("utf-8", "surrogatepass")
    elif isinstance(part, (tuple, list)):
        h.update(b"t" + struct.pack("<Q", len(part)))
        for p in part:
            _feed(h, p)
        return
    elif part is None or isinstance(part, (bool, int, float)):
        tag, data = b"r", repr(part).encode()
    else:
        raise TypeError(f"cache key parts must be str, bytes, numbers or tuples of them, got "
                        f"{type(part).__name__}")
    h.update(tag + struct.pack("<Q", len(data)) + data)


def _path(key: str) -> Path:
    if not key or not all(c in "0123456789abcdef" for c in key):
        raise ValueError(f"not a cache key (make_key() gives hex digests): {key!r}")
    return cache_dir() / key[:2] / (key + _SUFFIX)


def get(key: str) -> bytes | None:
    """The payload stored under ``key``, or None (absent, unreadable, truncated or corrupt;
    a bad entry is removed)."""
    p = _path(key)
    try:
        with open(p, "rb") as f:
            data = f.read()
    except OSError:
        return None
    payload = _unwrap(data)
    if payload is None:
        try:
            p.unlink()
        except OSError:
            pass
    return payload


def _unwrap(data: bytes) -> bytes | None:
    if len(data) < _HEADER.size:
        return None
    magic, length, digest = _HEADER.unpack_from(data)
    payload = data[_HEADER.size:]
    if magic != _MAGIC or length != len(payload) or hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def put(key: str, data: bytes) -> bool:
    """Store ``data`` under ``key`` atomically. Returns False (and stores nothing) when the
    cache folder is not writable; never raises for I/O problems."""
    p = _path(key)
    blob = _HEADER.pack(_MAGIC, len(data), hashlib.sha256(data).digest()) + bytes(data)
    tmp = None
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=p.name + ".", suffix=".tmp", dir=p.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, p)
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False


def _entries(root: Path):
    if not root.is_dir():
        return
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(_SUFFIX):
                yield Path(dirpath) / name


def info() -> dict:
    """``{"path": str, "entries": int, "bytes": int}`` for this version's cache folder (entries
    of other versions, kept under sibling folders, are counted in ``other_versions_bytes``)."""
    d = cache_dir()
    n = size = 0
    for p in _entries(d):
        try:
            size += p.stat().st_size
            n += 1
        except OSError:
            pass
    other = 0
    root = cache_root()
    if root.is_dir():
        for sub in root.iterdir():
            if sub.is_dir() and sub.name != d.name:
                for p in _entries(sub):
                    try:
                        other += p.stat().st_size
                    except OSError:
                        pass
    return {"path": str(d), "entries": n, "bytes": size, "other_versions_bytes": other}


def clear(all_versions: bool = False) -> int:
    """Delete this version's entries (every version's with ``all_versions``); returns how many
    entries were removed.

    Only our own files go (``*.bin`` entries and ``*.tmp`` leftovers, in our salt folders), so
    a ``THREADTILE_CACHE_DIR`` pointed at a shared folder by mistake loses nothing else.
    """
    if all_versions:
        root = cache_root()
        dirs = [d for d in root.iterdir() if d.is_dir() and _is_salt_dir(d.name)] if (
            root.is_dir()) else []
    else:
        dirs = [cache_dir()]
    n = 0
    for d in dirs:
        if not d.is_dir():
            continue
        for dirpath, subdirs, files in os.walk(d, topdown=False):
            for name in files:
                if name.endswith(_SUFFIX) or name.endswith(".tmp"):
                    try:
                        os.unlink(os.path.join(dirpath, name))
                        n += name.endswith(_SUFFIX)
                    except OSError:
                        pass
            for sub in subdirs:
                try:
                    os.rmdir(os.path.join(dirpath, sub))
                except OSError:  # not empty: someone else's file
                    pass
        try:
            os.rmdir(d)
        except OSError:
            pass
    return n


def _is_salt_dir(name: str) -> bool:
    return name.startswith("tt") and "-nvrtc" in name
