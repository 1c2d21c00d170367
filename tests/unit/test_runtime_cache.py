"""The on-disk cache: keys, atomic writes, and corrupt entries read as misses."""

import os
import threading
import warnings
from pathlib import Path

import pytest

from threadtile.runtime import cache


@pytest.fixture
def cdir(tmp_path, monkeypatch):
    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(tmp_path / "c"))
    return tmp_path / "c"


@pytest.fixture
def fresh_reports(monkeypatch):
    """Each test sees its own first warning (the cache warns once per process)."""
    monkeypatch.setattr(cache, "_reported", set())


def test_round_trip(cdir):
    key = cache.make_key("cubin", "source", "sm_90")
    assert cache.get(key) is None
    assert cache.put(key, b"\x7fELF payload")
    assert cache.get(key) == b"\x7fELF payload"
    path = cache._path(key)
    assert path.is_relative_to(cdir / cache._safe(cache.salt()))


def test_env_override_then_xdg_then_home(tmp_path, monkeypatch):
    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(tmp_path / "a"))
    assert cache.cache_root() == tmp_path / "a"
    monkeypatch.delenv("THREADTILE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache.cache_root() == tmp_path / "x" / "threadtile"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert cache.cache_root() == Path(tmp_path / "h" / ".cache" / "threadtile")
    assert cache.cache_dir().parent == cache.cache_root()


def test_keys_are_length_prefixed_and_salted(monkeypatch):
    assert cache.make_key("ab", "c") != cache.make_key("a", "bc")
    assert cache.make_key("a", ("b",)) != cache.make_key("a", "b")
    assert cache.make_key(b"x") != cache.make_key("x")
    assert cache.make_key(1) != cache.make_key("1")
    assert cache.make_key("x", (13, 5)) == cache.make_key("x", (13, 5))
    k = cache.make_key("same")
    monkeypatch.setattr(cache, "_package_version", lambda: "999")
    assert cache.make_key("same") != k  # a new version never reads old entries
    with pytest.raises(TypeError):
        cache.make_key(object())


def test_corrupt_entry_is_a_miss_and_is_removed(cdir):
    key = cache.make_key("k")
    cache.put(key, b"0123456789" * 10)
    p = cache._path(key)
    data = bytearray(p.read_bytes())
    data[-3] ^= 0xFF
    p.write_bytes(bytes(data))
    assert cache.get(key) is None
    assert not p.exists()


def test_truncated_entry_is_a_miss(cdir):
    key = cache.make_key("t")
    cache.put(key, b"x" * 1000)
    p = cache._path(key)
    p.write_bytes(p.read_bytes()[:500])
    assert cache.get(key) is None
    cache.put(key, b"x" * 1000)
    p.write_bytes(p.read_bytes()[:10])  # shorter than the header
    assert cache.get(key) is None


def test_foreign_file_is_a_miss(cdir):
    key = cache.make_key("f")
    p = cache._path(key)
    p.parent.mkdir(parents=True)
    p.write_bytes(b"not a cache entry at all, but long enough to hold a header" * 2)
    assert cache.get(key) is None


def test_unreadable_entry_is_a_miss(cdir, monkeypatch):
    key = cache.make_key("u")
    cache.put(key, b"data")

    def boom(*a, **k):
        raise PermissionError("denied")

    monkeypatch.setattr("builtins.open", boom)
    assert cache.get(key) is None


def test_write_is_atomic(cdir, monkeypatch):
    """A writer that dies before os.replace leaves no entry and no temporary file behind;
    the previous entry stays whole."""
    key = cache.make_key("a")
    cache.put(key, b"old")

    def fail(src, dst):
        raise OSError("disk full")

    with monkeypatch.context() as m:
        m.setattr(os, "replace", fail)
        m.setattr(cache, "_reported", set())
        with pytest.warns(cache.CacheWarning, match="disk full"):
            assert cache.put(key, b"new" * 1000) is False
    assert cache.get(key) == b"old"
    assert [p.name for p in cache._path(key).parent.iterdir()] == [cache._path(key).name]


def test_unwritable_cache_is_not_an_error(tmp_path, monkeypatch, fresh_reports):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(blocker))
    key = cache.make_key("w")
    with pytest.warns(cache.CacheWarning):  # (once; the tests below say what it says)
        assert cache.put(key, b"data") is False
    assert cache.get(key) is None


def test_bad_key_is_rejected():
    with pytest.raises(ValueError):
        cache.get("../../etc/passwd")


