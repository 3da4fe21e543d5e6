/* py_rollout.c — rollout: whole fixed-step runs (rollout.c), many runs across threads, in groups
 * advanced in lockstep with the forward dynamics in SIMD lanes. */
#include <stdatomic.h>

#include "py/py_boundary.h"
#include "sim/hard_contact.h"
#include "sim/scene_contact.h"

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
    double *stop_out;  /* STOP_FORCE (N, nv): a step's resting stops' λ at its start (mb_rollout_out), or NULL */
    int *singular;  /* (runs) run n's MB_SINGULAR body, for the message of the first failing run */
    int fill_nan;   /* the records' rows start NaN (rows a run does not reach stay so) */
    const mb_constraints *constraints;  /* a constrained model's rows in C (constraints.c), or NULL */
    void *fallback;  /* their Python statement where the C solve is singular (py_callbacks), or NULL */
    /* Runs of their own windows (Run.starts, Run.resting: the batch's runs handed back, resumed together
     * between their events): run n starts at t0s[n] with its n_resting[n] joints resting on their stops
     * (resting_v, resting_sign + n·nv), each run a group of one as its own single call is; or NULL. */
    const double *t0s;
    const int *n_resting, *resting_v;
    const double *resting_sign;
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
    unsigned long caller;        /* the thread that called: the one that can see Python's signals   */
    atomic_int interrupted;      /* set once a signal handler raised; every thread of a batch stops */
} py_callbacks;

/* Ctrl-C in a long compiled run: the caller's thread takes the GIL back and runs Python's signal
 * handlers (only the main thread's handlers run; another caller's check finds nothing); the
 * handler's exception (KeyboardInterrupt) is kept as a Python function's would be and stops every
 * run.  The batch's other threads only read the flag. */
static int interrupted(void *ctx)
{
    py_callbacks *cb = ctx;
    if (atomic_load(&cb->interrupted))
        return 1;
    if (PyThread_get_thread_ident() != cb->caller)
        return 0;
    PyGILState_STATE gil = PyGILState_Ensure();
    if (PyErr_CheckSignals() < 0) {
        if (!cb->err_type)
            PyErr_Fetch(&cb->err_type, &cb->err_value, &cb->err_tb);
        PyErr_Clear();
        atomic_store(&cb->interrupted, 1);
    }
    PyGILState_Release(gil);
    return atomic_load(&cb->interrupted);
}

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

/* A constrained model's forward dynamics in C (constraints.c: TMT eq. (6)), one workspace per group of
 * runs (a batch's groups run on several threads); where the solve finds J H⁻¹Jᵀ singular or H not
 * positive definite, the Python statement (cb->dynamics: its diagnostics, or its minimum-norm
 * multipliers for a redundant set) takes that stage, or without one (a batch) the run stops there. */
typedef struct {
    mb_model md;                 /* the model FD runs on (semi_implicit's armature, as rollout.c's) */
    const mb_constraints *cs;
    py_callbacks *cb;
    mb_data *d;
    double *scratch;
} c_constraints;

static int call_dynamics(void *ctx, double t, const double *q, const double *v, const double *tau_all,
                         const double *fext, double *qdd);

static int constrained_dynamics(void *ctx, double t, const double *q, const double *v, const double *tau_all,
                                const double *fext, double *qdd)
{
    c_constraints *k = ctx;
    const int st = mb_constrained_fd(&k->md, k->d, k->cs, k->scratch, q, v, tau_all, fext, qdd, NULL);
    if (st == MB_KKT_OK)
        return MB_OK;
    if (st == MB_KKT_NO_MEMORY)
        return MB_NO_MEMORY;
    return k->cb && k->cb->dynamics ? call_dynamics(k->cb, t, q, v, tau_all, fext, qdd) : MB_SINGULAR;
}

/* A group's copy of the run r with its own constraint workspace (k), or r itself without constraints;
 * NULL if there is no memory (free with constraints_end). */
static const mb_rollout *constraints_begin(const mb_model *m, const rollout_job *rj, const mb_rollout *r,
                                           mb_rollout *local, c_constraints *k)
{
    k->d = NULL, k->scratch = NULL;
    if (!rj->constraints)
        return r;
    k->md = *m;
    if (r->passive.implicit_armature)
        k->md.armature = (double *)r->passive.implicit_armature;
    k->cs = rj->constraints, k->cb = rj->fallback;
    k->d = mb_data_new(m);
    k->scratch = malloc(sizeof(double) * (size_t)(mb_constraints_scratch(m, k->cs) + 1));
    if (!k->d || !k->scratch)
        return NULL;
    *local = *r;
    local->call.dynamics = constrained_dynamics, local->call.dynamics_ctx = k;
    return local;
}

