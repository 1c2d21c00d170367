"""The tile matmul's k loop as one operation (ir/kloop.py, the mma_loop op) and its Hopper
path (tile/kloop_sm90.h): which loops qualify, what the generated source declares, and that the
sm_90a build really issues wgmma and TMA copies while other targets do not. No GPU needed."""

import importlib
import re

import numpy as np
import pytest
from kernels import tiles

import threadtile.tile as ct
from threadtile import float16
from threadtile import float32 as threadtile_float32
from threadtile.lang.types import ArrayType
from threadtile.runtime import nvrtc, tensormaps

F16 = ArrayType(float16, 2, "C")


def _src(kernel, *args, **consts) -> str:
    return kernel.cuda_source(*args, **consts)


def test_k_loop_becomes_one_operation_with_tensor_maps():
    src = _src(tiles.matmul_8warps, F16, F16, F16, tm=128, tn=256, tk=64)
    assert "tt::tile::mma_loop<tile_f16_128x64, tile_f16_64x256, 3>(A, B," in src
    assert "for (" not in src.split("mma_loop")[0].rsplit("accumulator = tt::tile::full", 1)[1]
    assert src.count("const __grid_constant__ tt::tile::sm90::TensorMap") == 2
    cuda = tiles.matmul_8warps.specialization([F16, F16, F16], dict(tm=128, tn=256, tk=64)).cuda
    assert cuda.tensormaps == ((0, (64, 128)), (1, (64, 64)))
    # sm_90a gets the pipeline's shared memory: 4 stages of 48 KiB, barriers, alignment slack
    assert "#define TT_SCRATCH_SM90A 197696" in src
    assert cuda.scratch_for("sm_90a") == 197696 and cuda.scratch_for("sm_90") < 197696


def test_sm90a_issues_wgmma_and_tma_and_other_targets_do_not():
    src = _src(tiles.matmul_8warps, F16, F16, F16, tm=128, tn=256, tk=64)
    hopper = nvrtc.compile_ptx(src, "sm_90a")
    hopper = hopper if isinstance(hopper, str) else hopper.code.decode()
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16" in hopper
    assert "cp.async.bulk.tensor.2d" in hopper and "mbarrier.try_wait" in hopper
    plain = nvrtc.compile_ptx(src, "sm_90")
    plain = plain if isinstance(plain, str) else plain.code.decode()
    assert "wgmma" not in plain and "mma.sync.aligned.m16n8k16" in plain


@pytest.mark.parametrize("name", ["matmul", "matmul_8warps", "matmul_rowsum", "softmax_rows",
                                  "layer_norm_fwd"])
def test_tile_kernels_compile_for_sm90a(name):
    for args, consts in tiles.EXAMPLES[name]:
        cubin = getattr(tiles, name).compile(*args, arch="sm_90a", **consts).cubin
        assert cubin[:4] == b"\x7fELF"


@ct.kernel(num_warps=8)
def k_used_after(A, B, C, tm: ct.Constant[int], tn: ct.Constant[int], tk: ct.Constant[int]):
    acc = ct.zeros((tm, tn), dtype=ct.float32)
    k = 0
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(ct.bid(0), k), shape=(tm, tk))
        b = ct.load(B, index=(k, ct.bid(1)), shape=(tk, tn))
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(ct.bid(0), k), tile=acc.astype(ct.float16))


@ct.kernel(num_warps=8)
def k_shifted(A, B, C, tm: ct.Constant[int], tn: ct.Constant[int], tk: ct.Constant[int]):
    acc = ct.zeros((tm, tn), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk)) - 1):
        a = ct.load(A, index=(ct.bid(0), k + 1), shape=(tm, tk))
        b = ct.load(B, index=(k + 1, ct.bid(1)), shape=(tk, tn))
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(ct.bid(0), ct.bid(1)), tile=acc.astype(ct.float16))


