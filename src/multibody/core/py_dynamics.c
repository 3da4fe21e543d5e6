/* py_dynamics.c — Entry points of the dynamics algorithms: rnea, crba, hand_c, aba, fd_crb, fd_sparse, hybrid,
 * fdfb, idfb, energy.  Each takes the CModel and arrays in one of two layouts (see _core.c) and
 * returns None when the arrays are in neither. */
#include "py_boundary.h"

/* The tail of every entry point with one array result (…, t0[, t1]): make it, run fn over the
 * states bound in j, and turn a failing status into its error. */
PyObject *run_into_new_output(CModel *cm, state_fn fn, job *j, int batch, Py_ssize_t N, int nd, npy_intp t0,
                                     npy_intp t1)
{
    PyArrayObject *out = new_output(batch, N, nd, t0, t1);
    if (!out)
        return NULL;
    bind_output(j, 0, out, nd == 1 ? t0 : t0 * t1);
    const int st = execute(cm, fn, j, batch, N);
    if (st != MB_OK) {
        Py_DECREF(out);
        return raise_status(st);
    }
    return (PyObject *)out;
}

/* Shared body of the algorithms with one vector result: rnea, and aba, fd_crb, fd_sparse (forward). */
static PyObject *one_vector_result(PyObject *const *args, Py_ssize_t nargs, const char *name, state_fn fn,
                                   forward_fn forward)
{
    CModel *cm = entry_model(args, nargs, 5, name);
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    arg_spec specs[4] = {{args[1], 1, m->nq, 0}, {args[2], 1, m->nv, 0}, {args[3], 1, m->nv, 0},
                         {args[4], 2, m->nb, 6}};
    job j = {0};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 4, &j, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    j.use_fext = j.in[3] != NULL;
    j.forward = forward;
    if (batch && !j.use_fext && lanes_active) {  /* groups of states in vector lanes (run_chunk) */
        if (!forward)
            j.lanes = lanes_active, j.lanes_group = lanes_active->rnea_group, j.lanes_bad_x = MB_BAD_QDD;
        else if (forward == mb_aba && mb_lanes_supported(m))
            j.lanes = lanes_active, j.lanes_group = lanes_active->aba_group, j.lanes_bad_x = MB_BAD_TAU;
    }
    return run_into_new_output(cm, fn, &j, batch, N, 1, m->nv, 0);
}

PyObject *py_rnea(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return one_vector_result(args, nargs, "rnea", rnea_state, NULL);
}

PyObject *py_aba(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return one_vector_result(args, nargs, "aba", forward_state, mb_aba);
}

PyObject *py_fd_crb(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return one_vector_result(args, nargs, "fd_crb", forward_state, mb_fd_crb);
}

PyObject *py_fd_sparse(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return one_vector_result(args, nargs, "fd_sparse", forward_state, mb_fd_sparse);
}

PyObject *py_crba(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    CModel *cm = entry_model(args, nargs, 2, "crba");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    arg_spec specs[1] = {{args[1], 1, m->nq, 0}};
    job j = {0};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 1, &j, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    if (batch && lanes_active)  /* groups of states in vector lanes (run_chunk) */
        j.lanes = lanes_active, j.lanes_group = lanes_active->crba_group, j.lanes_bad_x = 0;
    return run_into_new_output(cm, crba_state, &j, batch, N, 2, m->nv, m->nv);
}

PyObject *py_hand_c(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    CModel *cm = entry_model(args, nargs, 4, "hand_c");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    arg_spec specs[3] = {{args[1], 1, m->nq, 0}, {args[2], 1, m->nv, 0}, {args[3], 2, m->nb, 6}};
    job j = {0};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 3, &j, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    j.use_fext = j.in[2] != NULL;
    PyArrayObject *H = new_output(batch, N, 2, m->nv, m->nv), *C = new_output(batch, N, 1, m->nv, 0);
    if (!H || !C) {
        Py_XDECREF(H), Py_XDECREF(C);
        return NULL;
    }
    bind_output(&j, 0, H, (Py_ssize_t)m->nv * m->nv);
    bind_output(&j, 1, C, m->nv);
    const int st = execute(cm, hand_c_state, &j, batch, N);
    if (st != MB_OK) {
        Py_DECREF(H), Py_DECREF(C);
        return raise_status(st);
    }
    return Py_BuildValue("(NN)", H, C);
}

/* hybrid(cmodel, fd (nb bytes), q, qd, qdd, tau, f_ext) -> (qdd, tau) */
PyObject *py_hybrid(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    CModel *cm = entry_model(args, nargs, 7, "hybrid");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    PyArrayObject *fd = (PyArrayObject *)args[1];
    if (!PyArray_Check(args[1]) || PyArray_TYPE(fd) != NPY_BOOL || PyArray_NDIM(fd) != 1 ||
        PyArray_DIM(fd, 0) != m->nb || !PyArray_IS_C_CONTIGUOUS(fd)) {
        PyErr_Format(PyExc_ValueError, "fd: expected %d booleans (one per joint)", m->nb);
        return NULL;
    }
    arg_spec specs[5] = {{args[2], 1, m->nq, 0}, {args[3], 1, m->nv, 0}, {args[4], 1, m->nv, 0},
                         {args[5], 1, m->nv, 0}, {args[6], 2, m->nb, 6}};
    job j = {0};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 5, &j, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    j.use_fext = j.in[4] != NULL;
    j.fd = PyArray_DATA(fd);
    PyArrayObject *qdd = new_output(batch, N, 1, m->nv, 0), *tau = new_output(batch, N, 1, m->nv, 0);
    if (!qdd || !tau) {
        Py_XDECREF(qdd), Py_XDECREF(tau);
        return NULL;
    }
    bind_output(&j, 0, qdd, m->nv);
    bind_output(&j, 1, tau, m->nv);
    const int st = execute(cm, hybrid_state, &j, batch, N);
    if (st != MB_OK) {
        Py_DECREF(qdd), Py_DECREF(tau);
        return raise_status(st);
    }
    return Py_BuildValue("(NN)", qdd, tau);
}

