/* threadtile.runtime._fastlaunch: the steady-state launcher of CompiledKernel.direct, in C.
 *
 * A Launcher is made for one kernel, one launch configuration (grid, block, dynamic shared
 * memory, stream) and one set of argument kinds, the parameter specs of abi.launcher_specs:
 * for each parameter either an array (exact tensor type, dtype by identity, rank, contiguity)
 * or a Python int/float/bool scalar. Calling it with the tuple of kernel arguments does what
 * launcher.py's PyLauncher does (abi.spec_values, then cuLaunchKernel):
 *
 *   - check the argument count and that this thread's current device (tls.device) is the
 *     recorded one, then every argument: type(a) is T, a.dtype is D, a.get_device() == dev,
 *     len(a.shape) == ndim, a.is_contiguous() true for layout "C" parameters and false for the
 *     others; scalars: type(a) is int / float / bool exactly;
 *   - pack the parameters at the offsets of abi.py's ParamLayout (an array as the
 *     uint64 data pointer, int64 shape[N], int64 strides[N] in elements; an int as int64, a
 *     float as double, a bool as one byte): contiguous arrays of rank 1-3 take their strides
 *     from the shape, the others from a.stride();
 *   - ask for the stream (a fixed handle, or a callable given the device index), then call
 *     the driver's cuLaunchKernel through the function pointer given at creation.
 *
 * It returns True after launching, or False having launched nothing when an argument is not of
 * the recorded kind or a value does not fit its parameter (the caller then takes the general
 * path, which raises the proper error). Exceptions raised by the arguments' own methods
 * propagate, as they do from PyLauncher. A nonzero CUresult calls `failed(err)`, which raises.
 *
 * Each Launcher owns its parameter buffer and kernelParams array. Packing runs with the GIL
 * held, so two threads never interleave in C; but the arguments' methods and the stream getter
 * may run Python code that lets another thread in, and the driver call runs with the GIL
 * released (it can block while the launch queue is full, and a host callback queued on the
 * stream may need the GIL to drain it). A `busy` flag, only read and written with the GIL held,
 * covers the whole call: a second thread that enters meanwhile gets False (the general path,
 * with buffers of its own), as the Python launcher does when its lock is taken.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* CUresult cuLaunchKernel(CUfunction, gridDim x/y/z, blockDim x/y/z, sharedMemBytes, CUstream,
 * void **kernelParams, void **extra); CUfunction and CUstream are pointers, CUresult an enum. */
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, void *, void **, void **);

enum { P_ARRAY, P_INT64, P_DOUBLE, P_BOOL, P_CONST };

/* The attributes read from an array argument. Each is read through the descriptor its type
 * defines, found once when the launcher is made (a data descriptor's getter; a method called
 * with the argument, as a.m() calls it when a's __dict__ holds no "m"), else by name. */
enum { A_DTYPE, A_SHAPE, A_IS_CUDA, A_GET_DEVICE, A_IS_CONTIGUOUS, A_DATA_PTR, A_STRIDE,
       A_COUNT };
static const char *const attr_names[A_COUNT] = {"dtype", "shape", "is_cuda", "get_device",
    "is_contiguous", "data_ptr", "stride"};
static const int attr_is_data[A_COUNT] = {1, 1, 1, 0, 0, 0, 0};
static PyObject *attr_strs[A_COUNT];

