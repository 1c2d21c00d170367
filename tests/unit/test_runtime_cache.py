"""The on-disk cache: keys, atomic writes, and corrupt entries read as misses."""

import os
from pathlib import Path

import pytest

from threadtile.runtime import cache


@pytest.fixture
def cdir(tmp_path, monkeypatch):
    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(tmp_path / "c"))
    return tmp_path / "c"


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
        assert cache.put(key, b"new" * 1000) is False
    assert cache.get(key) == b"old"
    assert [p.name for p in cache._path(key).parent.iterdir()] == [cache._path(key).name]


def test_unwritable_cache_is_not_an_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(blocker))
    key = cache.make_key("w")
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
