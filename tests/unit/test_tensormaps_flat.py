"""runtime/tensormaps.flat2d: which 3-d arrays a batched k loop's tensor map covers as the 2-d
array of their rows."""

from threadtile.runtime.tensormaps import flat2d, operand_geometry


def test_batches_one_after_another_are_rows():
    assert flat2d((4, 256, 64), (256 * 64, 64, 1)) == ((1024, 64), (64, 1))
    assert flat2d((4, 256, 64), (256 * 80, 80, 1)) == ((1024, 64), (80, 1))  # rows of 80
    assert flat2d((4, 256, 64), (300 * 64, 64, 1)) is None  # gaps between the batches
    assert flat2d((1, 256, 64), (999, 64, 1)) == ((256, 64), (64, 1))  # one batch
    assert flat2d((256, 64), (64, 1)) == ((256, 64), (64, 1))
    assert flat2d((2, 2, 2, 2), (8, 4, 2, 1)) is None


def test_the_backend_marks_operand_maps_as_the_runtime_reads_them():
    from threadtile.backends.cuda import tiles  # noqa: PLC0415
    from threadtile.runtime import tensormaps  # noqa: PLC0415

    assert tiles.OPERAND == tensormaps.OPERAND


def test_operand_maps_keep_the_arrays_rank():
    """operand_geometry: an operand load's map, extents innermost first and the byte strides
    of the outer axes; None where TMA cannot copy the array."""
    box = (64, 64, 1, 1)
    # Q of one (1, 4096, 48, 128) bf16 projection: heads 0-31, rows 48 x 128 elements apart
    shape, strides = (1, 4096, 32, 128), (4096 * 48 * 128, 48 * 128, 128, 1)
    assert operand_geometry(box, 2, 0x10000, shape, strides) == (
        [128, 32, 4096, 1], [256, 48 * 256, 48 * 256])  # (a batch of one: any stride)
    assert operand_geometry(box, 2, 0x10008, shape, strides) is None  # address
    assert operand_geometry(box, 2, 0x10000, (2, 4096, 32, 128),
                            (4096 * 48 * 128, 48 * 128, 128, 2)) is None  # last axis strided
    assert operand_geometry(box, 2, 0x10000, (2, 100, 3, 12),
                            (3600, 36, 12, 1)) is None  # rows of 24 bytes
    assert operand_geometry((64, 300, 1, 1), 2, 0x10000, shape, strides) is None  # box
    assert operand_geometry((64, 64, 1), 2, 0x10000, shape, strides) is None  # rank
    assert operand_geometry((64, 64), 2, 0, (256, 512), (512, 1)) == ([512, 256], [1024])


def test_the_driver_is_asked_for_each_kind_of_map(monkeypatch):
    """encode's calls of cuTensorMapEncodeTiled (a stand-in driver records them; CI has none):
    a k loop's 2-d map (the 64-byte swizzle for 64-byte rows) and an operand load's map of
    the array at its own rank, extents innermost first."""
    import ctypes  # noqa: PLC0415
    import sys  # noqa: PLC0415
    import types  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415

    from threadtile.runtime import tensormaps as T  # noqa: PLC0415

    calls, keep = [], []

    class Names:
        def __getattr__(self, n):
            return n

    def encode_tiled(*a):
        calls.append(a)
        buf = ctypes.create_string_buffer(b"m" * T.SIZE)
        keep.append(buf)
        return 0, types.SimpleNamespace(getPtr=lambda: ctypes.addressof(buf))

    drv = types.ModuleType("cuda.bindings.driver")
    drv.__dict__.update(CUtensorMapDataType=Names(), CUtensorMapInterleave=Names(),
                        CUtensorMapSwizzle=Names(), CUtensorMapL2promotion=Names(),
                        CUtensorMapFloatOOBfill=Names(), cuuint64_t=int, cuuint32_t=int,
                        cuTensorMapEncodeTiled=encode_tiled)
    import cuda.bindings  # noqa: PLC0415

    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", drv)
    monkeypatch.setattr(cuda.bindings, "driver", drv, raising=False)
    monkeypatch.setattr(T, "_CACHE", {})
    f16 = np.dtype(np.float16)
    assert T.encode(T.TensorMapParam(0, (32, 64)), f16, 0x10000, (256, 512), (512, 1)) == \
        b"m" * T.SIZE
    op = T.TensorMapParam(0, (64, 1, 64, 1), T.OPERAND)
    T.encode(op, f16, 0x10000, (1, 4096, 32, 128), (4096 * 48 * 128, 48 * 128, 128, 1))
    assert [c[:6] for c in calls] == [
        ("CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 2, 0x10000, [512, 256], [1024], [32, 64]),
        ("CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 4, 0x10000, [128, 32, 4096, 1],
         [256, 48 * 256, 48 * 256], [64, 1, 64, 1])]
    assert [c[8] for c in calls] == ["CU_TENSOR_MAP_SWIZZLE_64B", "CU_TENSOR_MAP_SWIZZLE_128B"]
    assert all(c[10] == "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE" for c in calls)
