"""Every kernel in tests/kernels compiles to a cubin for sm_80 and sm_90, with no GPU present.

Each kernel module lists example launches in ``EXAMPLES``; a kernel without one fails
``test_every_kernel_has_an_example``, so a new kernel cannot skip this test.
"""

import importlib
import importlib.util
import struct
from pathlib import Path

import numpy as np
import pytest
from conftest import compile_cubin
from kernels import MODULES

from threadtile.jit import Kernel

ARCHS = ("sm_80", "sm_90")


def _modules():
    return [importlib.import_module(f"kernels.{m}") for m in MODULES]


def _kernels(mod):
    return {name: k for name, k in vars(mod).items()
            if isinstance(k, Kernel) and not k.device and getattr(k, "__module__", None)}


def _cases():
    out = []
    for mod in _modules():
        for name, examples in mod.EXAMPLES.items():
            for n, (args, consts) in enumerate(examples):
                out.append(pytest.param(mod, name, args, consts,
                                        id=f"{mod.__name__.split('.')[-1]}.{name}[{n}]"))
    return out


def test_every_kernel_has_an_example():
    missing = [f"{mod.__name__}.{name}" for mod in _modules() for name in _kernels(mod)
               if name not in mod.EXAMPLES]
    assert not missing, f"kernels without EXAMPLES entries: {missing}"
    unknown = [f"{mod.__name__}.{name}" for mod in _modules() for name in mod.EXAMPLES
               if name not in _kernels(mod)]
    assert not unknown, f"EXAMPLES entries naming no kernel: {unknown}"


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(("mod", "name", "args", "consts"), _cases())
def test_compiles_to_cubin(mod, name, args, consts, arch):
    cubin = compile_cubin(getattr(mod, name), *args, arch=arch, **consts)
    assert cubin[:4] == b"\x7fELF", f"{name} for {arch}: not an ELF cubin"
    assert cubin_arch(cubin) == arch


def cubin_arch(cubin: bytes) -> str:
    """The SM a cubin was built for: an ELF64 for EM_CUDA whose e_flags hold the SM number."""
    assert cubin[4] == 2, "not ELF64"
    (machine,) = struct.unpack_from("<H", cubin, 18)
    assert machine == 190, f"e_machine {machine} is not EM_CUDA"
    (flags,) = struct.unpack_from("<I", cubin, 48)
    return f"sm_{(flags >> 8) & 0xFF}"


# ---- the examples, the demo and the benchmarks' kernels -------------------------------------

REPO = Path(__file__).resolve().parents[2]


def _load(relpath: str):
    """A script of the repository as a module (its main() does not run)."""
    path = REPO / relpath
    spec = importlib.util.spec_from_file_location(f"_tt_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _shipped():
    m = np.zeros((8, 8), np.float32)
    v = np.zeros(16, np.float32)
    out = [("examples/tiled_matmul.py", lambda mod: mod.matmul_tiled, (m, m, m), {"tw": 16}),
           ("examples/missing_barrier.py", lambda mod: mod.matmul_racy, (m, m, m), {"tw": 16}),
           ("examples/step_through.py", lambda mod: mod.block_sum, (v, v), {}),
           ("src/threadtile/demo.py", lambda mod: mod.matmul_tiled, (m, m, m), {"tw": 16})]
    # bench/kernels.py loaded as is binds cuda to threadtile (its default TARGET)
    for name in ("naive", "static", "dynamic"):
        args = (m, m, m, 16) if name == "dynamic" else (m, m, m)
        out.append(("bench/kernels.py", lambda mod, n=name: mod.MATMULS[n], args, {}))
    out.append(("bench/kernels.py", lambda mod: mod.matmul_dynamic_const, (m, m, m),
                {"tw": 16}))
    out.append(("bench/kernels.py", lambda mod: mod.vector_add, (v, v, v), {}))
    out.append(("bench/kernels.py", lambda mod: mod.block_reduce, (v, v), {}))
    out.append(("bench/kernels.py", lambda mod: mod.warm_up, (v,), {}))
    return [pytest.param(*case, id=f"{case[0]}:{k}") for k, case in enumerate(out)]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(("path", "pick", "args", "consts"), _shipped())
def test_shipped_kernels_compile(path, pick, args, consts, arch):
    cubin = compile_cubin(pick(_load(path)), *args, arch=arch, **consts)
    assert cubin_arch(cubin) == arch