@ct.kernel(num_warps=8)
def k_nan_padding(A, B, C, tm: ct.Constant[int], tn: ct.Constant[int], tk: ct.Constant[int]):
    acc = ct.zeros((tm, tn), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(ct.bid(0), k), shape=(tm, tk), padding_mode=ct.PaddingMode.NAN)
        b = ct.load(B, index=(k, ct.bid(1)), shape=(tk, tn))
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(ct.bid(0), ct.bid(1)), tile=acc.astype(ct.float16))


@pytest.mark.parametrize("kernel", [k_used_after, k_shifted, k_nan_padding])
def test_loops_that_do_not_qualify_stay_loops(kernel):
    src = _src(kernel, F16, F16, F16, tm=128, tn=128, tk=64)
    assert "mma_loop" not in src and "TensorMap" not in src
    # a plain mma per step (its B operand loaded straight into shared memory: ir/operands.py)
    assert "tt::tile::mma<true" in src


def test_shapes_without_a_hopper_loop_take_the_staged_loop():
    # K = 16 (32-byte rows), and 64 rows on 8 warps (two warpgroups): no Hopper main loop, no
    # tensor maps to pay for; tile.h's staged loop (cp.async where the arrays allow, else one
    # buffer)
    for tm, tk in ((128, 16), (64, 64)):
        src = _src(tiles.matmul_8warps, F16, F16, F16, tm=tm, tn=128, tk=tk)
        assert "tt::tile::mma_loop_staged<__half, " in src and "TensorMap" not in src
        for arch in ("sm_80", "sm_90"):
            ptx = nvrtc.compile_ptx(src, arch)
            ptx = ptx if isinstance(ptx, str) else ptx.code.decode()
            assert "cp.async.cg.shared.global" in ptx and "ldmatrix.sync.aligned" in ptx


def test_tf32_loops_take_the_hopper_loop_and_float32_ones_stay_loops():
    # float32 cast to tfloat32: the same mma_loop as 16-bit operands; sm_90a multiplies the
    # transposed product on tfloat32 wgmma (tile/kloop_sm90_tf32.h), rounding to nearest;
    # other targets run the staged mma.sync loop
    f32 = np.zeros((64, 64), np.float32)
    src = _src(tiles.matmul_8warps, f32, f32, f32, tm=128, tn=128, tk=32)
    assert "tt::tile::mma_loop<tile_f32_128x32, tile_f32_32x128, 3, true>" in src
    assert "tt_tma0" in src and "tt_tma1" in src
    for arch in ("sm_80", "sm_90", "sm_90a"):
        ptx = nvrtc.compile_ptx(src, arch)
        ptx = ptx if isinstance(ptx, str) else ptx.code.decode()
        assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx
        assert "cvt.rna.tf32.f32" not in ptx  # tfloat32 rounds ties to even (elementwise.h)
        wgmma = "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32" in ptx
        assert wgmma == (arch == "sm_90a")
    src = _src(tiles.matmul_fp32, f32, f32, f32, tm=32, tn=32, tk=8)  # FMAs: as written
    assert "mma_loop" not in src


def test_tensor_map_usable_rules():
    ok = tensormaps.usable
    assert ok((64, 128), 2, 1 << 20, (4096, 4096), (4096, 1))
    assert not ok((64, 128), 2, (1 << 20) + 8, (4096, 4096), (4096, 1))  # address % 16
    assert not ok((64, 128), 2, 1 << 20, (4096, 1001), (1001, 1))  # row pitch % 16
    assert not ok((64, 128), 2, 1 << 20, (4096, 4096), (1, 4096))  # transposed view
    assert not ok((128, 128), 2, 1 << 20, (4096, 4096), (4096, 1))  # 256-byte box rows
    assert not ok((64, 512), 2, 1 << 20, (4096, 4096), (4096, 1))  # box over 256 rows


