/* py_fastcall.c — fast_function: the public single-call entry (mb.rnea, mb.crba, mb.aba) as a vectorcall object. */
#include "py/py_boundary.h"

/* ---- fast_function: the public single-call entry (mb.rnea, mb.crba, mb.aba) ----------------
 *
 * A Python `def` wrapper costs ~100 ns per call — a sixth of a UR5 RNEA.  fast_function(kernel,
 * fallback) is a callable object (vectorcall) that takes the public arguments (model, q, …),
 * reads model._c and calls the C kernel (one of the METH_FASTCALL functions above) directly; when
 * the kernel answers None (the arrays need reshaping), model is not a numeric Model, or the call
 * does not fit (wrong count, unknown keyword), it hands the original call to `fallback`, the
 * Python function that does everything (and raises the readable errors).  The parameters are
 * read from the fallback's code object; every optional one must default to None.  It carries a
 * __dict__, so functools.update_wrapper gives it the fallback's name, docstring and __wrapped__
 * (inspect.signature and doctest follow that). */
enum { FAST_MAX_ARGS = 8 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    _PyCFunctionFast kernel;
    PyObject *kernel_obj, *fallback, *names, *dict;
    Py_ssize_t n_params, n_required;
} FastFunction;

PyObject *attr_c;  /* interned "_c" */

/* model._c (new reference), or NULL.  Model keeps its C model as a plain instance attribute, so
 * the instance dict answers first: the generic lookup would walk the class's MRO for a
 * descriptor and then pass through Model.__getattr__'s hook (about 200 instructions a call).  A
 * value there that is not a CModel is left to the caller's type check, which then falls back. */
static PyObject *model_c(PyObject *model)
{
    if (Py_TYPE(model)->tp_dictoffset != 0) {
        PyObject *d = PyObject_GenericGetDict(model, NULL);
        PyObject *c = d ? PyDict_GetItemWithError(d, attr_c) : NULL;
        Py_XDECREF(d);
        if (c)
            return Py_NewRef(c);
        if (PyErr_Occurred())
            return NULL;
    }
    return PyObject_GetAttr(model, attr_c);
}

static PyObject *fast_function_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastFunction *f = (FastFunction *)callable;
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *a[FAST_MAX_ARGS];
    if (nargs < 1 || nargs > f->n_params)
        goto fallback;
    for (Py_ssize_t k = 1; k < f->n_params; k++)
        a[k] = k < nargs ? args[k] : NULL;
    for (Py_ssize_t w = 0; w < nkw; w++) {  /* keywords into their positions */
        PyObject *key = PyTuple_GET_ITEM(kwnames, w);
        Py_ssize_t k = 1;
        while (k < f->n_params && PyUnicode_Compare(key, PyTuple_GET_ITEM(f->names, k)) != 0)
            k++;
        if (k == f->n_params || a[k])
            goto fallback;
        a[k] = args[nargs + w];
    }
    for (Py_ssize_t k = 1; k < f->n_params; k++)
        if (!a[k]) {
            if (k < f->n_required)
                goto fallback;
            a[k] = Py_None;
        }
    PyObject *c = model_c(args[0]);
    if (!c) {
        PyErr_Clear();
        goto fallback;
    }
    if (!PyObject_TypeCheck(c, &CModelType)) {
        Py_DECREF(c);
        goto fallback;
    }
    a[0] = c;
    PyObject *out = f->kernel(f->kernel_obj, a, f->n_params);
    Py_DECREF(c);
    if (out != Py_None)
        return out;  /* the result, or NULL with the kernel's error set */
    Py_DECREF(out);
fallback:
    return PyObject_Vectorcall(f->fallback, args, nargsf, kwnames);
}

