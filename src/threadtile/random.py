"""numba.cuda.random: xoroshiro128+ generators, one per thread, with numba's streams.

``import threadtile as cuda`` gives ``cuda.random`` with numba's names::

    from threadtile.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

    @cuda.jit
    def draw(states, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = xoroshiro128p_uniform_float32(states, i)

    states = create_xoroshiro128p_states(n, seed=1)
    draw[blocks, threads](states, out)

The generator is xoroshiro128+ (Blackman and Vigna), seeded by splitmix64; generator ``i`` of
an array starts ``2**64 * (subsequence_start + i)`` steps after the seed's state (the
published jump polynomial), so the draws are the same numbers numba's generators give for the
same seed. Uniform floats take the top 53 bits of a draw as a float64 in [0, 1) (float32:
that value rounded); normal ones use the Box-Muller transform of two float32 uniform draws
(numba's ``xoroshiro128p_normal_float64`` too draws float32 uniforms, and so does this one).

A state is two ``uint64`` words. On the host the states are records of
:data:`xoroshiro128p_dtype` (``s0``, ``s1``), as numba's are: ``copy_to_host()`` of the array
:func:`create_xoroshiro128p_states` returns gives them. Kernels see the same memory as an
``(n, 2)`` ``uint64`` array, and the device functions below take either that array or a
kernel's ``(n, 2)`` ``uint64`` array of its own. numba's own device functions
(``numba.cuda.random.xoroshiro128p_*``), called from a threadtile kernel, are these.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import jit
from .lang.substitutes import SUBSTITUTES
from .lang.types import float32, float64, int64, uint64
from .runtime.devicearray import DeviceArray, SimDeviceArray, array_class

__all__ = [
    "create_xoroshiro128p_states",
    "init_xoroshiro128p_states",
    "xoroshiro128p_dtype",
    "xoroshiro128p_jump",
    "xoroshiro128p_next",
    "xoroshiro128p_normal_float32",
    "xoroshiro128p_normal_float64",
    "xoroshiro128p_uniform_float32",
    "xoroshiro128p_uniform_float64",
]

xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
"""A generator's state on the host: a record of two uint64 words, as numba's."""

_MASK = (1 << 64) - 1
# the jump polynomial of xoroshiro128+: advances a state by 2**64 steps
_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)
_JUMP0 = np.uint64(_JUMP[0])
_JUMP1 = np.uint64(_JUMP[1])
_TWO_PI_F32 = np.float32(2 * math.pi)
_TWO_PI_F64 = np.float64(2 * math.pi)
_UNIT = np.float64(1.0 / (1 << 53))


# -- device functions -------------------------------------------------------------------------

@jit(device=True)
def _rotl(x, k):
    return (x << k) | (x >> (64 - k))


@jit(device=True)
def xoroshiro128p_next(states, index):
    """The next uint64 of generator ``states[index]``, which advances one step."""
    i = int64(index)
    s0 = states[i, 0]
    s1 = states[i, 1]
    result = s0 + s1
    s1 ^= s0
    states[i, 0] = _rotl(s0, 55) ^ s1 ^ (s1 << 14)
    states[i, 1] = _rotl(s1, 36)
    return result


@jit(device=True)
def xoroshiro128p_jump(states, index):
    """Advance generator ``states[index]`` by ``2**64`` steps."""
    i = int64(index)
    s0 = uint64(0)
    s1 = uint64(0)
    for b in range(128):
        word = _JUMP0 if b < 64 else _JUMP1
        if (word >> uint64(b & 63)) & uint64(1):
            s0 ^= states[i, 0]
            s1 ^= states[i, 1]
        xoroshiro128p_next(states, i)
    states[i, 0] = s0
    states[i, 1] = s1


@jit(device=True)
def xoroshiro128p_uniform_float64(states, index):
    """A float64 in [0, 1) from generator ``states[index]`` (one step)."""
    x = xoroshiro128p_next(states, index)
    return float64(x >> uint64(11)) * _UNIT


@jit(device=True)
def xoroshiro128p_uniform_float32(states, index):
    """A float32 in [0, 1] from generator ``states[index]`` (one step): the float64 draw
    rounded, which may round up to 1.0 as numba's does."""
    return float32(xoroshiro128p_uniform_float64(states, index))