typedef struct {
    int kind;
    Py_ssize_t offset;   /* byte offset of the parameter in the buffer */
    Py_ssize_t ndim;     /* arrays */
    int contiguous;      /* arrays: what a.is_contiguous() must say (layout "C" or not) */
    int shape_strides;   /* arrays: strides follow from the shape (contiguous, rank 1-3) */
    int narrow;          /* arrays: extents and strides must fit int32 (else declined) */
    PyObject *type;      /* arrays: the exact tensor type; constants: the value's type */
    PyObject *dtype;     /* arrays: the dtype, compared by identity; constants: the value */
    PyObject *acc[A_COUNT];  /* arrays: the type's descriptors (owned), or NULL: by name */
} Param;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    launch_fn launch;
    void *func;                /* the CUfunction handle */
    unsigned grid[3], block[3], shared;
    long device;
    PyObject *device_obj;      /* device as an int: compared with, and given to the getter */
    PyObject *tls;             /* driver.tls; .device is the thread's current device */
    PyObject *stream_getter;   /* callable(device) -> int handle, or NULL: `stream` is fixed */
    void *stream;
    PyObject *failed;          /* callable(err): raises the launch error */
    int one_device;            /* the only device (0): a tensor's is_cuda says it is on it */
    Py_ssize_t n;              /* number of parameters (= arguments) */
    Param *params;
    PyObject **shapes;         /* during a call: each array argument's shape (owned) */
    unsigned char *buf;        /* the packed parameters */
    Py_ssize_t nbytes;
    void **argv;               /* kernelParams: argv[i] = buf + params[i].offset */
    int busy;
} Launcher;

static PyObject *s_device, *s_call;

/* Argument a's attribute k (see attr_names), a new reference or NULL with an error set. */
static PyObject *get_attr(const Param *p, int k, PyObject *a)
{
    PyObject *d = p->acc[k];
    if (d == NULL)
        return attr_is_data[k] ? PyObject_GetAttr(a, attr_strs[k])
                               : PyObject_CallMethodNoArgs(a, attr_strs[k]);
    if (attr_is_data[k])
        return Py_TYPE(d)->tp_descr_get(d, a, (PyObject *)Py_TYPE(a));
    return PyObject_Vectorcall(d, &a, 1, NULL);
}

/* Find p's descriptors in its type (p->acc); what is not found plainly is read by name. */
static void find_descriptors(Param *p)
{
    for (int k = 0; k < A_COUNT; k++) {
        PyObject *d = _PyType_Lookup((PyTypeObject *)p->type, attr_strs[k]);  /* borrowed */
        if (d == NULL)
            continue;
        PyTypeObject *t = Py_TYPE(d);
        int ok = attr_is_data[k] ? t->tp_descr_get != NULL && t->tp_descr_set != NULL
                                 : PyFunction_Check(d) || t == &PyMethodDescr_Type;
        if (ok)
            p->acc[k] = Py_NewRef(d);
    }
}

/* `o == dev` for an int (or, as Python's != would, anything else): 1, 0, or -1 on error. */
static int equals_device(Launcher *self, PyObject *o)
{
    if (PyLong_CheckExact(o)) {
        int overflow;
        long v = PyLong_AsLongAndOverflow(o, &overflow);
        if (v == -1 && PyErr_Occurred())
            return -1;
        return !overflow && v == self->device;
    }
    return PyObject_RichCompareBool(o, self->device_obj, Py_EQ);
}

/* After a failed conversion: TypeError/OverflowError mean "does not fit" (struct.error in the
 * Python launcher: return False); anything else propagates. Returns 1 when cleared. */
static int cleared_conversion_error(void)
{
    if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_OverflowError)) {
        PyErr_Clear();
        return 1;
    }
    return 0;
}

/* Store o as int64 (struct "q") at p. 1: stored; 0: does not fit (nothing set); -1: error. */
static int put_i64(unsigned char *p, PyObject *o)
{
    long long v = PyLong_AsLongLong(o);  /* uses __index__ for non-ints, as struct does */
    if (v == -1 && PyErr_Occurred())
        return cleared_conversion_error() ? 0 : -1;
    int64_t w = (int64_t)v;
    memcpy(p, &w, 8);
    return 1;
}

/* Store o as uint64 (struct "Q": the data pointer) at p; returns as put_i64. */
static int put_u64(unsigned char *p, PyObject *o)
{
    PyObject *i = PyNumber_Index(o);
    if (i == NULL)
        return cleared_conversion_error() ? 0 : -1;
    unsigned long long v = PyLong_AsUnsignedLongLong(i);  /* negative: OverflowError */
    Py_DECREF(i);
    if (v == (unsigned long long)-1 && PyErr_Occurred())
        return cleared_conversion_error() ? 0 : -1;
    uint64_t w = (uint64_t)v;
    memcpy(p, &w, 8);
    return 1;
}

