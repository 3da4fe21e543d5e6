/* multibody.codegen compiled module ${modname}: ${outputs} of
 * ${model}. run(n, in0, stride0, …, out0, …) evaluates n states. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdio.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include "common/gate.h"
#include <stddef.h>
#include <string.h>

/* Lanes: the batch is CG_W states side by side, every value of the kernel one cg_vd (GCC's and
 * Clang's vector extension; one state, plain double, for other compilers). The states of a batch,
 * not the expressions, are what runs in parallel: each operation of the straight-line code is one
 * SIMD instruction for CG_W states. */
#if defined(__GNUC__)
#define CG_NOINLINE __attribute__((noinline))
#define CG_HIDDEN __attribute__((visibility("hidden")))
#else
#define CG_NOINLINE
#define CG_HIDDEN
#endif
/* This file is compiled twice: as the module (the kernel CG_W states wide, for run()'s batches) and,
 * with -DCG_ONE_STATE_PART, as the kernel alone one state wide (cg_eval_one, for one()). One state
 * on a block of CG_W lanes cost ~1.4x a one-wide kernel (StarlETH's M, b, g: 6.6 against 4.7 us a
 * call). The same expressions and lane sin/cos in both; they agree to rounding, not always to the bit,
 * since the compiler may fuse a*b + c into one FMA differently at the two widths (forbidding that,
 * -ffp-contract=off, cost the batch ~6%). */
#if defined(CG_ONE_STATE_PART) && !defined(CG_LANES)
#define CG_LANES 1
#endif
#if defined(__GNUC__) && !defined(CG_SCALAR)
#if defined(CG_LANES)
#define CG_W CG_LANES   /* -DCG_LANES=8: a block of that many states (a power of two) */
#elif defined(__AVX__)
#define CG_W 4          /* one 256-bit register */
#else
#define CG_W 2          /* SSE2, NEON: 128 bits (wider vectors would only be split, and change the ABI) */
#endif
typedef double cg_vd __attribute__((vector_size(CG_W * sizeof(double))));
typedef unsigned long long cg_vu __attribute__((vector_size(CG_W * sizeof(unsigned long long))));

static inline cg_vd cg_splat(double x)
{
    cg_vd v;
    int l;
    for (l = 0; l < CG_W; ++l)
        v[l] = x;
    return v;
}

static inline cg_vd cg_gather(const double *const *p, Py_ssize_t k)
{
    cg_vd v;
    int l;
    for (l = 0; l < CG_W; ++l)
        v[l] = p[l][k];
    return v;
}

static inline void cg_scatter(double *const *p, Py_ssize_t k, cg_vd v)
{
    int l;
    for (l = 0; l < CG_W; ++l)
        p[l][k] = v[l];
}

/* sin and cos on the lanes: x = n pi/2 + r with |r| <= pi/4 (Cody and Waite's reduction, pi/2 in
 * three parts of 33, 33 and 53 bits, so n * part is exact for |n| < 2^20), then the Taylor series
 * of sin r to r^17 and of cos r to r^16 (the first term left out is below 1e-17 on |r| <= pi/4),
 * and n mod 4 picks which and its sign. n comes from adding 1.5 * 2^52: the sum's low mantissa
 * bits are n's, so no double -> integer conversion is needed (AVX2 has none for 64 bits). Lanes
 * beyond |x| = 1e5 (never a joint angle; there the reduction would lose digits) use the library.
 * Exact to about one unit in the last place: the library's result to ~1e-16. */
#define CG_TRIG_REDUCE_MAX 1e5

