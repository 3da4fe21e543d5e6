/* py_kkt.c — kkt_solve, fdgq_solve: the small dense solves of constrained dynamics (kkt.c). */
#include "py/py_boundary.h"

/* kkt_solve(H (n,n), d (n), J (m,n), rhs (m), h_tol, rank_tol) -> (status, qdd (n), lam (m))
 * status 0 solved, 1 H not positive definite, 2 J H⁻¹Jᵀ singular (qdd, lam then meaningless). */
static PyObject *kkt_solve_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    if (!nargs_ok(nargs, 6, "kkt_solve"))
        return NULL;
    double h_tol, rank_tol;
    if (!get_double(args[4], "h_tol", 0.0, 1, &h_tol) || !get_double(args[5], "rank_tol", 0.0, 1, &rank_tol))
        return NULL;
    PyArrayObject *H = gated_array(held, args[0], "H", NPY_DOUBLE, 2, (npy_intp[]){-1, -1}, 0);
    if (!H)
        return NULL;
    const npy_intp n = PyArray_DIM(H, 0);
    PyArrayObject *d = NULL, *J = NULL, *r = NULL, *qdd = NULL, *lam = NULL;
    if (PyArray_DIM(H, 1) != n || n < 1 || n > 100000) {
        PyErr_SetString(PyExc_ValueError, "H: expected a non-empty square matrix");
        goto fail;
    }
    d = gated_array(held, args[1], "d", NPY_DOUBLE, 1, (npy_intp[]){n, 0}, 0);
    J = d ? gated_array(held, args[2], "J", NPY_DOUBLE, 2, (npy_intp[]){-1, n}, 0) : NULL;
    if (!J)
        goto fail;
    const npy_intp m = PyArray_DIM(J, 0);
    r = gated_array(held, args[3], "rhs", NPY_DOUBLE, 1, (npy_intp[]){m, 0}, 0);
    if (!r)
        goto fail;
    npy_intp dn[1] = {n}, dm[1] = {m};
    qdd = (PyArrayObject *)PyArray_SimpleNew(1, dn, NPY_DOUBLE);
    lam = qdd ? (PyArrayObject *)PyArray_ZEROS(1, dm, NPY_DOUBLE, 0) : NULL;
    if (!lam)
        goto fail;
    const int st = mb_kkt_solve((int)n, (int)m, PyArray_DATA(H), PyArray_DATA(d), PyArray_DATA(J), PyArray_DATA(r),
                                h_tol, rank_tol, PyArray_DATA(qdd), PyArray_DATA(lam));
    if (st == MB_KKT_NO_MEMORY) {
        Py_DECREF(qdd), Py_DECREF(lam);
        return PyErr_NoMemory();
    }
    return Py_BuildValue("(iNN)", st, qdd, lam);
fail:
    Py_XDECREF(qdd), Py_XDECREF(lam);
    return NULL;
}

/* fdgq_solve(H (n,n), C (n), tau (n), G (n,ny), gs (n)) -> (qdd (n), tauc (n)), or None if Gᵀ H G
 * is not positive definite: FDgq's q̈ = G (GᵀHG)⁻¹ Gᵀ(τ − C − H gs) + gs and τc = H q̈ + C − τ. */
static PyObject *fdgq_solve_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    if (!nargs_ok(nargs, 5, "fdgq_solve"))
        return NULL;
    PyArrayObject *a[5] = {NULL};
    PyObject *res = NULL;
    a[0] = gated_array(held, args[0], "H", NPY_DOUBLE, 2, (npy_intp[]){-1, -1}, 0);
    if (!a[0])
        return NULL;
    const npy_intp n = PyArray_DIM(a[0], 0);
    if (PyArray_DIM(a[0], 1) != n || n < 1 || n > 100000) {
        PyErr_SetString(PyExc_ValueError, "H: expected a non-empty square matrix");
        goto done;
    }
    if (!(a[1] = gated_array(held, args[1], "C", NPY_DOUBLE, 1, (npy_intp[]){n, 0}, 0)) ||
        !(a[2] = gated_array(held, args[2], "tau", NPY_DOUBLE, 1, (npy_intp[]){n, 0}, 0)) ||
        !(a[3] = gated_array(held, args[3], "G", NPY_DOUBLE, 2, (npy_intp[]){n, -1}, 0)) ||
        !(a[4] = gated_array(held, args[4], "gs", NPY_DOUBLE, 1, (npy_intp[]){n, 0}, 0)))
        goto done;
    const npy_intp ny = PyArray_DIM(a[3], 1);
    if (ny < 1 || ny > n) {
        PyErr_SetString(PyExc_ValueError, "G: expected 1 <= ny <= n columns");
        goto done;
    }
    npy_intp dn[1] = {n};
    PyArrayObject *qdd = (PyArrayObject *)PyArray_SimpleNew(1, dn, NPY_DOUBLE);
    PyArrayObject *tauc = qdd ? (PyArrayObject *)PyArray_SimpleNew(1, dn, NPY_DOUBLE) : NULL;
    if (!tauc) {
        Py_XDECREF(qdd);
        goto done;
    }
    const int ok = mb_fdgq_solve((int)n, (int)ny, PyArray_DATA(a[0]), PyArray_DATA(a[1]), PyArray_DATA(a[2]),
                                 PyArray_DATA(a[3]), PyArray_DATA(a[4]), PyArray_DATA(qdd), PyArray_DATA(tauc));
    if (ok == 1)
        res = Py_BuildValue("(NN)", qdd, tauc);
    else {
        Py_DECREF(qdd), Py_DECREF(tauc);
        res = ok < 0 ? PyErr_NoMemory() : Py_NewRef(Py_None);
    }
done:
    return res;
}

/* The public entry points: each runs its _entry with a hold for the arrays the gate makes. */
GATED_ENTRY(py_kkt_solve, kkt_solve_entry)
GATED_ENTRY(py_fdgq_solve, fdgq_solve_entry)