/* *out = a * b when that fits an int64 (else 0: the caller declines the launch). */
static int mul_fits(int64_t a, int64_t b, int64_t *out)
{
#if defined(__GNUC__) || defined(__clang__)
    return !__builtin_mul_overflow(a, b, out);
#else  /* exact for factors of 32 bits; larger ones are left to the general path */
    if (a < INT32_MIN || a > INT32_MAX || b < INT32_MIN || b > INT32_MAX)
        return 0;
    *out = a * b;
    return 1;
#endif
}

/* Check argument a against array parameter p (abi.spec_values' checks), keeping its shape in
 * *shape. 1: matches; 0: does not; -1: error set. */
static int check_array(Launcher *self, const Param *p, PyObject *a, PyObject **shape)
{
    if ((PyObject *)Py_TYPE(a) != p->type)
        return 0;
    PyObject *r = get_attr(p, A_DTYPE, a);
    if (r == NULL)
        return -1;
    int ok = r == p->dtype;
    Py_DECREF(r);
    if (!ok)
        return 0;
    if (self->one_device && p->acc[A_IS_CUDA] != NULL) {
        r = get_attr(p, A_IS_CUDA, a);
        if (r == NULL)
            return -1;
        ok = r == Py_True;
    } else {
        r = get_attr(p, A_GET_DEVICE, a);
        if (r == NULL)
            return -1;
        ok = equals_device(self, r);
    }
    Py_DECREF(r);
    if (ok <= 0)
        return ok;
    *shape = get_attr(p, A_SHAPE, a);
    if (*shape == NULL)
        return -1;
    /* torch.Size is a tuple; a shape that is not a tuple is left to the general path */
    if (!PyTuple_Check(*shape) || PyTuple_GET_SIZE(*shape) != p->ndim)
        return 0;
    r = get_attr(p, A_IS_CONTIGUOUS, a);
    if (r == NULL)
        return -1;
    ok = PyObject_IsTrue(r);
    Py_DECREF(r);
    if (ok < 0)
        return -1;
    return ok == p->contiguous;
}

/* Whether the n int64 values at v all fit an int32 (a tile kernel's array indexed in 32-bit:
 * one beyond is declined, and the general path raises cuTile's OverflowError). */
static int fits_int32(const unsigned char *v, Py_ssize_t n)
{
    for (Py_ssize_t k = 0; k < n; k++) {
        int64_t x;
        memcpy(&x, v + 8 * k, 8);
        if (x < INT32_MIN || x > INT32_MAX)
            return 0;
    }
    return 1;
}

/* Pack array argument a (its shape already checked) at buf + p->offset: data pointer, shape,
 * strides. Returns as put_i64. */
static int pack_array(Launcher *self, const Param *p, PyObject *a, PyObject *shape)
{
    unsigned char *at = self->buf + p->offset;
    Py_ssize_t n = p->ndim;
    PyObject *r = get_attr(p, A_DATA_PTR, a);
    if (r == NULL)
        return -1;
    int ok = put_u64(at, r);
    Py_DECREF(r);
    if (ok <= 0)
        return ok;
    for (Py_ssize_t k = 0; k < n; k++) {
        ok = put_i64(at + 8 + 8 * k, PyTuple_GET_ITEM(shape, k));
        if (ok <= 0)
            return ok;
    }
    unsigned char *strides = at + 8 + 8 * n;
    if (p->shape_strides) {
        /* C-contiguous, rank 1-3: (1), (s1, 1), (s1*s2, s2, 1), as spec_values packs it */
        int64_t s[3] = {0, 0, 0}, st[3];
        memcpy(s, at + 8, 8 * (size_t)n);
        st[n - 1] = 1;
        if (n >= 2)
            st[n - 2] = s[n - 1];
        if (n == 3 && !mul_fits(s[1], s[2], &st[0]))
            return 0;  /* the product does not fit an int64: struct.error in Python */
        memcpy(strides, st, 8 * (size_t)n);
        return p->narrow ? fits_int32(at + 8, 2 * n) : 1;
    }
    r = get_attr(p, A_STRIDE, a);
    if (r == NULL)
        return -1;
    PyObject *seq = PySequence_Fast(r, "stride() must return a sequence");
    Py_DECREF(r);
    if (seq == NULL)
        return -1;
    ok = PySequence_Fast_GET_SIZE(seq) == n;  /* else: a wrong count, struct.error in Python */
    for (Py_ssize_t k = 0; ok > 0 && k < n; k++)
        ok = put_i64(strides + 8 * k, PySequence_Fast_GET_ITEM(seq, k));
    Py_DECREF(seq);
    return ok > 0 && p->narrow ? fits_int32(at + 8, 2 * n) : ok;
}

