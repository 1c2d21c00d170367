/* threadtile.runtime._eagerop: the plain eager call of a threadtile.torch operator, in C.
 *
 * threadtile.torch.EagerOp sends a call that nothing in torch needs to see straight to the
 * operator's host function (torch_ops.py says when). The checks and the version bumps that
 * surround it cost about 2 us in Python on a slow host core; here they cost a few hundred
 * nanoseconds. An EagerCall is made once per operator:
 *
 *     EagerCall(fn, mutated, declined)
 *
 * fn the host function, mutated a tuple of (position, name) of the arguments the operator
 * writes, declined the object returned for a call that must take torch's dispatcher (or the
 * Python path, which switches the current device). Calling it as ec(args, kwargs) (a tuple, a
 * dict or None) does, in this order, what torch_ops.py's Python path does:
 *
 *   - declined when a torch dispatch mode or torch function mode is active, torch's profiler
 *     is on, or a functorch transform runs;
 *   - one pass over the arguments (kwargs' values after args; lists and tuples looked into):
 *     declined for a tensor of a subclass of torch.Tensor, or one that requires grad while
 *     grad mode is on; the device index of the first CUDA tensor is kept;
 *   - declined when that device is not torch's current one;
 *   - fn(*args, **kwargs), then the version counters of the mutated tensor arguments bumped
 *     in one call, as torch's ADInplaceOrView kernel does; fn's result returned.
 *
 * A DeviceCall is what the code torch.compile's inductor writes calls for the operator
 * (torch_ops.py _direct_in_inductor): no checks but the device's.
 *
 *     DeviceCall(fn, switch)
 *
 * Called as dc(*args, **kwargs), it runs fn(*args, **kwargs) where no argument is a CUDA
 * tensor or the first one's device is torch's current one, and switch(*args, **kwargs) (the
 * Python host function that makes that device current) otherwise, or for a tensor of a
 * subclass of torch.Tensor.
 *
 * torch's functions come once, through setup(...), from torch_ops.py. Errors raised by fn or
 * by torch's functions propagate. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

/* torch's objects, from setup() */
static PyObject *tensor_type;       /* torch.Tensor */
static PyObject *dispatch_modes;    /* torch._C._len_torch_dispatch_stack */
static PyObject *function_modes;    /* torch._C._is_torch_function_mode_enabled */
static PyObject *profiler_module;   /* torch.autograd.profiler (its _is_profiler_enabled) */
static PyObject *functorch_stack;   /* torch._C._functorch.peek_interpreter_stack */
static PyObject *grad_enabled;      /* torch._C.is_grad_enabled */
static PyObject *current_device;    /* torch._C._cuda_getDevice, or None without CUDA */
static PyObject *increment_version; /* torch._C._increment_version(list of tensors) */

static PyObject *s_requires_grad, *s_is_cuda, *s_get_device, *s_profiler_enabled;

enum { PLAIN = 0, DECLINE = 1, FAILED = -1 };

/* The truth of a no-argument call's result: 1, 0, or -1 with an error set. */
static int call_truth(PyObject *f)
{
    PyObject *r = PyObject_CallNoArgs(f);
    if (r == NULL)
        return -1;
    int t = r == Py_False ? 0 : r == Py_True ? 1 : PyObject_IsTrue(r);
    Py_DECREF(r);
    return t;
}

/* The truth of attribute `name` of `o`: 1, 0, or -1 with an error set. */
static int attr_truth(PyObject *o, PyObject *name)
{
    PyObject *r = PyObject_GetAttr(o, name);
    if (r == NULL)
        return -1;
    int t = r == Py_False ? 0 : r == Py_True ? 1 : PyObject_IsTrue(r);
    Py_DECREF(r);
    return t;
}

static int scan(PyObject *a, int grad, long *dev);

/* scan() over the items of a list or tuple */
static int scan_items(PyObject *seq, int grad, long *dev)
{
    PyObject *fast = PySequence_Fast(seq, "a list or tuple");
    if (fast == NULL)
        return FAILED;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    int r = PLAIN;
    for (Py_ssize_t i = 0; i < n && r == PLAIN; i++)
        r = scan(items[i], grad, dev);
    Py_DECREF(fast);
    return r;
}

