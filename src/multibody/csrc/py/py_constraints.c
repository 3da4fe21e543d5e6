/* py_constraints.c — constraint_rows, constrained_accelerations: the constraint tables of
 * dynamics/constraint_tables.py (constraints.c) at one state; constraint_tables_from reads the tables
 * (also for py_rollout.c's Constraints record). */
#include "py/py_boundary.h"

static int table_error(const char *what, int i)
{
    PyErr_Format(PyExc_ValueError, "constraint tables: %s (item or row %d)", what, i);
    return 0;
}

/* The tables' indices checked against the model, and their rows counted into cs->rows; 0 with the
 * error set. */
static int check_tables(const mb_model *m, mb_constraints *cs)
{
    if (cs->n_items < 1 || cs->n_items > 1000000 || cs->n_terms < 0 || cs->n_terms > 1000000 || cs->n_coef < 0 ||
        cs->n_coef > 1000000)
        return table_error("expected 1 to 10⁶ items, up to 10⁶ terms and coefficients", 0);
    if (!(cs->alpha >= 0.0 && cs->beta >= 0.0 && cs->rank_tol >= 0.0 && isfinite(cs->alpha + cs->beta + cs->rank_tol)))
        return table_error("gains (alpha, beta, rank_tol) must be finite and >= 0", 0);
    if (!mb_all_finite(cs->items, (Py_ssize_t)cs->n_items * MB_CON_WIDTH) || !mb_all_finite(cs->terms, 3L * cs->n_terms) ||
        !mb_all_finite(cs->coef, cs->n_coef))
        return table_error("items, terms and coef must be finite numbers", 0);
    for (int i = 0; i < cs->n_terms; i++) {
        const double *t = cs->terms + 3 * i;
        if (!(t[0] >= 0 && t[0] < m->nq && t[0] == (int)t[0] && t[1] >= 0 && t[1] < m->nv && t[1] == (int)t[1]))
            return table_error("a term's q and v indices must be integers within the model's nq, nv", i);
    }
    long rows = 0;
    for (int i = 0; i < cs->n_items; i++) {
        const double *it = cs->items + MB_CON_WIDTH * i;
        const int kind = (int)it[0];
        if (it[0] != kind)
            return table_error("unknown kind (expected 0 point, 1 axis, 2 linear)", i);
        if (kind == MB_CON_POINT || kind == MB_CON_AXIS) {
            for (int s = 1; s <= 2; s++)
                if (!(it[s] >= -1 && it[s] < m->nb && it[s] == (int)it[s]))
                    return table_error("a body index must be an integer in -1 … nb - 1", i);
            if (kind == MB_CON_AXIS) {
                rows += 1;
                continue;
            }
            if (!(it[3] >= 1 && it[3] <= 3 && it[3] == (int)it[3]))
                return table_error("a point item needs 1 to 3 axes", i);
            for (int a = 0; a < (int)it[3]; a++)
                if (!(it[12 + a] == 0 || it[12 + a] == 1 || it[12 + a] == 2))
                    return table_error("a point item's axes must be 0, 1 or 2", i);
            rows += (int)it[3];
        } else if (kind == MB_CON_LINEAR) {
            const double fa = it[1], na = it[2], fb = it[3], nbt = it[4], fc = it[5], nc = it[6];
            if (!(fa >= 0 && na >= 1 && fa + na <= cs->n_terms && fa == (int)fa && na == (int)na &&
                  nbt >= 0 && (nbt == 0 || (fb >= 0 && fb + nbt <= cs->n_terms)) && fb == (int)fb && nbt == (int)nbt &&
                  fc >= 0 && nc >= 1 && fc + nc <= cs->n_coef && fc == (int)fc && nc == (int)nc))
                return table_error("a linear item's terms and coefficients must lie within their tables", i);
            rows += 1;
        } else
            return table_error("unknown kind (expected 0 point, 1 axis, 2 linear)", i);
    }
    if (rows > 100000)
        return table_error("more than 10⁵ rows", 0);
    cs->rows = (int)rows;
    return 1;
}

/* items (n, MB_CON_WIDTH), terms (t, 3), coef (k,), gains (alpha, beta, rank_tol) into *cs, every index
 * checked against the model; 0 with the error set. */
