/* py_contact.c — ground_contact: the compliant contact law of one state (contact.c). */
#include "py/py_boundary.h"

/* ground_contact(cmodel, q (nq), qd (nv), z (ns), bodies (np,) int64, points (np, 3), nd, K, D, mu)
 *   -> (f_ext (nb, 6), zdot (ns,), F (np, 3), pos (np, 3), in_contact (np,) bool, sticking (np,) bool)
 * ns = (nd − 1)·np tangential deformations when mu > 0, else 0.  Single state, GIL held. */
/* The contact law's settings from args[0..5] = bodies (np,) int64, points (np, 3), nd, K, D, mu (the
 * arrays held in `held`); 0 with the error set if one is bad.  Also rollout's (py_rollout.c). */
int contact_spec_from(PyObject *const *args, gate_hold *held, const mb_model *m, mb_ground_contact_spec *spec)
{
    long nd;
    double K, D, mu;
    if (!get_long(args[2], "nd", 2, 3, &nd) || !get_double(args[3], "K", 0.0, 0, &K) ||
        !get_double(args[5], "mu", 0.0, 1, &mu) || !get_double(args[4], "D", 0.0, mu == 0.0, &D))
        return 0;
    npy_intp db[1] = {-1};
    PyArrayObject *bodies = gated_array(held, args[0], "bodies", NPY_INT64, 1, db, 0);
    if (!bodies)
        return 0;
    const npy_intp np_ = db[0];
    npy_intp dp[2] = {np_, 3};
    PyArrayObject *points = gated_array(held, args[1], "points", NPY_DOUBLE, 2, dp, 0);
    if (!points || !finite_array(points, "points"))
        return 0;
    const npy_int64 *bd = PyArray_DATA(bodies);
    for (npy_intp k = 0; k < np_; k++)
        if (bd[k] < 0 || bd[k] >= m->nb) {
            PyErr_Format(PyExc_ValueError, "bodies: point %zd is on body %lld; expected 0..%d", (Py_ssize_t)k,
                         (long long)bd[k], m->nb - 1);
            return 0;
        }
    if (np_ > INT_MAX / 3) {
        PyErr_SetString(PyExc_ValueError, "bodies: too many contact points");
        return 0;
    }
    *spec = (mb_ground_contact_spec){(int)np_, (int)nd, (const long long *)bd, PyArray_DATA(points), K, D, mu};
    return 1;
}

static PyObject *ground_contact_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    if (!nargs_ok(nargs, 10, "ground_contact"))
        return NULL;
    CModel *cm = get_model(args[0]);
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    mb_ground_contact_spec g;
    if (!contact_spec_from(args + 4, held, m, &g))
        return NULL;
    const npy_intp np_ = g.npt, nd = g.nd;
    const npy_intp ns = g.mu > 0.0 ? (nd - 1) * np_ : 0;
    PyArrayObject *q = gated_array(held, args[1], "q", NPY_DOUBLE, 1, (npy_intp[]){m->nq}, 0);
    PyArrayObject *qd = q ? gated_array(held, args[2], "qd", NPY_DOUBLE, 1, (npy_intp[]){m->nv}, 0) : NULL;
    PyArrayObject *z = qd ? gated_array(held, args[3], "z", NPY_DOUBLE, 1, (npy_intp[]){ns}, 0) : NULL;
    PyObject *out[6] = {NULL};
    int st = MB_OK;
    if (!z)
        goto done;
    st = mb_check_configuration(m, PyArray_DATA(q));
    if (st == MB_OK && !mb_all_finite(PyArray_DATA(qd), m->nv))
        st = MB_BAD_QD;
    if (st != MB_OK) {
        raise_status(st);
        goto done;
    }
    if (!mb_all_finite(PyArray_DATA(z), ns)) {
        PyErr_SetString(PyExc_ValueError, "z: contains NaN or inf");
        goto done;
    }
    npy_intp df[2] = {m->nb, 6}, dz[1] = {ns}, dF[2] = {np_, 3}, dc[1] = {np_};
    out[0] = PyArray_SimpleNew(2, df, NPY_DOUBLE), out[1] = PyArray_SimpleNew(1, dz, NPY_DOUBLE);
    out[2] = PyArray_SimpleNew(2, dF, NPY_DOUBLE), out[3] = PyArray_SimpleNew(2, dF, NPY_DOUBLE);
    out[4] = PyArray_SimpleNew(1, dc, NPY_BOOL), out[5] = PyArray_SimpleNew(1, dc, NPY_BOOL);
    for (int k = 0; k < 6; k++)
        if (!out[k])
            goto done;
    mb_ground_contact(m, cm->single, PyArray_DATA(q), PyArray_DATA(qd), PyArray_DATA(z), &g,
                      PyArray_DATA((PyArrayObject *)out[0]), PyArray_DATA((PyArrayObject *)out[1]),
                      PyArray_DATA((PyArrayObject *)out[2]), PyArray_DATA((PyArrayObject *)out[3]),
                      PyArray_DATA((PyArrayObject *)out[4]), PyArray_DATA((PyArrayObject *)out[5]));
    return Py_BuildValue("(NNNNNN)", out[0], out[1], out[2], out[3], out[4], out[5]);
done:
    for (int k = 0; k < 6; k++)
        Py_XDECREF(out[k]);
    return NULL;
}

/* The public entry points: each runs its _entry with a hold for the arrays the gate makes. */
GATED_ENTRY(py_ground_contact, ground_contact_entry)