/* Check and pack every argument. 1: packed; 0: some argument is not of its kind or does not fit
 * (nothing set); -1: error set. */
static int check_and_pack(Launcher *self, PyObject *args)
{
    Py_ssize_t i;
    int ok;
    /* all the checks first, so that a mismatch calls no data_ptr()/stride() */
    for (i = 0; i < self->n; i++) {
        const Param *p = &self->params[i];
        PyObject *a = PyTuple_GET_ITEM(args, i);
        switch (p->kind) {
        case P_ARRAY:
            ok = check_array(self, p, a, &self->shapes[i]);
            if (ok <= 0)
                return ok;
            break;
        case P_INT64:
            if (!PyLong_CheckExact(a))
                return 0;
            break;
        case P_DOUBLE:
            if (!PyFloat_CheckExact(a))
                return 0;
            break;
        case P_CONST:  /* a tile kernel's Constant: of the type and equal to the value */
            if ((PyObject *)Py_TYPE(a) != p->type)
                return 0;
            if (a != p->dtype) {
                ok = PyObject_RichCompareBool(a, p->dtype, Py_EQ);
                if (ok <= 0)
                    return ok;
            }
            break;
        default: /* P_BOOL */
            if (!PyBool_Check(a))  /* bool cannot be subclassed: this is type(a) is bool */
                return 0;
        }
    }
    for (i = 0; i < self->n; i++) {
        const Param *p = &self->params[i];
        PyObject *a = PyTuple_GET_ITEM(args, i);
        unsigned char *at = self->buf + p->offset;
        switch (p->kind) {
        case P_ARRAY:
            ok = pack_array(self, p, a, self->shapes[i]);
            break;
        case P_INT64:
            ok = put_i64(at, a);
            break;
        case P_DOUBLE: {
            double d = PyFloat_AS_DOUBLE(a);
            memcpy(at, &d, sizeof d);
            ok = 1;
            break;
        }
        case P_CONST:  /* compiled into the kernel: nothing to pack */
            ok = 1;
            break;
        default:
            *at = a == Py_True;
            ok = 1;
        }
        if (ok <= 0)
            return ok;
    }
    return 1;
}

/* Launch with the argument tuple: 1 launched, 0 declined (nothing launched), -1 error set. */
static int launcher_run(Launcher *self, PyObject *args)
{
    if (self->tls == NULL || self->busy || !PyTuple_Check(args) ||
            PyTuple_GET_SIZE(args) != self->n)
        return 0;
    self->busy = 1;  /* from here every exit clears it */
    PyObject *d = PyObject_GetAttr(self->tls, s_device);
    int ok = d == NULL ? -1 : equals_device(self, d);
    Py_XDECREF(d);
    if (ok > 0)
        ok = check_and_pack(self, args);
    for (Py_ssize_t i = 0; i < self->n; i++)
        Py_CLEAR(self->shapes[i]);
    void *stream = self->stream;
    if (ok > 0 && self->stream_getter != NULL) {
        PyObject *s = PyObject_CallOneArg(self->stream_getter, self->device_obj);
        if (s == NULL) {
            ok = -1;
        } else {
            stream = PyLong_AsVoidPtr(s);
            if (stream == NULL && PyErr_Occurred())
                ok = -1;
            Py_DECREF(s);
        }
    }
    if (ok <= 0) {
        self->busy = 0;
        return ok;
    }
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = self->launch(self->func, self->grid[0], self->grid[1], self->grid[2], self->block[0],
                       self->block[1], self->block[2], self->shared, stream, self->argv, NULL);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (err != 0) {
        if (self->failed == NULL) {  /* cleared meanwhile: cannot happen to a live launcher */
            PyErr_Format(PyExc_RuntimeError, "cuLaunchKernel failed: CUresult %d", err);
            return -1;
        }
        PyObject *e = PyLong_FromLong(err);
        PyObject *r = e == NULL ? NULL : PyObject_CallOneArg(self->failed, e);
        Py_XDECREF(e);
        if (r == NULL)
            return -1;
        Py_DECREF(r);  /* failed() is expected to raise; if it returns, the launch "happened" */
    }
    return 1;
}