int constraint_tables_from(PyObject *items, PyObject *terms, PyObject *coef, PyObject *gains, gate_hold *held,
                           const mb_model *m, mb_constraints *cs)
{
    npy_intp di[2] = {-1, MB_CON_WIDTH}, dt[2] = {-1, 3}, dc[1] = {-1}, dg[1] = {3};
    PyArrayObject *It = gated_array(held, items, "items", NPY_DOUBLE, 2, di, 0);
    PyArrayObject *T = It ? gated_array(held, terms, "terms", NPY_DOUBLE, 2, dt, 0) : NULL;
    PyArrayObject *C = T ? gated_array(held, coef, "coef", NPY_DOUBLE, 1, dc, 0) : NULL;
    PyArrayObject *G = C ? gated_array(held, gains, "gains", NPY_DOUBLE, 1, dg, 0) : NULL;
    if (!G)
        return 0;
    const double *g = PyArray_DATA(G);
    cs->n_items = (int)(di[0] < INT_MAX ? di[0] : INT_MAX), cs->n_terms = (int)(dt[0] < INT_MAX ? dt[0] : INT_MAX);
    cs->n_coef = (int)(dc[0] < INT_MAX ? dc[0] : INT_MAX);
    cs->items = PyArray_DATA(It), cs->terms = PyArray_DATA(T), cs->coef = PyArray_DATA(C);
    cs->alpha = g[0], cs->beta = g[1], cs->rank_tol = g[2];
    return check_tables(m, cs);
}

/* The same tables packed in one array (ConstraintSet.tables' packed form, one gate a call):
 * [n_items, n_terms, n_coef, alpha, beta, rank_tol, items…, terms…, coef…]; 0 with the error set. */
static int packed_tables_from(PyObject *table, gate_hold *held, const mb_model *m, mb_constraints *cs)
{
    npy_intp dt[1] = {-1};
    PyArrayObject *T = gated_array(held, table, "table", NPY_DOUBLE, 1, dt, 0);
    if (!T)
        return 0;
    const double *h = PyArray_DATA(T);
    if (dt[0] < 6 || !(h[0] >= 1 && h[0] <= 1e6 && h[1] >= 0 && h[1] <= 1e6 && h[2] >= 0 && h[2] <= 1e6) ||
        dt[0] != 6 + (npy_intp)h[0] * MB_CON_WIDTH + 3 * (npy_intp)h[1] + (npy_intp)h[2])
        return table_error("table: expected [n_items, n_terms, n_coef, alpha, beta, rank_tol, items, terms, coef]", 0);
    cs->n_items = (int)h[0], cs->n_terms = (int)h[1], cs->n_coef = (int)h[2];
    cs->alpha = h[3], cs->beta = h[4], cs->rank_tol = h[5];
    cs->items = h + 6, cs->terms = cs->items + MB_CON_WIDTH * cs->n_items, cs->coef = cs->terms + 3 * cs->n_terms;
    return check_tables(m, cs);
}

/* The state arguments q (nq), qd (nv)[, tau (nv)], f_ext (nb, 6) | None, finite; 0 with the error set. */
static int state_from(gate_hold *held, const mb_model *m, PyObject *const *args, int with_tau, const double **q,
                      const double **qd, const double **tau, const double **fext)
{
    npy_intp dq[1] = {m->nq}, dv[1] = {m->nv}, dt[1] = {m->nv}, df[2] = {m->nb, 6};
    PyArrayObject *Q = gated_array(held, args[0], "q", NPY_DOUBLE, 1, dq, 0);
    PyArrayObject *V = Q ? gated_array(held, args[1], "qd", NPY_DOUBLE, 1, dv, 0) : NULL;
    if (!V || !finite_array(Q, "q") || !finite_array(V, "qd"))
        return 0;
    *q = PyArray_DATA(Q), *qd = PyArray_DATA(V);
    if (with_tau) {
        PyArrayObject *T = gated_array(held, args[2], "tau", NPY_DOUBLE, 1, dt, 0);
        if (!T || !finite_array(T, "tau"))
            return 0;
        *tau = PyArray_DATA(T);
        *fext = NULL;
        if (args[3] != Py_None) {
            PyArrayObject *F = gated_array(held, args[3], "f_ext", NPY_DOUBLE, 2, df, 0);
            if (!F || !finite_array(F, "f_ext"))
                return 0;
            *fext = PyArray_DATA(F);
        }
    }
    const int st = mb_check_configuration(m, *q);
    if (st != MB_OK) {
        raise_status(st);
        return 0;
    }
    return 1;
}

