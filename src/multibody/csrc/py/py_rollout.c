/* py_rollout.c — rollout: whole fixed-step runs (rollout.c), many runs across threads, in groups
 * advanced in lockstep with the forward dynamics in SIMD lanes. */
#include "py/py_boundary.h"

/* A rollout job: the batch's runs go in groups of `width`: the lanes' width where the lanes run the
 * model and its forces (no f_ext, no gravcomp, mb_lanes_supported), else 1. */
typedef struct {
    job j;  /* first member: the state function gets &j back */
    const mb_lanes_impl *lanes;
    int width;
    Py_ssize_t runs;
    int nz, np3;            /* contact states and forces per sample (0 without contact) */
    double *z_out, *force_out;  /* Z (N, R, nz), F (N, R, points, 3), or NULL */
    double *held_out, *n_sample_out;  /* HELD_END (N, nv), N_SAMPLE_END (N,), or NULL */
    int *singular;  /* (runs) run n's MB_SINGULAR body, for the message of the first failing run */
    int fill_nan;   /* the records' rows start NaN (rows a run does not reach stay so) */
} rollout_job;

/* An optional array argument of finite numbers: None leaves *data NULL; 0 with the error set if bad. */
static int optional_finite(gate_hold *held, PyObject *arg, const char *name, int ndim, npy_intp *dims,
                           const double **data)
{
    if (arg == Py_None)
        return 1;
    PyArrayObject *a = gated_array(held, arg, name, NPY_DOUBLE, ndim, dims, 0);
    if (!a || !finite_array(a, name))
        return 0;
    *data = PyArray_DATA(a);
    return 1;
}

/* Python functions the loop calls (a controller, forces): called with the GIL taken back; the first
 * exception is kept here and raised when the run returns, and the run stops (MB_CALLBACK_FAILED). */
typedef struct {
    PyObject *control, *forces;  /* (t, q, qd) -> τ (nv), f_ext (nb, 6): simulate's checked wrappers */
    int nq, nv, nb;
    PyObject *guards;            /* (t, q, qd) -> the user's events' guard values (n_guards)          */
    int n_guards;
    PyObject *dynamics;          /* (t, q, qd, tau_all, f_ext | None) -> q̈ (nv): constrained dynamics */
    PyObject *contact;           /* (t, q, qd, z) -> [f_ext (nb × 6), ż (nz)]: another contact law     */
    int nz;
    PyObject *control_batch;     /* (t, Q (N, nq), QD (N, nv)) -> τ (N, nv): a controller of the batch */
    PyObject *err_type, *err_value, *err_tb;
} py_callbacks;

/* The end of a call back: the function's result r (n numbers) into out, or its first exception kept
 * (and the run stops); r is released. */
static int take_result(py_callbacks *cb, PyObject *r, npy_intp n, const char *name, double *out)
{
    int st = MB_CALLBACK_FAILED;
    PyArrayObject *a = r ? (PyArrayObject *)PyArray_FROMANY(r, NPY_DOUBLE, 0, 0, NPY_ARRAY_IN_ARRAY) : NULL;
    if (a && PyArray_SIZE(a) == n) {
        memcpy(out, PyArray_DATA(a), sizeof(double) * (size_t)n);
        st = MB_OK;
    } else if (a)
        PyErr_Format(PyExc_ValueError, "%s: returned %zd numbers; expected %zd", name, (Py_ssize_t)PyArray_SIZE(a),
                     (Py_ssize_t)n);
    if (st != MB_OK && !cb->err_type)
        PyErr_Fetch(&cb->err_type, &cb->err_value, &cb->err_tb);
    PyErr_Clear();
    Py_XDECREF(r), Py_XDECREF(a);
    return st;
}

/* A new 1-D array holding x[0…n−1], or NULL. */
static PyObject *array_of(const double *x, npy_intp n)
{
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (a)
        memcpy(PyArray_DATA((PyArrayObject *)a), x, sizeof(double) * (size_t)n);
    return a;
}

static int call_python(void *ctx, int what, double t, const double *q, const double *v, double *out)
{
    py_callbacks *cb = ctx;
    PyGILState_STATE gil = PyGILState_Ensure();
    const npy_intp n_out = what == MB_CALL_CONTROL ? cb->nv : what == MB_CALL_FORCES ? 6L * cb->nb : cb->n_guards;
    PyObject *fn = what == MB_CALL_CONTROL ? cb->control : what == MB_CALL_FORCES ? cb->forces : cb->guards;
    const char *name = what == MB_CALL_CONTROL ? "controller" : what == MB_CALL_FORCES ? "f_ext" : "events";
    PyObject *Q = array_of(q, cb->nq), *V = array_of(v, cb->nv);
    PyObject *r = Q && V ? PyObject_CallFunction(fn, "dOO", t, Q, V) : NULL;
    Py_XDECREF(Q), Py_XDECREF(V);
    const int st = take_result(cb, r, n_out, name, out);
    PyGILState_Release(gil);
    return st;
}

/* q̈ from the caller's dynamics function (call_python's rules: GIL, first exception kept). */
static int call_dynamics(void *ctx, double t, const double *q, const double *v, const double *tau_all,
                         const double *fext, double *qdd)
{
    py_callbacks *cb = ctx;
    PyGILState_STATE gil = PyGILState_Ensure();
    npy_intp df[2] = {cb->nb, 6};
    PyObject *Q = array_of(q, cb->nq), *V = array_of(v, cb->nv), *T = array_of(tau_all, cb->nv), *F = Py_None;
    Py_INCREF(F);
    if (fext && (Py_DECREF(F), F = PyArray_SimpleNew(2, df, NPY_DOUBLE)))
        memcpy(PyArray_DATA((PyArrayObject *)F), fext, sizeof(double) * 6 * (size_t)cb->nb);
    PyObject *r = Q && V && T && F ? PyObject_CallFunction(cb->dynamics, "dOOOO", t, Q, V, T, F) : NULL;
    Py_XDECREF(Q), Py_XDECREF(V), Py_XDECREF(T), Py_XDECREF(F);
    const int st = take_result(cb, r, cb->nv, "constraints", qdd);
    PyGILState_Release(gil);
    return st;
}