/* launcher(args) -> bool */
static PyObject *Launcher_vectorcall(PyObject *op, PyObject *const *argv, size_t nargsf,
                                     PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "a launcher takes one argument: the argument tuple");
        return NULL;
    }
    int r = launcher_run((Launcher *)op, argv[0]);
    return r < 0 ? NULL : Py_NewRef(r ? Py_True : Py_False);
}

/* An int argument of the constructor as an unsigned value in [lo, hi]; -1 with an error set. */
static int get_uint(PyObject *o, unsigned long long lo, unsigned long long hi,
                    const char *what, unsigned long long *out)
{
    unsigned long long v = PyLong_Check(o) ? PyLong_AsUnsignedLongLong(o) : 0;
    if (!PyLong_Check(o) || (v == (unsigned long long)-1 && PyErr_Occurred()) || v < lo ||
            v > hi) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "Launcher: %s must be an int in [%llu, %llu]", what, lo,
                     hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int get_dims(PyObject *o, const char *what, unsigned out[3])
{
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 3) {
        PyErr_Format(PyExc_TypeError, "Launcher: %s must be a 3-tuple of ints", what);
        return -1;
    }
    for (int k = 0; k < 3; k++) {
        unsigned long long v;
        if (get_uint(PyTuple_GET_ITEM(o, k), 1, UINT_MAX, what, &v) < 0)
            return -1;
        out[k] = (unsigned)v;
    }
    return 0;
}

/* One parameter spec (abi.ArraySpec / abi.ScalarSpec / abi.ConstSpec): ("array", offset, ndim,
 * contiguous, type, dtype, narrow), (code, offset) with code "q" (int64), "d" (double) or "?"
 * (bool), or ("const", 0, 0, False, type, value): an argument that is not a parameter. */
static int get_param(Launcher *self, PyObject *spec, Param *p)
{
    const char *code;
    Py_ssize_t offset, ndim = 0, size;
    int contiguous = 0, narrow = 0;
    PyObject *type = NULL, *dtype = NULL;
    if (!PyTuple_Check(spec) || !PyArg_ParseTuple(spec, "sn|npOOp", &code, &offset, &ndim,
                                                  &contiguous, &type, &dtype, &narrow)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "Launcher: a parameter spec must be a tuple");
        return -1;
    }
    if (strcmp(code, "array") == 0 && dtype != NULL && PyType_Check(type) && ndim >= 0 &&
            ndim <= (PY_SSIZE_T_MAX - 8) / 16) {
        p->kind = P_ARRAY;
        size = 8 + 16 * ndim;
        p->ndim = ndim;
        p->contiguous = contiguous;
        p->shape_strides = contiguous && ndim >= 1 && ndim <= 3;
        p->narrow = narrow;
        p->type = Py_NewRef(type);
        p->dtype = Py_NewRef(dtype);
    } else if (strcmp(code, "const") == 0 && dtype != NULL && PyType_Check(type)) {
        p->kind = P_CONST;
        p->type = Py_NewRef(type);
        p->dtype = Py_NewRef(dtype);
        p->offset = 0;
        return 0;
    } else if (strcmp(code, "q") == 0 || strcmp(code, "d") == 0 || strcmp(code, "?") == 0) {
        p->kind = code[0] == 'q' ? P_INT64 : code[0] == 'd' ? P_DOUBLE : P_BOOL;
        size = code[0] == '?' ? 1 : 8;
    } else {
        PyErr_Format(PyExc_ValueError, "Launcher: unsupported parameter spec %R", spec);
        return -1;
    }
    if (offset < 0 || offset % (size == 1 ? 1 : 8) != 0 || size > self->nbytes - offset) {
        PyErr_Format(PyExc_ValueError, "Launcher: parameter %R does not fit the %zd-byte buffer"
                     " at an aligned offset", spec, self->nbytes);
        return -1;
    }
    p->offset = offset;
    return 0;
}

