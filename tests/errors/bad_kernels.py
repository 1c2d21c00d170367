"""Kernels that must not compile. Each offending line ends with ``# ERR <case>``: the tests find
the expected line number from that marker, so editing this file cannot silently break them."""

import numpy as np

import threadtile as cuda


def helper(x):
    return x + 1


@cuda.jit
def list_literal(a):
    x = [1, 2]  # ERR list_literal
    a[0] = x[0]


@cuda.jit
def list_comprehension(a):
    xs = [i * 2 for i in range(4)]  # ERR list_comprehension
    a[0] = xs[0]


@cuda.jit
def try_except(a):
    try:  # ERR try_except
        a[0] = 1
    except IndexError:
        pass


@cuda.jit
def builtin_sum(a):
    a[0] = sum(a)  # ERR builtin_sum


@cuda.jit
def complex_order(a):
    a[0] = 1.0 if complex(a[1], a[2]) < 1j else 0.0  # ERR complex_order


@cuda.jit
def numpy_zeros(a):
    tmp = np.zeros(4)  # ERR numpy_zeros
    a[0] = tmp[0]


@cuda.jit
def string_format(a):
    i = cuda.grid(1)
    print("%d" % i)  # noqa: UP031  # ERR string_format
    a[0] = 1


@cuda.jit
def unbound_after_branch(a, out):
    i = cuda.grid(1)
    if i < a.size:
        v = a[i]
    out[i] = v * 2  # ERR unbound_after_branch


@cuda.jit
def unbound_elif(a, out):
    i = cuda.grid(1)
    if i < 2:
        v = a[0]
    elif i < 4:
        v = a[1]
    elif i < 6:
        return
    out[i] = v  # ERR unbound_elif


def pair(x):
    return x, x + 1


@cuda.jit
def tuple_call_in_condition(a):
    i = 0
    while pair(i)[1] < a.size:  # ERR tuple_call_in_condition
        i += 1
    a[0] = i


@cuda.jit
def attribute_assign(a):
    a.shape = (3,)  # ERR attribute_assign


@cuda.jit
def for_over_number(a, out):
    s = 0.0
    for x in a.size:  # ERR for_over_number
        s += x
    out[0] = s


@cuda.jit
def kernel_returns(a):
    i = cuda.grid(1)
    if i < a.size:
        return a[i] * 2  # ERR kernel_returns


@cuda.jit
def intrinsic_arity(a):
    cuda.syncthreads(1)  # ERR intrinsic_arity
    a[0] = 1


@cuda.jit
def shared_shape_variable(a, n):
    sh = cuda.shared.array(n, np.float32)  # ERR shared_shape_variable
    sh[0] = a[0]


@cuda.jit
def array_then_number(a, b):
    x = a
    x = 1  # ERR array_then_number
    b[0] = x


@cuda.jit
def param_retyped(a, n):
    n = a[0] * 0.5  # ERR param_retyped
    a[1] = n


@cuda.jit
def undefined_name(a):
    a[0] = not_defined_anywhere  # noqa: F821  # ERR undefined_name


@cuda.jit(device=True)
def recursive(n):
    return 1 if n <= 1 else n * recursive(n - 1)  # ERR recursive


@cuda.jit
def calls_recursive(a):
    a[0] = recursive(5)


@cuda.jit
def float_index(a):
    a[1.5] = 0  # ERR float_index


@cuda.jit
def while_else(a):
    i = 0
    while i < 3:  # ERR while_else
        i += 1
    else:
        a[0] = i


@cuda.jit
def bitwise_float(a):
    a[0] = a[1] & 3  # ERR bitwise_float


@cuda.jit
def atomic_on_local(a):
    loc = cuda.local.array(4, np.int32)
    cuda.atomic.add(loc, 0, 1)  # ERR atomic_on_local
    a[0] = loc[0]


@cuda.jit
def negative_power(a):
    a[0] = 2 ** -1  # ERR negative_power


@cuda.jit
def two_args(a, b):
    a[0] = b[0]


def _inner(a):
    return a.nonexistent  # ERR helper_chain_inner


@cuda.jit(device=True)
def _middle(a):
    return _inner(a)  # ERR helper_chain_middle


@cuda.jit
def helper_chain(a):
    a[0] = _middle(a)  # ERR helper_chain