static void constraints_end(c_constraints *k)
{
    if (k->d)
        mb_data_free(k->d);
    free(k->scratch);
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
        if (mb_all_finite(ta, (Py_ssize_t)count * nv)) {
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
 * kernel, against 0.5 s of runs on two threads).  One run (a stretch of simulate between hard-stop
 * events) leaves Z and F unset: its reader takes Z's rows below the count (each written with its
 * sample) and F's where q̈ is finite (written with it) — a scene's Z and F rows are ~250 k numbers
 * each (dm_control's dog, 6277 pairs), and every stretch's record has the rest of the run's rows,
 * so filling them cost 9 s of the dog's 1 s run. */
static void nan_records(const mb_model *m, const rollout_job *rj, Py_ssize_t n, Py_ssize_t R)
{
    const job *j = &rj->j;
    for (int k = 0; k < 4; k++)
        fill_nan(OUT(j, k, n), j->ostep[k]);
    fill_nan(j->tau_out + n * R * m->nv, R * m->nv);
    if (rj->runs == 1)
        return;
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
    const Py_ssize_t R = j->rollout->record.capacity;
    if (rj->fill_nan)
        nan_records(m, rj, n, R);
    *out = (mb_rollout_out){OUT(j, 0, n), OUT(j, 1, n), OUT(j, 2, n), OUT(j, 3, n), j->tau_out + n * R * m->nv,
                            0, 0, 0.0, 0.0, 0, j->y_end + n * (m->nq + m->nv + rj->nz),
                            rj->nz ? rj->z_out + n * R * rj->nz : NULL,
                            rj->np3 ? rj->force_out + n * R * rj->np3 : NULL,
                            rj->held_out ? rj->held_out + n * m->nv : NULL, 0};
    out->stop_force = rj->stop_out ? rj->stop_out + n * m->nv : NULL;
    int st = mb_check_configuration(m, IN(j, 0, n));
    if (st == MB_OK && !mb_all_finite(IN(j, 1, n), m->nv))
        st = MB_BAD_QD;
    if (st == MB_OK && rj->nz && !mb_all_finite(IN(j, 2, n), rj->nz))
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
    mb_rollout own;
    if (rj->t0s) {  /* a run of its own window (width 1): its start and its resting joints */
        const int nv = m->nv;
        own = *r;
        own.t0 = rj->t0s[run[0]];
        own.stops.n_resting = rj->n_resting[run[0]];
        own.stops.resting_v = rj->resting_v + run[0] * nv, own.stops.resting_sign = rj->resting_sign + run[0] * nv;
        r = &own;
    }
    mb_rollout local;
    c_constraints kc;
    const mb_rollout *rg = constraints_begin(m, rj, r, &local, &kc);
    const int st = rg ? mb_run_rollouts(m, d, rj->lanes, rg, L, q0, qd0, z0, o, status) : MB_NO_MEMORY;
    constraints_end(&kc);
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
    mb_rollout local;
    c_constraints kc;
    const mb_rollout *rg = constraints_begin(m, rj, j->rollout, &local, &kc);
    st = !rg ? MB_NO_MEMORY : L ? mb_run_rollouts(m, d, rj->lanes, rg, L, q0, qd0, NULL, o, status) : MB_OK;
    constraints_end(&kc);
    end_runs(rj, st, L, out, run, status);
done:
    free(q0), free(out), free(o), free(run), free(status);
    return st;
}

/* ---- the Plan's records (simulation/rollout.py) into core.h's small structs ------------------------- */

/* The attributes read from the records, kept (new references) until the entry returns: the arrays the
 * structs point into stay alive with them. */
enum { KEPT_MAX = 64 };
typedef struct {
    PyObject *o[KEPT_MAX];
    int n;
} kept;

static void kept_release(kept *k)
{
    while (k->n > 0)
        Py_DECREF(k->o[--k->n]);
}

/* rec.name (kept), or NULL with a TypeError naming the record and the missing field. */
static PyObject *field(kept *k, PyObject *rec, const char *what, const char *name)
{
    if (k->n == KEPT_MAX) {  /* a programming error: more fields than the records have */
        PyErr_Format(PyExc_RuntimeError, "%s: too many fields", what);
        return NULL;
    }
    PyObject *v = PyObject_GetAttrString(rec, name);
    if (!v) {
        PyErr_Format(PyExc_TypeError, "%s: expected a %s record (simulation/rollout.py); it has no field %s", what,
                     what, name);
        return NULL;
    }
    return k->o[k->n++] = v;
}

/* One record's reading: its fields, the gate's hold for their arrays, the record's name for errors. */
typedef struct {
    kept *k;
    gate_hold *held;
    PyObject *rec;
    const char *what;
} reader;

#define FIELD(rd, name) field((rd)->k, (rd)->rec, (rd)->what, name)

/* An optional array of finite numbers: None leaves *data NULL; 0 with the error set if bad. */
static int optional_field(reader *rd, const char *name, int ndim, npy_intp *dims, const double **data)
{
    PyObject *o = FIELD(rd, name);
    return o && optional_finite(rd->held, o, name, ndim, dims, data);
}

/* Control: a PD or torque table's tables (kp None: no table), its period, or the caller's function of
 * one run (call) or of the whole batch (call_batch). */
static int control_from(reader *rd, const mb_model *m, int vector, py_callbacks *cb, mb_control *c)
{
    PyObject *kp_, *period, *gravity, *call, *batch;
    long grav;
    if (!(kp_ = FIELD(rd, "kp")) || !(period = FIELD(rd, "period")) || !(gravity = FIELD(rd, "gravity")) ||
        !(call = FIELD(rd, "call")) || !(batch = FIELD(rd, "call_batch")) ||
        !get_double(period, "period", 0.0, 1, &c->period) || !get_long(gravity, "gravity", 0, 1, &grav))
        return 0;
    if (kp_ != Py_None) {
        PyObject *kd_, *times_, *qr_, *qdr_, *ff_;
        if (!(kd_ = FIELD(rd, "kd")) || !(times_ = FIELD(rd, "times")) || !(qr_ = FIELD(rd, "q_ref")) ||
            !(qdr_ = FIELD(rd, "qd_ref")) || !(ff_ = FIELD(rd, "tau_ff")))
            return 0;
        gate_hold *held = rd->held;
        npy_intp dg[1] = {m->nv}, dt_[1] = {-1};
        PyArrayObject *kp = gated_array(held, kp_, "kp", NPY_DOUBLE, 1, dg, 0);
        PyArrayObject *kd = kp ? gated_array(held, kd_, "kd", NPY_DOUBLE, 1, dg, 0) : NULL;
        PyArrayObject *times = kd ? gated_array(held, times_, "times", NPY_DOUBLE, 1, dt_, 0) : NULL;
        if (!times)
            return 0;
        const npy_intp M = dt_[0];
        npy_intp dr[2] = {M, m->nq}, dvr[2] = {M, m->nv}, dff[2] = {M, m->nv};
        PyArrayObject *qr = gated_array(held, qr_, "q_ref", NPY_DOUBLE, 2, dr, 0);
        PyArrayObject *qdr = qr ? gated_array(held, qdr_, "qd_ref", NPY_DOUBLE, 2, dvr, 0) : NULL;
        PyArrayObject *ff = qdr ? gated_array(held, ff_, "tau_ff", NPY_DOUBLE, 2, dff, 0) : NULL;
        if (!ff || !finite_array(kp, "kp") || !finite_array(kd, "kd") || !finite_array(times, "times") ||
            !finite_array(qr, "q_ref") || !finite_array(qdr, "qd_ref") || !finite_array(ff, "tau_ff"))
            return 0;
        const double *tt = PyArray_DATA(times);
        if (M < 1 || M > INT_MAX) {
            PyErr_SetString(PyExc_ValueError, "times: expected at least one sample time");
            return 0;
        }
        for (npy_intp k = 1; k < M; k++)
            if (!(tt[k] > tt[k - 1])) {
                PyErr_SetString(PyExc_ValueError, "times: expected increasing sample times");
                return 0;
            }
        *c = (mb_control){MB_CONTROL_PD, PyArray_DATA(kp), PyArray_DATA(kd), (int)M, tt, PyArray_DATA(qr),
                          PyArray_DATA(qdr), PyArray_DATA(ff), c->period, (int)grav, NULL};
        const double *gain = PyArray_DATA(kp);
        for (int i = 0; i < m->nb && !vector; i++)  /* joints whose q is no plain vector: no position gain */
            for (int a = 0; a < m->nv_joint[i]; a++) {
                const int k = m->v_start[i] + a;
                if (!mb_joint_is_vector(m->jtype[i]) && gain[k] != 0.0) {
                    PyErr_Format(PyExc_ValueError, "controller: the compiled PD needs kp = 0 on the velocity "
                                 "variables of quaternion and planar joints (kp[%d] = %g)", k, gain[k]);
                    return 0;
                }
            }
    }
    cb->control = call == Py_None ? NULL : call;
    cb->control_batch = batch == Py_None ? NULL : batch;
    return 1;
}

/* The fixed tendons' tables (T,4) | None and (n,4) into p: finite, k, d ≥ 0, L_lo ≤ L_hi, each term's
 * tendon in 0…T−1 in non-decreasing order with every tendon named, and its indices inside the model. */
static int tendon_tables(reader *rd, const mb_model *m, mb_passive *p)
{
    PyObject *tendons = FIELD(rd, "tendons"), *tendon_terms = tendons ? FIELD(rd, "tendon_terms") : NULL;
    if (!tendon_terms)
        return 0;
    if (tendons == Py_None)
        return 1;
    npy_intp dt_[2] = {-1, 4}, dn[2] = {-1, 4};
    PyArrayObject *T = gated_array(rd->held, tendons, "tendons", NPY_DOUBLE, 2, dt_, 0);
    PyArrayObject *terms = T ? gated_array(rd->held, tendon_terms, "tendon_terms", NPY_DOUBLE, 2, dn, 0) : NULL;
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
    p->tendons = t, p->n_tendons = (int)dt_[0], p->tendon_terms = c, p->n_tendon_terms = (int)dn[0];
    return 1;
}

/* Position limits' rows (S,4) (q index, v index, position, sign ±1) | None: *n rows at *rows. */
static int stop_rows(reader *rd, const char *name, const mb_model *m, int width, int *n, const double **rows)
{   /* width 4: (q index, v index, position, sign); MB_SOFT_ROW: then B, K ≥ 0, solimp's dmin, dmax in [0, 1],
     * width ≥ 0, midpoint in [0, 1], power ≥ 1, any margin, Â > 0 (limits.py JointLimits.soft_rows) */
    PyObject *o = FIELD(rd, name);
    if (!o)
        return 0;
    if (o == Py_None)
        return 1;
    npy_intp ds[2] = {-1, width};
    PyArrayObject *stops = gated_array(rd->held, o, name, NPY_DOUBLE, 2, ds, 0);
    if (!stops || !finite_array(stops, name))
        return 0;
    const double *sr = PyArray_DATA(stops);
    for (npy_intp k = 0; k < ds[0]; k++) {
        const double *r = sr + width * k;
        int bad = r[0] < 0 || r[0] >= m->nq || r[1] < 0 || r[1] >= m->nv || r[0] != (int)r[0] ||
                  r[1] != (int)r[1] || fabs(r[3]) != 1.0 || ds[0] > INT_MAX;
        if (width == MB_SOFT_ROW)
            bad = bad || !(r[4] >= 0.0 && r[5] >= 0.0 && r[6] >= 0.0 && r[6] <= 1.0 && r[7] >= 0.0 && r[7] <= 1.0 &&
                           r[8] >= 0.0 && r[9] >= 0.0 && r[9] <= 1.0 && r[10] >= 1.0 && r[12] > 0.0);
        if (bad) {
            char message[300];  /* (PyErr_Format takes ASCII formats only) */
            snprintf(message, sizeof message, "%s: expected rows (q index, v index, position, sign +-1%s) with indices "
                     "inside the model", name, width == MB_SOFT_ROW ? ", B >= 0, K >= 0, dmin and dmax in [0, 1], width "
                     ">= 0, midpoint in [0, 1], power >= 1, margin, invweight > 0" : "");
            PyErr_SetString(PyExc_ValueError, message);
            return 0;
        }
    }
    *rows = sr, *n = (int)ds[0];
    return 1;
}

/* Passive's joint springs: rows (q index, v index, k, q_spring) with indices inside the model. */
static int spring_rows(reader *rd, const mb_model *m, mb_passive *p)
{
    PyObject *o = FIELD(rd, "springs");
    if (!o)
        return 0;
    if (o == Py_None)
        return 1;
    npy_intp ds[2] = {-1, 4};
    PyArrayObject *a = gated_array(rd->held, o, "springs", NPY_DOUBLE, 2, ds, 0);
    if (!a || !finite_array(a, "springs"))
        return 0;
    const double *r = PyArray_DATA(a);
    for (npy_intp k = 0; k < ds[0]; k++)
        if (r[4 * k] < 0 || r[4 * k] >= m->nq || r[4 * k] != (int)r[4 * k] || r[4 * k + 1] < 0 ||
            r[4 * k + 1] >= m->nv || r[4 * k + 1] != (int)r[4 * k + 1] || ds[0] > INT_MAX) {
            PyErr_SetString(PyExc_ValueError, "springs: expected rows (q index, v index, stiffness, springref) with "
                                              "indices inside the model");
            return 0;
        }
    p->springs = r, p->n_springs = (int)ds[0];
    return 1;
}

/* Passive's joint actuators: rows (model/actuators.py ROW) with the run's ctrl (n) and each variable's
 * force range (nv, 2); ranges lo <= hi (±inf: unlimited). */
static int actuator_rows(reader *rd, const mb_model *m, mb_passive *p)
{
    PyObject *o = FIELD(rd, "actuators");
    if (!o)
        return 0;
    if (o == Py_None) {
        PyObject *go = FIELD(rd, "actuator_gravcomp");
        if (go && go != Py_None)
            PyErr_SetString(PyExc_ValueError, "actuator_gravcomp: expected None without actuators");
        return go == Py_None;
    }
    npy_intp da[2] = {-1, 11};
    PyArrayObject *a = gated_array(rd->held, o, "actuators", NPY_DOUBLE, 2, da, 0);
    if (!a)
        return 0;
    const double *r = PyArray_DATA(a);
    PyObject *to = FIELD(rd, "actuator_terms");
    if (!to)
        return 0;
    npy_intp dt[2] = {-1, 3};
    PyArrayObject *ta = to == Py_None ? NULL : gated_array(rd->held, to, "actuator_terms", NPY_DOUBLE, 2, dt, 0);
    if (!ta) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "actuator_terms: expected (k, 3) rows with actuators");
        return 0;
    }
    const double *t = PyArray_DATA(ta);
    for (npy_intp k = 0; k < dt[0]; k++) {
        const double *x = t + 3 * k;
        if (!(x[0] >= 0 && x[0] < m->nq && x[0] == (int)x[0] && x[1] >= 0 && x[1] < m->nv && x[1] == (int)x[1] &&
              isfinite(x[2])) || dt[0] > INT_MAX) {
            PyErr_SetString(PyExc_ValueError, "actuator_terms: expected rows (q index, v index, coefficient) with "
                                              "indices inside the model");
            return 0;
        }
    }
    for (npy_intp k = 0; k < da[0]; k++) {
        const double *x = r + 11 * k;
        int ok = x[0] >= 0 && x[0] == (int)x[0] && x[1] >= 0 && x[1] == (int)x[1] && x[0] + x[1] <= dt[0] &&
                 x[7] <= x[8] && x[9] <= x[10] && da[0] <= INT_MAX;
        for (int c = 2; c < 7; c++)
            ok = ok && isfinite(x[c]);
        if (!ok) {
            PyErr_SetString(PyExc_ValueError, "actuators: expected rows (first term, terms, gear, gain, b0, b1, b2, "
                                              "ctrl lo <= ctrl hi, force lo <= force hi) with terms inside "
                                              "actuator_terms");
            return 0;
        }
    }
    p->actuator_terms = t, p->n_actuator_terms = (int)dt[0];
    npy_intp dc[1] = {da[0]}, dr[2] = {m->nv, 2};
    PyObject *range = FIELD(rd, "actuator_dof_range");
    if (!range || !optional_field(rd, "actuator_ctrl", 1, dc, &p->actuator_ctrl))
        return 0;
    if (!p->actuator_ctrl || range == Py_None) {
        PyErr_SetString(PyExc_ValueError, "actuator_ctrl, actuator_dof_range: expected (n,) and (nv, 2) with actuators");
        return 0;
    }
    PyArrayObject *R = gated_array(rd->held, range, "actuator_dof_range", NPY_DOUBLE, 2, dr, 0);
    if (!R)
        return 0;
    p->actuator_dof_range = PyArray_DATA(R);
    for (int k = 0; k < m->nv; k++)
        if (!(p->actuator_dof_range[2 * k] <= p->actuator_dof_range[2 * k + 1])) {
            PyErr_SetString(PyExc_ValueError, "actuator_dof_range: expected rows lo <= hi");
            return 0;
        }
    p->actuators = r, p->n_actuators = (int)da[0];
    /* actuatorgravcomp: variables whose clamp takes gravcomp's generalized force with the actuators' */
    PyObject *go = FIELD(rd, "actuator_gravcomp");
    if (!go)
        return 0;
    if (go == Py_None)
        return 1;
    npy_intp dg[1] = {-1};
    PyArrayObject *ga = gated_array(rd->held, go, "actuator_gravcomp", NPY_DOUBLE, 1, dg, 0);
    if (!ga)
        return 0;
    const double *gi = PyArray_DATA(ga);
    int ok = p->gc_lift != NULL && dg[0] <= m->nv;
    for (npy_intp k = 0; ok && k < dg[0]; k++)
        ok = gi[k] >= 0 && gi[k] < m->nv && gi[k] == (int)gi[k] && (k == 0 || gi[k] > gi[k - 1]);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "actuator_gravcomp: expected increasing v indices inside the model, "
                                          "with the gravity compensation's gc_lift, gc_com");
        return 0;
    }
    p->actuator_gc = gi, p->n_actuator_gc = (int)dg[0];
    return 1;
}