/* One argument: PLAIN (and *dev set at the first CUDA tensor), DECLINE, or FAILED. */
static int scan(PyObject *a, int grad, long *dev)
{
    if (Py_TYPE(a) == (PyTypeObject *)tensor_type) {
        if (grad) {
            int rg = attr_truth(a, s_requires_grad);
            if (rg != 0)
                return rg < 0 ? FAILED : DECLINE;
        }
        if (*dev < 0) {
            int cuda = attr_truth(a, s_is_cuda);
            if (cuda < 0)
                return FAILED;
            if (cuda) {
                PyObject *d = PyObject_CallMethodNoArgs(a, s_get_device);
                if (d == NULL)
                    return FAILED;
                *dev = PyLong_AsLong(d);
                Py_DECREF(d);
                if (*dev == -1 && PyErr_Occurred())
                    return FAILED;
            }
        }
        return PLAIN;
    }
    if (PyList_Check(a) || PyTuple_Check(a))
        return scan_items(a, grad, dev);
    int sub = PyObject_IsInstance(a, tensor_type);  /* fake, functional, a user's subclass */
    return sub < 0 ? FAILED : sub ? DECLINE : PLAIN;
}

/* One pass over a call's arguments (args, then kwargs' values; NULL for none): PLAIN where
 * every tensor is a plain torch.Tensor (none requiring grad, if grad) and the first CUDA
 * tensor's device, if any, is torch's current one; DECLINE or FAILED otherwise. */
static int scan_call(PyObject *args, PyObject *kwargs, int grad)
{
    long dev = -1;
    int r = scan_items(args, grad, &dev);
    if (r == PLAIN && kwargs != NULL) {
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (r == PLAIN && PyDict_Next(kwargs, &pos, &key, &value))
            r = scan(value, grad, &dev);
    }
    if (r != PLAIN || dev < 0)
        return r;
    if (current_device == Py_None)
        return DECLINE;
    PyObject *cur = PyObject_CallNoArgs(current_device);
    if (cur == NULL)
        return FAILED;
    long c = PyLong_AsLong(cur);
    Py_DECREF(cur);
    if (c == -1 && PyErr_Occurred())
        return FAILED;
    return c == dev ? PLAIN : DECLINE;
}

/* Whether the call may skip the dispatcher: PLAIN, DECLINE or FAILED. */
static int plain_call(PyObject *args, PyObject *kwargs)
{
    int t;
    if ((t = call_truth(dispatch_modes)) != 0 || (t = call_truth(function_modes)) != 0 ||
            (t = attr_truth(profiler_module, s_profiler_enabled)) != 0)
        return t < 0 ? FAILED : DECLINE;
    PyObject *stack = PyObject_CallNoArgs(functorch_stack);
    if (stack == NULL)
        return FAILED;
    int transform = stack != Py_None;
    Py_DECREF(stack);
    if (transform)
        return DECLINE;
    int grad = call_truth(grad_enabled);
    if (grad < 0)
        return FAILED;
    return scan_call(args, kwargs, grad);
}

typedef struct {
    PyObject_HEAD
    PyObject *fn;        /* the host function */
    PyObject *mutated;   /* tuple of (position, name) */
    PyObject *declined;  /* returned for a call that must take the dispatcher */
} EagerCall;

/* The mutated tensor arguments' version counters bumped in one call: 0, or -1 with an
 * error set. */
static int bump_versions(EagerCall *self, PyObject *args, PyObject *kwargs)
{
    Py_ssize_t n = PyTuple_GET_SIZE(self->mutated);
    if (n == 0)
        return 0;
    PyObject *ts = PyList_New(0);
    if (ts == NULL)
        return -1;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *m = PyTuple_GET_ITEM(self->mutated, k);
        Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(m, 0));
        if (i == -1 && PyErr_Occurred())
            goto fail;
        PyObject *t = i < PyTuple_GET_SIZE(args) ? PyTuple_GET_ITEM(args, i)
            : kwargs != NULL ? PyDict_GetItemWithError(kwargs, PyTuple_GET_ITEM(m, 1)) : NULL;
        if (t == NULL) {
            if (PyErr_Occurred())
                goto fail;
            continue;
        }
        int is = PyObject_IsInstance(t, tensor_type);
        if (is < 0 || (is && PyList_Append(ts, t) < 0))
            goto fail;
    }
    if (PyList_GET_SIZE(ts)) {
        PyObject *r = PyObject_CallOneArg(increment_version, ts);
        if (r == NULL)
            goto fail;
        Py_DECREF(r);
    }
    Py_DECREF(ts);
    return 0;
