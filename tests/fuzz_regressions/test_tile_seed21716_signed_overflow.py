# ruff: noqa
"""Fuzzer regression (tile kernels), seed 21716 (GPU run at 30bdd39, H200): mismatch gpu vs
lockstep: out_t2[4, 17]: np.int32(-1804753775) vs np.int32(4) (3 elements differ). The cause:
the tile layer's elementwise ``*`` of int32 tiles was C++'s ``x * y``, whose overflow is
undefined; the compiler took ``x * x`` to be non-negative and ``max(x * x, 4)`` became an
unsigned maximum (PTX ``max.u32``), so a product that wrapped negative won over 4. Fixed:
tile sums, differences, products and negations of signed integers wrap through
threadtile.h's ``wadd``/``wsub``/``wmul``/``wneg``, as at thread level; the PTX now has
``max.s32`` (checked on the CPU below). The GPU test has not yet run since the fix."""

import threadtile.tile as ct


@ct.kernel(num_warps=1)
def kernel(in2_float32, in2_int32, out_t2):
    t2 = ct.load(in2_int32, index=(ct.bid(0), (ct.bid(1) + 2) % 2), shape=(16, 16), padding_mode=ct.PaddingMode.POS_INF)
    t2 = (ct.minimum(ct.maximum(ct.load(in2_float32, index=(ct.bid(0), ct.bid(1)), shape=(16, 16), padding_mode=ct.PaddingMode.POS_INF), -1000.0), 1000.0).astype(ct.int32) & max((t2 * t2), 4))
    ct.store(out_t2, index=(ct.bid(0), ct.bid(1)), tile=t2)


# ---- the regression: found by tools/fuzz/tile_gen.py (seed 21716), minimized ------------

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from threadtile.runtime.driver import gpu_available
from tools.fuzz.tile_prog import ArraySpec, E, TileProgram, TNode, TVar
from tools.fuzz.tile_run import differential

TARGETS = ('gpu', 'lockstep', 'ref')
PROGRAM = TileProgram(seed=21716,
            grid=(1, 2),
            arrays=[ArraySpec(name='in2_float32', dtype='float32', shape=(14, 27), kind='in'),
                    ArraySpec(name='in2_int32', dtype='int32', shape=(9, 27), kind='in'),
                    ArraySpec(name='out_t2', dtype='int32', shape=(6, 22), kind='out')],
            tvars=[TVar(name='t2',
                        dtype='int32',
                        shape=(16, 16),
                        init=E(op='load',
                               dtype='int32',
                               shape=(16, 16),
                               args=[],
                               attrs={'array': 'in2_int32',
                                      'bare': False,
                                      'index': ('ct.bid(0)', '(ct.bid(1) + 2) % 2'),
                                      'order': (0, 1),
                                      'padding': 'POS_INF'}),
                        out='out_t2',
                        main=True,
                        order=None)],
            body=[TNode(kind='assign',
                        target='t2',
                        exprs=[E(op='bin',
                                 dtype='int32',
                                 shape=(16, 16),
                                 args=[E(op='cast',
                                         dtype='int32',
                                         shape=(16, 16),
                                         args=[E(op='bin',
                                                 dtype='float32',
                                                 shape=(16, 16),
                                                 args=[E(op='bin',
                                                         dtype='float32',
                                                         shape=(16, 16),
                                                         args=[E(op='load',
                                                                 dtype='float32',
                                                                 shape=(16, 16),
                                                                 args=[],
                                                                 attrs={'array': 'in2_float32',
                                                                        'bare': False,
                                                                        'index': ('ct.bid(0)',
                                                                                  'ct.bid(1)'),
                                                                        'order': (0, 1),
                                                                        'padding': 'POS_INF'}),
                                                               E(op='lit',
                                                                 dtype='float32',
                                                                 shape=(),
                                                                 args=[],
                                                                 attrs={'value': -1000.0})],
                                                         attrs={'sym': 'max'}),
                                                       E(op='lit',
                                                         dtype='float32',
                                                         shape=(),
                                                         args=[],
                                                         attrs={'value': 1000.0})],
                                                 attrs={'sym': 'min'})],
                                         attrs={'func': False}),
                                       E(op='bin',
                                         dtype='int32',
                                         shape=(16, 16),
                                         args=[E(op='bin',
                                                 dtype='int32',
                                                 shape=(16, 16),
                                                 args=[E(op='var',
                                                         dtype='int32',
                                                         shape=(16, 16),
                                                         args=[],
                                                         attrs={'name': 't2'}),
                                                       E(op='var',
                                                         dtype='int32',
                                                         shape=(16, 16),
                                                         args=[],
                                                         attrs={'name': 't2'})],
                                                 attrs={'builtin': False, 'sym': '*'}),
                                               E(op='lit',
                                                 dtype='int32',
                                                 shape=(),
                                                 args=[],
                                                 attrs={'value': 4})],
                                         attrs={'builtin': True, 'sym': 'max'})],
                                 attrs={'builtin': False, 'sym': '&'})],
                        attrs={},
                        body=[],
                        orelse=[])],
            num_warps=1)


def test_program_is_the_kernel_above():
    assert PROGRAM.source() in Path(__file__).read_text()


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason='no GPU')
def test_targets_agree():
    out = differential(PROGRAM, targets=TARGETS)
    assert out.ok, out.mismatches or out.errors


def test_the_maximum_of_a_wrapped_product_is_signed_in_ptx():
    import re

    import numpy as np

    from threadtile.runtime import nvrtc

    a, b, o = np.zeros((14, 27), np.float32), np.zeros((9, 27), np.int32), np.zeros((6, 22), np.int32)
    cu = kernel.cuda_source(a, b, o)
    inc = tuple(f"-I{d}" for d in nvrtc.include_dirs())
    for arch in ("sm_80", "sm_90"):
        ptx = nvrtc.compile_ptx(cu, arch, options=inc)
        assert "max.s32" in ptx and not re.search(r"\bmax\.u32", ptx), arch