/* Passive: damping, friction with its v_s, gravcomp's lift and centres of mass, the tendons, the soft
 * stops, and the armature FD runs with (passive.c's laws). */
static int passive_from(reader *rd, const mb_model *m, mb_passive *p)
{
    npy_intp dv[1] = {m->nv};
    if (!optional_field(rd, "damping", 1, dv, &p->damping) || !optional_field(rd, "friction", 1, dv, &p->friction) ||
        !optional_field(rd, "friction_velocity", 1, dv, &p->friction_velocity) ||
        !optional_field(rd, "implicit_armature", 1, dv, &p->implicit_armature) ||
        !optional_field(rd, "effort", 1, dv, &p->effort))
        return 0;
    for (int k = 0; p->effort && k < m->nv; k++)
        if (!(p->effort[k] >= 0.0)) {
            PyErr_Format(PyExc_ValueError, "effort: expected (nv,) = (%d,) limits >= 0 (inf: none); entry %d is %g",
                         m->nv, k, p->effort[k]);
            return 0;
        }
    for (int k = 0; p->implicit_armature && k < m->nv; k++)
        if (!(p->implicit_armature[k] >= 0.0)) {
            PyErr_Format(PyExc_ValueError, "implicit_armature: expected (nv,) = (%d,) numbers >= 0; entry %d is %g",
                         m->nv, k, p->implicit_armature[k]);
            return 0;
        }
    if (p->friction) {  /* its smoothing velocities divide: each positive */
        for (int k = 0; p->friction_velocity && k < m->nv; k++)
            if (!(p->friction_velocity[k] > 0.0)) {
                PyErr_Format(PyExc_ValueError, "friction_velocity: expected (nv,) = (%d,) positive numbers; entry "
                             "%d is %g", m->nv, k, p->friction_velocity[k]);
                return 0;
            }
        if (!p->friction_velocity) {
            PyErr_Format(PyExc_ValueError, "friction_velocity: expected (nv,) = (%d,) positive numbers with "
                         "friction; got None", m->nv);
            return 0;
        }
    }
    npy_intp dg[2] = {m->nb, 3}, dc[2] = {m->nb, 3};
    if (!optional_field(rd, "gc_lift", 2, dg, &p->gc_lift) || !optional_field(rd, "gc_com", 2, dc, &p->gc_com))
        return 0;
    if (!p->gc_lift != !p->gc_com) {
        PyErr_SetString(PyExc_ValueError, "gc_lift, gc_com: expected both (nb, 3) tables or neither");
        return 0;
    }
    return tendon_tables(rd, m, p) && stop_rows(rd, "soft_stops", m, MB_SOFT_ROW, &p->n_soft, &p->soft) &&
           spring_rows(rd, m, p) && actuator_rows(rd, m, p);
}