#if defined(__FAST_MATH__)
/* -ffast-math may fold (y + shifter) - shifter to y: the library on every lane instead */
static inline void cg_vsincos(cg_vd x, cg_vd *s_out, cg_vd *c_out)
{
    int l;
    for (l = 0; l < CG_W; ++l) {
        (*s_out)[l] = sin(x[l]);
        (*c_out)[l] = cos(x[l]);
    }
}
#else
static inline void cg_vsincos(cg_vd x, cg_vd *s_out, cg_vd *c_out)
{
    const double shifter = 6755399441055744.0;   /* 1.5 * 2^52 */
    cg_vd t = x * 0.6366197723675814 + shifter;     /* 2/pi */
    cg_vd n = t - shifter;
    cg_vd r = x - n * 1.5707963267341256;
    r = r - n * 6.077100506303966e-11;
    r = r - n * 2.0222662487959506e-21;
    cg_vd r2 = r * r;
    cg_vd ps = r + r * r2 * (-0.16666666666666666 + r2 * (0.008333333333333333 + r2 * (-0.0001984126984126984
               + r2 * (2.7557319223985893e-06 + r2 * (-2.505210838544172e-08 + r2 * (1.6059043836821613e-10
               + r2 * (-7.647163731819816e-13 + r2 * 2.8114572543455206e-15)))))));
    cg_vd pc = 1.0 - 0.5 * r2 + r2 * r2 * (0.041666666666666664 + r2 * (-0.001388888888888889
               + r2 * (2.48015873015873e-05 + r2 * (-2.755731922398589e-07 + r2 * (2.08767569878681e-09
               + r2 * (-1.1470745597729725e-11 + r2 * 4.779477332387385e-14))))));
    cg_vu q = (cg_vu)t;
    cg_vu odd = -(q & 1u);                           /* all ones where n is odd: sin and cos swap */
    cg_vu sb = (cg_vu)ps, cb = (cg_vu)pc;
    cg_vu sv = (sb & ~odd) | (cb & odd), cv = (cb & ~odd) | (sb & odd);
    sv ^= (q & 2u) << 62;                             /* sin negative for n mod 4 in {2, 3} */
    cv ^= ((q + 1u) & 2u) << 62;                      /* cos negative for n mod 4 in {1, 2} */
    cg_vd s = (cg_vd)sv, c = (cg_vd)cv;
    int l;
    for (l = 0; l < CG_W; ++l) {
        if (!(fabs(x[l]) <= CG_TRIG_REDUCE_MAX)) {
            s[l] = sin(x[l]);
            c[l] = cos(x[l]);
        }
    }
    *s_out = s;
    *c_out = c;
}
#endif

static inline cg_vd cg_vsin(cg_vd x)
{
    cg_vd s, c;
    cg_vsincos(x, &s, &c);
    return s;
}

static inline cg_vd cg_vcos(cg_vd x)
{
    cg_vd s, c;
    cg_vsincos(x, &s, &c);
    return c;
}

/* the other functions lane by lane (sqrt becomes one instruction: -fno-math-errno) */
#define CG_LANEWISE1(name, f) \
    static inline cg_vd name(cg_vd x) { int l; for (l = 0; l < CG_W; ++l) x[l] = f(x[l]); return x; }
#define CG_LANEWISE2(name, f) \
    static inline cg_vd name(cg_vd x, cg_vd y) { int l; for (l = 0; l < CG_W; ++l) x[l] = f(x[l], y[l]); return x; }
CG_LANEWISE1(cg_vsqrt, sqrt)
CG_LANEWISE1(cg_vtan, tan)
CG_LANEWISE1(cg_vasin, asin)
CG_LANEWISE1(cg_vacos, acos)
CG_LANEWISE1(cg_vatan, atan)
CG_LANEWISE1(cg_vsinh, sinh)
CG_LANEWISE1(cg_vcosh, cosh)
CG_LANEWISE1(cg_vtanh, tanh)
CG_LANEWISE1(cg_vexp, exp)
CG_LANEWISE1(cg_vlog, log)
CG_LANEWISE1(cg_vfabs, fabs)
CG_LANEWISE2(cg_vatan2, atan2)
CG_LANEWISE2(cg_vpow, pow)
#else
#define CG_W 1
typedef double cg_vd;
#define cg_splat(x) (x)
#define cg_gather(p, k) ((p)[0][k])
#define cg_scatter(p, k, v) ((p)[0][k] = (v))
#define cg_vsin sin
#define cg_vcos cos
static inline void cg_vsincos(double x, double *s, double *c)
{
    *s = sin(x);
    *c = cos(x);
}
#define cg_vsqrt sqrt
#define cg_vtan tan
#define cg_vasin asin
#define cg_vacos acos
#define cg_vatan atan
#define cg_vsinh sinh
#define cg_vcosh cosh
#define cg_vtanh tanh
#define cg_vexp exp
#define cg_vlog log
#define cg_vfabs fabs
#define cg_vatan2 atan2
#define cg_vpow pow
#endif