static void Launcher_dealloc(Launcher *self);

/* Launcher(launch, func, grid, block, shared, stream, device, tls, params, nbytes, failed) */
static PyObject *Launcher_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"launch", "func", "grid", "block", "shared", "stream", "device",
                             "tls", "params", "nbytes", "failed", "one_device", NULL};
    PyObject *launch, *func, *grid, *block, *shared, *stream, *device, *tls, *params, *nbytes,
        *failed;
    int one_device = 0;
    unsigned long long v;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOOOOO!OO|$p:Launcher", kwlist, &launch,
                                     &func, &grid, &block, &shared, &stream, &device, &tls,
                                     &PyTuple_Type, &params, &nbytes, &failed, &one_device))
        return NULL;
    Launcher *self = PyObject_GC_New(Launcher, type);
    if (self == NULL)
        return NULL;
    /* everything zero first, so that dealloc on any error below frees only what was made */
    memset((char *)self + sizeof(PyObject), 0, sizeof(Launcher) - sizeof(PyObject));
    self->vectorcall = Launcher_vectorcall;
    if (get_uint(launch, 1, UINTPTR_MAX, "launch (the cuLaunchKernel address)", &v) < 0)
        goto fail;
    self->launch = (launch_fn)(uintptr_t)v;
    if (get_uint(func, 1, UINTPTR_MAX, "func (the CUfunction)", &v) < 0)
        goto fail;
    self->func = (void *)(uintptr_t)v;
    if (get_dims(grid, "grid", self->grid) < 0 || get_dims(block, "block", self->block) < 0)
        goto fail;
    if (get_uint(shared, 0, UINT_MAX, "shared", &v) < 0)
        goto fail;
    self->shared = (unsigned)v;
    if (PyLong_Check(stream)) {
        if (get_uint(stream, 0, UINTPTR_MAX, "stream", &v) < 0)
            goto fail;
        self->stream = (void *)(uintptr_t)v;
    } else if (PyCallable_Check(stream)) {
        self->stream_getter = Py_NewRef(stream);
    } else {
        PyErr_SetString(PyExc_TypeError, "Launcher: stream must be an int or a callable");
        goto fail;
    }
    if (get_uint(device, 0, LONG_MAX, "device", &v) < 0)
        goto fail;
    self->device = (long)v;
    self->one_device = one_device && v == 0;
    self->device_obj = Py_NewRef(device);
    self->tls = Py_NewRef(tls);
    if (!PyCallable_Check(failed)) {
        PyErr_SetString(PyExc_TypeError, "Launcher: failed must be callable");
        goto fail;
    }
    self->failed = Py_NewRef(failed);
    if (get_uint(nbytes, 1, PY_SSIZE_T_MAX, "nbytes", &v) < 0)
        goto fail;
    self->nbytes = (Py_ssize_t)v;
    Py_ssize_t n = PyTuple_GET_SIZE(params);
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "Launcher: a kernel with no parameters");
        goto fail;
    }
    self->params = PyMem_Calloc((size_t)n, sizeof(Param));
    self->shapes = PyMem_Calloc((size_t)n, sizeof(PyObject *));
    self->argv = PyMem_Calloc((size_t)n, sizeof(void *));
    self->buf = PyMem_Calloc((size_t)self->nbytes, 1);  /* PyMem: 16-byte aligned */
    if (!self->params || !self->shapes || !self->argv || !self->buf) {
        PyErr_NoMemory();
        goto fail;
    }
    self->n = n;  /* from here dealloc visits params[0..n), zeroed until filled */
    Py_ssize_t nargv = 0;  /* kernelParams: the parameters, without the constants */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (get_param(self, PyTuple_GET_ITEM(params, i), &self->params[i]) < 0)
            goto fail;
        if (self->params[i].kind == P_ARRAY)
            find_descriptors(&self->params[i]);
        if (self->params[i].kind != P_CONST)
            self->argv[nargv++] = self->buf + self->params[i].offset;
    }
    PyObject_GC_Track(self);
    return (PyObject *)self;
