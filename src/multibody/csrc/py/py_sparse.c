/* py_sparse.c — Sparse kernels of multibody.sparse: fill caller-given outputs, batches of (B or 1, n, n). */
#include "py/py_boundary.h"

/* What ltdl_kernel and ltl_kernel share: H (B, n, n) read, L (B, n, n) and info (B,) written (at
 * args[2] and args[i_info]), lam checked, and an n × n scratch block.  0 with the error set on
 * failure (nothing left to free); else free lam and A with factor_io_free. */
typedef struct {
    PyArrayObject *H, *L, *info;
    npy_intp B, n;
    int *lam;
    double *A;
} factor_io;

static void factor_io_free(factor_io *f)
{
    free(f->A), free(f->lam);
}

static int factor_io_get(PyObject *const *args, gate_hold *held, int i_info, factor_io *f)
{
    npy_intp dh[3] = {-1, -1, -1};
    f->H = gated_array(held, args[0], "H", NPY_DOUBLE, 3, dh, 0);
    if (!f->H)
        return 0;
    if (dh[1] != dh[2]) {
        PyErr_SetString(PyExc_ValueError, "H: expected (B, n, n)");
        return 0;
    }
    f->B = dh[0], f->n = dh[1];
    npy_intp dl[3] = {f->B, f->n, f->n}, di[1] = {f->B};
    f->L = gated_array(held, args[2], "L", NPY_DOUBLE, 3, dl, MB_GATE_WRITABLE);
    f->info = f->L ? gated_array(held, args[i_info], "info", NPY_INT64, 1, di, MB_GATE_WRITABLE) : NULL;
    if (!f->info)
        return 0;
    f->lam = lam_ints(held, args[1], f->n);
    if (!f->lam)
        return 0;
    f->A = malloc(sizeof(double) * (f->n > 0 ? f->n * f->n : 1));
    if (!f->A) {
        free(f->lam);
        PyErr_NoMemory();
        return 0;
    }
    return 1;
}

/* ltdl_kernel(H (B,n,n), lam, L (B,n,n), d (B,n), info (B,)) */
static PyObject *ltdl_kernel_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    factor_io f;
    if (!nargs_ok(nargs, 5, "ltdl_kernel") || !factor_io_get(args, held, 4, &f))
        return NULL;
    npy_intp dd[2] = {f.B, f.n};
    PyArrayObject *d = gated_array(held, args[3], "d", NPY_DOUBLE, 2, dd, MB_GATE_WRITABLE);
    if (!d) {
        factor_io_free(&f);
        return NULL;
    }
    const npy_intp n = f.n;
    for (npy_intp b = 0; b < f.B; b++)
        ((npy_int64 *)PyArray_DATA(f.info))[b] =
            mb_ltdl_factors((int)n, f.lam, (double *)PyArray_DATA(f.H) + b * n * n, f.A,
                            (double *)PyArray_DATA(f.L) + b * n * n, (double *)PyArray_DATA(d) + b * n);
    factor_io_free(&f);
    Py_RETURN_NONE;
}

/* ltl_kernel(H (B,n,n), lam, L (B,n,n), info (B,)) */
static PyObject *ltl_kernel_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    factor_io f;
    if (!nargs_ok(nargs, 4, "ltl_kernel") || !factor_io_get(args, held, 3, &f))
        return NULL;
    const npy_intp n = f.n;
    for (npy_intp b = 0; b < f.B; b++)
        ((npy_int64 *)PyArray_DATA(f.info))[b] =
            mb_ltl_factor((int)n, f.lam, (double *)PyArray_DATA(f.H) + b * n * n,
                          (double *)PyArray_DATA(f.L) + b * n * n);
    factor_io_free(&f);
    Py_RETURN_NONE;
}