static PyObject *fast_function_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *kernel, *fallback;
    if (!PyArg_ParseTuple(args, "OO:fast_function", &kernel, &fallback))
        return NULL;
    if (!PyCFunction_Check(kernel) || PyCFunction_GET_FLAGS(kernel) != METH_FASTCALL) {
        PyErr_SetString(PyExc_TypeError, "fast_function: kernel must be a METH_FASTCALL function of this module");
        return NULL;
    }
    PyObject *code = PyObject_GetAttrString(fallback, "__code__");
    if (!code)
        return NULL;
    PyObject *defaults = PyObject_GetAttrString(fallback, "__defaults__");
    PyObject *varnames = PyObject_GetAttrString(code, "co_varnames");
    PyObject *argcount = PyObject_GetAttrString(code, "co_argcount");
    Py_DECREF(code);
    FastFunction *f = NULL;
    if (!defaults || !varnames || !argcount)
        goto done;
    const Py_ssize_t n = PyLong_AsSsize_t(argcount);
    const Py_ssize_t nd = defaults == Py_None ? 0 : PyTuple_Size(defaults);
    if (n < 1 || n > FAST_MAX_ARGS || nd < 0 || nd >= n) {
        PyErr_Format(PyExc_ValueError, "fast_function: fallback must take 1 to %d arguments", FAST_MAX_ARGS);
        goto done;
    }
    for (Py_ssize_t k = 0; k < nd; k++)
        if (PyTuple_GET_ITEM(defaults, k) != Py_None) {
            PyErr_SetString(PyExc_ValueError, "fast_function: every optional argument must default to None");
            goto done;
        }
    f = (FastFunction *)type->tp_alloc(type, 0);
    if (!f)
        goto done;
    f->vectorcall = fast_function_call;
    f->kernel = (_PyCFunctionFast)(void (*)(void))PyCFunction_GET_FUNCTION(kernel);
    f->kernel_obj = Py_XNewRef(PyCFunction_GET_SELF(kernel));
    f->fallback = Py_NewRef(fallback);
    f->names = PyTuple_GetSlice(varnames, 0, n);
    f->n_params = n;
    f->n_required = n - nd;
    if (!f->names)
        Py_CLEAR(f);
done:
    Py_XDECREF(defaults), Py_XDECREF(varnames), Py_XDECREF(argcount);
    return (PyObject *)f;
}

static int fast_function_traverse(FastFunction *f, visitproc visit, void *arg)
{
    Py_VISIT(f->kernel_obj);
    Py_VISIT(f->fallback);
    Py_VISIT(f->names);
    Py_VISIT(f->dict);
    return 0;
}

static int fast_function_clear(FastFunction *f)
{
    Py_CLEAR(f->kernel_obj);
    Py_CLEAR(f->fallback);
    Py_CLEAR(f->names);
    Py_CLEAR(f->dict);
    return 0;
}

static void fast_function_dealloc(FastFunction *f)
{
    PyObject_GC_UnTrack(f);
    fast_function_clear(f);
    Py_TYPE(f)->tp_free((PyObject *)f);
}

/* Pickled by reference, like a function: the name it was given (update_wrapper's __qualname__). */
static PyObject *fast_function_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyObject_GetAttrString(self, "__qualname__");
}

/* A method descriptor that never binds (as staticmethod): so inspect.isroutine and help() treat the
 * public entry as the function it stands for — its name, signature (update_wrapper's __wrapped__) and
 * docstring — and an entry stored on a class is not turned into a bound method. */
static PyObject *fast_function_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)obj, (void)type;
    return Py_NewRef(self);
}

/* <function multibody.dynamics.fdab.aba>: the function it stands for, not the C type. */
static PyObject *fast_function_repr(PyObject *self)
{
    PyObject *module = PyObject_GetAttrString(self, "__module__");
    PyObject *name = module ? PyObject_GetAttrString(self, "__qualname__") : NULL;
    PyObject *r = NULL;
    if (module && name && PyUnicode_Check(module) && PyUnicode_Check(name))
        r = PyUnicode_FromFormat("<function %U.%U>", module, name);
    else {
        PyErr_Clear();
        r = PyUnicode_FromFormat("<function at %p>", self);
    }
    Py_XDECREF(module);
    Py_XDECREF(name);
    return r;
}

static PyMethodDef fast_function_methods[] = {
    {"__reduce__", fast_function_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef fast_function_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject FastFunctionType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "multibody.core._core.fast_function",
    .tp_basicsize = sizeof(FastFunction),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "fast_function(kernel, fallback): call the C kernel on model._c, else the Python fallback.",
    .tp_new = fast_function_new,
    .tp_dealloc = (destructor)fast_function_dealloc,
    .tp_traverse = (traverseproc)fast_function_traverse,
    .tp_clear = (inquiry)fast_function_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(FastFunction, vectorcall),
    .tp_dictoffset = offsetof(FastFunction, dict),
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_methods = fast_function_methods,
    .tp_getset = fast_function_getset,
    .tp_descr_get = fast_function_get,
    .tp_repr = fast_function_repr,
};
