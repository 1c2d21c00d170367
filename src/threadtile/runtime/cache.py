"""The on-disk cache of compiled kernels (cubins), shared by every process of one user.

Layout: ``<root>/<salt>/<key[:2]>/<key>.bin`` where root is ``$THREADTILE_CACHE_DIR``, else
``$XDG_CACHE_HOME/threadtile``, else ``~/.cache/threadtile``, and salt names the threadtile and
NVRTC versions, so an upgrade starts a fresh folder instead of reading stale entries. Entries
of a *namespace* (``get(key, namespace="autotune")``: the autotuner's choices) live under
``<root>/<salt>/<namespace>/<key[:2]>/``, where :func:`keys` lists them.

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
- Reads are bounded: an entry is opened without following a symbolic link and without
  blocking, and read only if it is a regular file of at most :data:`MAX_ENTRY_BYTES`. A FIFO
  at an entry's path would block a plain ``open`` forever, and a link to ``/dev/zero`` would
  read until memory ran out; such an entry is skipped (a :class:`CacheWarning`, once per path)
  and left for the next ``put`` to replace.
- A cache folder that cannot be written is not an error, but it is not silent either: every
  kernel would compile cold in every process. The first failed write warns (a
  :class:`CacheWarning` naming the folder, the reason and ``THREADTILE_CACHE_DIR``), once per
  folder.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import struct
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ..version import __version__

__all__ = ["cache_root", "cache_dir", "make_key", "get", "put", "keys", "discard", "info",
           "clear", "clear_report", "ClearReport", "salt", "CacheWarning", "MAX_ENTRY_BYTES"]

ENV = "THREADTILE_CACHE_DIR"
#: The largest entry ``get`` reads (a cubin of the largest tile kernels is a few MiB).
MAX_ENTRY_BYTES = 256 << 20


class CacheWarning(UserWarning):
    """The disk cache cannot be written, or skipped an entry it would not read."""


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
    env = os.environ.get(ENV)
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


def _path(key: str, namespace: str = "") -> Path:
    if not key or not all(c in "0123456789abcdef" for c in key):
        raise ValueError(f"not a cache key (make_key() gives hex digests): {key!r}")
    if namespace and not (namespace.isidentifier() and namespace.isascii()):
        raise ValueError(f"a cache namespace is a plain name, got {namespace!r}")
    return cache_dir() / namespace / key[:2] / (key + _SUFFIX)


def keys(namespace: str) -> list[str]:
    """The keys of the entries stored under ``namespace`` (none where its folder is missing
    or unreadable); :func:`get` reads each, checked."""
    _path("0", namespace)  # (checks the name)
    out = []
    for p in _entries(cache_dir() / namespace):
        k = p.name[:-len(_SUFFIX)]
        if k and all(c in "0123456789abcdef" for c in k) and p.parent.name == k[:2]:
            out.append(k)
    return sorted(out)


# the entries skipped and the folders found unwritable, each reported once per process
_reported: set[str] = set()

_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) |
               getattr(os, "O_BINARY", 0))


def get(key: str, namespace: str = "") -> bytes | None:
    """The payload stored under ``key`` (in ``namespace``), or None (absent, unreadable,
    truncated or corrupt; a bad entry is removed). Never blocks and never reads more than
    :data:`MAX_ENTRY_BYTES`: a symbolic link, a FIFO, a device or an oversized file at the
    entry's path is skipped, with a :class:`CacheWarning` the first time."""
    p = _path(key, namespace)
    data = _read_bounded(p)
    if data is None:
        return None
    payload = _unwrap(data)
    if payload is None:
        try:
            p.unlink()
        except OSError:
            pass
    return payload


def _read_bounded(p: Path) -> bytes | None:
    """The contents of the regular file ``p``, or None. O_NONBLOCK makes opening a FIFO
    return at once (a plain open waits for a writer); O_NOFOLLOW refuses a symbolic link (to
    /dev/zero, say) before anything is read; fstat then tells the kind and size of what was
    opened. Where the OS lacks those flags, lstat checks first."""
    if not hasattr(os, "O_NOFOLLOW"):
        try:
            st = os.lstat(p)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return _skip(p, _kind(st.st_mode))
    try:
        fd = os.open(p, _READ_FLAGS)
    except OSError as e:
        if e.errno in (errno.ELOOP, getattr(errno, "EMLINK", None)) and os.path.islink(p):
            return _skip(p, "a symbolic link")
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return _skip(p, _kind(st.st_mode))
        if st.st_size > MAX_ENTRY_BYTES:
            return _skip(p, f"{st.st_size} bytes, more than the {MAX_ENTRY_BYTES} an entry "
                            "may have")
        with open(fd, "rb", closefd=False) as f:
            data = f.read(MAX_ENTRY_BYTES + 1)  # (a file that grew since fstat stops here)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= MAX_ENTRY_BYTES else None


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _skip(p: Path, why: str) -> None:
    if str(p) not in _reported:
        _reported.add(str(p))
        warnings.warn(f"threadtile's kernel cache skipped {p}: it is {why}, not a cache "
                      "entry, and was not read (the next compile of that kernel replaces it)",
                      CacheWarning, stacklevel=4)
    return None


