/* py_sparse.c — Sparse kernels of multibody.sparse: fill caller-given outputs, batches of (B or 1, n, n). */
#include "py_boundary.h"

/* ltdl_kernel(H (B,n,n), lam, L (B,n,n), d (B,n), info (B,)) */
PyObject *py_ltdl_kernel(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (!nargs_ok(nargs, 5, "ltdl_kernel"))
        return NULL;
    npy_intp dh[3] = {-1, -1, -1};
    PyArrayObject *H = strict_array(args[0], "H", NPY_DOUBLE, 3, dh, 0);
    if (!H || dh[1] != dh[2])
        return H ? PyErr_Format(PyExc_ValueError, "H: expected (B, n, n)") : NULL;
    const npy_intp B = dh[0], n = dh[1];
    npy_intp dl[3] = {B, n, n}, dd[2] = {B, n}, di[1] = {B};
    PyArrayObject *L = strict_array(args[2], "L", NPY_DOUBLE, 3, dl, 1), *d = L ? strict_array(args[3], "d", NPY_DOUBLE, 2, dd, 1) : NULL;
    PyArrayObject *info = d ? strict_array(args[4], "info", NPY_INT64, 1, di, 1) : NULL;
    if (!info)
        return NULL;
    int *lam = lam_ints(args[1], n);
    if (!lam)
        return NULL;
    double *A = malloc(sizeof(double) * (n > 0 ? n * n : 1));
    if (!A) {
        free(lam);
        return PyErr_NoMemory();
    }
    for (npy_intp b = 0; b < B; b++)
        ((npy_int64 *)PyArray_DATA(info))[b] =
            mb_ltdl_factors((int)n, lam, (double *)PyArray_DATA(H) + b * n * n, A,
                            (double *)PyArray_DATA(L) + b * n * n, (double *)PyArray_DATA(d) + b * n);
    free(A), free(lam);
    Py_RETURN_NONE;
}

/* ltl_kernel(H (B,n,n), lam, L (B,n,n), info (B,)) */
PyObject *py_ltl_kernel(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (!nargs_ok(nargs, 4, "ltl_kernel"))
        return NULL;
    npy_intp dh[3] = {-1, -1, -1};
    PyArrayObject *H = strict_array(args[0], "H", NPY_DOUBLE, 3, dh, 0);
    if (!H || dh[1] != dh[2])
        return H ? PyErr_Format(PyExc_ValueError, "H: expected (B, n, n)") : NULL;
    const npy_intp B = dh[0], n = dh[1];
    npy_intp dl[3] = {B, n, n}, di[1] = {B};
    PyArrayObject *L = strict_array(args[2], "L", NPY_DOUBLE, 3, dl, 1);
    PyArrayObject *info = L ? strict_array(args[3], "info", NPY_INT64, 1, di, 1) : NULL;
    if (!info)
        return NULL;
    int *lam = lam_ints(args[1], n);
    if (!lam)
        return NULL;
    double *A = malloc(sizeof(double) * (n > 0 ? n * n : 1));
    if (!A) {
        free(lam);
        return PyErr_NoMemory();
    }
    for (npy_intp b = 0; b < B; b++)
        ((npy_int64 *)PyArray_DATA(info))[b] =
            mb_ltl_factor((int)n, lam, (double *)PyArray_DATA(H) + b * n * n, A, (double *)PyArray_DATA(L) + b * n * n);
    free(A), free(lam);
    Py_RETURN_NONE;
}

/* mpy_kernel(op, M (BM,n,n), lam, x (Bx,n), y (B,n)); op: 0 H, 1 L, 2 Lᵀ, 3 L⁻¹, 4 L⁻ᵀ */
PyObject *py_mpy_kernel(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (!nargs_ok(nargs, 5, "mpy_kernel"))
        return NULL;
    const long op = PyLong_AsLong(args[0]);
    if (op == -1 && PyErr_Occurred())
        return NULL;
    if (op < 0 || op > 4)
        return PyErr_Format(PyExc_ValueError, "op: expected 0..4, got %ld", op);
    npy_intp dy[2] = {-1, -1};
    PyArrayObject *y = strict_array(args[4], "y", NPY_DOUBLE, 2, dy, 1);
    if (!y)
        return NULL;
    const npy_intp B = dy[0], n = dy[1];
    npy_intp dm[3] = {-1, n, n}, dx[2] = {-1, n};
    PyArrayObject *M = strict_array(args[1], "M", NPY_DOUBLE, 3, dm, 0);
    PyArrayObject *x = M ? strict_array(args[3], "x", NPY_DOUBLE, 2, dx, 0) : NULL;
    if (!x || !lead_ok(M, B, "M") || !lead_ok(x, B, "x"))
        return NULL;
    int *lam = lam_ints(args[2], n);
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
PyObject *py_solve_ltdl_kernel(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (!nargs_ok(nargs, 5, "solve_ltdl_kernel"))
        return NULL;
    npy_intp dx[2] = {-1, -1};
    PyArrayObject *x = strict_array(args[4], "x", NPY_DOUBLE, 2, dx, 1);
    if (!x)
        return NULL;
    const npy_intp B = dx[0], n = dx[1];
    npy_intp dl[3] = {-1, n, n}, dd[2] = {-1, n}, dr[2] = {-1, n};
    PyArrayObject *L = strict_array(args[0], "L", NPY_DOUBLE, 3, dl, 0);
    PyArrayObject *d = L ? strict_array(args[1], "d", NPY_DOUBLE, 2, dd, 0) : NULL;
    PyArrayObject *r = d ? strict_array(args[3], "rhs", NPY_DOUBLE, 2, dr, 0) : NULL;
    if (!r || !lead_ok(L, B, "L") || !lead_ok(d, B, "d") || !lead_ok(r, B, "rhs"))
        return NULL;
    int *lam = lam_ints(args[2], n);
    if (!lam)
        return NULL;
    const npy_intp sl = dl[0] == 1 ? 0 : n * n, sd = dd[0] == 1 ? 0 : n, sr = dr[0] == 1 ? 0 : n;
    for (npy_intp b = 0; b < B; b++)
        mb_solve_ltdl((int)n, lam, (double *)PyArray_DATA(L) + b * sl, (double *)PyArray_DATA(d) + b * sd,
                      (double *)PyArray_DATA(r) + b * sr, (double *)PyArray_DATA(x) + b * n);
    free(lam);
    Py_RETURN_NONE;
}