/* fdfb/idfb(cmodel, xfb, q, qd, tau-or-qdd, f_ext) -> (xd, qdd-or-tau); real joints only */
static PyObject *floating_entry(PyObject *const *args, Py_ssize_t nargs, const char *name, state_fn fn)
{
    CModel *cm = entry_model(args, nargs, 6, name);
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    if (m->nb < 6 || m->nq < 6 || m->nv < 6) {
        PyErr_SetString(PyExc_ValueError, "model: not a floatbase model");
        return NULL;
    }
    arg_spec specs[5] = {{args[1], 1, 13, 0}, {args[2], 1, m->nq - 6, 0}, {args[3], 1, m->nv - 6, 0},
                         {args[4], 1, m->nv - 6, 0}, {args[5], 2, m->nb, 6}};
    job j = {0};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 5, &j, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    j.use_fext = j.in[4] != NULL;
    PyArrayObject *xd = new_output(batch, N, 1, 13, 0), *out = new_output(batch, N, 1, m->nv - 6, 0);
    if (!xd || !out) {
        Py_XDECREF(xd), Py_XDECREF(out);
        return NULL;
    }
    bind_output(&j, 0, xd, 13);
    bind_output(&j, 1, out, m->nv - 6);
    const int st = execute(cm, fn, &j, batch, N);
    if (st != MB_OK) {
        Py_DECREF(xd), Py_DECREF(out);
        return raise_status(st);
    }
    return Py_BuildValue("(NN)", xd, out);
}

PyObject *py_fdfb(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return floating_entry(args, nargs, "fdfb", fdfb_state);
}

PyObject *py_idfb(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return floating_entry(args, nargs, "idfb", idfb_state);
}

/* body_states(cmodel, q, qd|None, qdd|None) -> (R0, p0, V|None, A|None) */
PyObject *py_body_states(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    CModel *cm = entry_model(args, nargs, 4, "body_states");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    PyObject *qdd_arg = args[2] == Py_None ? Py_None : args[3];
    arg_spec specs[3] = {{args[1], 1, m->nq, 0}, {args[2], 1, m->nv, 0}, {qdd_arg, 1, m->nv, 0}};
    job j = {0};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 3, &j, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    const npy_intp tR[3] = {m->nb, 3, 3}, tp[2] = {m->nb, 3}, tv[2] = {m->nb, 6};
    PyArrayObject *R0 = new_output_dims(batch, N, 3, tR), *p0 = new_output_dims(batch, N, 2, tp);
    PyArrayObject *V = j.in[1] ? new_output_dims(batch, N, 2, tv) : NULL;
    PyArrayObject *A = j.in[2] ? new_output_dims(batch, N, 2, tv) : NULL;
    if (!R0 || !p0 || (j.in[1] && !V) || (j.in[2] && !A)) {
        Py_XDECREF(R0), Py_XDECREF(p0), Py_XDECREF(V), Py_XDECREF(A);
        return NULL;
    }
    bind_output(&j, 0, R0, 9 * (Py_ssize_t)m->nb);
    bind_output(&j, 1, p0, 3 * (Py_ssize_t)m->nb);
    if (V)
        bind_output(&j, 2, V, 6 * (Py_ssize_t)m->nb);
    if (A)
        bind_output(&j, 3, A, 6 * (Py_ssize_t)m->nb);
    const int st = execute(cm, body_states_state, &j, batch, N);
    if (st != MB_OK) {
        Py_DECREF(R0), Py_DECREF(p0), Py_XDECREF(V), Py_XDECREF(A);
        return raise_status(st);
    }
    return Py_BuildValue("(NNNN)", R0, p0, V ? (PyObject *)V : Py_NewRef(Py_None),
                         A ? (PyObject *)A : Py_NewRef(Py_None));
}

/* energy(cmodel, q, qd) -> (KE, htot, Itot) */
PyObject *py_energy(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    CModel *cm = entry_model(args, nargs, 3, "energy");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    arg_spec specs[2] = {{args[1], 1, m->nq, 0}, {args[2], 1, m->nv, 0}};
    job j = {0};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 2, &j, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    PyArrayObject *KE = new_output(batch, N, 0, 0, 0), *h = new_output(batch, N, 1, 6, 0),
                  *Itot = new_output(batch, N, 2, 6, 6);
    if (!KE || !h || !Itot) {
        Py_XDECREF(KE), Py_XDECREF(h), Py_XDECREF(Itot);
        return NULL;
    }
    bind_output(&j, 0, KE, 1);
    bind_output(&j, 1, h, 6);
    bind_output(&j, 2, Itot, 36);
    const int st = execute(cm, energy_state, &j, batch, N);
    if (st != MB_OK) {
        Py_DECREF(KE), Py_DECREF(h), Py_DECREF(Itot);
        return raise_status(st);
    }
    return Py_BuildValue("(NNN)", KE, h, Itot);
}