/* [f_ext, ż] from the caller's contact law (call_python's rules). */
static int call_contact(void *ctx, double t, const double *q, const double *v, const double *z, double *out)
{
    py_callbacks *cb = ctx;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *Q = array_of(q, cb->nq), *V = array_of(v, cb->nv), *Z = array_of(z, cb->nz);
    PyObject *r = Q && V && Z ? PyObject_CallFunction(cb->contact, "dOOO", t, Q, V, Z) : NULL;
    Py_XDECREF(Q), Py_XDECREF(V), Py_XDECREF(Z);
    const int st = take_result(cb, r, 6L * cb->nb + cb->nz, "contact", out);
    PyGILState_Release(gil);
    return st;
}

/* τ of `count` runs from the caller's batch controller (t, Q (count, nq), QD (count, nv)) -> (count, nv)
 * in one call (call_python's rules: the GIL, the first exception kept and the run stopped); τ must be
 * finite (simulation/system.py's control_batch checks it first, with the messages the user sees). */
static int call_batch(void *ctx, double t, int count, const double *const *q, const double *const *v,
                      double *const *tau)
{
    py_callbacks *cb = ctx;
    PyGILState_STATE gil = PyGILState_Ensure();
    const int nq = cb->nq, nv = cb->nv;
    npy_intp dq[2] = {count, nq}, dv[2] = {count, nv};
    PyObject *Q = PyArray_SimpleNew(2, dq, NPY_DOUBLE), *V = Q ? PyArray_SimpleNew(2, dv, NPY_DOUBLE) : NULL, *r = NULL;
    if (V) {
        double *qa = PyArray_DATA((PyArrayObject *)Q), *va = PyArray_DATA((PyArrayObject *)V);
        for (int i = 0; i < count; i++) {
            memcpy(qa + (size_t)i * nq, q[i], sizeof(double) * (size_t)nq);
            memcpy(va + (size_t)i * nv, v[i], sizeof(double) * (size_t)nv);
        }
        r = PyObject_CallFunction(cb->control_batch, "dOO", t, Q, V);
    }
    Py_XDECREF(Q), Py_XDECREF(V);
    int st = MB_CALLBACK_FAILED;
    PyArrayObject *a = r ? (PyArrayObject *)PyArray_FROMANY(r, NPY_DOUBLE, 0, 0, NPY_ARRAY_IN_ARRAY) : NULL;
    if (a && PyArray_NDIM(a) == 2 && PyArray_DIM(a, 0) == count && PyArray_DIM(a, 1) == nv) {
        const double *ta = PyArray_DATA(a);
        if (all_finite(ta, (Py_ssize_t)count * nv)) {
            for (int i = 0; i < count; i++)
                memcpy(tau[i], ta + (size_t)i * nv, sizeof(double) * (size_t)nv);
            st = MB_OK;
        } else {  /* t as Python's repr writes it */
            char *tr = PyOS_double_to_string(t, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
            PyErr_Format(PyExc_ValueError, "controller: returned NaN or inf at t = %s", tr ? tr : "?");
            PyMem_Free(tr);
        }
    } else if (a)
        PyErr_Format(PyExc_ValueError, "controller: in a batch it must return (N, nv) = (%d, %d) numbers; got %zd "
                     "in %d dimension(s)", count, nv, (Py_ssize_t)PyArray_SIZE(a), PyArray_NDIM(a));
    if (st != MB_OK && !cb->err_type)
        PyErr_Fetch(&cb->err_type, &cb->err_value, &cb->err_tb);
    PyErr_Clear();
    Py_XDECREF(r), Py_XDECREF(a);
    PyGILState_Release(gil);
    return st;
}

static void fill_nan(double *x, Py_ssize_t n)
{
    for (Py_ssize_t k = 0; k < n; k++)
        x[k] = NAN;
}

/* Run n's records (T, Q, QD, QDD, TAU, Z, F) all NaN, filled by the thread that runs it just before,
 * not by the caller before the threads start: that was a serial pass over the whole record and
 * the first touch of its fresh pages (the Panda batch's 300 MB: 0.05–0.9 s, much of it in the
 * kernel, against 0.5 s of runs on two threads). */
static void nan_records(const mb_model *m, const rollout_job *rj, Py_ssize_t n, Py_ssize_t R)
{
    const job *j = &rj->j;
    for (int k = 0; k < 4; k++)
        fill_nan(OUT(j, k, n), j->ostep[k]);
    fill_nan(j->tau_out + n * R * m->nv, R * m->nv);
    if (rj->nz)
        fill_nan(rj->z_out + n * R * rj->nz, R * rj->nz);
    if (rj->np3)
        fill_nan(rj->force_out + n * R * rj->np3, R * rj->np3);
}

/* Run n's start: its records NaN where the job asks, its outputs in *out, its start state checked;
 * 0 if that fails (reported in its info; the other runs go on). */
static int start_run(const mb_model *m, const rollout_job *rj, Py_ssize_t n, mb_rollout_out *out)
{
    const job *j = &rj->j;
    const Py_ssize_t R = j->rollout->capacity;
    if (rj->fill_nan)
        nan_records(m, rj, n, R);
    *out = (mb_rollout_out){OUT(j, 0, n), OUT(j, 1, n), OUT(j, 2, n), OUT(j, 3, n), j->tau_out + n * R * m->nv,
                            0, 0, 0.0, 0.0, 0, j->y_end + n * (m->nq + m->nv + rj->nz),
                            rj->nz ? rj->z_out + n * R * rj->nz : NULL,
                            rj->np3 ? rj->force_out + n * R * rj->np3 : NULL,
                            rj->held_out ? rj->held_out + n * m->nv : NULL, 0};
    int st = mb_check_configuration(m, IN(j, 0, n));
    if (st == MB_OK && !all_finite(IN(j, 1, n), m->nv))
        st = MB_BAD_QD;
    if (st == MB_OK && rj->nz && !all_finite(IN(j, 2, n), rj->nz))
        st = MB_BAD_Z;
    if (st != MB_OK) {
        double *info = j->info + 4 * n;
        info[0] = 0.0, info[1] = st, info[2] = info[3] = 0.0;
        return 0;
    }
    return 1;
}

/* The L runs' info after mb_run_rollouts returned st: samples written, code (0 finished, −1 non-finite,
 * −2 handed back, > 0 a status), the step they ended in, and where the job asks, the sample count and
 * a singular body. */
static void end_runs(const rollout_job *rj, int st, int L, const mb_rollout_out *out, const Py_ssize_t *run,
                     const int *status)
{
    for (int l = 0; l < L; l++) {
        double *info = rj->j.info + 4 * run[l];
        const int s = st != MB_OK ? st : status[l];
        info[0] = (double)out[l].count;
        info[1] = s != MB_OK ? s : out[l].non_finite ? -1 : out[l].handed_back ? -2 : 0;
        info[2] = out[l].t_from, info[3] = out[l].t_to;
        if (rj->n_sample_out)
            rj->n_sample_out[run[l]] = (double)out[l].n_sample_end;
        rj->singular[run[l]] = out[l].singular_body;
    }
}

/* Group g (runs g·width …): each run's start checked, the valid ones run together (mb_run_rollouts);
 * in = q0, qd0; out = T, Q, QD, QDD (+ tau_out) rows of run n; info[n] = (count, code, t_from, t_to)
 * with code 0 finished, −1 stopped at a non-finite state, −2 handed back, > 0 a status. */
static int rollout_group(const mb_model *m, mb_data *d, const job *j, Py_ssize_t g)
{
    const rollout_job *rj = (const rollout_job *)j;
    const mb_rollout *r = j->rollout;
    const Py_ssize_t first = g * rj->width;
    const Py_ssize_t last = first + rj->width < rj->runs ? first + rj->width : rj->runs;
    const double *q0[8], *qd0[8], *z0[8];
    mb_rollout_out out[8], *o[8];
    Py_ssize_t run[8];
    int L = 0, status[8];
    for (Py_ssize_t n = first; n < last; n++) {
        if (!start_run(m, rj, n, &out[L]))
            continue;
        q0[L] = IN(j, 0, n), qd0[L] = IN(j, 1, n), z0[L] = rj->nz ? IN(j, 2, n) : NULL, o[L] = &out[L], run[L] = n;
        L++;
    }
    if (L == 0)
        return MB_OK;
    const int st = mb_run_rollouts(m, d, rj->lanes, r, L, q0, qd0, z0, o, status);
    end_runs(rj, st, L, out, run, status);
    return st;  /* MB_NO_MEMORY; the runs' failures are reported in info */
}

/* Every run of the job as one group (a batch controller's: its one call per stage sees every run
 * still going): each run's start checked as rollout_group checks it, the valid ones advanced
 * together (mb_run_rollouts, any number of runs), info as rollout_group fills it. */
static int rollout_together(const mb_model *m, mb_data *d, const job *j, Py_ssize_t g)
{
    (void)g;
    const rollout_job *rj = (const rollout_job *)j;
    const Py_ssize_t N = rj->runs;
    const double **q0 = malloc(sizeof(double *) * 2 * (size_t)(N + 1));
    mb_rollout_out *out = malloc(sizeof(mb_rollout_out) * (size_t)(N + 1));
    mb_rollout_out **o = malloc(sizeof(void *) * (size_t)(N + 1));
    Py_ssize_t *run = malloc(sizeof(Py_ssize_t) * (size_t)(N + 1));
    int *status = malloc(sizeof(int) * (size_t)(N + 1)), L = 0, st = MB_NO_MEMORY;
    if (!q0 || !out || !o || !run || !status)
        goto done;
    const double **qd0 = q0 + N;
    for (Py_ssize_t n = 0; n < N; n++) {
        if (!start_run(m, rj, n, &out[L]))
            continue;
        q0[L] = IN(j, 0, n), qd0[L] = IN(j, 1, n), o[L] = &out[L], run[L] = n;
        L++;
    }
    st = L ? mb_run_rollouts(m, d, rj->lanes, j->rollout, L, q0, qd0, NULL, o, status) : MB_OK;
    end_runs(rj, st, L, out, run, status);
done:
    free(q0), free(out), free(o), free(run), free(status);
    return st;
}

/* The fixed tendons' tables (args[0]: (T,4) | None, args[1]: (n,4)) into r: finite, k, d ≥ 0,
 * L_lo ≤ L_hi, each term's tendon in 0…T−1 in non-decreasing order with every tendon named, and
 * its indices inside the model. */
static int tendon_tables(gate_hold *held, PyObject *const *args, const mb_model *m, mb_rollout *r)
{
    if (args[0] == Py_None)
        return 1;
    npy_intp dt_[2] = {-1, 4}, dn[2] = {-1, 4};
    PyArrayObject *T = gated_array(held, args[0], "tendons", NPY_DOUBLE, 2, dt_, 0);
    PyArrayObject *terms = T ? gated_array(held, args[1], "tendon_terms", NPY_DOUBLE, 2, dn, 0) : NULL;
    if (!terms || !finite_array(T, "tendons") || !finite_array(terms, "tendon_terms"))
        return 0;
    const double *t = PyArray_DATA(T), *c = PyArray_DATA(terms);
    if (dt_[0] < 1 || dt_[0] > INT_MAX || dn[0] > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "tendons: expected at least one tendon");
        return 0;
    }
    for (npy_intp i = 0; i < dt_[0]; i++)
        if (!(t[4 * i] >= 0.0 && t[4 * i + 1] >= 0.0 && t[4 * i + 2] <= t[4 * i + 3])) {
            PyErr_SetString(PyExc_ValueError, "tendons: expected rows (stiffness ≥ 0, damping ≥ 0, L_lo, L_hi ≥ L_lo)");
            return 0;
        }
    double last = -1.0;
    for (npy_intp k = 0; k < dn[0]; k++) {
        const double *row = c + 4 * k;
        if (!(row[0] >= 0.0 && row[0] >= last && row[0] <= last + 1) || row[0] >= dt_[0] || row[0] != (int)row[0] || row[1] < 0 ||
            row[1] >= m->nq || row[1] != (int)row[1] || row[2] < 0 || row[2] >= m->nv || row[2] != (int)row[2]) {
            PyErr_SetString(PyExc_ValueError, "tendon_terms: expected rows (tendon, q index, v index, coefficient) "
                                              "grouped by tendon 0, 1, … in order, with indices inside the model");
            return 0;
        }
        last = row[0];
    }
    if (last != (double)(dt_[0] - 1)) {
        PyErr_SetString(PyExc_ValueError, "tendon_terms: expected at least one term for every tendon");
        return 0;
    }
    r->tendons = t, r->n_tendons = (int)dt_[0], r->tendon_terms = c, r->n_tendon_terms = (int)dn[0];
    return 1;
}