fail:
    Launcher_dealloc(self);  /* untracked: GC_UnTrack in dealloc is a no-op then */
    return NULL;
}

static int Launcher_traverse(Launcher *self, visitproc visit, void *arg)
{
    Py_VISIT(self->device_obj);
    Py_VISIT(self->tls);
    Py_VISIT(self->stream_getter);
    Py_VISIT(self->failed);
    for (Py_ssize_t i = 0; i < self->n; i++) {
        Py_VISIT(self->params[i].type);
        Py_VISIT(self->params[i].dtype);
        for (int k = 0; k < A_COUNT; k++)
            Py_VISIT(self->params[i].acc[k]);
        Py_VISIT(self->shapes[i]);
    }
    return 0;
}

/* Drop every reference; a launcher cleared this way declines every call (tls is NULL). */
static int Launcher_clear(Launcher *self)
{
    Py_CLEAR(self->tls);
    Py_CLEAR(self->device_obj);
    Py_CLEAR(self->stream_getter);
    Py_CLEAR(self->failed);
    for (Py_ssize_t i = 0; i < self->n; i++) {
        Py_CLEAR(self->params[i].type);
        Py_CLEAR(self->params[i].dtype);
        for (int k = 0; k < A_COUNT; k++)
            Py_CLEAR(self->params[i].acc[k]);
        Py_CLEAR(self->shapes[i]);
    }
    return 0;
}

static void Launcher_dealloc(Launcher *self)
{
    PyObject_GC_UnTrack(self);
    Launcher_clear(self);
    PyMem_Free(self->params);
    PyMem_Free(self->shapes);
    PyMem_Free(self->argv);
    PyMem_Free(self->buf);
    PyObject_GC_Del(self);
}

static PyTypeObject LauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "threadtile.runtime._fastlaunch.Launcher",
    .tp_doc = "Launcher(launch, func, grid, block, shared, stream, device, tls, params, nbytes, "
              "failed, *, one_device=False): call with the argument tuple; True after "
              "launching, False (nothing launched) when the arguments are not of the recorded "
              "kinds. one_device: device 0 is the only one, so a tensor type's is_cuda, where "
              "it has one, stands for get_device() == 0.",
    .tp_basicsize = sizeof(Launcher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = Launcher_new,
    .tp_dealloc = (destructor)Launcher_dealloc,
    .tp_traverse = (traverseproc)Launcher_traverse,
    .tp_clear = (inquiry)Launcher_clear,
    .tp_vectorcall_offset = offsetof(Launcher, vectorcall),
    .tp_call = PyVectorcall_Call,
};

/* ---- Call: the base of jit's Launch (kernel[grid, block]), whose call runs its Launcher ----
 *
 * call(*args) with no keywords, while no simulation is asked for (the predicate given to
 * set_simulation, backends/sim/switch.py's requested(), returns false), runs `direct` (a
 * Launcher from C, another callable with the argument tuple); otherwise, or when it declines,
 * it returns self._call(*args, **kwargs), the general path in Python. */
typedef struct {
    PyObject_HEAD
    PyObject *direct;  /* a Launcher, another callable(args) -> bool, or None */
} Call;

static PyObject *sim_requested;  /* set_simulation's predicate */