fail:
    Py_DECREF(ts);
    return -1;
}

static PyObject *EagerCall_call(PyObject *op, PyObject *callargs, PyObject *callkw)
{
    EagerCall *self = (EagerCall *)op;
    PyObject *args, *kwargs = Py_None;
    if (tensor_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_eagerop.setup() has not been called");
        return NULL;
    }
    if (callkw != NULL && PyDict_GET_SIZE(callkw)) {
        PyErr_SetString(PyExc_TypeError, "EagerCall(args, kwargs) takes no keywords");
        return NULL;
    }
    if (!PyArg_UnpackTuple(callargs, "EagerCall", 1, 2, &args, &kwargs))
        return NULL;
    if (!PyTuple_Check(args) || (kwargs != Py_None && !PyDict_Check(kwargs))) {
        PyErr_SetString(PyExc_TypeError, "EagerCall(args, kwargs): a tuple, a dict or None");
        return NULL;
    }
    PyObject *kw = kwargs == Py_None || PyDict_GET_SIZE(kwargs) == 0 ? NULL : kwargs;
    int r = plain_call(args, kw);
    if (r == FAILED)
        return NULL;
    if (r == DECLINE)
        return Py_NewRef(self->declined);
    PyObject *out = PyObject_Call(self->fn, args, kw);
    if (out == NULL)
        return NULL;
    if (bump_versions(self, args, kw) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

typedef struct {
    PyObject_HEAD
    PyObject *fn;      /* the host function */
    PyObject *switch_; /* the host function run with the tensors' device made current */
} DeviceCall;

static PyObject *DeviceCall_call(PyObject *op, PyObject *args, PyObject *kwargs)
{
    DeviceCall *self = (DeviceCall *)op;
    if (tensor_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_eagerop.setup() has not been called");
        return NULL;
    }
    PyObject *kw = kwargs == NULL || PyDict_GET_SIZE(kwargs) == 0 ? NULL : kwargs;
    int r = scan_call(args, kw, 0);
    if (r == FAILED)
        return NULL;
    return PyObject_Call(r == PLAIN ? self->fn : self->switch_, args, kw);
}

static int DeviceCall_init(DeviceCall *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"fn", "switch", NULL};
    PyObject *fn, *sw;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO", kwlist, &fn, &sw))
        return -1;
    Py_XSETREF(self->fn, Py_NewRef(fn));
    Py_XSETREF(self->switch_, Py_NewRef(sw));
    return 0;
}

static int DeviceCall_traverse(DeviceCall *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fn);
    Py_VISIT(self->switch_);
    return 0;
}

static int DeviceCall_clear(DeviceCall *self)
{
    Py_CLEAR(self->fn);
    Py_CLEAR(self->switch_);
    return 0;
}

static void DeviceCall_dealloc(DeviceCall *self)
{
    PyObject_GC_UnTrack(self);
    DeviceCall_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef DeviceCall_members[] = {
    {"fn", T_OBJECT, offsetof(DeviceCall, fn), READONLY, "the host function"},
    {NULL},
};

static PyTypeObject DeviceCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "threadtile.runtime._eagerop.DeviceCall",
    .tp_doc = "DeviceCall(fn, switch): dc(*args, **kwargs) runs fn(*args, **kwargs) where the "
              "first CUDA tensor's device is torch's current one (or there is none), else "
              "switch(*args, **kwargs).",
    .tp_basicsize = sizeof(DeviceCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)DeviceCall_init,
    .tp_dealloc = (destructor)DeviceCall_dealloc,
    .tp_traverse = (traverseproc)DeviceCall_traverse,
    .tp_clear = (inquiry)DeviceCall_clear,
    .tp_call = DeviceCall_call,
    .tp_members = DeviceCall_members,
};