/* Stops: the hard stops' rows, and the joints resting on them (R,3) (body, v index, sign of its stop)
 * into the caller's buffers resting_v (nv), resting_sign (nv); resting_fd (nb) marks the bodies seen. */
static int stops_from(reader *rd, const mb_model *m, npy_intp N, mb_stops *s, int *resting_v, double *resting_sign,
                      unsigned char *resting_fd)
{
    PyObject *resting;
    if (!stop_rows(rd, "rows", m, 4, &s->n, &s->rows) || !(resting = FIELD(rd, "resting")))
        return 0;
    if (resting == Py_None)
        return 1;
    npy_intp dr[2] = {-1, 3};  /* joints at rest on their stops: one-dof joints, each once */
    PyArrayObject *rest = gated_array(rd->held, resting, "resting", NPY_DOUBLE, 2, dr, 0);
    if (!rest || !finite_array(rest, "resting"))
        return 0;
    const double *row = PyArray_DATA(rest);
    memset(resting_fd, 1, (size_t)m->nb);
    int ok = N == 1 && s->n > 0 && dr[0] >= 1 && dr[0] <= m->nv;
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
        return 0;
    }
    s->n_resting = (int)dr[0], s->resting_v = resting_v, s->resting_sign = resting_sign;
    return 1;
}

/* Contact: the ground's table (bodies (np,), points (np,3), nd, K, D, mu) (simulation.contact.GroundContact)
 * into *ground; or the model's geoms (gint, gdat, hulls, pairs, pdat, K, D) (simulation.contact.SceneContact)
 * into *scene, its hulls parsed once for the run (the caller frees them), under the compliant law or, with
 * `hard` (restitution, erp, slop, cfm: sim/hard_contact.h), hard contact; or another law the loop calls
 * back with its number of states. */
static int contact_from(reader *rd, const mb_model *m, py_callbacks *cb, mb_ground_contact_spec *ground,
                        mb_scene *scene, mb_contact *c)
{
    PyObject *table = FIELD(rd, "ground"), *geoms = table ? FIELD(rd, "scene") : NULL,
             *call = geoms ? FIELD(rd, "call") : NULL, *states = call ? FIELD(rd, "states") : NULL,
             *implicit_step = states ? FIELD(rd, "implicit_step") : NULL;
    npy_intp dh[1] = {MB_HARD_SIZE}, dg[2] = {-1, m->nv + m->nq + 1}, dl[2] = {-1, 4};
    const double *hard = NULL, *hard_G = NULL, *limits = NULL;
    if (!implicit_step || !get_double(implicit_step, "implicit_step", 0.0, 1, &c->implicit_dt) ||
        !optional_field(rd, "hard", 1, dh, &hard) || !optional_field(rd, "hard_rows", 2, dg, &hard_G) ||
        !optional_field(rd, "hard_limits", 2, dl, &limits))
        return 0;
    if ((hard_G || limits) && !hard) {
        PyErr_SetString(PyExc_ValueError, "contact: hard_rows, hard_limits (rows kept by hard contact) without hard");
        return 0;
    }
    for (npy_intp k = 0; limits && k < dl[0]; k++) {
        const double *row = limits + 4 * k;
        if (!(row[0] >= 0 && row[0] < m->nq && row[0] == floor(row[0]) && row[1] >= 0 && row[1] < m->nv &&
              row[1] == floor(row[1]) && fabs(row[3]) == 1.0)) {
            PyErr_Format(PyExc_ValueError, "contact: hard_limits row %zd: expected (q index, v index, position, sign "
                         "±1) of this model", (Py_ssize_t)k);
            return 0;
        }
    }
    c->hard_rows = hard_G ? (int)dg[0] : 0, c->hard_G = hard_G;
    c->hard_limits = limits ? (int)dl[0] : 0, c->hard_limit_rows = limits;
    if (hard && geoms == Py_None) {
        PyErr_SetString(PyExc_ValueError, "contact: hard contact needs the scene (the model's geoms)");
        return 0;
    }
    if (hard && !(hard[MB_HARD_RESTITUTION] >= 0.0 && hard[MB_HARD_RESTITUTION] <= 1.0 && hard[MB_HARD_ERP] >= 0.0 &&
                  hard[MB_HARD_ERP] <= 1.0 && hard[MB_HARD_SLOP] >= 0.0 && hard[MB_HARD_CFM] > 0.0 &&
                  hard[MB_HARD_LIMIT_RESTITUTION] >= 0.0 && hard[MB_HARD_LIMIT_RESTITUTION] <= 1.0)) {
        PyErr_Format(PyExc_ValueError, "contact: hard contact's restitution %g, erp %g, slop %g, cfm %g, limits' "
                     "restitution %g; expected restitutions and erp in [0, 1], slop >= 0, cfm > 0", hard[0], hard[1],
                     hard[2], hard[3], hard[4]);
        return 0;
    }
    if ((table != Py_None) + (geoms != Py_None) + (call != Py_None) > 1) {
        PyErr_SetString(PyExc_ValueError, "contact: expected one of the ground's table, the scene or a contact law, not both");
        return 0;
    }
    if (table != Py_None) {
        if (!PyTuple_Check(table) || PyTuple_GET_SIZE(table) != 6) {
            PyErr_SetString(PyExc_TypeError, "contact: expected a tuple (bodies, points, nd, K, D, mu)");
            return 0;
        }
        if (!contact_spec_from(&PyTuple_GET_ITEM(table, 0), rd->held, m, ground))
            return 0;
        c->ground = ground;
    }
    if (geoms != Py_None) {
        if (!PyTuple_Check(geoms) || PyTuple_GET_SIZE(geoms) != 7) {
            PyErr_SetString(PyExc_TypeError, "contact: expected a scene tuple (gint, gdat, hulls, pairs, pdat, K, D)");
            return 0;
        }
        const double K = PyFloat_AsDouble(PyTuple_GET_ITEM(geoms, 5)), D = PyFloat_AsDouble(PyTuple_GET_ITEM(geoms, 6));
        if (PyErr_Occurred())
            return 0;
        if (!hard && !(isfinite(K) && K >= 0.0 && isfinite(D) && D > 0.0)) {
            PyErr_Format(PyExc_ValueError, "contact: stiffness %g and damping %g; expected K >= 0 and D > 0", K, D);
            return 0;
        }
        if (!py_scene_from(&PyTuple_GET_ITEM(geoms, 0), rd->held, m, scene))
            return 0;
        if (scene->npair > INT_MAX / (8 * MB_SCENE_PAIR_MAX)) {
            PyErr_SetString(PyExc_ValueError, "contact: too many candidate pairs");
            return 0;
        }
        c->scene = scene, c->K = K, c->D = D, c->scene_slots = scene->nslot, c->hard = hard;
    }
    if (call != Py_None) {  /* another contact law, called back: its states' count */
        long n_z;
        if (!get_long(states, "contact states", 0, INT_MAX / 2 - 6L * m->nb, &n_z))
            return 0;
        cb->contact = call, c->n_call_z = (int)n_z;
    }
    return 1;
}

