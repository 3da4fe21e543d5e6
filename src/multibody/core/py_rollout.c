/* py_rollout.c — rollout: whole fixed-step runs (rollout.c), many runs across threads. */
#include "py_boundary.h"

/* rollout(cmodel, integrator, Q0 (N,nq), QD0 (N,nv), t_final, dt, record_every, keep_last,
 *         period, kp (nv) | None, kd (nv), times (M,), q_ref (M,nq), qd_ref (M,nv), tau_ff (M,nv),
 *         f_ext (nb,6) | None, damping (nv) | None,
 *         T (N,R), Q (N,R,nq), QD (N,R,nv), QDD (N,R,nv), TAU (N,R,nv), info (N,4)) -> None
 * Fills the caller's arrays; info[n] = (samples written, code, t_from, t_to), code 0 finished,
 * −1 stopped at a non-finite state in the step [t_from, t_to], > 0 a status code (status.h).
 * Runs with the GIL released, on all threads when N ≥ 2.  kp None: no controller (τ = 0). */
static PyObject *rollout_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    CModel *cm = entry_model(args, nargs, 23, "rollout");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    mb_rollout r = {0};
    long integrator, record_every, keep_last;
    if (!get_long(args[1], "integrator", MB_EULER, MB_RK4, &integrator) ||
        !get_double(args[4], "t_final", 0.0, 1, &r.t_final) || !get_double(args[5], "dt", 0.0, 0, &r.dt) ||
        !get_long(args[6], "record_every", 1, LONG_MAX, &record_every) ||
        !get_long(args[7], "keep_last", 0, 1, &keep_last) || !get_double(args[8], "period", 0.0, 1, &r.control.period))
        return NULL;
    r.integrator = (int)integrator, r.record_every = record_every, r.keep_last = (int)keep_last;
    npy_intp dq[2] = {-1, m->nq}, dv[2] = {-1, m->nv};
    PyArrayObject *Q0 = gated_array(held, args[2], "Q0", NPY_DOUBLE, 2, dq, 0);
    if (!Q0)
        return NULL;
    const npy_intp N = dq[0];
    dv[0] = N;
    PyArrayObject *QD0 = gated_array(held, args[3], "QD0", NPY_DOUBLE, 2, dv, 0);
    if (!QD0)
        return NULL;
    if (args[9] != Py_None) {
        int vector = m->nq == m->nv;
        for (int i = 0; i < m->nb; i++)
            if (m->jtype[i] != MB_FIXED && m->jtype[i] != MB_REVOLUTE && m->jtype[i] != MB_PRISMATIC &&
                m->jtype[i] != MB_HELICAL)
                vector = 0;
        if (!vector) {
            PyErr_SetString(PyExc_ValueError, "controller: the compiled PD needs a model whose joints all have "
                                              "one degree of freedom (q and qd of the same length)");
            return NULL;
        }
        npy_intp dg[1] = {m->nv}, dt_[1] = {-1};
        PyArrayObject *kp = gated_array(held, args[9], "kp", NPY_DOUBLE, 1, dg, 0);
        PyArrayObject *kd = kp ? gated_array(held, args[10], "kd", NPY_DOUBLE, 1, dg, 0) : NULL;
        PyArrayObject *times = kd ? gated_array(held, args[11], "times", NPY_DOUBLE, 1, dt_, 0) : NULL;
        if (!times)
            return NULL;
        const npy_intp M = dt_[0];
        npy_intp dr[2] = {M, m->nq}, dvr[2] = {M, m->nv}, dff[2] = {M, m->nv};
        PyArrayObject *qr = gated_array(held, args[12], "q_ref", NPY_DOUBLE, 2, dr, 0);
        PyArrayObject *qdr = qr ? gated_array(held, args[13], "qd_ref", NPY_DOUBLE, 2, dvr, 0) : NULL;
        PyArrayObject *ff = qdr ? gated_array(held, args[14], "tau_ff", NPY_DOUBLE, 2, dff, 0) : NULL;
        if (!ff || !finite_array(kp, "kp") || !finite_array(kd, "kd") || !finite_array(times, "times") ||
            !finite_array(qr, "q_ref") || !finite_array(qdr, "qd_ref") || !finite_array(ff, "tau_ff"))
            return NULL;
        const double *tt = PyArray_DATA(times);
        if (M < 1 || M > INT_MAX) {
            PyErr_SetString(PyExc_ValueError, "times: expected at least one sample time");
            return NULL;
        }
        for (npy_intp k = 1; k < M; k++)
            if (!(tt[k] > tt[k - 1])) {
                PyErr_SetString(PyExc_ValueError, "times: expected increasing sample times");
                return NULL;
            }
        r.control = (mb_control){MB_CONTROL_PD, PyArray_DATA(kp), PyArray_DATA(kd), (int)M, tt, PyArray_DATA(qr),
                                 PyArray_DATA(qdr), PyArray_DATA(ff), r.control.period};
    }
    if (args[15] != Py_None) {
        npy_intp df[2] = {m->nb, 6};
        PyArrayObject *fe = gated_array(held, args[15], "f_ext", NPY_DOUBLE, 2, df, 0);
        if (!fe || !finite_array(fe, "f_ext"))
            return NULL;
        r.fext = PyArray_DATA(fe);
    }
    if (args[16] != Py_None) {
        npy_intp dd[1] = {m->nv};
        PyArrayObject *damp = gated_array(held, args[16], "damping", NPY_DOUBLE, 1, dd, 0);
        if (!damp || !finite_array(damp, "damping"))
            return NULL;
        r.damping = PyArray_DATA(damp);
    }
    npy_intp dT[2] = {N, -1};
    PyArrayObject *T = gated_array(held, args[17], "T", NPY_DOUBLE, 2, dT, MB_GATE_WRITABLE);
    if (!T)
        return NULL;
    const npy_intp R = dT[1];
    npy_intp dQ[3] = {N, R, m->nq}, dV[3] = {N, R, m->nv}, dI[2] = {N, 4};
    PyArrayObject *Q = gated_array(held, args[18], "Q", NPY_DOUBLE, 3, dQ, MB_GATE_WRITABLE);
    PyArrayObject *QD = Q ? gated_array(held, args[19], "QD", NPY_DOUBLE, 3, dV, MB_GATE_WRITABLE) : NULL;
    PyArrayObject *QDD = QD ? gated_array(held, args[20], "QDD", NPY_DOUBLE, 3, dV, MB_GATE_WRITABLE) : NULL;
    PyArrayObject *TAU = QDD ? gated_array(held, args[21], "TAU", NPY_DOUBLE, 3, dV, MB_GATE_WRITABLE) : NULL;
    PyArrayObject *info = TAU ? gated_array(held, args[22], "info", NPY_DOUBLE, 2, dI, MB_GATE_WRITABLE) : NULL;
    if (!info)
        return NULL;
    if (R < 1) {
        PyErr_SetString(PyExc_ValueError, "T: expected room for at least one sample");
        return NULL;
    }
    r.capacity = (long)R;
    job j = {0};
    j.in[0] = PyArray_DATA(Q0), j.step[0] = m->nq;
    j.in[1] = PyArray_DATA(QD0), j.step[1] = m->nv;
    bind_output(&j, 0, T, R);
    bind_output(&j, 1, Q, R * m->nq);
    bind_output(&j, 2, QD, R * m->nv);
    bind_output(&j, 3, QDD, R * m->nv);
    j.tau_out = PyArray_DATA(TAU);
    j.info = PyArray_DATA(info);
    j.rollout = &r;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = run_batch_from(m, rollout_state, &j, N, 2);
    Py_END_ALLOW_THREADS
    if (st != MB_OK)
        return raise_status(st);
    Py_RETURN_NONE;
}

/* The public entry points: each runs its _entry with a hold for the arrays the gate makes. */
GATED_ENTRY(py_rollout, rollout_entry)
