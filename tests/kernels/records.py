"""Kernels over records (NumPy structured dtypes): arrays of records, a record by itself,
array fields, nested records, whole-record copies, records in constant, local and shared
memory, aligned and packed layouts."""

import numpy as np

import threadtile as cuda

from . import example

# aligned: b at 8, c (complex64, never computed with: copied with its record) at 12, d at 20
PARTICLE = np.dtype([("a", np.float64), ("b", np.int32), ("c", np.complex64),
                     ("d", np.uint8, 5)], align=True)
# packed: j at byte 4, 28 bytes a record
GRID2 = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])
# a record inside a record, and a float16 and a bool field
INNER = np.dtype([("u", np.int16), ("v", np.float32)], align=True)
OUTER = np.dtype([("flag", np.bool_), ("h", np.float16), ("inner", INNER),
                  ("w", np.float64, 2)], align=True)
# constant memory
TABLE = np.zeros(8, np.dtype([("k", np.int8), ("x", np.float64), ("y", np.int32)], align=True))
TABLE["k"] = np.arange(8) - 3
TABLE["x"] = np.arange(8) * 0.25 + 0.5
TABLE["y"] = np.arange(8) * 7 - 20


@cuda.jit
def particle_update(p, n):
    """Every field form: attribute, item, array field, whole-record copy."""
    i = cuda.grid(1)
    if i < n:
        p[i].a = p[i].a * 2.0 + p[i]["b"]
        p[i]["b"] = p[i].b - 1 + p[i].d[4]
        p[i].d[0] = p[i].d[1] + p[i]["d"][2]


@cuda.jit
def reverse_records(src, dst, n):
    i = cuda.grid(1)
    if i < n:
        dst[i] = src[n - 1 - i]


@cuda.jit
def record_in_place(r, out):
    """A record passed by itself (np.record): read and written in place."""
    out[0] = r.a + r.b
    r.a = out[0] * 3.0
    r["b"] = 7
    r.d[2] = 9


@cuda.jit
def grid2_fill(r, a):
    i = cuda.grid(1)
    if i < r.shape[0]:
        rec = r[i]
        rec.i = i
        for k in range(3):
            for m in range(2):
                rec.j[k, m] = a[i, k, m] + rec["i"]


@cuda.jit
def grid2_copy_field(src, dst):
    """An array field assigned an array field: element by element."""
    i = cuda.grid(1)
    if i < src.shape[0]:
        dst[i]["j"] = src[i]["j"]
        dst[i].i = src[i][0]


@cuda.jit
def nested_records(o, out):
    i = cuda.grid(1)
    if i < o.shape[0]:
        inner = o[i].inner
        out[i] = inner.u + inner["v"] * o[i].w[1] + o[i].h
        if o[i].flag:
            o[i].inner.u = 100 + i
        o[i].w[0] = out[i]


@cuda.jit
def table_lookup(idx, out):
    i = cuda.grid(1)
    if i < idx.shape[0]:
        t = cuda.const.array_like(TABLE)
        j = idx[i]
        out[i] = t[j].x * TABLE[j]["y"] + t[j].k


@cuda.jit
def local_and_shared_records(x, out):
    """Records in local and shared memory: one per thread in shared memory, written through
    a local record array and read back by a neighbour after a barrier."""
    i = cuda.threadIdx.x
    loc = cuda.local.array(2, INNER)
    loc[0].u = i
    loc[0].v = x[i] * 0.5
    loc[1] = loc[0]
    sh = cuda.shared.array(64, INNER)
    sh[i] = loc[1]
    cuda.syncthreads()
    j = (i + 1) % cuda.blockDim.x
    out[i] = sh[j].u + sh[j].v


LABELLED = np.dtype([("n", np.int32), ("name", "<U5"), ("tag", "S3")], align=True)


@cuda.jit
def label_records(r):
    """Constant strings into unicode and bytes fields (NumPy's encoding, cut, zero-padded)."""
    i = cuda.grid(1)
    if i < r.shape[0]:
        r[i].n = i
        if i % 2 == 0:
            r[i]["name"] = "even"
            r[i].tag = b"E"
        else:
            r[i]["name"] = "odd!!!"
            r[i].tag = b"ODD"


EXAMPLES = {
    "particle_update": [example(np.zeros(4, PARTICLE), 4),
                        example(np.zeros(4, PARTICLE)[::2], 2)],
    "reverse_records": [example(np.zeros(4, PARTICLE), np.zeros(4, PARTICLE), 4)],
    "record_in_place": [example(np.zeros(2, PARTICLE)[1], np.zeros(1))],
    "grid2_fill": [example(np.zeros(3, GRID2), np.zeros((3, 3, 2), np.float32))],
    "grid2_copy_field": [example(np.zeros(3, GRID2), np.zeros(3, GRID2))],
    "nested_records": [example(np.zeros(3, OUTER), np.zeros(3))],
    "table_lookup": [example(np.zeros(4, np.int32), np.zeros(4))],
    "local_and_shared_records": [example(np.zeros(64, np.float32), np.zeros(64))],
    "label_records": [example(np.zeros(5, LABELLED))],
}