/* constraint_rows(cmodel, table, q, qd) -> (c, cdot, J, bias) */
static PyObject *constraint_rows_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    CModel *cm = entry_model(args, nargs, 4, "constraint_rows");
    mb_constraints cs;
    const double *q, *qd, *tau, *fext;
    if (!cm || !packed_tables_from(args[1], held, &cm->m, &cs) || !state_from(held, &cm->m, args + 2, 0, &q, &qd, &tau, &fext))
        return NULL;
    const mb_model *m = &cm->m;
    npy_intp dr[1] = {cs.rows}, dJ[2] = {cs.rows, m->nv};
    PyArrayObject *c = (PyArrayObject *)PyArray_SimpleNew(1, dr, NPY_DOUBLE);
    PyArrayObject *cd = c ? (PyArrayObject *)PyArray_SimpleNew(1, dr, NPY_DOUBLE) : NULL;
    PyArrayObject *J = cd ? (PyArrayObject *)PyArray_SimpleNew(2, dJ, NPY_DOUBLE) : NULL;
    PyArrayObject *b = J ? (PyArrayObject *)PyArray_SimpleNew(1, dr, NPY_DOUBLE) : NULL;
    double *scratch = b ? malloc(sizeof(double) * (size_t)(mb_constraints_scratch(m, &cs) + 1)) : NULL;
    if (!scratch) {
        Py_XDECREF(c), Py_XDECREF(cd), Py_XDECREF(J), Py_XDECREF(b);
        return b ? PyErr_NoMemory() : NULL;
    }
    mb_constraint_rows(m, cm->single, &cs, scratch, q, qd, PyArray_DATA(J), PyArray_DATA(c), PyArray_DATA(cd),
                       PyArray_DATA(b));
    free(scratch);
    return Py_BuildValue("(NNNN)", c, cd, J, b);
}

/* constrained_accelerations(cmodel, table, q, qd, tau, f_ext) -> (status, qdd, lam):
 * TMT eq. (6); status kkt.c's (0 solved, 1 H not positive definite, 2 J H⁻¹Jᵀ singular: qdd, lam
 * meaningless, the caller takes the Python statement's diagnostics or minimum-norm solve). */
static PyObject *constrained_accelerations_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    CModel *cm = entry_model(args, nargs, 6, "constrained_accelerations");
    mb_constraints cs;
    const double *q, *qd, *tau, *fext;
    if (!cm || !packed_tables_from(args[1], held, &cm->m, &cs) || !state_from(held, &cm->m, args + 2, 1, &q, &qd, &tau, &fext))
        return NULL;
    const mb_model *m = &cm->m;
    npy_intp dn[1] = {m->nv}, dr[1] = {cs.rows};
    PyArrayObject *qdd = (PyArrayObject *)PyArray_SimpleNew(1, dn, NPY_DOUBLE);
    PyArrayObject *lam = qdd ? (PyArrayObject *)PyArray_ZEROS(1, dr, NPY_DOUBLE, 0) : NULL;
    double *scratch = lam ? malloc(sizeof(double) * (size_t)(mb_constraints_scratch(m, &cs) + 1)) : NULL;
    if (!scratch) {
        Py_XDECREF(qdd), Py_XDECREF(lam);
        return lam ? PyErr_NoMemory() : NULL;
    }
    const int st = mb_constrained_fd(m, cm->single, &cs, scratch, q, qd, tau, fext, PyArray_DATA(qdd),
                                     PyArray_DATA(lam));
    free(scratch);
    if (st == MB_KKT_NO_MEMORY) {
        Py_DECREF(qdd), Py_DECREF(lam);
        return PyErr_NoMemory();
    }
    return Py_BuildValue("(iNN)", st, qdd, lam);
}

GATED_ENTRY(py_constraint_rows, constraint_rows_entry)
GATED_ENTRY(py_constrained_accelerations, constrained_accelerations_entry)