static int EagerCall_init(EagerCall *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"fn", "mutated", "declined", NULL};
    PyObject *fn, *mutated, *declined;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!O", kwlist, &fn, &PyTuple_Type,
                                     &mutated, &declined))
        return -1;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(mutated); k++) {
        PyObject *m = PyTuple_GET_ITEM(mutated, k);
        if (!PyTuple_Check(m) || PyTuple_GET_SIZE(m) != 2 ||
                !PyLong_Check(PyTuple_GET_ITEM(m, 0))) {
            PyErr_SetString(PyExc_TypeError, "EagerCall: mutated is a tuple of (position, name)");
            return -1;
        }
    }
    Py_XSETREF(self->fn, Py_NewRef(fn));
    Py_XSETREF(self->mutated, Py_NewRef(mutated));
    Py_XSETREF(self->declined, Py_NewRef(declined));
    return 0;
}

static int EagerCall_traverse(EagerCall *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fn);
    Py_VISIT(self->mutated);
    Py_VISIT(self->declined);
    return 0;
}

static int EagerCall_clear(EagerCall *self)
{
    Py_CLEAR(self->fn);
    Py_CLEAR(self->mutated);
    Py_CLEAR(self->declined);
    return 0;
}

static void EagerCall_dealloc(EagerCall *self)
{
    PyObject_GC_UnTrack(self);
    EagerCall_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef EagerCall_members[] = {
    {"fn", T_OBJECT, offsetof(EagerCall, fn), READONLY, "the host function"},
    {NULL},
};

static PyTypeObject EagerCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "threadtile.runtime._eagerop.EagerCall",
    .tp_doc = "EagerCall(fn, mutated, declined): ec(args, kwargs) runs fn(*args, **kwargs) "
              "where nothing in torch needs to see the call, else returns declined.",
    .tp_basicsize = sizeof(EagerCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)EagerCall_init,
    .tp_dealloc = (destructor)EagerCall_dealloc,
    .tp_traverse = (traverseproc)EagerCall_traverse,
    .tp_clear = (inquiry)EagerCall_clear,
    .tp_call = EagerCall_call,
    .tp_members = EagerCall_members,
};

/* setup(tensor, dispatch_modes, function_modes, profiler, functorch_stack, grad_enabled,
 *       current_device, increment_version) */
static PyObject *setup(PyObject *mod, PyObject *args)
{
    PyObject *o[8];
    if (!PyArg_UnpackTuple(args, "setup", 8, 8, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                           &o[6], &o[7]))
        return NULL;
    if (!PyType_Check(o[0])) {
        PyErr_SetString(PyExc_TypeError, "setup: the first argument is torch.Tensor");
        return NULL;
    }
    PyObject **slots[8] = {&tensor_type, &dispatch_modes, &function_modes, &profiler_module,
                           &functorch_stack, &grad_enabled, &current_device,
                           &increment_version};
    for (int k = 0; k < 8; k++)
        Py_XSETREF(*slots[k], Py_NewRef(o[k]));
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(Tensor, dispatch_modes, function_modes, profiler, functorch_stack, grad_enabled, "
     "current_device, increment_version): torch's objects the calls use."},
    {NULL},
};

static struct PyModuleDef eagerop_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "threadtile.runtime._eagerop",
    .m_doc = "The plain eager call of a threadtile.torch operator, in C (optional).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__eagerop(void)
{
    struct { PyObject **slot; const char *name; } names[] = {
        {&s_requires_grad, "requires_grad"}, {&s_is_cuda, "is_cuda"},
        {&s_get_device, "get_device"}, {&s_profiler_enabled, "_is_profiler_enabled"},
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (*names[k].slot == NULL && (*names[k].slot = PyUnicode_InternFromString(
                names[k].name)) == NULL)
            return NULL;
    }
    if (PyType_Ready(&EagerCallType) < 0 || PyType_Ready(&DeviceCallType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&eagerop_module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "EagerCall", (PyObject *)&EagerCallType) < 0 ||
            PyModule_AddObjectRef(m, "DeviceCall", (PyObject *)&DeviceCallType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