/* Callbacks: the caller's force function, the user's events' guards with their directions, a
 * constrained model's dynamics, and the columns of the sensitivities' Z in the contact law's states. */
static int callbacks_from(reader *rd, py_callbacks *cb, mb_callbacks *c)
{
    PyObject *forces = FIELD(rd, "forces"), *guards = forces ? FIELD(rd, "guards") : NULL,
             *dynamics = guards ? FIELD(rd, "dynamics") : NULL, *directions = dynamics ? FIELD(rd, "directions") : NULL,
             *z_columns = directions ? FIELD(rd, "z_columns") : NULL;
    long columns;
    if (!z_columns || !get_long(z_columns, "z_columns", 0, INT_MAX / 2, &columns))
        return 0;
    c->z_columns = (int)columns;
    cb->forces = forces == Py_None ? NULL : forces;
    cb->guards = guards == Py_None ? NULL : guards;
    cb->dynamics = dynamics == Py_None ? NULL : dynamics;
    if (cb->guards) {
        npy_intp dd[1] = {-1};
        PyArrayObject *dirs = gated_array(rd->held, directions, "directions", NPY_INT32, 1, dd, 0);
        if (!dirs)
            return 0;
        if (dd[0] > INT_MAX / 2) {
            PyErr_SetString(PyExc_ValueError, "directions: too many events");
            return 0;
        }
        c->n_guards = cb->n_guards = (int)dd[0], c->directions = PyArray_DATA(dirs);
    }
    return 1;
}

/* Constraints: a constrained model's tables in C (simulation/rollout.py's Constraints: items, terms, coef,
 * gains), or None; the loop's forward dynamics is then constraints.c's (rollout_group gives each group
 * its workspace). */
static int constraints_from(reader *rd, const mb_model *m, PyObject *record, mb_constraints *cs, int *have)
{
    *have = 0;
    if (record == Py_None)
        return 1;
    reader rc = {rd->k, rd->held, record, "Constraints"};
    PyObject *items = FIELD(&rc, "items"), *terms = items ? FIELD(&rc, "terms") : NULL,
             *coef = terms ? FIELD(&rc, "coef") : NULL, *gains = coef ? FIELD(&rc, "gains") : NULL;
    if (!gains || !constraint_tables_from(items, terms, coef, gains, rd->held, m, cs))
        return 0;
    *have = 1;
    return 1;
}

/* Record: keep every record_every-th grid sample; keep_last: a non-finite run also records its last
 * finite state off the grid. */
static int record_from(reader *rd, mb_record *r)
{
    PyObject *every = FIELD(rd, "record_every"), *last = every ? FIELD(rd, "keep_last") : NULL;
    long keep_last;
    if (!last || !get_long(every, "record_every", 1, LONG_MAX, &r->record_every) ||
        !get_long(last, "keep_last", 0, 1, &keep_last))
        return 0;
    r->keep_last = (int)keep_last;
    return 1;
}

/* The run's window (a Run record): integrator code, t0, t_final, dt, one_step (None or h > 0), and a
 * sampled controller's hold at t0: held0 (nv) | None, n_sample0. */
/* One step's size h: finite and not 0 (h < 0: a step backwards from t0, the polynomial of the step
 * continued — the sensitivities' time rates difference a step that ends a hair after an event). */
static int get_one_step(PyObject *o, double *out)
{
    const double h = PyFloat_AsDouble(o);
    if (h == -1.0 && PyErr_Occurred())
        return 0;
    if (!isfinite(h) || h == 0.0) {
        PyErr_SetString(PyExc_ValueError, "one_step: expected a finite step size other than 0");
        return 0;
    }
    *out = h;
    return 1;
}

static int window_from(reader *rd, const mb_model *m, mb_rollout *r)
{
    PyObject *integrator = FIELD(rd, "integrator"), *t0 = integrator ? FIELD(rd, "t0") : NULL,
             *t_final = t0 ? FIELD(rd, "t_final") : NULL, *dt = t_final ? FIELD(rd, "dt") : NULL,
             *one = dt ? FIELD(rd, "one_step") : NULL, *n_sample0 = one ? FIELD(rd, "n_sample0") : NULL;
    long code;
    npy_intp dh[1] = {m->nv};
    if (!n_sample0 || !get_long(integrator, "integrator", 0, mb_n_steppers - 1, &code) ||
        !get_double(t0, "t0", 0.0, 1, &r->t0) || !get_double(t_final, "t_final", 0.0, 1, &r->t_final) ||
        !get_double(dt, "dt", 0.0, 0, &r->dt) || (one != Py_None && !get_one_step(one, &r->one_step)) ||
        !get_long(n_sample0, "n_sample0", 0, LONG_MAX, &r->n_sample0) ||
        !optional_field(rd, "held0", 1, dh, &r->held0))
        return 0;
    r->integrator = (int)code;
    return 1;
}

/* Run.starts (N,) and Run.resting (N, nv, 3) | None: runs of their own windows (a batch's runs resumed
 * together between their events, rj->t0s), each started at its t0 ∈ [Run.t0, t_final] with its joints
 * resting on their stops (rows (body, v index, sign) as Stops.resting's, unused rows body −1 after the
 * used ones); into rj (its block in *block, freed by the caller).  None: 1, the run's one window. */
