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
