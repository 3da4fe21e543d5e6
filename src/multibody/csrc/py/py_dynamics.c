/* py_dynamics.c — Entry points of the dynamics algorithms: rnea, crba, hand_c, aba, fd_crb, fd_sparse, hybrid,
 * fdfb, idfb, energy.  Each takes the CModel and arrays in one of two layouts (see _core.c) and
 * returns None when the arrays are in neither. */
#include "py/py_boundary.h"

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

/* The tail of every entry point with several results: out[0..n) (new, NULL where making one failed)
 * are bound to the job with per_state[k] numbers each, fn runs over the states, and the results come
 * back as a tuple — or the status's error with every output freed.  Takes over the references. */
PyObject *run_into_outputs(CModel *cm, state_fn fn, job *j, int batch, Py_ssize_t N, int n, PyArrayObject **out,
                           const Py_ssize_t *per_state)
{
    int st = MB_OK;
    for (int k = 0; k < n; k++)
        if (!out[k])
            st = STATUS_PY_ERROR;  /* the error is set */
    if (st == MB_OK) {
        for (int k = 0; k < n; k++)
            bind_output(j, k, out[k], per_state[k]);
        st = execute(cm, fn, j, batch, N);
    }
    PyObject *results = st == MB_OK ? PyTuple_New(n) : NULL;
    for (int k = 0; k < n; k++) {
        if (results)
            PyTuple_SET_ITEM(results, k, (PyObject *)out[k]);
        else
            Py_XDECREF(out[k]);
    }
    return st == MB_OK || st == STATUS_PY_ERROR ? results : raise_status(st);
}

/* Shared body of the algorithms with one vector result: rnea, and aba, fd_crb, fd_sparse (forward). */
static PyObject *one_vector_result(PyObject *const *args, Py_ssize_t nargs, gate_hold *held, const char *name,
                                   state_fn fn, forward_fn forward)
{
    CModel *cm = entry_model(args, nargs, 5, name);
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    const char *third = forward ? "tau" : "qdd";
    const arg_spec specs[4] = {{"q", args[1], 1, m->nq, 0, 0}, {"qd", args[2], 1, m->nv, 0, 0},
                               {third, args[3], 1, m->nv, 0, 0}, {"f_ext", args[4], 2, m->nb, 6, 1}};
    job j = {.name = name};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 4, &j, held, &N, &batch);
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

static PyObject *rnea_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    return one_vector_result(args, nargs, held, "rnea", rnea_state, NULL);
}

static PyObject *aba_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    return one_vector_result(args, nargs, held, "aba", forward_state, mb_aba);
}

static PyObject *fd_crb_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    return one_vector_result(args, nargs, held, "fd_crb", forward_state, mb_fd_crb);
}

static PyObject *fd_sparse_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    return one_vector_result(args, nargs, held, "fd_sparse", forward_state, mb_fd_sparse);
}

/* A batch of CRBA whose H's are larger than a core's share of the caches (STREAM_MIN_BYTES): the
 * lanes write them with non-temporal stores and check them on the way (crba_stream_group), a state
 * outside the lanes checks its own (crba_checked_state), so the batch's outputs are read back only
 * when one is not finite (to name the first such state, as execute would). */
typedef struct {
    job j;  /* first: the state function gets &j */
    atomic_int *overflowed;
} checked_job;

static int crba_checked_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const int st = crba_state(m, d, j, n);
    if (st == MB_OK && !mb_gate_finite(OUT(j, 0, n), (Py_ssize_t)m->nv * m->nv))
        atomic_store(((const checked_job *)j)->overflowed, 1);
    return st;
}

static PyObject *crba_streamed(CModel *cm, const job *j0, Py_ssize_t N)
{
    const mb_model *m = &cm->m;
    atomic_int overflowed = 0;
    checked_job C = {*j0, &overflowed};
    C.j.lanes_group = C.j.lanes->crba_stream_group;
    PyArrayObject *out = new_output(1, N, 2, m->nv, m->nv);
    if (!out)
        return NULL;
    bind_output(&C.j, 0, out, (Py_ssize_t)m->nv * m->nv);
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = run_batch(m, crba_checked_state, &C.j, N);
    Py_END_ALLOW_THREADS
    if (st == MB_OK && atomic_load(&overflowed) && !outputs_finite(&C.j, 1, N))
        st = STATUS_PY_ERROR;
    if (st == MB_OK)
        return (PyObject *)out;
    Py_DECREF(out);
    return raise_status(st);
}

static PyObject *crba_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    CModel *cm = entry_model(args, nargs, 2, "crba");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    const arg_spec specs[1] = {{"q", args[1], 1, m->nq, 0, 0}};
    job j = {.name = "crba"};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 1, &j, held, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    if (batch && lanes_active)  /* groups of states in vector lanes (run_chunk) */
        j.lanes = lanes_active, j.lanes_group = lanes_active->crba_group, j.lanes_bad_x = 0;
    /* beyond a core's share of the last-level cache: on a loaded 2-core VM (32 MB L3 shared with the
     * host) 8 MB of H's streamed took 0.55 µs a solo12 state against 0.9–1.2 cached (crba, 10 000 states) */
    enum { STREAM_MIN_BYTES = 8 << 20 };
    if (batch && lanes_active && sizeof(double) * (double)N * m->nv * m->nv >= STREAM_MIN_BYTES)
        return crba_streamed(cm, &j, N);
    return run_into_new_output(cm, crba_state, &j, batch, N, 2, m->nv, m->nv);
}