/* Whether a simulation is asked for: 1, 0, or -1 with an error set. */
static int simulating(void)
{
    if (sim_requested == NULL)
        return 1;  /* not set up: the general path decides */
    PyObject *r = PyObject_CallNoArgs(sim_requested);
    if (r == NULL)
        return -1;
    int on = r == Py_False ? 0 : r == Py_True ? 1 : PyObject_IsTrue(r);
    Py_DECREF(r);
    return on;
}

static PyObject *Call_call(PyObject *op, PyObject *args, PyObject *kwargs)
{
    Call *self = (Call *)op;
    PyObject *d = self->direct;
    if ((kwargs == NULL || PyDict_GET_SIZE(kwargs) == 0) && d != NULL && d != Py_None) {
        int sim = simulating();
        if (sim < 0)
            return NULL;
        if (!sim) {
            int r;
            if (Py_IS_TYPE(d, &LauncherType)) {
                r = launcher_run((Launcher *)d, args);
            } else {  /* a launcher in Python: its result's truth says whether it launched */
                Py_INCREF(d);  /* it may replace self->direct while it runs */
                PyObject *v = PyObject_CallOneArg(d, args);
                Py_DECREF(d);
                r = v == NULL ? -1 : PyObject_IsTrue(v);
                Py_XDECREF(v);
            }
            if (r < 0)
                return NULL;
            if (r > 0)
                Py_RETURN_NONE;
        }
    }
    PyObject *slow = PyObject_GetAttr(op, s_call);
    if (slow == NULL)
        return NULL;
    PyObject *r = PyObject_Call(slow, args, kwargs);
    Py_DECREF(slow);
    return r;
}

/* (a heap subtype's own traverse and dealloc visit and release the reference its instances
 * hold to it: these do not) */
static int Call_traverse(Call *self, visitproc visit, void *arg)
{
    Py_VISIT(self->direct);
    return 0;
}

static int Call_clear(Call *self)
{
    Py_CLEAR(self->direct);
    return 0;
}

static void Call_dealloc(Call *self)
{
    PyObject_GC_UnTrack(self);
    Call_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef Call_members[] = {
    {"direct", T_OBJECT, offsetof(Call, direct), 0,
     "the steady-state launcher (a Launcher runs from C), or None"},
    {NULL},
};

static PyTypeObject CallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "threadtile.runtime._fastlaunch.Call",
    .tp_doc = "Base of a launch configuration: calling it runs `direct` (a Launcher) when "
              "that applies, else self._call(*args, **kwargs).",
    .tp_basicsize = sizeof(Call),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)Call_dealloc,
    .tp_traverse = (traverseproc)Call_traverse,
    .tp_clear = (inquiry)Call_clear,
    .tp_call = Call_call,
    .tp_members = Call_members,
};

/* set_simulation(requested): the predicate Call asks before launching from C */
static PyObject *set_simulation(PyObject *mod, PyObject *requested)
{
    if (!PyCallable_Check(requested)) {
        PyErr_SetString(PyExc_TypeError, "set_simulation takes a callable");
        return NULL;
    }
    Py_XSETREF(sim_requested, Py_NewRef(requested));
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"set_simulation", set_simulation, METH_O,
     "set_simulation(requested): Call launches from C only while requested() is false."},
    {NULL},
};

static struct PyModuleDef fastlaunch_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "threadtile.runtime._fastlaunch",
    .m_doc = "The steady-state kernel launcher of CompiledKernel.direct, in C (optional).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__fastlaunch(void)
{
    struct { PyObject **slot; const char *name; } names[] = {
        {&s_device, "device"}, {&s_call, "_call"},
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (*names[k].slot == NULL && (*names[k].slot = PyUnicode_InternFromString(
                names[k].name)) == NULL)
            return NULL;
    }
    for (int k = 0; k < A_COUNT; k++) {
        if (attr_strs[k] == NULL && (attr_strs[k] = PyUnicode_InternFromString(
                attr_names[k])) == NULL)
            return NULL;
    }
    if (PyType_Ready(&LauncherType) < 0 || PyType_Ready(&CallType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&fastlaunch_module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Launcher", (PyObject *)&LauncherType) < 0 ||
            PyModule_AddObjectRef(m, "Call", (PyObject *)&CallType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