static inline void cg_zero(double *const *p, Py_ssize_t size)
{
    int l;
    for (l = 0; l < CG_W; ++l)
        memset(p[l], 0, (size_t)size * sizeof(double));
}

${kernel}
#if defined(CG_ONE_STATE_PART)
CG_HIDDEN void cg_eval_one(const double *const *cg_p, double *const *cg_o);
void cg_eval_one(const double *const *cg_p, double *const *cg_o)
{
    cg_eval_lanes(cg_p, cg_o);
}
#else
CG_HIDDEN void cg_eval_one(const double *const *cg_p, double *const *cg_o);  /* the other part's */
#define CG_NIN ${nin}
#define CG_NOUT ${nout}
static const char *cg_in_names[CG_NIN + 1] = {${in_names}};
static const Py_ssize_t cg_in_sizes[CG_NIN + 1] = {${in_sizes}};
static const char *cg_out_names[CG_NOUT + 1] = {${out_names}};
static const Py_ssize_t cg_out_sizes[CG_NOUT + 1] = {${out_sizes}};
static const int cg_out_ndim[CG_NOUT + 1] = {${out_ndim}};
static const npy_intp cg_out_rows[CG_NOUT + 1] = {${out_rows}};
static const npy_intp cg_out_cols[CG_NOUT + 1] = {${out_cols}};

/* Every array passes the C core's one gate (multibody/csrc/common/gate.h; csrc/ is on the include path): the same
 * rules as the core's entry points (None, complex, object and masked arrays refused; byte order,
 * alignment and strides converted; outputs used in place, never copied). */
static PyObject *cg_overflow;  /* multibody.core.ResultOverflowError, or ValueError */

static void cg_overflow_error(Py_ssize_t j)
{
    PyErr_Format(cg_overflow, "%s: the result overflowed (inf or NaN) from finite inputs; the inputs are "
                 "too large", cg_out_names[j]);
}

static int cg_outputs_finite(double *const *cg_out, Py_ssize_t n)
{
    Py_ssize_t j;
    for (j = 0; j < CG_NOUT; ++j) {
        if (!mb_gate_finite(cg_out[j], n * cg_out_sizes[j])) {
            cg_overflow_error(j);
            return 0;
        }
    }
    return 1;
}

/* a * b + c, or -1 when it does not fit a Py_ssize_t: run(2**62, ...) and a huge stride computed
 * wrapped sizes before, and read or wrote memory outside the arrays */
static Py_ssize_t cg_extent(Py_ssize_t a, Py_ssize_t b, Py_ssize_t c)
{
    if (a < 0 || b < 0 || c < 0 || (b != 0 && a > (PY_SSIZE_T_MAX - c) / b))
        return -1;
    return a * b + c;
}