def test_sm90a_builds_without_the_portable_loop_first():
    """On sm_90a a k loop on Hopper's main loop is built first without its portable loop (half
    the compile time); the compiled kernel's fallback is the build with it, which a launch
    takes where TMA cannot read an operand (CompiledKernel.launch); other targets get the one
    build."""
    jit = importlib.import_module("threadtile.jit")  # the module (threadtile.jit is the decorator)
    spec = tiles.matmul_8warps.specialization([F16, F16, F16], dict(tm=128, tn=256, tk=64))
    fast, scratch = jit.build(spec, "sm_90a")
    assert jit.TMA_ONLY in spec.last.target.options and fast.fallback is not None
    full = fast.fallback()
    assert jit.TMA_ONLY not in spec.last.target.options and full.fallback is None
    assert full is fast.fallback() and full is not fast  # built once
    assert len(fast.cubin) < len(full.cubin) and full.tensormaps == fast.tensormaps
    plain, _ = jit.build(spec, "sm_90")
    assert plain.fallback is None and jit.TMA_ONLY not in spec.last.target.options


def test_batched_loops_build_without_the_portable_loop_and_zero_maps_that_cross_batches():
    """A batched k loop's sm_90a build leaves the portable loop out too: its maps carry the
    multiple each batch's rows must be (A's: the tile's M; B's: the loop's K, not the step's),
    and a 3-d array whose batches are not such multiples gets a zero map, which takes the
    fallback build (tiles would cross batches); 2-d maps carry none."""
    jit = importlib.import_module("threadtile.jit")
    f16_3d = ArrayType(float16, 3, "C")
    spec = tiles.bmm.specialization([f16_3d] * 3, dict(tm=128, tn=128, tk=64))
    fast, _ = jit.build(spec, "sm_90a")
    assert jit.TMA_ONLY in spec.last.target.options and fast.fallback is not None
    assert [p.rows for p in fast.tensormaps] == [128, 64]
    rows = tensormaps.TensorMapParam(0, (64, 128), 128)
    assert tensormaps._encode(rows, np.dtype(np.float16), 1 << 20, (4, 200, 256),
                              (200 * 256, 256, 1)) == tensormaps.ZERO
    two_d = tiles.matmul_8warps.specialization([F16, F16, F16], dict(tm=128, tn=256, tk=64))
    assert all(p.rows == 0 for p in jit.build(two_d, "sm_90a")[0].tensormaps)


def test_a_producer_warpgroup_where_the_block_holds_its_multiprocessor(monkeypatch):
    """An sm_90a build of a k loop on Hopper's main loop whose block holds its multiprocessor
    anyway (8 warps) gets a producer warpgroup: a launch adds 128 threads, tile code's
    barriers count the kernel's own threads (bar.sync 1), setmaxnreg moves the registers, and
    its fallback (the portable loop) has none. A 4-warp block of small tiles, sm_90 builds and
    THREADTILE_PRODUCER=0 get none."""
    jit = importlib.import_module("threadtile.jit")
    spec = tiles.matmul_8warps.specialization([F16, F16, F16], dict(tm=128, tn=256, tk=64))
    fast, _ = jit.build(spec, "sm_90a")
    assert jit.PRODUCER in spec.last.target.options
    assert fast.extra_threads == 128 and fast.block_threads == 256 + 128
    ptx = nvrtc.compile_ptx(spec.cuda.text, "sm_90a", options=spec.last.target.options)
    ptx = ptx if isinstance(ptx, str) else ptx.code.decode()
    assert "bar.sync 1, 256" in ptx and "setmaxnreg.inc.sync.aligned.u32 232" in ptx
    assert "setmaxnreg.dec.sync.aligned.u32 40" in ptx
    full = fast.fallback()
    assert full.extra_threads == 0 and full.block_threads == 256 and full.fallback is None
    small = tiles.matmul.specialization([F16, F16, F16], dict(tm=64, tn=64, tk=32))
    assert jit.build(small, "sm_90a")[0].extra_threads == 0
    assert jit.build(spec, "sm_90")[0].extra_threads == 0
    monkeypatch.setenv("THREADTILE_PRODUCER", "0")
    other = tiles.matmul_8warps.specialization([F16, F16, F16], dict(tm=128, tn=128, tk=64))
    assert jit.build(other, "sm_90a")[0].extra_threads == 0


