"""What the steady-state launchers read of a torch tensor, without torch: unit tests of the
launchers and the ABI use these."""


class DType:
    def __init__(self, name):
        self.name = name


F32, F64 = DType("float32"), DType("float64")


def c_strides(shape):
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


class Tensor:
    """What the launcher reads of a torch tensor (named Tensor, as direct() expects)."""

    def __init__(self, shape, dtype=F32, device=0, ptr=0x7F00_0000_1000, strides=None,
                 contiguous=None):
        self.shape, self.dtype, self._device, self._ptr = tuple(shape), dtype, device, ptr
        self._strides = c_strides(shape) if strides is None else tuple(strides)
        self._contiguous = self._strides == c_strides(shape) if contiguous is None else contiguous

    def get_device(self):
        return self._device

    def is_contiguous(self):
        return self._contiguous

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._strides