static PyObject *cg_run(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyArrayObject *held[CG_NIN + CG_NOUT + 1];
    const double *cg_in[CG_NIN + 1];
    double *cg_out[CG_NOUT + 1];
    Py_ssize_t cg_stride[CG_NIN + 1];
    Py_ssize_t n, k, i, got = 0, need, cg_bad = 0;
    PyObject *result = NULL;
    (void)self;
    if (nargs != 1 + 2 * CG_NIN + CG_NOUT) {
        PyErr_Format(PyExc_TypeError, "run: expected %d arguments, got %zd", 1 + 2 * CG_NIN + CG_NOUT, nargs);
        return NULL;
    }
    n = PyLong_AsSsize_t(args[0]);
    if (n < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "run: number of states must be >= 0");
        return NULL;
    }
    for (i = 0; i < CG_NIN + CG_NOUT; ++i) {
        int out = i >= CG_NIN;
        Py_ssize_t j = out ? i - CG_NIN : i;
        const char *name = out ? cg_out_names[j] : cg_in_names[j];
        PyObject *obj = out ? args[1 + 2 * CG_NIN + j] : args[1 + 2 * j];
        PyArrayObject *a = mb_gate(obj, name, NPY_DOUBLE, out ? MB_GATE_WRITABLE : 0);
        if (a == NULL)
            goto done;
        held[got++] = a;
        if (out) {
            need = cg_extent(n, cg_out_sizes[j], 0);
            cg_out[j] = (double *)PyArray_DATA(a);
        } else {
            cg_stride[j] = PyLong_AsSsize_t(args[2 + 2 * j]);
            if (cg_stride[j] < 0) {
                if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: negative stride", name);
                goto done;
            }
            need = n > 0 ? cg_extent(n - 1, cg_stride[j], cg_in_sizes[j]) : 0;
            cg_in[j] = (const double *)PyArray_DATA(a);
        }
        if (need < 0) {
            PyErr_Format(PyExc_ValueError, "%s: %zd states (stride %zd) are more values than an array can hold",
                         name, n, out ? cg_out_sizes[j] : cg_stride[j]);
            goto done;
        }
        if (PyArray_SIZE(a) < need) {
            PyErr_Format(PyExc_ValueError, "%s: expected at least %zd values, got %zd", name, need,
                         (Py_ssize_t)PyArray_SIZE(a));
            goto done;
        }
        if (!out) {
            for (k = 0; k < need; ++k) {
                if (!isfinite(cg_in[j][k])) {
                    PyErr_Format(PyExc_ValueError, "%s: contains NaN or infinite values (entry %zd)", name, k);
                    goto done;
                }
            }
        }
    }
    /* Chunks without the GIL, Python's signals looked at between them: Ctrl-C stops a long batch. */
    for (k = 0; k < n && !cg_bad;) {
        const Py_ssize_t chunk_end = n - k > 65536 ? k + 65536 : n;
        Py_BEGIN_ALLOW_THREADS
        for (; k < chunk_end && !cg_bad; k += CG_W) {
            /* CG_W states per kernel call; spare lanes of the last block repeat the last state
             * (its outputs written twice with equal values) */
            const double *cg_p[CG_NIN * CG_W + 1];
            double *cg_o[CG_NOUT * CG_W + 1];
            Py_ssize_t l, s;
            for (l = 0; l < CG_W; ++l) {
                s = k + l < n ? k + l : n - 1;
                for (i = 0; i < CG_NIN; ++i)
                    cg_p[i * CG_W + l] = cg_in[i] + s * cg_stride[i];
                for (i = 0; i < CG_NOUT; ++i)
                    cg_o[i * CG_W + l] = cg_out[i] + s * cg_out_sizes[i];
            }
            cg_eval_lanes(cg_p, cg_o);
            /* the block's results checked while they are in the cache (a pass over the whole
             * output afterwards read it back from memory: a tenth of a batch's time) */
            for (i = 0; i < CG_NOUT && !cg_bad; ++i)
                for (l = 0; l < CG_W; ++l)
                    if (!mb_gate_finite(cg_o[i * CG_W + l], cg_out_sizes[i])) {
                        cg_bad = i + 1;
                        break;
                    }
        }
        Py_END_ALLOW_THREADS
        if (k < n && !cg_bad && PyErr_CheckSignals() < 0)
            goto done;
    }
    if (cg_bad)
        cg_overflow_error(cg_bad - 1);
    else
        result = Py_NewRef(Py_None);
done:
    for (i = 0; i < got; ++i) Py_DECREF(held[i]);
    return result;
}

/* one(in0, in1, ...): one state; returns a dict of new arrays, or NotImplemented when an input is
 * None (a default) or not of exactly its size (the caller then fills defaults, broadcasts and uses run). */