static int own_windows(reader *rd, const mb_model *m, npy_intp N, const mb_rollout *r, const py_callbacks *cb,
                       int have_cons, rollout_job *rj, void **block)
{
    PyObject *starts = FIELD(rd, "starts"), *resting = starts ? FIELD(rd, "resting") : NULL;
    if (!resting)
        return 0;
    if (starts == Py_None) {
        if (resting == Py_None)
            return 1;
        PyErr_SetString(PyExc_ValueError, "resting: per-run resting rows need per-run starts (Run.starts)");
        return 0;
    }
    npy_intp ds[1] = {N}, dr[3] = {N, m->nv, 3};
    const double *t0s, *rows = NULL;
    if (!optional_finite(rd->held, starts, "starts", 1, ds, &t0s) ||
        !optional_finite(rd->held, resting, "resting", 3, dr, &rows))
        return 0;
    for (npy_intp n = 0; n < N; n++)
        if (!(t0s[n] >= r->t0 && t0s[n] <= r->t_final)) {
            PyErr_SetString(PyExc_ValueError, "starts: expected each run's start in [t0, t_final]");
            return 0;
        }
    if (r->one_step != 0.0 || r->stops.n_resting || r->control.kind == MB_CONTROL_BATCH ||
        (rows && (!r->stops.n || cb->dynamics || have_cons))) {
        PyErr_SetString(PyExc_ValueError, "starts, resting: runs of their own windows take no one_step, no Stops.resting "
                                          "and no batch controller; resting rows need hard stops and no dynamics "
                                          "function");
        return 0;
    }
    const int nv = m->nv;
    char *b = calloc(1, sizeof(double) * (size_t)N * nv + sizeof(int) * (size_t)N * (nv + 1) + 1);
    unsigned char *seen = malloc((size_t)m->nb + 1);
    if (!b || !seen) {
        free(b), free(seen);
        PyErr_NoMemory();
        return 0;
    }
    *block = b;
    double *sign = (double *)b;
    int *v_index = (int *)(sign + (size_t)N * nv), *count = v_index + (size_t)N * nv;
    int ok = 1;
    for (npy_intp n = 0; ok && rows && n < N; n++) {  /* stops_from's checks, run by run */
        memset(seen, 1, (size_t)m->nb);
        const double *row = rows + n * nv * 3;
        int k = 0;
        for (; k < nv && row[3 * k] != -1.0; k++) {
            const double b_ = row[3 * k];
            ok = b_ >= 0 && b_ < m->nb && b_ == (int)b_ && fabs(row[3 * k + 2]) == 1.0 && seen[(int)b_] &&
                 m->nv_joint[(int)b_] == 1 && row[3 * k + 1] == m->v_start[(int)b_];
            if (!ok)
                break;
            seen[(int)b_] = 0, v_index[n * nv + k] = m->v_start[(int)b_], sign[n * nv + k] = row[3 * k + 2];
        }
        for (int u = k; ok && u < nv; u++)
            ok = row[3 * u] == -1.0;
        count[n] = k;
    }
    free(seen);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "resting: expected per run rows (body, its v index, sign ±1) of distinct "
                                          "one-dof joints, then rows of body -1");
        return 0;
    }
    rj->t0s = t0s, rj->n_resting = count, rj->resting_v = v_index, rj->resting_sign = sign;
    return 1;
}

/* The entries of rollout's outputs dict (any other is an error: a misspelt one would be ignored). */
static const char *const OUTPUTS[] = {"T", "Q", "QD", "QDD", "TAU", "Y_END", "info", "Z", "F", "HELD_END",
                                      "N_SAMPLE_END", "STOP_FORCE", NULL};

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

/* d[key] (borrowed), or None where d has no such entry. */
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

/* The Plan's records into r (plan: control, f_ext, passive, stops, contact, callbacks; run: the window,
 * record and Z0), with the checks that join records; 0 with the error set. */
static int plan_from(PyObject *plan, PyObject *run, kept *k, gate_hold *held, const mb_model *m, npy_intp N,
                     int vector, py_callbacks *cb, mb_rollout *r, mb_ground_contact_spec *ground, mb_scene *scene,
                     int *resting_v,
                     double *resting_sign, unsigned char *resting_fd, mb_constraints *cons, int *have_cons)
{
    reader top = {k, held, plan, "Plan"}, window = {k, held, run, "Run"};
    PyObject *control, *fext, *passive, *stops, *contact, *callbacks, *record, *constraints;
    if (!(control = FIELD(&top, "control")) || !(fext = FIELD(&top, "f_ext")) || !(passive = FIELD(&top, "passive")) ||
        !(stops = FIELD(&top, "stops")) || !(contact = FIELD(&top, "contact")) ||
        !(callbacks = FIELD(&top, "callbacks")) || !(constraints = FIELD(&top, "constraints")) ||
        !(record = FIELD(&window, "record")) || !constraints_from(&top, m, constraints, cons, have_cons))
        return 0;
    reader rc = {k, held, control, "Control"}, rp = {k, held, passive, "Passive"}, rs = {k, held, stops, "Stops"},
           rn = {k, held, contact, "Contact"}, rb = {k, held, callbacks, "Callbacks"}, rr = {k, held, record, "Record"};
    npy_intp df[2] = {m->nb, 6};
    if (!window_from(&window, m, r) || !record_from(&rr, &r->record) || !control_from(&rc, m, vector, cb, &r->control) ||
        !optional_finite(held, fext, "f_ext", 2, df, &r->fext) || !passive_from(&rp, m, &r->passive) ||
        !stops_from(&rs, m, N, &r->stops, resting_v, resting_sign, resting_fd) ||
        !contact_from(&rn, m, cb, ground, scene, &r->contact) || !callbacks_from(&rb, cb, &r->call))
        return 0;
    if (r->contact.hard && (r->stops.n_resting || cb->dynamics || *have_cons || r->integrator != MB_SEMI_IMPLICIT)) {
        PyErr_SetString(PyExc_ValueError, "contact='hard': a velocity-level time stepper on M's own factorisation: "
                                          "it runs with integrator semi_implicit, with no joint resting on a hard stop "
                                          "and no constraint dynamics (its constraints are rows of its LCP: hard_rows)");
        return 0;
    }
    if (r->call.z_columns) {  /* the law's states: its own nz_law, then Z ((2 nv + nz_law) × columns) */
        const long cols = r->call.z_columns, total = cb->contact ? r->contact.n_call_z : -1;
        const long law = (total - 2L * m->nv * cols) / (1 + cols);
        if (total < 0 || law < 0 || law + (2L * m->nv + law) * cols != total) {
            PyErr_Format(PyExc_ValueError, "z_columns: %ld columns of the sensitivities' Z do not fit the contact law's "
                                           "%ld states; expected nz + (2 nv + nz) * columns with nv = %d",
                         cols, total, m->nv);
            return 0;
        }
        r->call.z_law = (int)law;
    }
    if (r->stops.n_resting && (cb->dynamics || *have_cons)) {
        PyErr_SetString(PyExc_ValueError, "resting: expected rows (body, its v index, sign ±1) of distinct one-dof "
                                          "joints, for one run (N = 1) with hard stops and no dynamics function");
        return 0;
    }
    PyObject *const functions[] = {cb->control, cb->forces, cb->guards, cb->dynamics, cb->contact};
    int any = 0;
    for (int i = 0; i < 5; i++)
        if (functions[i]) {
            /* beside C constraints the dynamics function only answers a singular solve (its
             * diagnostics, raised; a redundant set's minimum-norm solve): any run of a batch may call it */
            any |= !(i == 3 && *have_cons);
            if (!PyCallable_Check(functions[i])) {
                PyErr_SetString(PyExc_TypeError, "control, forces, guards, dynamics, contact: expected Python "
                                                 "functions or None");
                return 0;
            }
        }
    if (any && (N != 1 || (cb->control && r->control.kind == MB_CONTROL_PD))) {
        PyErr_SetString(PyExc_ValueError, "control, forces, guards, dynamics, contact: Python functions run one run "
                                          "(N = 1), without kp");
        return 0;
    }
    cb->caller = PyThread_get_thread_ident();
    r->call.interrupted = interrupted, r->call.interrupted_ctx = cb;
    if (cb->guards)
        r->call.guards = call_python, r->call.guards_ctx = cb;
    if (cb->dynamics)
        r->call.dynamics = call_dynamics, r->call.dynamics_ctx = cb;
    if (*have_cons)  /* constraints.c's, with a workspace per group (rollout_group: constraints_begin) */
        r->call.dynamics = constrained_dynamics, r->call.dynamics_ctx = NULL;
    if (cb->contact)
        r->contact.call = call_contact, r->contact.ctx = cb;
    if (cb->control)
        r->control.kind = MB_CONTROL_CALL, r->control.call = call_python, r->control.ctx = cb;
    if (cb->forces)
        r->call.forces = call_python, r->call.forces_ctx = cb;
    if (cb->control_batch) {  /* a controller of the whole batch: one group, one call a stage */
        if (!PyCallable_Check(cb->control_batch) || any || r->control.kind == MB_CONTROL_PD || r->stops.n ||
            r->contact.ground || r->contact.scene || r->one_step > 0.0 || r->control.period > 0.0 || N > INT_MAX) {
            PyErr_SetString(PyExc_ValueError, "control_batch: expected a Python function (t, Q, QD) -> τ (N, nv), "
                                              "continuous (period 0), without kp, another Python function, hard "
                                              "stops, contact or one_step");
            return 0;
        }
        r->control.kind = MB_CONTROL_BATCH, r->control.batch = call_batch, r->control.ctx = cb;
    }
    return 1;
}