def test_deep_k_steps_split_for_stages():
    """A k loop whose K-deep stages would be fewer than 4 runs steps of half the depth (or
    less) on the main loop: 128x256x128 float16 runs 64-deep steps in 4 stages (its B box 64
    rows), the sum over k unchanged; 64x64x128 on 4 warps too, whose 128-deep stages would
    hold the multiprocessor alone (tests/tile/test_two_blocks.py)."""
    from threadtile.ir import tiling
    from threadtile.lang.types import TileType

    def t(m, n):
        return TileType(float16, (m, n))

    assert tiling.sm90_step(t(128, 128), t(128, 256), 256) == 64
    assert tiling.sm90_step(t(128, 256), t(256, 256), 256) == 64
    assert tiling.sm90_step(t(64, 128), t(128, 64), 128) == 64
    assert tiling.sm90_boxes(t(128, 128), t(128, 256), 256) == ((64, 128), (64, 64))
    cuda = tiles.matmul_8warps.specialization([F16, F16, F16], dict(tm=128, tn=256, tk=128)).cuda
    assert cuda.tensormaps == ((0, (64, 128)), (1, (64, 64)))
    assert cuda.scratch_for("sm_90a", ("-DTT_TMA_ONLY",)) == 1024 + 4 * 48 * 1024 + 4 * 16


def test_16_bit_k_of_32_steps_two_k():
    """A 16-bit k loop of K 32 (64-byte rows) runs steps of two k, 128-byte rows, where four
    stages of the doubled depth fit (256x256 tiles: three, so no); tfloat32's 32 stays. A
    128x128 such loop gets two warpgroups, as K 64 does."""
    from threadtile.ir import tiling
    from threadtile.lang.types import TileType

    def t(m, n, dt=float16):
        return TileType(dt, (m, n))

    assert tiling.sm90_step(t(128, 32), t(32, 128), 128) == 64
    assert tiling.sm90_step(t(64, 32), t(32, 64), 128) == 64
    assert tiling.sm90_step(t(256, 32), t(32, 256), 256) == 32
    f32 = threadtile_float32
    assert tiling.sm90_step(t(128, 32, f32), t(32, 128, f32), 128) == 32
    assert tiling.sm90_boxes(t(128, 32), t(32, 128), 128) == ((64, 128), (64, 64))
    src = tiles.matmul.cuda_source(*[np.zeros((256, 256), np.float16)] * 3, 128, 128, 32)
    assert re.search(r"__launch_bounds__\(256[ )]", src)


@pytest.mark.parametrize(("dtype", "warps", "tiles_mnk"), [
    (float16, 8, (128, 256, 64)), (float16, 4, (64, 64, 32)),
    (np.float32, 8, (128, 128, 32)), (np.float32, 4, (128, 128, 64)),
    (np.float32, 8, (128, 256, 32)),
    (np.float32, None, (64, 256, 32)),   # the compiler's block: 8 warps (4 would serialize)
    (np.float32, None, (64, 256, 16)),   # (4 would spill)
])
def test_hopper_loops_keep_their_wgmma_pipeline(dtype, warps, tiles_mnk):
    """ptxas serializes a wgmma pipeline it cannot prove safe, and says so (C7513 "wgmma.mma_async
    instructions are serialized", a wait after every wgmma): the tfloat32 loop did, while its
    fragment loads sat between two steps' wgmmas (docs/performance.md). No main loop may, with
    the producer warpgroup or without."""
    inspection = importlib.import_module("threadtile.inspection")
    jit = importlib.import_module("threadtile.jit")
    arr = F16 if dtype is float16 else ArrayType(threadtile_float32, 2, "C")
    kern = ct.kernel(num_warps=warps)(tiles.matmul.py_func) if warps else tiles.matmul
    tm, tn, tk = tiles_mnk
    spec = kern.specialization([arr] * 3, dict(tm=tm, tn=tn, tk=tk))
    assert spec.cuda.tensormaps, "the shapes of a Hopper main loop"
    for opts in ((jit.TMA_ONLY,), (jit.TMA_ONLY, jit.PRODUCER)):
        log = inspection._ptxas_log(spec.cuda.text, "sm_90a", opts, spec.cuda.entry)
        assert "wgmma" not in log or "serialized" not in log, log
        assert f"entry function '{spec.cuda.entry}'" in log  # ptxas ran and reported
        if opts == (jit.TMA_ONLY,):
            assert " 0 bytes spill stores" in log.split(f"entry function '{spec.cuda.entry}'")[1]