/* The entries rollout's two dicts may hold (any other is an error: a misspelt one would be ignored). */
static const char *const SETTINGS[] = {
    "integrator", "t0", "t_final", "dt", "record_every", "keep_last", "period", "kp", "kd", "times", "q_ref",
    "qd_ref", "tau_ff", "gravity", "f_ext", "damping", "friction", "friction_velocity", "implicit_armature",
    "gc_lift", "gc_com", "stops", "stop_mode", "soft_time", "contact", "Z0", "held0", "n_sample0", "control", "forces", "guards",
    "directions", "tendons", "tendon_terms", "dynamics", "resting", "contact_call", "contact_states", "one_step",
    "control_batch", NULL};
static const char *const OUTPUTS[] = {"T", "Q", "QD", "QDD", "TAU", "Y_END", "info", "Z", "F", "HELD_END",
                                      "N_SAMPLE_END", NULL};

/* d[key] (borrowed), or None where d has no such entry. */
/* The lanes of a single run of a planar tree (its lean RK4 step, rollout_lanes.h): two in AVX2 code
 * where the CPU has it (aba_lanes_pair.c), else the baseline's two. */
static const mb_lanes_impl *single_run_lanes(void)
{
#ifdef MB_HAVE_LANES_AVX2
    if (__builtin_cpu_supports("avx2"))
        return &mb_lanes_avx2_pair;
#endif
    return &mb_lanes_baseline;
}