/* rollout(cmodel, Q0 (N,nq), QD0 (N,nv), outputs, plan, run) -> None
 * outputs (dict, the caller's arrays to fill): T (N,R), Q (N,R,nq), QD (N,R,nv), QDD (N,R,nv), TAU (N,R,nv),
 *     Y_END (N,nq+nv+nz), info (N,4); with contact Z (N,R,nz), F (N,R,np,3) (the ground's); with a
 *     sampled controller HELD_END (N,nv), N_SAMPLE_END (N,): where each run stopped; optional STOP_FORCE (N,nv):
 *     one step's resting stops' λ at its start (its first n_resting entries; one run with resting joints).
 * plan: simulation/rollout.py's Plan — its records Control, Passive, Stops, Contact, Callbacks (and
 *     f_ext (nb,6) | None), each read into its struct of core.h by one function above; a record
 *     without a field the reader expects is a TypeError naming it.
 * run: rollout.py's Run — integrator, t0, t_final, dt, one_step, held0, n_sample0, Z0 (N,nz) with
 *     contact, and its Record (record_every, keep_last).
 * Python functions (control, forces, guards, dynamics, the contact law) run one run (N = 1); a batch
 * controller (call_batch) is called once a stage with the runs still going (the batch then runs as
 * one group, on one thread; continuous, without kp, the other functions, hard stops, contact or
 * one_step).  Fills the caller's arrays (T, Q, QD, QDD, TAU, Z, F start NaN where N ≥ 2 or with hard
 * stops, so the rows a run does not reach are NaN; a single run's are left as they were); info[n] =
 * (samples written, code, t_from, t_to), code 0 finished, −1 stopped at a non-finite state in the
 * step [t_from, t_to], −2 handed back at t_from before a step that crosses a hard stop, > 0 a status
 * code (status.h); Y_END[n] is the state where run n ended.  Runs with the GIL released, on all
 * threads when N ≥ 2, in groups of the lanes' width where the lanes apply (use_lanes; one run at a
 * time with "none"). */
static PyObject *rollout_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    CModel *cm = entry_model(args, nargs, 6, "rollout");
    if (!cm || !known_entries(args[3], "outputs", OUTPUTS))
        return NULL;