def test_the_block_of_a_tfloat32_loop_keeps_its_registers():
    """Without num_warps, a float32 (tfloat32) k loop whose Hopper loop would hold over
    SM90_TF32_REGS registers a thread on 4 warps gets 8 (64x256 tiles); 128x128 and 64x128
    keep 4."""
    f32 = np.zeros((64, 64), np.float32)
    for tiles_mnk, threads in (((64, 256, 32), 256), ((64, 256, 16), 256),
                               ((128, 128, 32), 128), ((64, 128, 32), 128)):
        tm, tn, tk = tiles_mnk
        src = tiles.matmul.cuda_source(f32, f32, f32, tm=tm, tn=tn, tk=tk)
        assert f"__launch_bounds__({threads}" in src, (tiles_mnk, threads)


def test_clusters_pair_blocks_that_share_b_only_when_asked(monkeypatch):
    """EXPERIMENTAL (THREADTILE_CLUSTERS=1; correct on the GPU but slower, docs/performance.md):
    a kernel whose Hopper k loops read the same B tiles in blocks 2c and 2c + 1
    (ir/clusters.py) is built with clusters of two along x, each block copying half of B's
    boxes multicast into both; a loop whose B column depends on bid(0) (persistent), the
    tfloat32 loop and B of one box are not paired, nor is anything without the variable."""
    builds = importlib.import_module("threadtile.builds")
    spec = tiles.matmul_8warps.specialization([F16] * 3, dict(tm=128, tn=256, tk=64))
    assert builds.CLUSTER not in builds.target_for(spec, "sm_90a").options
    monkeypatch.setenv("THREADTILE_CLUSTERS", "1")
    target = builds.target_for(spec, "sm_90a")
    assert builds.CLUSTER in target.options
    ptx = nvrtc.compile_ptx(spec.cuda.text, "sm_90a", options=target.options)
    ptx = ptx if isinstance(ptx, str) else ptx.code.decode()
    assert ".reqnctapercluster 2, 1, 1" in ptx and ".multicast::cluster" in ptx
    assert "barrier.cluster.arrive" in ptx and "mapa.shared::cluster" in ptx
    assert builds.CLUSTER not in builds.target_for(spec, "sm_90a", cluster=False).options
    f32 = ArrayType(threadtile_float32, 2, "C")
    others = [
        tiles.matmul.specialization([F16] * 3, dict(tm=64, tn=64, tk=32)),  # one box of B
        tiles.matmul.specialization([f32] * 3, dict(tm=128, tn=128, tk=32)),  # tfloat32
    ]
    a16 = np.zeros((64, 64), np.float16)
    others.append(tiles.matmul_persistent._spec_for((a16, a16, a16, 128, 128, 64), {}))
    for s in others:
        assert builds.CLUSTER not in builds.target_for(s, "sm_90a").options


@pytest.mark.parametrize("tiles_mnk", [(128, 256, 64), (256, 128, 64)])
def test_a_persistent_loops_epilogue_leaves_its_registers(tiles_mnk):
    """A 128x256 accumulator in a loop over tiles (int32 indices, cuTile's): the store from
    fragments inside the loop takes its interior path inline and its bounds-tested path out
    of line, so
    ptxas keeps the loop in registers (with the tested path inline: 254 registers and 1.2 KiB
    of spills, 490 against 618 TFLOP/s on the H200)."""
    a16 = np.zeros((4096, 4096), np.float16)
    r = tiles.matmul_persistent.resources(a16, a16, a16, *tiles_mnk, arch="sm_90a")
    assert r.spill_stores == 0, r
    # (a store after the kernel's loops keeps the tested path inline)
    assert "tt::tile::store_fragments<-1, true>(C, " in \
        tiles.matmul_persistent.cuda_source(a16, a16, a16, *tiles_mnk)
    assert "tt::tile::store_fragments(C, " in tiles.matmul.cuda_source(a16, a16, a16, *tiles_mnk)