static PyObject *entry(PyObject *d, const char *key)
{
    PyObject *v = PyDict_GetItemString(d, key);
    return v ? v : Py_None;
}

/* Is d a dict of str keys, each one of `names`?  Else 0 with a TypeError naming the odd one. */
static int known_entries(PyObject *d, const char *what, const char *const *names)
{
    if (!PyDict_Check(d)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a dict", what);
        return 0;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d, &pos, &key, &value)) {
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        int found = 0;
        for (int i = 0; k && names[i] && !found; i++)
            found = strcmp(k, names[i]) == 0;
        if (!found) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s: unknown entry %R", what, key);
            return 0;
        }
    }
    return 1;
}

/* rollout(cmodel, Q0 (N,nq), QD0 (N,nv), outputs, settings) -> None
 * outputs (dict, the caller's arrays to fill): T (N,R), Q (N,R,nq), QD (N,R,nv), QDD (N,R,nv), TAU (N,R,nv),
 *     Y_END (N,nq+nv+nz), info (N,4); with contact Z (N,R,nz), F (N,R,np,3); with a sampled controller
 *     HELD_END (N,nv), N_SAMPLE_END (N,): where each run stopped.
 * settings (dict; an absent entry is None): integrator, t0, t_final, dt, record_every, keep_last, period;
 *     a PD or torque table: kp (nv) (None: no controller, τ = 0), kd (nv), times (M,), q_ref (M,nq),
 *     qd_ref (M,nv), tau_ff (M,nv), gravity (1: the PD adds g(q)); f_ext (nb,6), damping (nv), friction
 *     (nv), friction_velocity (nv), implicit_armature (nv), gc_lift (nb,3), gc_com (nb,3), stops (S,4) (q index, v index, position,
 *     sign), stop_mode (0 none, 1 soft, 2 hard), soft_time; contact: (bodies (np,), points (np,3), nd, K,
 *     D, mu) (simulation.contact.GroundContact) with Z0 (N,nz); held0 (nv), n_sample0: a sampled
 *     controller's hold at t0 and its next sample's index (a run resumed by the Python loop); control,
 *     forces: Python functions (t, q, qd) -> τ, f_ext called at every stage instead of a built-in
 *     controller / f_ext (one run: N = 1); guards (t, q, qd) -> the user's events' guard values after
 *     every step, with directions (n_guards,) int32; tendons (T,4) (k, d, L_lo, L_hi) with tendon_terms
 *     (n,4) (tendon, q index, v index, c) grouped by tendon in order: the fixed tendons' springs and
 *     dampers; dynamics (t, q, qd, tau_all, f_ext | None) -> q̈ instead of FDab (a constrained model;
 *     one run); resting (R,3) (body, v index, sign of its stop): joints resting on hard stops (one run,
 *     stop_mode 2; held by hybrid dynamics, handed back at their release); contact_call (t, q, qd, z) ->
 *     [f_ext (nb × 6), ż] with contact_states (its nz; Z0 and Z as for contact, no F): another contact
 *     law instead of the ground's (one run); one_step h > 0: exactly one step of size h from t0, no
 *     sampling, no stop, guard or release checks, no q̈ at its end (the Python loop's event steps);
 *     control_batch (t, Q (n, nq), QD (n, nv)) -> τ (n, nv): a controller of the whole batch, called once
 *     a stage with the n runs still going (the batch then runs as one group, on one thread; continuous,
 *     without kp, the other functions, hard stops, contact or one_step).
 * Fills the caller's arrays (T, Q, QD, QDD, TAU, Z, F start NaN where N ≥ 2 or stop_mode 2, so the
 * rows a run does not reach are NaN; a single run's are left as they were); info[n] = (samples
 * written, code, t_from, t_to), code 0 finished,
 * −1 stopped at a non-finite state in the step [t_from, t_to], −2 handed back at t_from before
 * a step that crosses a hard stop (stop_mode 2), > 0 a status code (status.h); Y_END[n] is the
 * state where run n ended.  Runs with the GIL released, on all threads when N ≥ 2, in groups of the
 * lanes' width where the lanes apply (use_lanes; one run at a time with "none"). */