#define OUTPUT(key) entry(args[3], key)
    const mb_model *m = &cm->m;
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
    mb_rollout r = {0};
    py_callbacks cb = {.nq = m->nq, .nv = m->nv, .nb = m->nb};
    mb_ground_contact_spec ground;
    mb_scene scene = {0};
    int resting_v[m->nv + 1];
    double resting_sign[m->nv + 1];
    unsigned char resting_fd[m->nb + 1];
    int q_index[m->nv + 1];  /* a PD on a model with multi-dof joints: q index of each one-dof joint's dof */
    kept k = {.n = 0};
    PyObject *result = NULL;
    void *windows = NULL;  /* own_windows' block */
    mb_constraints cons;
    int have_cons = 0;
    if (!plan_from(args[4], args[5], &k, held, m, N, vector, &cb, &r, &ground, &scene, resting_v, resting_sign, resting_fd,
                   &cons, &have_cons))
        goto done;
    const int nz = cb.nz = mb_rollout_contact_states(&r);
    npy_intp dT[2] = {N, -1};
    PyArrayObject *T = gated_array(held, OUTPUT("T"), "T", NPY_DOUBLE, 2, dT, MB_GATE_WRITABLE);
    if (!T)
        goto done;
    const npy_intp R = dT[1];
    npy_intp dQ[3] = {N, R, m->nq}, dV[3] = {N, R, m->nv}, dY[2] = {N, m->nq + m->nv + nz}, dI[2] = {N, 4};
    PyArrayObject *Q = gated_array(held, OUTPUT("Q"), "Q", NPY_DOUBLE, 3, dQ, MB_GATE_WRITABLE);
    PyArrayObject *QD = Q ? gated_array(held, OUTPUT("QD"), "QD", NPY_DOUBLE, 3, dV, MB_GATE_WRITABLE) : NULL;
    PyArrayObject *QDD = QD ? gated_array(held, OUTPUT("QDD"), "QDD", NPY_DOUBLE, 3, dV, MB_GATE_WRITABLE) : NULL;
    PyArrayObject *TAU = QDD ? gated_array(held, OUTPUT("TAU"), "TAU", NPY_DOUBLE, 3, dV, MB_GATE_WRITABLE) : NULL;
    PyArrayObject *YEND = TAU ? gated_array(held, OUTPUT("Y_END"), "Y_END", NPY_DOUBLE, 2, dY, MB_GATE_WRITABLE) : NULL;
    PyArrayObject *info = YEND ? gated_array(held, OUTPUT("info"), "info", NPY_DOUBLE, 2, dI, MB_GATE_WRITABLE) : NULL;
    if (!info)
        goto done;
    const double *z0 = NULL;
    double *z_out = NULL, *force_out = NULL;
    if (r.contact.ground || r.contact.scene || r.contact.call) {  /* the contact states from Z0, into Z; forces into F */
        npy_intp dz0[2] = {N, nz}, dz[3] = {N, R, nz};
        reader window = {&k, held, args[5], "Run"};
        PyObject *Z0_ = FIELD(&window, "Z0");
        PyArrayObject *Z0 = Z0_ ? gated_array(held, Z0_, "Z0", NPY_DOUBLE, 2, dz0, 0) : NULL;
        PyArrayObject *Z = Z0 ? gated_array(held, OUTPUT("Z"), "Z", NPY_DOUBLE, 3, dz, MB_GATE_WRITABLE) : NULL;
        if (!Z)
            goto done;
        z0 = PyArray_DATA(Z0), z_out = PyArray_DATA(Z);
        if (mb_rollout_contact_points(&r)) {
            npy_intp dF[4] = {N, R, mb_rollout_contact_points(&r), 3};
            PyArrayObject *F = gated_array(held, OUTPUT("F"), "F", NPY_DOUBLE, 4, dF, MB_GATE_WRITABLE);
            if (!F)
                goto done;
            force_out = PyArray_DATA(F);
        }
    }
    double *held_out = NULL, *n_sample_out = NULL;
    if (OUTPUT("HELD_END") != Py_None) {
        npy_intp dh[2] = {N, m->nv}, dn[1] = {N};
        PyArrayObject *H = gated_array(held, OUTPUT("HELD_END"), "HELD_END", NPY_DOUBLE, 2, dh, MB_GATE_WRITABLE);
        PyArrayObject *S = H ? gated_array(held, OUTPUT("N_SAMPLE_END"), "N_SAMPLE_END", NPY_DOUBLE, 1, dn, MB_GATE_WRITABLE) : NULL;
        if (!S)
            goto done;
        held_out = PyArray_DATA(H), n_sample_out = PyArray_DATA(S);
    }
    double *stop_out = NULL;
    if (OUTPUT("STOP_FORCE") != Py_None) {
        npy_intp ds[2] = {N, m->nv};
        PyArrayObject *S = gated_array(held, OUTPUT("STOP_FORCE"), "STOP_FORCE", NPY_DOUBLE, 2, ds, MB_GATE_WRITABLE);
        if (!S)
            goto done;
        stop_out = PyArray_DATA(S);
    }
    if (R < 1) {
        PyErr_SetString(PyExc_ValueError, "T: expected room for at least one sample");
        goto done;
    }
    r.record.capacity = (long)R;
    if (r.control.kind == MB_CONTROL_PD && !vector) {
        for (int i = 0; i < m->nb; i++)
            for (int a = 0; a < m->nv_joint[i]; a++)
                q_index[m->v_start[i] + a] = mb_joint_is_vector(m->jtype[i]) ? m->q_start[i] + a : -1;
        r.control.q_index = q_index;
    }
    rollout_job rj = {{0}};
    reader window = {&k, held, args[5], "Run"};
    if (!own_windows(&window, m, N, &r, &cb, have_cons, &rj, &windows))
        goto done;
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
    rj.nz = nz, rj.np3 = 3 * mb_rollout_contact_points(&r), rj.z_out = z_out, rj.force_out = force_out;
    rj.held_out = held_out, rj.n_sample_out = n_sample_out, rj.stop_out = stop_out;
    const int lanes_run = !r.fext && !r.passive.gc_lift && !r.contact.ground && !r.contact.scene && !r.contact.call &&
                          !r.call.forces &&
                          !r.call.dynamics && (mb_lanes_supported(m) || m->planar);  /* else one run at a time
                                                                  * (planar trees: their RK4 steps in lanes, rollout.c) */
    /* A batch's groups: the widest lanes.  One run of a planar tree: two lanes (single_run_lanes), for
     * the lean RK4 step (rollout_lanes.h; its FDab is small, the step's bookkeeping is not); other single
     * runs, whose FDab dominates, step scalar (measured: the double pendulum 9 % faster, the Panda not) and
     * have the widest lanes for the g(q) of their recorded τ, several samples a call (rollout.c's
     * flush_gravity, which makes their workspace where it is used: the Panda's PD + g(q) RK4 step 45.4k ->
     * 44.1k instructions). */
    const int single = N == 1 || rj.t0s;  /* runs of their own windows: each run as its single call */
    rj.lanes = !lanes_run || !lanes_active ? NULL : single && m->planar ? single_run_lanes() : lanes_active;
    rj.width = !single && rj.lanes && rj.lanes->width <= 8 ? rj.lanes->width : 1;
    rj.runs = N;
    rj.constraints = have_cons ? &cons : NULL, rj.fallback = have_cons && cb.dynamics ? &cb : NULL;
    rj.fill_nan = N > 1 || r.stops.n > 0;  /* a single run's unreached rows stay unset */
    if (!(rj.singular = malloc(sizeof(int) * (N ? N : 1)))) {
        PyErr_NoMemory();
        goto done;
    }
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
        goto done;
    }
    if (st != MB_OK) {
        raise_status(st);
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    free(windows);
    py_scene_release(&scene);
    kept_release(&k);
    return result;
#undef OUTPUT
}

/* passive(cmodel, passive, q (nq), v (nv), tau (nv), f_ext (nb, 6) | None) -> (τ_all (nv), f_ext (nb, 6) | None):
 * passive.c's laws at one state from a Passive record — τ plus the joint-space forces (mb_passive_forces, the
 * soft stops' free acceleration under the given f_ext) and gravcomp's spatial forces (mb_passive_gravcomp)
 * where the record carries it.  The tests hold each law to its Python statement through it; the GIL is held. */
static PyObject *passive_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    CModel *cm = entry_model(args, nargs, 6, "passive");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    kept k = {.n = 0};
    reader rp = {&k, held, args[1], "Passive"};
    mb_passive p = {0};
    PyObject *result = NULL, *tau_all = NULL, *fext = NULL;
    npy_intp dq[1] = {m->nq}, dv[1] = {m->nv}, dt_[1] = {m->nv};
    PyArrayObject *q = NULL, *v = NULL, *tau = NULL, *fext_in = NULL;
    npy_intp de[2] = {m->nb, 6};
    double *scratch = NULL;
    if (!passive_from(&rp, m, &p) || !(q = gated_array(held, args[2], "q", NPY_DOUBLE, 1, dq, 0)) ||
        !(v = gated_array(held, args[3], "v", NPY_DOUBLE, 1, dv, 0)) ||
        !(tau = gated_array(held, args[4], "tau", NPY_DOUBLE, 1, dt_, 0)) || !finite_array(q, "q") ||
        !finite_array(v, "v") || !finite_array(tau, "tau") ||
        (args[5] != Py_None && (!(fext_in = gated_array(held, args[5], "f_ext", NPY_DOUBLE, 2, de, 0)) ||
                                !finite_array(fext_in, "f_ext"))))
        goto done;
    const int st = mb_check_configuration(m, PyArray_DATA(q));
    if (st != MB_OK) {
        raise_status(st);
        goto done;
    }
    npy_intp df[2] = {m->nb, 6};
    if (!(scratch = malloc(sizeof(double) * (size_t)(mb_passive_scratch_size(m->nv, p.n_soft) + 1)))) {
        PyErr_NoMemory();
        goto done;
    }
    if (!(tau_all = PyArray_SimpleNew(1, dv, NPY_DOUBLE)) || (p.gc_lift && !(fext = PyArray_SimpleNew(2, df, NPY_DOUBLE))))
        goto done;
    const int law = mb_passive_forces(m, cm->single, &p, PyArray_DATA(q), PyArray_DATA(v), PyArray_DATA(tau), NULL,
                                      fext_in ? PyArray_DATA(fext_in) : NULL, scratch,
                                      PyArray_DATA((PyArrayObject *)tau_all));
    if (law != MB_OK) {
        raise_status(law);
        goto done;
    }
    if (fext)
        mb_passive_gravcomp(m, cm->single, &p, PyArray_DATA(q), NULL, PyArray_DATA((PyArrayObject *)fext));
    result = Py_BuildValue("(OO)", tau_all, fext ? fext : Py_None);
done:
    Py_XDECREF(tau_all), Py_XDECREF(fext);
    free(scratch);
    kept_release(&k);
    return result;
}

GATED_ENTRY(py_passive, passive_entry)

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
