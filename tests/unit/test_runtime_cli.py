"""The threadtile command."""

import os
import sys
import types

from threadtile import cli
from threadtile.runtime import cache


def test_info(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(tmp_path))
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "threadtile" in out and "NVRTC" in out and str(tmp_path) in out and "GPU" in out


def test_cache_info_and_clear(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(tmp_path))
    cache.put(cache.make_key("x"), b"data")
    assert cli.main(["cache"]) == 0
    assert "entries  1" in capsys.readouterr().out
    assert cli.main(["cache", "clear"]) == 0
    assert "removed 1 cached kernel" in capsys.readouterr().out
    assert cache.info()["entries"] == 0


def test_cache_clear_reports_what_it_could_not_delete(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(tmp_path))
    key = cache.make_key("stuck")
    cache.put(key, b"data")
    stuck = str(cache._path(key))
    real_unlink = os.unlink

    def unlink(path, *a, **kw):
        if str(path) == stuck:
            raise PermissionError(13, "Permission denied", path)
        return real_unlink(path, *a, **kw)

    monkeypatch.setattr(os, "unlink", unlink)
    assert cli.main(["cache", "clear"]) == 1
    out = capsys.readouterr()
    assert "removed 0 cached kernels" in out.out
    assert "could not delete 1 path" in out.err and f"{stuck}: Permission denied" in out.err


def test_delegated_commands(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "threadtile.export", None)  # "not installed"
    assert cli.main(["export", "k.py"]) == 2
    assert "not available" in capsys.readouterr().err
    seen = []
    fake = types.ModuleType("threadtile.export")
    fake.main = lambda argv: seen.append(argv) or 0
    monkeypatch.setitem(sys.modules, "threadtile.export", fake)
    assert cli.main(["export", "k.py", "--arch", "sm_90"]) == 0
    assert seen == [["k.py", "--arch", "sm_90"]]


def test_no_command_prints_help(capsys):
    assert cli.main([]) == 0
    assert "info" in capsys.readouterr().out