def test_info_and_clear(cdir):
    assert cache.info()["entries"] == 0
    for i in range(3):
        cache.put(cache.make_key("e", i), b"y" * 100)
    info = cache.info()
    assert info["entries"] == 3 and info["bytes"] > 300
    assert info["path"] == str(cache.cache_dir())
    other = cache.cache_root() / "tt0.0.1-nvrtc12.0" / "ab"
    other.mkdir(parents=True)
    (other / "ab12.bin").write_bytes(b"z" * 50)
    assert cache.info()["other_versions_bytes"] == 50
    assert cache.clear() == 3
    assert cache.info()["entries"] == 0
    assert (other / "ab12.bin").exists()
    (cache.cache_root() / "keep.txt").write_text("not ours")
    assert cache.clear(all_versions=True) == 1
    assert not (other / "ab12.bin").exists()
    assert (cache.cache_root() / "keep.txt").exists()


# -- what the cache says when it cannot do its work ------------------------------------------

def test_unwritable_cache_warns_once_naming_the_folder(tmp_path, monkeypatch, fresh_reports):
    """A cache folder under a regular file cannot be made, whoever runs the test (root's
    chmod would not stop it): the first write warns with the folder, the reason and the
    variable to set; later writes are as silent as before."""
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(blocker / "sub"))
    with pytest.warns(cache.CacheWarning) as got:
        assert cache.put(cache.make_key("w1"), b"data") is False
    msg = str(got[0].message)
    assert str(cache.cache_dir()) in msg and "Not a directory" in msg
    assert "THREADTILE_CACHE_DIR" in msg
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.put(cache.make_key("w2"), b"data") is False  # no second warning
        assert cache.get(cache.make_key("w2")) is None  # reading a missing folder: silent


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes through chmod; the test above covers root")
def test_read_only_cache_folder_warns(cdir, fresh_reports):
    cache.cache_dir().mkdir(parents=True)
    cache.cache_dir().chmod(0o500)
    try:
        with pytest.warns(cache.CacheWarning, match="Permission denied"):
            assert cache.put(cache.make_key("ro"), b"data") is False
    finally:
        cache.cache_dir().chmod(0o700)


def _in_thread(fn, timeout: float = 10.0):
    """``fn()`` in a daemon thread: what it returned, or a failure if it is still running
    after ``timeout`` seconds (a read blocked on a FIFO would hang the test otherwise)."""
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), f"{fn} did not return within {timeout} s"
    return out[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this OS")
def test_fifo_entry_is_skipped_not_read(cdir, fresh_reports):
    key = cache.make_key("fifo")
    p = cache._path(key)
    p.parent.mkdir(parents=True)
    os.mkfifo(p)
    with pytest.warns(cache.CacheWarning, match="a FIFO"):
        assert _in_thread(lambda: cache.get(key)) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _in_thread(lambda: cache.get(key)) is None  # reported once
    assert cache.info()["entries"] == 0
    assert cache.put(key, b"payload") and cache.get(key) == b"payload"  # replaced


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_link_to_dev_zero_is_skipped_not_read(cdir, fresh_reports):
    key = cache.make_key("zero")
    p = cache._path(key)
    p.parent.mkdir(parents=True)
    p.symlink_to("/dev/zero")
    with pytest.warns(cache.CacheWarning, match="symbolic link"):
        assert _in_thread(lambda: cache.get(key)) is None
    assert p.is_symlink()  # left for put to replace, not followed to be deleted


def test_oversized_entry_is_skipped(cdir, fresh_reports, monkeypatch):
    key = cache.make_key("big")
    assert cache.put(key, b"x" * 1000)
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 100)
    with pytest.warns(cache.CacheWarning, match="more than the 100"):
        assert cache.get(key) is None
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 1 << 20)
    assert cache.get(key) == b"x" * 1000


def test_clear_reports_what_it_could_not_delete(cdir, monkeypatch):
    keys = [cache.make_key("c", i) for i in range(3)]
    for k in keys:
        cache.put(k, b"y")
    stuck = str(cache._path(keys[1]))
    real_unlink = os.unlink

    def unlink(path, *a, **kw):
        if str(path) == stuck:
            raise PermissionError(13, "Permission denied", path)
        return real_unlink(path, *a, **kw)

    monkeypatch.setattr(os, "unlink", unlink)
    r = cache.clear_report()
    assert r.removed == 2 and not r.ok
    assert r.failed == [(stuck, "Permission denied")]
    assert cache.get(keys[1]) == b"y"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root deletes through chmod; the test above covers the report")
def test_clear_reports_a_read_only_folder(cdir):
    key = cache.make_key("ro")
    cache.put(key, b"y")
    folder = cache._path(key).parent
    folder.chmod(0o500)
    try:
        r = cache.clear_report()
        assert r.removed == 0 and r.failed and r.failed[0][0] == str(cache._path(key))
    finally:
        folder.chmod(0o700)