static PyObject *hand_c_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    CModel *cm = entry_model(args, nargs, 4, "hand_c");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    const arg_spec specs[3] = {{"q", args[1], 1, m->nq, 0, 0}, {"qd", args[2], 1, m->nv, 0, 0},
                               {"f_ext", args[3], 2, m->nb, 6, 1}};
    job j = {.name = "hand_c"};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 3, &j, held, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    j.use_fext = j.in[2] != NULL;
    PyArrayObject *out[2] = {new_output(batch, N, 2, m->nv, m->nv), new_output(batch, N, 1, m->nv, 0)};
    const Py_ssize_t per_state[2] = {(Py_ssize_t)m->nv * m->nv, m->nv};
    return run_into_outputs(cm, hand_c_state, &j, batch, N, 2, out, per_state);
}

/* hybrid(cmodel, fd (nb bytes), q, qd, qdd, tau, f_ext) -> (qdd, tau) */
static PyObject *hybrid_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    CModel *cm = entry_model(args, nargs, 7, "hybrid");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    PyArrayObject *fd = hold_gate(held, args[1], "fd", NPY_BOOL, 0);
    if (!fd)
        return NULL;
    if (PyArray_NDIM(fd) != 1 || PyArray_DIM(fd, 0) != m->nb) {
        PyErr_Format(PyExc_ValueError, "fd: expected %d booleans (one per joint)", m->nb);
        return NULL;
    }
    const arg_spec specs[5] = {{"q", args[2], 1, m->nq, 0, 0}, {"qd", args[3], 1, m->nv, 0, 0},
                               {"qdd", args[4], 1, m->nv, 0, 0}, {"tau", args[5], 1, m->nv, 0, 0},
                               {"f_ext", args[6], 2, m->nb, 6, 1}};
    job j = {.name = "hybrid"};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 5, &j, held, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    j.use_fext = j.in[4] != NULL;
    j.fd = PyArray_DATA(fd);
    PyArrayObject *out[2] = {new_output(batch, N, 1, m->nv, 0), new_output(batch, N, 1, m->nv, 0)};  /* q̈, τ */
    const Py_ssize_t per_state[2] = {m->nv, m->nv};
    return run_into_outputs(cm, hybrid_state, &j, batch, N, 2, out, per_state);
}

/* fdfb/idfb(cmodel, xfb, q, qd, tau-or-qdd, f_ext) -> (xd, qdd-or-tau); real joints only */
static PyObject *floating_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held, const char *name,
                                state_fn fn)
{
    CModel *cm = entry_model(args, nargs, 6, name);
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    if (m->nb < 6 || m->nq < 6 || m->nv < 6) {
        PyErr_SetString(PyExc_ValueError, "model: not a floatbase model");
        return NULL;
    }
    const int forward = fn == fdfb_state;
    const arg_spec specs[5] = {{"xfb", args[1], 1, 13, 0, 0}, {"q", args[2], 1, m->nq - 6, 0, 0},
                               {"qd", args[3], 1, m->nv - 6, 0, 0},
                               {forward ? "tau" : "qdd", args[4], 1, m->nv - 6, 0, 0},
                               {"f_ext", args[5], 2, m->nb, 6, 1}};
    job j = {.name = name};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 5, &j, held, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    j.use_fext = j.in[4] != NULL;
    PyArrayObject *out[2] = {new_output(batch, N, 1, 13, 0), new_output(batch, N, 1, m->nv - 6, 0)};  /* ẋ, q̈/τ */
    const Py_ssize_t per_state[2] = {13, m->nv - 6};
    return run_into_outputs(cm, fn, &j, batch, N, 2, out, per_state);
}

static PyObject *fdfb_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    return floating_entry(args, nargs, held, "fdfb", fdfb_state);
}

static PyObject *idfb_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    return floating_entry(args, nargs, held, "idfb", idfb_state);
}

/* body_states(cmodel, q, qd|None, qdd|None) -> (R0, p0, V|None, A|None) */
static PyObject *body_states_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    CModel *cm = entry_model(args, nargs, 4, "body_states");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    PyObject *qdd_arg = args[2] == Py_None ? Py_None : args[3];
    const arg_spec specs[3] = {{"q", args[1], 1, m->nq, 0, 0}, {"qd", args[2], 1, m->nv, 0, 1},
                               {"qdd", qdd_arg, 1, m->nv, 0, 1}};
    job j = {.name = "body_states"};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 3, &j, held, &N, &batch);
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
static PyObject *energy_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    CModel *cm = entry_model(args, nargs, 3, "energy");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    const arg_spec specs[2] = {{"q", args[1], 1, m->nq, 0, 0}, {"qd", args[2], 1, m->nv, 0, 0}};
    job j = {.name = "energy"};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 2, &j, held, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    PyArrayObject *out[3] = {new_output(batch, N, 0, 0, 0), new_output(batch, N, 1, 6, 0),
                             new_output(batch, N, 2, 6, 6)};  /* KE, h, Itot */
    const Py_ssize_t per_state[3] = {1, 6, 36};
    return run_into_outputs(cm, energy_state, &j, batch, N, 3, out, per_state);
}

/* The public entry points: each runs its _entry with a hold for the arrays the gate makes. */
GATED_ENTRY(py_rnea, rnea_entry)
GATED_ENTRY(py_aba, aba_entry)
GATED_ENTRY(py_fd_crb, fd_crb_entry)
GATED_ENTRY(py_fd_sparse, fd_sparse_entry)
GATED_ENTRY(py_crba, crba_entry)
GATED_ENTRY(py_hand_c, hand_c_entry)
GATED_ENTRY(py_hybrid, hybrid_entry)
GATED_ENTRY(py_fdfb, fdfb_entry)
GATED_ENTRY(py_idfb, idfb_entry)
GATED_ENTRY(py_body_states, body_states_entry)
GATED_ENTRY(py_energy, energy_entry)