static PyObject *rollout_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    CModel *cm = entry_model(args, nargs, 5, "rollout");
    if (!cm || !known_entries(args[3], "outputs", OUTPUTS) || !known_entries(args[4], "settings", SETTINGS))
        return NULL;
#define SETTING(key) entry(args[4], key)
#define OUTPUT(key) entry(args[3], key)
    const mb_model *m = &cm->m;
    mb_rollout r = {0};
    long integrator, record_every, keep_last, gravity, stop_mode;
    double period;
    if (!get_long(SETTING("integrator"), "integrator", 0, mb_n_steppers - 1, &integrator) ||
        !get_double(SETTING("t0"), "t0", 0.0, 1, &r.t0) ||
        !get_double(SETTING("t_final"), "t_final", 0.0, 1, &r.t_final) || !get_double(SETTING("dt"), "dt", 0.0, 0, &r.dt) ||
        !get_long(SETTING("record_every"), "record_every", 1, LONG_MAX, &record_every) ||
        !get_long(SETTING("keep_last"), "keep_last", 0, 1, &keep_last) || !get_double(SETTING("period"), "period", 0.0, 1, &period) ||
        !get_long(SETTING("gravity"), "gravity", 0, 1, &gravity) ||
        !get_long(SETTING("stop_mode"), "stop_mode", MB_STOPS_NONE, MB_STOPS_HARD, &stop_mode) ||
        !get_double(SETTING("soft_time"), "soft_time", 0.0, 0, &r.soft_time))
        return NULL;
    if (SETTING("one_step") != Py_None && !get_double(SETTING("one_step"), "one_step", 0.0, 1, &r.one_step))
        return NULL;
    r.control.period = period;
    r.integrator = (int)integrator, r.record_every = record_every, r.keep_last = (int)keep_last;
    npy_intp dq[2] = {-1, m->nq}, dv[2] = {-1, m->nv};
    PyArrayObject *Q0 = gated_array(held, args[1], "Q0", NPY_DOUBLE, 2, dq, 0);
    if (!Q0)
        return NULL;
    const npy_intp N = dq[0];
    dv[0] = N;
    PyArrayObject *QD0 = gated_array(held, args[2], "QD0", NPY_DOUBLE, 2, dv, 0);
    if (!QD0)
        return NULL;
    int vector = m->nq == m->nv;
    for (int i = 0; i < m->nb; i++)
        if (!mb_joint_is_vector(m->jtype[i]))  /* joints.h: the joint table's one "plain vector" fact */
            vector = 0;
    if (SETTING("kp") != Py_None) {
        npy_intp dg[1] = {m->nv}, dt_[1] = {-1};
        PyArrayObject *kp = gated_array(held, SETTING("kp"), "kp", NPY_DOUBLE, 1, dg, 0);
        PyArrayObject *kd = kp ? gated_array(held, SETTING("kd"), "kd", NPY_DOUBLE, 1, dg, 0) : NULL;
        PyArrayObject *times = kd ? gated_array(held, SETTING("times"), "times", NPY_DOUBLE, 1, dt_, 0) : NULL;
        if (!times)
            return NULL;
        const npy_intp M = dt_[0];
        npy_intp dr[2] = {M, m->nq}, dvr[2] = {M, m->nv}, dff[2] = {M, m->nv};
        PyArrayObject *qr = gated_array(held, SETTING("q_ref"), "q_ref", NPY_DOUBLE, 2, dr, 0);
        PyArrayObject *qdr = qr ? gated_array(held, SETTING("qd_ref"), "qd_ref", NPY_DOUBLE, 2, dvr, 0) : NULL;
        PyArrayObject *ff = qdr ? gated_array(held, SETTING("tau_ff"), "tau_ff", NPY_DOUBLE, 2, dff, 0) : NULL;
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
                                 PyArray_DATA(qdr), PyArray_DATA(ff), period,
                                 (int)gravity, NULL};
        const double *gain = PyArray_DATA(kp);
        for (int i = 0; i < m->nb && !vector; i++)  /* joints whose q is no plain vector: no position gain */
            for (int a = 0; a < m->nv_joint[i]; a++) {
                const int k = m->v_start[i] + a;
                if (!mb_joint_is_vector(m->jtype[i]) && gain[k] != 0.0)
                    return PyErr_Format(PyExc_ValueError, "controller: the compiled PD needs kp = 0 on the velocity "
                                        "variables of quaternion and planar joints (kp[%d] = %g)", k, gain[k]);
            }
    }
    npy_intp df[2] = {m->nb, 6}, dd[1] = {m->nv}, dfr[1] = {m->nv};
    if (!optional_finite(held, SETTING("f_ext"), "f_ext", 2, df, &r.fext) ||
        !optional_finite(held, SETTING("damping"), "damping", 1, dd, &r.damping) ||
        !optional_finite(held, SETTING("friction"), "friction", 1, dfr, &r.friction) ||
        !optional_finite(held, SETTING("friction_velocity"), "friction_velocity", 1, dfr, &r.friction_velocity) ||
        !optional_finite(held, SETTING("implicit_armature"), "implicit_armature", 1, dd, &r.implicit_armature))
        return NULL;
    for (int k = 0; r.implicit_armature && k < m->nv; k++)
        if (!(r.implicit_armature[k] >= 0.0))
            return PyErr_Format(PyExc_ValueError, "implicit_armature: expected (nv,) = (%d,) numbers >= 0; entry %d "
                                "is %g", m->nv, k, r.implicit_armature[k]);
    if (r.friction) {  /* its smoothing velocities divide: each positive */
        for (int k = 0; r.friction_velocity && k < m->nv; k++)
            if (!(r.friction_velocity[k] > 0.0))
                return PyErr_Format(PyExc_ValueError, "friction_velocity: expected (nv,) = (%d,) positive numbers; "
                                    "entry %d is %g", m->nv, k, r.friction_velocity[k]);
        if (!r.friction_velocity)
            return PyErr_Format(PyExc_ValueError, "friction_velocity: expected (nv,) = (%d,) positive numbers "
                                "with friction; got None", m->nv);
    }
    if (SETTING("gc_lift") != Py_None) {
        npy_intp dg[2] = {m->nb, 3}, dc[2] = {m->nb, 3};
        PyArrayObject *lift = gated_array(held, SETTING("gc_lift"), "gc_lift", NPY_DOUBLE, 2, dg, 0);
        PyArrayObject *com = lift ? gated_array(held, SETTING("gc_com"), "gc_com", NPY_DOUBLE, 2, dc, 0) : NULL;
        if (!com || !finite_array(lift, "gc_lift") || !finite_array(com, "gc_com"))
            return NULL;
        r.gc_lift = PyArray_DATA(lift), r.gc_com = PyArray_DATA(com);
    }
    r.stop_mode = (int)stop_mode;
    if (SETTING("stops") != Py_None) {
        npy_intp ds[2] = {-1, 4};
        PyArrayObject *stops = gated_array(held, SETTING("stops"), "stops", NPY_DOUBLE, 2, ds, 0);
        if (!stops || !finite_array(stops, "stops"))
            return NULL;
        const double *sr = PyArray_DATA(stops);
        for (npy_intp k = 0; k < ds[0]; k++)
            if (sr[4 * k] < 0 || sr[4 * k] >= m->nq || sr[4 * k + 1] < 0 || sr[4 * k + 1] >= m->nv ||
                sr[4 * k] != (int)sr[4 * k] || sr[4 * k + 1] != (int)sr[4 * k + 1] ||
                fabs(sr[4 * k + 3]) != 1.0) {
                PyErr_SetString(PyExc_ValueError, "stops: expected rows (q index, v index, position, sign ±1) "
                                                  "with indices inside the model");
                return NULL;
            }
        r.stops = sr, r.n_stops = (int)ds[0];
    } else if (stop_mode != MB_STOPS_NONE) {
        PyErr_SetString(PyExc_ValueError, "stops: expected the stops' table with stop_mode 1 or 2");
        return NULL;
    }
    if (!tendon_tables(held, (PyObject *[]){SETTING("tendons"), SETTING("tendon_terms")}, m, &r))
        return NULL;
    int resting_v[m->nv + 1];
    double resting_sign[m->nv + 1];
    unsigned char resting_fd[m->nb + 1];
    if (SETTING("resting") != Py_None) {  /* joints at rest on their stops: one-dof joints, each once */
        npy_intp dr[2] = {-1, 3};
        PyArrayObject *rest = gated_array(held, SETTING("resting"), "resting", NPY_DOUBLE, 2, dr, 0);
        if (!rest || !finite_array(rest, "resting"))
            return NULL;
        const double *row = PyArray_DATA(rest);
        memset(resting_fd, 1, (size_t)m->nb);
        int ok = N == 1 && stop_mode == MB_STOPS_HARD && SETTING("dynamics") == Py_None && dr[0] >= 1 && dr[0] <= m->nv;
        for (npy_intp k = 0; ok && k < dr[0]; k++, row += 3) {
            const double b = row[0];
            ok = b >= 0 && b < m->nb && b == (int)b && fabs(row[2]) == 1.0 && resting_fd[(int)b] &&
                 m->nv_joint[(int)b] == 1 && row[1] == m->v_start[(int)b];
            if (ok)
                resting_fd[(int)b] = 0, resting_v[k] = m->v_start[(int)b], resting_sign[k] = row[2];
        }
        if (!ok) {
            PyErr_SetString(PyExc_ValueError, "resting: expected rows (body, its v index, sign ±1) of distinct "
                                              "one-dof joints, for one run (N = 1) with hard stops and no dynamics "
                                              "function");
            return NULL;
        }
        r.n_resting = (int)dr[0], r.resting_v = resting_v, r.resting_sign = resting_sign, r.resting_fd = resting_fd;
    }
    mb_ground_contact_spec contact;
    int nz = 0;
    PyObject *ground = SETTING("contact");
    if (ground != Py_None) {  /* (bodies, points, nd, K, D, mu) */
        if (!PyTuple_Check(ground) || PyTuple_GET_SIZE(ground) != 6) {
            PyErr_SetString(PyExc_TypeError, "contact: expected a tuple (bodies, points, nd, K, D, mu)");
            return NULL;
        }
        if (!contact_spec_from(&PyTuple_GET_ITEM(ground, 0), held, m, &contact))
            return NULL;
        r.contact = &contact;
        nz = mb_rollout_contact_states(&r);
    }
    PyObject *law = SETTING("contact_call");
    if (law != Py_None) {  /* another contact law, called back: its states' count */
        long n_z;
        if (ground != Py_None) {
            PyErr_SetString(PyExc_ValueError, "contact_call: expected no ground contact beside it");
            return NULL;
        }
        if (!get_long(SETTING("contact_states"), "contact_states", 0, INT_MAX / 2 - 6L * m->nb, &n_z))
            return NULL;
        r.n_call_z = nz = (int)n_z;
    }
    npy_intp dT[2] = {N, -1};
    PyArrayObject *T = gated_array(held, OUTPUT("T"), "T", NPY_DOUBLE, 2, dT, MB_GATE_WRITABLE);
    if (!T)
        return NULL;
    const npy_intp R = dT[1];
    npy_intp dQ[3] = {N, R, m->nq}, dV[3] = {N, R, m->nv}, dY[2] = {N, m->nq + m->nv + nz}, dI[2] = {N, 4};
    PyArrayObject *Q = gated_array(held, OUTPUT("Q"), "Q", NPY_DOUBLE, 3, dQ, MB_GATE_WRITABLE);
    PyArrayObject *QD = Q ? gated_array(held, OUTPUT("QD"), "QD", NPY_DOUBLE, 3, dV, MB_GATE_WRITABLE) : NULL;
    PyArrayObject *QDD = QD ? gated_array(held, OUTPUT("QDD"), "QDD", NPY_DOUBLE, 3, dV, MB_GATE_WRITABLE) : NULL;
    PyArrayObject *TAU = QDD ? gated_array(held, OUTPUT("TAU"), "TAU", NPY_DOUBLE, 3, dV, MB_GATE_WRITABLE) : NULL;
    PyArrayObject *YEND = TAU ? gated_array(held, OUTPUT("Y_END"), "Y_END", NPY_DOUBLE, 2, dY, MB_GATE_WRITABLE) : NULL;
    PyArrayObject *info = YEND ? gated_array(held, OUTPUT("info"), "info", NPY_DOUBLE, 2, dI, MB_GATE_WRITABLE) : NULL;
    if (!info)
        return NULL;
    const double *z0 = NULL;
    double *z_out = NULL, *force_out = NULL;
    if (r.contact || law != Py_None) {  /* the contact states from Z0, into Z; the ground's forces into F */
        npy_intp dz0[2] = {N, nz}, dz[3] = {N, R, nz};
        PyArrayObject *Z0 = gated_array(held, SETTING("Z0"), "Z0", NPY_DOUBLE, 2, dz0, 0);
        PyArrayObject *Z = Z0 ? gated_array(held, OUTPUT("Z"), "Z", NPY_DOUBLE, 3, dz, MB_GATE_WRITABLE) : NULL;
        if (!Z)
            return NULL;
        z0 = PyArray_DATA(Z0), z_out = PyArray_DATA(Z);
        if (r.contact) {
            npy_intp dF[4] = {N, R, contact.npt, 3};
            PyArrayObject *F = gated_array(held, OUTPUT("F"), "F", NPY_DOUBLE, 4, dF, MB_GATE_WRITABLE);
            if (!F)
                return NULL;
            force_out = PyArray_DATA(F);
        }
    }
    long n_sample0;
    if (!get_long(SETTING("n_sample0"), "n_sample0", 0, LONG_MAX, &n_sample0))
        return NULL;
    r.n_sample0 = n_sample0;
    npy_intp dh[1] = {m->nv};
    if (!optional_finite(held, SETTING("held0"), "held0", 1, dh, &r.held0))
        return NULL;
    double *held_out = NULL, *n_sample_out = NULL;
    if (OUTPUT("HELD_END") != Py_None) {
        npy_intp dh[2] = {N, m->nv}, dn[1] = {N};
        PyArrayObject *H = gated_array(held, OUTPUT("HELD_END"), "HELD_END", NPY_DOUBLE, 2, dh, MB_GATE_WRITABLE);
        PyArrayObject *S = H ? gated_array(held, OUTPUT("N_SAMPLE_END"), "N_SAMPLE_END", NPY_DOUBLE, 1, dn, MB_GATE_WRITABLE) : NULL;
        if (!S)
            return NULL;
        held_out = PyArray_DATA(H), n_sample_out = PyArray_DATA(S);
    }
    if (R < 1) {
        PyErr_SetString(PyExc_ValueError, "T: expected room for at least one sample");
        return NULL;
    }
    r.capacity = (long)R;
    int q_index[m->nv + 1];  /* a PD on a model with multi-dof joints: q index of each one-dof joint's dof */
    if (r.control.kind == MB_CONTROL_PD && !vector) {
        for (int i = 0; i < m->nb; i++)
            for (int a = 0; a < m->nv_joint[i]; a++)
                q_index[m->v_start[i] + a] = mb_joint_is_vector(m->jtype[i]) ? m->q_start[i] + a : -1;
        r.control.q_index = q_index;
    }
    py_callbacks cb = {.nq = m->nq, .nv = m->nv, .nb = m->nb, .nz = nz};
    PyObject **const functions[] = {&cb.control, &cb.forces, &cb.guards, &cb.dynamics, &cb.contact};
    const char *const function_keys[] = {"control", "forces", "guards", "dynamics", "contact_call"};
    for (int k = 0; k < 5; k++)  /* the Python functions the loop calls back, or NULL */
        *functions[k] = SETTING(function_keys[k]) == Py_None ? NULL : SETTING(function_keys[k]);
    if (cb.guards) {
        npy_intp dd[1] = {-1};
        PyArrayObject *dirs = gated_array(held, SETTING("directions"), "directions", NPY_INT32, 1, dd, 0);
        if (!dirs)
            return NULL;
        if (dd[0] > INT_MAX / 2) {
            PyErr_SetString(PyExc_ValueError, "directions: too many events");
            return NULL;
        }
        r.guards = call_python, r.guards_ctx = &cb, r.n_guards = cb.n_guards = (int)dd[0];
        r.directions = PyArray_DATA(dirs);
    }
    if (cb.control || cb.forces || cb.guards || cb.dynamics || cb.contact) {
        for (int k = 0; k < 5; k++)
            if (*functions[k] && !PyCallable_Check(*functions[k])) {
                PyErr_SetString(PyExc_TypeError, "control, forces, guards, dynamics, contact_call: expected Python "
                                                 "functions or None");
                return NULL;
            }
        if (N != 1 || (cb.control && SETTING("kp") != Py_None)) {
            PyErr_SetString(PyExc_ValueError, "control, forces, guards, dynamics, contact_call: Python functions "
                                              "run one run (N = 1), without kp");
            return NULL;
        }
        if (cb.dynamics)
            r.dynamics = call_dynamics, r.dynamics_ctx = &cb;
        if (cb.contact)
            r.contact_call = call_contact, r.contact_ctx = &cb;
        if (cb.control)
            r.control.kind = MB_CONTROL_CALL, r.control.call = call_python, r.control.ctx = &cb;
        if (cb.forces)
            r.forces = call_python, r.forces_ctx = &cb;
        if (SETTING("one_step") != Py_None && !get_double(SETTING("one_step"), "one_step", 0.0, 1, &r.one_step))
        return NULL;
    r.control.period = period;
    }
    if (SETTING("control_batch") != Py_None) {  /* a controller of the whole batch: one group, one call a stage */
        cb.control_batch = SETTING("control_batch");
        if (!PyCallable_Check(cb.control_batch) || cb.control || cb.forces || cb.guards || cb.dynamics || cb.contact ||
            SETTING("kp") != Py_None || r.stop_mode == MB_STOPS_HARD || r.contact || r.one_step > 0.0 || period > 0.0 ||
            N > INT_MAX) {
            PyErr_SetString(PyExc_ValueError, "control_batch: expected a Python function (t, Q, QD) -> τ (N, nv), "
                                              "continuous (period 0), without kp, another Python function, hard "
                                              "stops, contact or one_step");
            return NULL;
        }
        r.control.kind = MB_CONTROL_BATCH, r.control.batch = call_batch, r.control.ctx = &cb;
    }
    rollout_job rj = {{0}};
    job j = {0};
    j.in[0] = PyArray_DATA(Q0), j.step[0] = m->nq;
    j.in[1] = PyArray_DATA(QD0), j.step[1] = m->nv;
    j.in[2] = z0, j.step[2] = nz;
    bind_output(&j, 0, T, R);
    bind_output(&j, 1, Q, R * m->nq);
    bind_output(&j, 2, QD, R * m->nv);
    bind_output(&j, 3, QDD, R * m->nv);
    j.tau_out = PyArray_DATA(TAU);
    j.info = PyArray_DATA(info);
    j.y_end = PyArray_DATA(YEND);
    j.rollout = &r;
    rj.j = j;
    rj.nz = nz, rj.np3 = r.contact ? 3 * contact.npt : 0, rj.z_out = z_out, rj.force_out = force_out;
    rj.held_out = held_out, rj.n_sample_out = n_sample_out;
    const int lanes_run = !r.fext && !r.gc_lift && !r.contact && !r.contact_call && !r.forces && !r.dynamics &&
                          (mb_lanes_supported(m) || m->planar);  /* else one run at a time (planar trees: their
                                                                  * RK4 steps in lanes, rollout.c) */
    /* A batch's groups: the widest lanes.  One run of a planar tree: two lanes (single_run_lanes), for
     * the lean RK4 step (rollout_lanes.h; its FDab is small, the step's bookkeeping is not); other single
     * runs, whose FDab dominates, run scalar (measured: the double pendulum 9 % faster, the Panda not). */
    rj.lanes = !lanes_run || !lanes_active ? NULL : N > 1 ? lanes_active : m->planar ? single_run_lanes() : NULL;
    rj.width = N > 1 && rj.lanes && rj.lanes->width <= 8 ? rj.lanes->width : 1;
    rj.runs = N;
    rj.fill_nan = N > 1 || stop_mode == MB_STOPS_HARD;  /* a single run's unreached rows stay unset */
    if (!(rj.singular = malloc(sizeof(int) * (N ? N : 1))))
        return PyErr_NoMemory();
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = cb.control_batch ? run_batch_from(m, rollout_together, &rj.j, 1, 2)
                          : run_batch_from(m, rollout_group, &rj.j, (N + rj.width - 1) / rj.width, 2);
    Py_END_ALLOW_THREADS
    for (Py_ssize_t n = 0; st == MB_OK && n < N; n++)  /* the body the caller's message names */
        if (j.info[4 * n + 1] > 0.0) {
            if (j.info[4 * n + 1] == MB_SINGULAR)
                mb_singular_at(m, rj.singular[n]);
            break;
        }
    free(rj.singular);
    if (cb.err_type) {  /* the Python function's own exception, as the Python loop would raise it */
        PyErr_Restore(cb.err_type, cb.err_value, cb.err_tb);
        return NULL;
    }
    if (st != MB_OK)
        return raise_status(st);
    Py_RETURN_NONE;