@jit(device=True)
def xoroshiro128p_normal_float32(states, index):
    """A float32 from the standard normal distribution (Box-Muller; two steps)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(float32(-2.0) * math.log(u1)) * math.cos(_TWO_PI_F32 * u2)


@jit(device=True)
def xoroshiro128p_normal_float64(states, index):
    """A float64 from the standard normal distribution (Box-Muller over two float32 uniform
    draws, as numba computes it; two steps)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    # the logarithm of the float32 draw is a float32 (numba's typing), the rest float64
    return math.sqrt(-2.0 * float64(math.log(u1))) * math.cos(_TWO_PI_F64 * u2)


# numba's functions of the same names, called from a threadtile kernel, are these
SUBSTITUTES.update({("numba.cuda.random", f.py_func.__name__): f for f in (
    xoroshiro128p_next, xoroshiro128p_jump, xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64, xoroshiro128p_normal_float32, xoroshiro128p_normal_float64)})


# -- host: seeding ----------------------------------------------------------------------------

def _splitmix64(seed: int) -> int:
    z = (seed + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _next_int(s0: int, s1: int) -> tuple[int, int]:
    s1 ^= s0
    r55 = ((s0 << 55) | (s0 >> 9)) & _MASK
    return r55 ^ s1 ^ ((s1 << 14) & _MASK), ((s1 << 36) | (s1 >> 28)) & _MASK


def _jump_int(s0: int, s1: int) -> tuple[int, int]:
    j0 = j1 = 0
    for word in _JUMP:
        for b in range(64):
            if (word >> b) & 1:
                j0 ^= s0
                j1 ^= s1
            s0, s1 = _next_int(s0, s1)
    return j0, j1


# The jump is linear over GF(2) on the 128 bits of a state: a 128 x 128 bit matrix, kept as the
# images of the 128 unit states. _POWERS[k] is the jump applied 2**k times, so the states of n
# generators take log2(n) vectorised matrix products instead of n sequential jumps of 128
# steps each (numba's host loop is compiled; one in Python would take minutes for 10**6).
# A product reads the state a byte at a time: _TABLES[k][p, b] is the image of byte value b at
# byte p (of the 16), the XOR of the images of its bits.
_POWERS: list[np.ndarray] = []
_TABLES: list[np.ndarray] = []


def _table(m: np.ndarray) -> np.ndarray:
    """(2, 16, 256) uint64: for each word of the image, each byte of a state and each value
    of it, that word of its image."""
    out = np.empty((2, 16, 256), np.uint64)
    for p in range(16):
        t = np.zeros((1, 2), np.uint64)
        for bit in range(8):  # the values with this bit set are those without it, XOR its image
            t = np.concatenate([t, t ^ m[8 * p + bit]])
        out[:, p] = t.T
    return out


def _apply(k: int, s0: np.ndarray, s1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The jump applied 2**k times to the states (s0, s1) (uint64 arrays)."""
    t = _tables(k)
    r0 = np.zeros_like(s0)
    r1 = np.zeros_like(s1)
    byte = np.uint64(0xFF)
    for p in range(16):
        word = s0 if p < 8 else s1
        idx = ((word >> np.uint64(8 * (p % 8))) & byte).astype(np.intp)
        r0 ^= t[0, p].take(idx)
        r1 ^= t[1, p].take(idx)
    return r0, r1


def _tables(k: int) -> np.ndarray:
    while len(_TABLES) <= k:
        if not _POWERS:
            cols = [_jump_int(1 << b, 0) for b in range(64)] + \
                   [_jump_int(0, 1 << b) for b in range(64)]
            _POWERS.append(np.array(cols, dtype=np.uint64))
        else:  # the square: the previous power applied to its own images
            m = _POWERS[-1]
            _POWERS.append(np.stack(_apply(len(_POWERS) - 1, m[:, 0].copy(), m[:, 1].copy()),
                                    axis=1))
        _TABLES.append(_table(_POWERS[-1]))
    return _TABLES[k]


def _host_states(n: int, seed: int, subsequence_start: int) -> np.ndarray:
    """The (n, 2) uint64 states of n generators: numba's seeding and subsequences."""
    out = np.empty((n, 2), dtype=np.uint64)
    if n < 1:
        return out
    z = _splitmix64(int(seed) & _MASK)
    s0, s1 = np.array([z], np.uint64), np.array([z], np.uint64)
    start = int(subsequence_start) & _MASK
    k = 0
    while start:
        if start & 1:
            s0, s1 = _apply(k, s0, s1)
        start >>= 1
        k += 1
    out[0] = s0[0], s1[0]
    done, k = 1, 0
    while done < n:  # states [done, 2 * done) are states [0, done) jumped done times
        take = min(done, n - done)
        r0, r1 = _apply(k, out[:take, 0].copy(), out[:take, 1].copy())
        out[done:done + take, 0] = r0
        out[done:done + take, 1] = r1
        done += take
        k += 1
    return out


# -- host: the states' device arrays ----------------------------------------------------------

class _States:
    """A device array of generator states: ``(n, 2)`` uint64 to kernels, numba's records of
    :data:`xoroshiro128p_dtype` to ``copy_to_host`` and ``copy_to_device``."""

    def copy_to_host(self, ary: np.ndarray | None = None, stream=0) -> np.ndarray:
        if self.ndim != 2 or not self.is_c_contiguous():
            return super().copy_to_host(ary, stream)
        if ary is not None and ary.dtype == xoroshiro128p_dtype:
            super().copy_to_host(_as_words(ary), stream)
            return ary
        host = super().copy_to_host(ary, stream)
        return host.view(xoroshiro128p_dtype).reshape(host.shape[:-1])

    def copy_to_device(self, ary, stream=0) -> None:
        if isinstance(ary, np.ndarray) and ary.dtype == xoroshiro128p_dtype:
            ary = _as_words(ary)
        super().copy_to_device(ary, stream)


class XoroshiroStates(_States, DeviceArray):
    """Generator states in GPU memory."""


class SimXoroshiroStates(_States, SimDeviceArray):
    """Generator states in the simulator's device memory."""


def _as_words(records: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(records)
    return a.view(np.uint64).reshape(a.shape + (2,))


def init_xoroshiro128p_states(states, seed, subsequence_start: int = 0, stream=0) -> None:
    """Seed the generators of ``states`` (numba's): generator ``i`` starts
    ``2**64 * (subsequence_start + i)`` steps after the state splitmix64 makes of ``seed``.
    ``states`` is a device array of :data:`xoroshiro128p_dtype` records or of ``(n, 2)``
    uint64 words; the states are computed on the host and copied on ``stream``."""
    n = states.shape[0]
    host = _host_states(n, seed, subsequence_start)
    if states.dtype == xoroshiro128p_dtype:
        host = host.view(xoroshiro128p_dtype).reshape(n)
    elif states.dtype != np.uint64 or tuple(states.shape) != (n, 2):
        raise TypeError(f"states of dtype {states.dtype} and shape {tuple(states.shape)}: "
                        "generator states are xoroshiro128p_dtype records or (n, 2) uint64")
    states.copy_to_device(host, stream=stream)


def create_xoroshiro128p_states(n: int, seed, subsequence_start: int = 0,
                                stream=0) -> DeviceArray:
    """A new device array of ``n`` seeded generators (numba's): see
    :func:`init_xoroshiro128p_states`. Kernels take it as ``(n, 2)`` uint64 words; its
    ``copy_to_host()`` gives ``n`` records of :data:`xoroshiro128p_dtype`."""
    cls = SimXoroshiroStates if array_class() is SimDeviceArray else XoroshiroStates
    states = cls((int(n), 2), np.uint64, stream=stream)
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states