/* The inputs as text, "q (2), dq (2), ..." for one()'s TypeError. */
static void cg_inputs_text(char *buf, size_t size)
{
    size_t used = 0;
    Py_ssize_t i;
    buf[0] = '\0';
    for (i = 0; i < CG_NIN && used < size; ++i) {
        int w = snprintf(buf + used, size - used, "%s%s (%zd)", i ? ", " : "", cg_in_names[i], cg_in_sizes[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* one state. strict (the module's one()): a call that does not give every input as a 1-D array of
 * its size is a TypeError naming the inputs; otherwise (_one, the library's fast path) it returns
 * NotImplemented and the caller fills defaults, broadcasts and uses run. */
static PyObject *cg_one_state(PyObject *const *args, Py_ssize_t nargs, int strict)
{
    PyArrayObject *held[CG_NIN + 1];
    const double *cg_in[CG_NIN + 1];
    double *cg_out[CG_NOUT + 1];
    PyObject *outs[CG_NOUT + 1];
    PyObject *dict = NULL;
    Py_ssize_t i, k, j, got = 0;
    char inputs[1024];
    if (nargs != CG_NIN) {
        if (!strict)
            Py_RETURN_NOTIMPLEMENTED;
        cg_inputs_text(inputs, sizeof inputs);
        PyErr_Format(PyExc_TypeError, "one: expected %d inputs: %s; got %zd arguments", CG_NIN, inputs, nargs);
        return NULL;
    }
    for (i = 0; i < CG_NIN; ++i) {
        if (args[i] == Py_None) {
            if (strict)
                PyErr_Format(PyExc_TypeError, "one: input %s: expected %zd numbers, got None", cg_in_names[i],
                             cg_in_sizes[i]);
            else
                dict = Py_NewRef(Py_NotImplemented);
            goto done;
        }
        PyArrayObject *a = mb_gate(args[i], cg_in_names[i], NPY_DOUBLE, 0);
        if (a == NULL)
            goto done;
        held[got++] = a;
        if (PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != cg_in_sizes[i]) {
            if (strict)
                PyErr_Format(PyExc_TypeError, "one: input %s: expected a 1-D array of %zd numbers, got %d-D with "
                             "%zd (run() takes many states)", cg_in_names[i], cg_in_sizes[i], PyArray_NDIM(a),
                             (Py_ssize_t)PyArray_SIZE(a));
            else
                dict = Py_NewRef(Py_NotImplemented);
            goto done;
        }
        cg_in[i] = (const double *)PyArray_DATA(a);
        for (k = 0; k < cg_in_sizes[i]; ++k) {
            if (!isfinite(cg_in[i][k])) {
                PyErr_Format(PyExc_ValueError, "%s: contains NaN or infinite values (entry %zd)", cg_in_names[i], k);
                goto done;
            }
        }
    }
    for (j = 0; j < CG_NOUT; ++j) {
        npy_intp dims[2] = {cg_out_rows[j], cg_out_cols[j]};
        outs[j] = PyArray_SimpleNew(cg_out_ndim[j], dims, NPY_DOUBLE);
        if (outs[j] == NULL) {
            for (k = 0; k < j; ++k) Py_DECREF(outs[k]);
            goto done;
        }
        cg_out[j] = (double *)PyArray_DATA((PyArrayObject *)outs[j]);
    }
    cg_eval_one(cg_in, cg_out);
    if (cg_outputs_finite(cg_out, 1))
        dict = PyDict_New();
    for (j = 0; j < CG_NOUT; ++j) {
        if (dict != NULL && PyDict_SetItemString(dict, cg_out_names[j], outs[j]) < 0) {
            Py_DECREF(dict);
            dict = NULL;
        }
        Py_DECREF(outs[j]);
    }
done:
    for (i = 0; i < got; ++i) Py_DECREF(held[i]);
    return dict;
}

static PyObject *cg_one(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return cg_one_state(args, nargs, 1);
}

static PyObject *cg_one_or_not(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return cg_one_state(args, nargs, 0);
}

/* The library's call f(q, dq, ...) without a Python frame: CompiledFunction's __call__ is this object
 * (its class is made per module), a method descriptor, so Python passes the function object first.
 * Inputs left out at the end take the function's defaults (its _tails[k]: the defaults of inputs k
 * on, or None); a call one() cannot take (keywords, batches, other shapes, a missing input without a
 * default) goes to the library's general path, the function's _general(*args, **kwargs). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
} cg_caller_object;

static PyObject *cg_caller_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    static PyObject *general_name, *tails_name;
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    (void)callable;
    if (general_name == NULL && !(general_name = PyUnicode_InternFromString("_general")))
        return NULL;
    if (tails_name == NULL && !(tails_name = PyUnicode_InternFromString("_tails")))
        return NULL;
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "a compiled function's __call__ takes the function first");
        return NULL;
    }
    if ((kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) && nargs - 1 <= CG_NIN) {
        PyObject *full[CG_NIN + 1];
        PyObject *all = NULL, *out;
        const Py_ssize_t given = nargs - 1;
        Py_ssize_t i;
        for (i = 0; i < given; ++i)
            full[i] = args[1 + i];
        if (given < CG_NIN) {
            PyObject *tails;
            all = PyObject_GetAttr(args[0], tails_name);   /* held while full[] points into it */
            if (all == NULL)
                return NULL;
            tails = PyTuple_Check(all) && PyTuple_GET_SIZE(all) > given ? PyTuple_GET_ITEM(all, given) : NULL;
            if (tails == NULL || !PyTuple_Check(tails) || PyTuple_GET_SIZE(tails) != CG_NIN - given) {
                Py_DECREF(all);
                goto general;
            }
            for (i = given; i < CG_NIN; ++i)
                full[i] = PyTuple_GET_ITEM(tails, i - given);
        }
        out = cg_one_state(full, CG_NIN, 0);
        Py_XDECREF(all);
        if (out != Py_NotImplemented)
            return out;                                  /* a result, or NULL with the error set */
        Py_DECREF(out);
    }
general:
    return PyObject_VectorcallMethod(general_name, (PyObject *const *)args, nargsf, kwnames);
}

static PyObject *cg_caller_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static PyObject *cg_caller_name(PyObject *self, void *qualified)
{
    (void)self;   /* (a bound method's repr and help() read these) */
    return PyUnicode_FromString(qualified ? "CompiledFunction.__call__" : "__call__");
}

static PyGetSetDef cg_caller_names[] = {
    {"__name__", cg_caller_name, NULL, NULL, NULL},
    {"__qualname__", cg_caller_name, NULL, NULL, (void *)1},
    {NULL, NULL, NULL, NULL, NULL}
};

static PyTypeObject cg_caller_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "${modname}.caller",
    .tp_basicsize = sizeof(cg_caller_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(cg_caller_object, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = cg_caller_get,
    .tp_getset = cg_caller_names,
    .tp_doc = "f(in0, in1, ...) for the library's CompiledFunction: one state in C, the rest its general path",
};

static PyMethodDef cg_methods[] = {
    {"run", (PyCFunction)(void (*)(void))cg_run, METH_FASTCALL, "run(n, in0, stride0, ..., out0, ...)"},
    {"one", (PyCFunction)(void (*)(void))cg_one, METH_FASTCALL, "one(in0, in1, ...) -> dict of outputs"},
    {"_one", (PyCFunction)(void (*)(void))cg_one_or_not, METH_FASTCALL,
     "_one(in0, in1, ...): one(), or NotImplemented when an input is None or not of its size"},
    {NULL, NULL, 0, NULL}
};
static struct PyModuleDef cg_module = {PyModuleDef_HEAD_INIT, "${modname}", NULL, -1, cg_methods, NULL, NULL, NULL,
                                        NULL};
PyMODINIT_FUNC PyInit_${modname}(void)
{
    PyObject *core;
    import_array();
    core = PyImport_ImportModule("multibody.core._core");
    cg_overflow = core ? PyObject_GetAttrString(core, "ResultOverflowError") : NULL;
    Py_XDECREF(core);
    if (cg_overflow == NULL) {
        PyErr_Clear();
        cg_overflow = Py_NewRef(PyExc_ValueError);
    }
    {
        PyObject *mod, *caller;
        if (PyType_Ready(&cg_caller_type) < 0)
            return NULL;
        mod = PyModule_Create(&cg_module);
        if (mod == NULL)
            return NULL;
        caller = (PyObject *)PyObject_New(cg_caller_object, &cg_caller_type);
        if (caller == NULL) {
            Py_DECREF(mod);
            return NULL;
        }
        ((cg_caller_object *)caller)->vectorcall = cg_caller_call;
        if (PyModule_AddObject(mod, "_caller", caller) < 0) {
            Py_DECREF(caller);
            Py_DECREF(mod);
            return NULL;
        }
        return mod;
    }
}
#endif