def _unwritable(folder: Path, e: OSError) -> None:
    key = f"dir:{folder}"
    if key in _reported:
        return
    _reported.add(key)
    reason = e.strerror or str(e)
    if e.filename and str(e.filename) != str(folder):
        reason += f" ({e.filename})"
    warnings.warn(f"threadtile's kernel cache cannot write to {folder}: {reason}. Kernels will "
                  "compile again in every process; set THREADTILE_CACHE_DIR to a folder you "
                  "can write (export THREADTILE_CACHE_DIR=/path/to/cache)",
                  CacheWarning, stacklevel=3)


def _unwrap(data: bytes) -> bytes | None:
    if len(data) < _HEADER.size:
        return None
    magic, length, digest = _HEADER.unpack_from(data)
    payload = data[_HEADER.size:]
    if magic != _MAGIC or length != len(payload) or hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def put(key: str, data: bytes, namespace: str = "") -> bool:
    """Store ``data`` under ``key`` (in ``namespace``) atomically. Returns False (and stores
    nothing) when the cache folder is not writable, warning the first time
    (:class:`CacheWarning`); never raises for I/O problems."""
    p = _path(key, namespace)
    blob = _HEADER.pack(_MAGIC, len(data), hashlib.sha256(data).digest()) + bytes(data)
    tmp = None
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=p.name + ".", suffix=".tmp", dir=p.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, p)
        return True
    except OSError as e:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        _unwritable(cache_dir(), e)
        return False


def discard(key: str, namespace: str = "") -> bool:
    """Delete the entry under ``key`` (in ``namespace``); whether one was deleted."""
    try:
        _path(key, namespace).unlink()
        return True
    except OSError:
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
            st = p.lstat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):  # (a FIFO or link at an entry's path is no entry)
            size += st.st_size
            n += 1
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


@dataclass
class ClearReport:
    """What :func:`clear_report` did: ``removed`` entries, and ``failed``, the ``(path,
    reason)`` of each of our files or folders it could not delete or list."""

    removed: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed


def clear(all_versions: bool = False) -> int:
    """Delete this version's entries (every version's with ``all_versions``); returns how many
    entries were removed (:func:`clear_report` also says what could not be deleted).

    Only our own files go (``*.bin`` entries and ``*.tmp`` leftovers, in our salt folders), so
    a ``THREADTILE_CACHE_DIR`` pointed at a shared folder by mistake loses nothing else.
    """
    return clear_report(all_versions).removed


def clear_report(all_versions: bool = False) -> ClearReport:
    """:func:`clear`, reporting each of our files it could not delete and each folder it
    could not list (permissions, a read-only filesystem) in ``failed``. Folders left because
    they hold someone else's files are not failures."""
    out = ClearReport()

    def failed(path, e: OSError) -> None:
        out.failed.append((str(path), e.strerror or str(e)))

    if all_versions:
        root = cache_root()
        try:
            dirs = [d for d in root.iterdir() if d.is_dir() and _is_salt_dir(d.name)] if (
                root.is_dir()) else []
        except OSError as e:
            failed(root, e)
            dirs = []
    else:
        dirs = [cache_dir()]
    for d in dirs:
        if not d.is_dir():
            continue
        for dirpath, subdirs, files in os.walk(d, topdown=False,
                                               onerror=lambda e: failed(e.filename, e)):
            for name in files:
                if name.endswith(_SUFFIX) or name.endswith(".tmp"):
                    path = os.path.join(dirpath, name)
                    try:
                        os.unlink(path)
                        out.removed += name.endswith(_SUFFIX)
                    except FileNotFoundError:  # another process cleared it first
                        pass
                    except OSError as e:
                        failed(path, e)
            for sub in subdirs:
                _rmdir_quietly(os.path.join(dirpath, sub))
        _rmdir_quietly(d)
    return out


def _rmdir_quietly(path) -> None:
    try:
        os.rmdir(path)
    except OSError:  # not empty: someone else's file, or one of ours already reported
        pass


def _is_salt_dir(name: str) -> bool:
    return name.startswith("tt") and "-nvrtc" in name
