"""runtime/tensormaps.flat2d: which 3-d arrays a batched k loop's tensor map covers as the 2-d
array of their rows."""

from threadtile.runtime.tensormaps import flat2d


def test_batches_one_after_another_are_rows():
    assert flat2d((4, 256, 64), (256 * 64, 64, 1)) == ((1024, 64), (64, 1))
    assert flat2d((4, 256, 64), (256 * 80, 80, 1)) == ((1024, 64), (80, 1))  # rows of 80
    assert flat2d((4, 256, 64), (300 * 64, 64, 1)) is None  # gaps between the batches
    assert flat2d((1, 256, 64), (999, 64, 1)) == ((256, 64), (64, 1))  # one batch
    assert flat2d((256, 64), (64, 1)) == ((256, 64), (64, 1))
    assert flat2d((2, 2, 2, 2), (8, 4, 2, 1)) is None