#undef SETTING
#undef OUTPUT
}

/* The public entry points: each runs its _entry with a hold for the arrays the gate makes. */
GATED_ENTRY(py_rollout, rollout_entry)

/* steppers() -> tuple of (name, order, stages, stable_decay, flags, a, b, c, source): rollout.c's table of
 * fixed-step methods, row i for integrator code i; a, b, c tuples of floats (a row-major, stages²) or None. */
static PyObject *floats(const double *x, int count)
{
    if (!x)
        Py_RETURN_NONE;
    PyObject *t = PyTuple_New(count);
    for (int i = 0; t && i < count; i++) {
        PyObject *f = PyFloat_FromDouble(x[i]);
        if (!f) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, f);
    }
    return t;
}

PyObject *py_steppers(PyObject *self, PyObject *unused)
{
    PyObject *rows = PyTuple_New(mb_n_steppers);
    for (int i = 0; rows && i < mb_n_steppers; i++) {
        const mb_stepper *s = &mb_steppers[i];
        PyObject *row = Py_BuildValue("(siidiNNNs)", s->name, s->order, s->stages, s->stable_decay, s->flags,
                                      floats(s->a, s->stages * s->stages), floats(s->b, s->stages),
                                      floats(s->c, s->stages), s->source);
        if (!row) {
            Py_DECREF(rows);
            return NULL;
        }
        PyTuple_SET_ITEM(rows, i, row);
    }
    return rows;
}