def test_a_persistent_loop_of_64_column_tiles_takes_two_warpgroups(monkeypatch):
    """Without num_warps, a 16-bit k loop of 128 rows or more and 64 columns inside another
    loop (a persistent kernel) gets 8 warps, half the rows each, where two 4-warp blocks would
    not fit a multiprocessor (256x64) or the launch keeps the grid given (THREADTILE_ELASTIC=0:
    one block a multiprocessor); the same tiles in a plain loop, a grid-stride loop of 128x64
    tiles launched on a full wave (two blocks a multiprocessor), and 64-row tiles anywhere (8
    warps would split their 16-row strips), keep 4."""
    f16 = np.zeros((512, 512), np.float16)
    for kernel, tiles_mnk, threads in ((tiles.matmul_persistent, (128, 64, 64), 128),
                                       (tiles.matmul_persistent, (256, 64, 32), 256),
                                       (tiles.matmul_persistent, (64, 64, 64), 128),
                                       (tiles.matmul, (128, 64, 64), 128),
                                       (tiles.matmul, (256, 64, 64), 128)):
        tm, tn, tk = tiles_mnk
        src = kernel.cuda_source(f16, f16, f16, tm=tm, tn=tn, tk=tk)
        assert f"__launch_bounds__({threads}" in src, (kernel, tiles_mnk, threads)
    module = tiles.matmul_persistent._spec_for([f16] * 3, dict(tm=128, tn=64, tk=64)).module
    monkeypatch.setenv("THREADTILE_ELASTIC", "0")
    assert importlib.import_module("threadtile.compiler").auto_threads(module) == 256


def test_a_tfloat32_loop_with_a_producer_rounds_a_in_the_producer(monkeypatch):
    """A producer build whose Hopper loops are all tfloat32 loops rounds A's stages in the
    producer's warps 1-3 (-DTT_PRODUCER_ROUND: cvt.rn.tf32 in producer_round, a ready barrier
    a stage) and its wgmma pipeline is kept; a 16-bit loop's producer build, and
    THREADTILE_PRODUCER_ROUND=0, round nothing there."""
    jit = importlib.import_module("threadtile.jit")
    builds = importlib.import_module("threadtile.builds")
    inspection = importlib.import_module("threadtile.inspection")
    f32 = ArrayType(threadtile_float32, 2, "C")
    spec = tiles.matmul.specialization([f32] * 3, dict(tm=128, tn=256, tk=32))
    t = builds.target_for(spec, "sm_90a")
    assert jit.PRODUCER in t.options and builds.PRODUCER_ROUND in t.options
    ptx = nvrtc.compile_ptx(spec.cuda.text, "sm_90a", options=t.options)
    ptx = ptx if isinstance(ptx, str) else ptx.code.decode()
    body = ptx.split("producer_round")[-1]
    assert "cvt.rn.tf32.f32" in body and "mbarrier.arrive" in body
    log = inspection._ptxas_log(spec.cuda.text, "sm_90a", t.options, spec.cuda.entry)
    assert "serialized" not in log, log
    f16 = tiles.matmul_8warps.specialization([F16, F16, F16], dict(tm=128, tn=256, tk=64))
    assert builds.PRODUCER_ROUND not in builds.target_for(f16, "sm_90a").options
    monkeypatch.setenv("THREADTILE_PRODUCER_ROUND", "0")
    assert builds.PRODUCER_ROUND not in builds.target_for(spec, "sm_90a").options