/* mpy_kernel(op, M (BM,n,n), lam, x (Bx,n), y (B,n)); op: 0 H, 1 L, 2 Lᵀ, 3 L⁻¹, 4 L⁻ᵀ */
static PyObject *mpy_kernel_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    if (!nargs_ok(nargs, 5, "mpy_kernel"))
        return NULL;
    const long op = PyLong_AsLong(args[0]);
    if (op == -1 && PyErr_Occurred())
        return NULL;
    if (op < 0 || op > 4)
        return PyErr_Format(PyExc_ValueError, "op: expected 0..4, got %ld", op);
    npy_intp dy[2] = {-1, -1};
    PyArrayObject *y = gated_array(held, args[4], "y", NPY_DOUBLE, 2, dy, MB_GATE_WRITABLE);
    if (!y)
        return NULL;
    const npy_intp B = dy[0], n = dy[1];
    npy_intp dm[3] = {-1, n, n}, dx[2] = {-1, n};
    PyArrayObject *M = gated_array(held, args[1], "M", NPY_DOUBLE, 3, dm, 0);
    PyArrayObject *x = M ? gated_array(held, args[3], "x", NPY_DOUBLE, 2, dx, 0) : NULL;
    if (!x || !lead_ok(M, B, "M") || !lead_ok(x, B, "x"))
        return NULL;
    int *lam = lam_ints(held, args[2], n);
    if (!lam)
        return NULL;
    const npy_intp sm = dm[0] == 1 ? 0 : n * n, sx = dx[0] == 1 ? 0 : n;
    for (npy_intp b = 0; b < B; b++)
        mb_sparse_mpy((int)op, (int)n, lam, (double *)PyArray_DATA(M) + b * sm, (double *)PyArray_DATA(x) + b * sx,
                      (double *)PyArray_DATA(y) + b * n);
    free(lam);
    Py_RETURN_NONE;
}

/* solve_ltdl_kernel(L (BL,n,n), d (Bd,n), lam, rhs (Br,n), x (B,n)) */
static PyObject *solve_ltdl_kernel_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    if (!nargs_ok(nargs, 5, "solve_ltdl_kernel"))
        return NULL;
    npy_intp dx[2] = {-1, -1};
    PyArrayObject *x = gated_array(held, args[4], "x", NPY_DOUBLE, 2, dx, MB_GATE_WRITABLE);
    if (!x)
        return NULL;
    const npy_intp B = dx[0], n = dx[1];
    npy_intp dl[3] = {-1, n, n}, dd[2] = {-1, n}, dr[2] = {-1, n};
    PyArrayObject *L = gated_array(held, args[0], "L", NPY_DOUBLE, 3, dl, 0);
    PyArrayObject *d = L ? gated_array(held, args[1], "d", NPY_DOUBLE, 2, dd, 0) : NULL;
    PyArrayObject *r = d ? gated_array(held, args[3], "rhs", NPY_DOUBLE, 2, dr, 0) : NULL;
    if (!r || !lead_ok(L, B, "L") || !lead_ok(d, B, "d") || !lead_ok(r, B, "rhs"))
        return NULL;
    int *lam = lam_ints(held, args[2], n);
    if (!lam)
        return NULL;
    const npy_intp sl = dl[0] == 1 ? 0 : n * n, sd = dd[0] == 1 ? 0 : n, sr = dr[0] == 1 ? 0 : n;
    for (npy_intp b = 0; b < B; b++)
        mb_solve_ltdl((int)n, lam, (double *)PyArray_DATA(L) + b * sl, (double *)PyArray_DATA(d) + b * sd,
                      (double *)PyArray_DATA(r) + b * sr, (double *)PyArray_DATA(x) + b * n);
    free(lam);
    Py_RETURN_NONE;
}

/* The public entry points: each runs its _entry with a hold for the arrays the gate makes. */
GATED_ENTRY(py_ltdl_kernel, ltdl_kernel_entry)
GATED_ENTRY(py_ltl_kernel, ltl_kernel_entry)
GATED_ENTRY(py_mpy_kernel, mpy_kernel_entry)
GATED_ENTRY(py_solve_ltdl_kernel, solve_ltdl_kernel_entry)
