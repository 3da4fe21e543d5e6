/* _core.c — CPython entry points of the C core (module multibody.core._core).
 *
 * This is the boundary between Python and the kernels:
 *   - CModel: the constant C model (model.h) built once from a Python Model's arrays, with one
 *     workspace (data.h) for single-state calls, which run with the GIL held;
 *   - one METH_FASTCALL function per algorithm.  Each takes the CModel and NumPy arrays in one of
 *     two layouts and returns None when the arrays are in neither (the Python face then converts
 *     them, with its readable shape errors, and calls again):
 *       single:  1-D float64 C-contiguous arrays of exactly (nq,) / (nv,), f_ext (nb, 6)
 *                → result for one state, no batch dimension;
 *       batch:   2-D (N or 1, n) arrays (f_ext (N or 1, nb, 6)), leading size 1 = shared by all
 *                states → result (N, …), computed with the GIL released, split across threads
 *                when N ≥ PARALLEL_MIN_BATCH;
 *   - per-state checks (finite numbers, non-zero quaternions) in C, before each state's kernel,
 *     and the one place that turns a status code (status.h) into a ValueError.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

/* Batches at least this large run on all threads; smaller ones stay on the calling thread, where
 * starting threads would cost more than it saves. */
#define PARALLEL_MIN_BATCH 256

static int num_threads = 1;

/* ------------------------------------------------------------------------------------------ */
/* CModel                                                                                       */

typedef struct {
    PyObject_HEAD
    mb_model m;
    mb_data *single;  /* workspace of the single-state calls (GIL held) */
} CModel;

static void cmodel_free_arrays(mb_model *m)
{
    free(m->parent), free(m->jtype), free(m->q_start), free(m->nq_joint), free(m->v_start);
    free(m->nv_joint), free(m->tree_R), free(m->tree_p), free(m->axis), free(m->pitch);
    free(m->inertia), free(m->inertia6), free(m->S), free(m->armature), free(m->dof_parent);
    free(m->axis_kind), free(m->pose_kind), free(m->dof_unit), free(m->plnr);
    memset(m, 0, sizeof *m);
}

static void CModel_dealloc(CModel *self)
{
    mb_data_free(self->single);
    cmodel_free_arrays(&self->m);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A Python array argument of exactly `count` numbers as a C-contiguous array of `type`, and a new
 * C buffer of `size`-byte elements for it; NULL with the error set (naming the argument). */
static PyArrayObject *sized_array(PyObject *o, const char *name, Py_ssize_t count, int type, size_t size, void **buf)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, type, 0, 0, NPY_ARRAY_CARRAY_RO);
    if (!a)
        return NULL;
    if (PyArray_SIZE(a) != count) {
        PyErr_Format(PyExc_ValueError, "CModel: %s has %zd entries, expected %zd", name, PyArray_SIZE(a), count);
        Py_DECREF(a);
        return NULL;
    }
    *buf = malloc(size * (count ? count : 1));
    if (!*buf) {
        Py_DECREF(a);
        PyErr_NoMemory();
        return NULL;
    }
    return a;
}

/* Copy a Python array argument of exactly `count` numbers into a new C array. */
static int copy_ints(PyObject *o, const char *name, Py_ssize_t count, int **out)
{
    PyArrayObject *a = sized_array(o, name, count, NPY_INT64, sizeof(int), (void **)out);
    if (!a)
        return -1;
    const npy_int64 *x = PyArray_DATA(a);
    for (Py_ssize_t k = 0; k < count; k++)
        (*out)[k] = (int)x[k];
    Py_DECREF(a);
    return 0;
}

static int copy_doubles(PyObject *o, const char *name, Py_ssize_t count, double **out)
{
    PyArrayObject *a = sized_array(o, name, count, NPY_DOUBLE, sizeof(double), (void **)out);
    if (!a)
        return -1;
    memcpy(*out, PyArray_DATA(a), sizeof(double) * count);
    Py_DECREF(a);
    return 0;
}

static void mcI_matrix(const double *J, double *M);

/* CModel(parent, jtype, q_start, nq_joint, v_start, nv_joint, tree_rotation, tree_translation,
 *        jaxis, jpitch, inertia10, S, armature, dof_parent, a_grav) */
static PyObject *CModel_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *o[15];
    if (kw && PyDict_Size(kw)) {
        PyErr_SetString(PyExc_TypeError, "CModel takes positional arguments only");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "CModel", 15, 15, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7],
                           &o[8], &o[9], &o[10], &o[11], &o[12], &o[13], &o[14]))
        return NULL;
    CModel *self = (CModel *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    mb_model *m = &self->m;
    PyArrayObject *par = (PyArrayObject *)PyArray_FROMANY(o[0], NPY_INT64, 1, 1, NPY_ARRAY_CARRAY_RO);
    if (!par)
        goto fail;
    m->nb = (int)PyArray_DIM(par, 0);
    Py_DECREF(par);
    const Py_ssize_t nb = m->nb;
    if (copy_ints(o[0], "parent", nb, &m->parent) || copy_ints(o[1], "jtype", nb, &m->jtype) ||
        copy_ints(o[2], "q_start", nb, &m->q_start) || copy_ints(o[3], "nq_joint", nb, &m->nq_joint) ||
        copy_ints(o[4], "v_start", nb, &m->v_start) || copy_ints(o[5], "nv_joint", nb, &m->nv_joint))
        goto fail;
    m->nq = m->nv = m->max_nvj = 0;
    for (int i = 0; i < m->nb; i++) {
        if (m->parent[i] < -1 || m->parent[i] >= i || m->jtype[i] < MB_FIXED || m->jtype[i] > MB_PLANAR ||
            m->q_start[i] != m->nq || m->v_start[i] != m->nv || m->nv_joint[i] > 6 || m->nv_joint[i] < 0) {
            PyErr_Format(PyExc_ValueError, "CModel: inconsistent tree tables at body %d", i);
            goto fail;
        }
        m->nq += m->nq_joint[i];
        m->nv += m->nv_joint[i];
        if (m->nv_joint[i] > m->max_nvj)
            m->max_nvj = m->nv_joint[i];
    }
    const Py_ssize_t nv = m->nv;
    if (copy_doubles(o[6], "tree_rotation", 9 * nb, &m->tree_R) ||
        copy_doubles(o[7], "tree_translation", 3 * nb, &m->tree_p) || copy_doubles(o[8], "jaxis", 3 * nb, &m->axis) ||
        copy_doubles(o[9], "jpitch", nb, &m->pitch) || copy_doubles(o[10], "inertia", MB_NI * nb, &m->inertia) ||
        copy_doubles(o[11], "S", 6 * nv, &m->S) || copy_doubles(o[12], "armature", nv, &m->armature) ||
        copy_ints(o[13], "dof_parent", nv, &m->dof_parent))
        goto fail;
    double *g = NULL;
    if (copy_doubles(o[14], "a_grav", 6, &g))
        goto fail;
    memcpy(m->a_grav, g, sizeof m->a_grav);
    free(g);
    m->inertia6 = malloc(sizeof(double) * 36 * (nb ? nb : 1));
    m->axis_kind = malloc(sizeof(int) * (nb ? nb : 1));
    m->pose_kind = malloc(sizeof(int) * (nb ? nb : 1));
    m->dof_unit = malloc(sizeof(int) * (nv ? nv : 1));
    if (!m->inertia6 || !m->axis_kind || !m->pose_kind || !m->dof_unit) {
        PyErr_NoMemory();
        goto fail;
    }
    for (int i = 0; i < m->nb; i++) {
        mcI_matrix(m->inertia + MB_NI * i, m->inertia6 + 36 * i);
        const double *a = m->axis + 3 * i;
        m->axis_kind[i] = -1;
        if (m->jtype[i] == MB_REVOLUTE || m->jtype[i] == MB_PRISMATIC)
            for (int k = 0; k < 3; k++)
                if (a[k] == 1.0 && a[(k + 1) % 3] == 0.0 && a[(k + 2) % 3] == 0.0)
                    m->axis_kind[i] = k;
        int tree_identity = 1;
        for (int r = 0; r < 9; r++)
            tree_identity &= m->tree_R[9 * i + r] == (r % 4 == 0 ? 1.0 : 0.0);
        m->pose_kind[i] = tree_identity && m->jtype[i] == MB_REVOLUTE ? m->axis_kind[i] : -1;
    }
    for (int k = 0; k < m->nv; k++) {  /* is column k of S a unit vector e_s? */
        const double *S = m->S + 6 * k;
        int s = -1, nonzero = 0;
        for (int r = 0; r < 6; r++)
            if (S[r] != 0.0)
                nonzero++, s = S[r] == 1.0 ? r : -2;
        m->dof_unit[k] = nonzero == 1 && s >= 0 ? s : -1;
    }
    if (!mb_planar_setup(m)) {
        PyErr_NoMemory();
        goto fail;
    }
    self->single = mb_data_new(m);
    if (!self->single) {
        PyErr_NoMemory();
        goto fail;
    }
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static PyObject *CModel_get_planar(CModel *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->m.planar);
}

static PyObject *CModel_get_sizes(CModel *self, void *closure)
{
    (void)closure;
    return Py_BuildValue("(iii)", self->m.nb, self->m.nq, self->m.nv);
}

static PyGetSetDef CModel_getset[] = {
    {"sizes", (getter)CModel_get_sizes, NULL, "(nb, nq, nv)", NULL},
    {"planar", (getter)CModel_get_planar, NULL, "True if FDab runs in planar vectors (planar.c)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject CModelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "multibody.core._core.CModel",
    .tp_basicsize = sizeof(CModel),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Constant C model (model.h) built from a multibody.Model's arrays; owned by that Model.",
    .tp_new = CModel_new,
    .tp_dealloc = (destructor)CModel_dealloc,
    .tp_getset = CModel_getset,
};

#include "spatial.h"
static void mcI_matrix(const double *J, double *M) { mb_inertia_to_matrix(J, M); }

/* ------------------------------------------------------------------------------------------ */
/* Jobs: the arrays of one call, and a per-state function that checks and computes state n.    */

enum { MAX_IN = 6, MAX_OUT = 4 };

/* A forward-dynamics algorithm: (m, d, q, qd, tau, f_ext, qdd) -> status (core.h). */
typedef int (*forward_fn)(const mb_model *, mb_data *, const double *, const double *, const double *,
                          const double *, double *);

typedef struct job {
    const double *in[MAX_IN];   /* inputs; state n reads in[k] + n * step[k] (step 0: shared)  */
    Py_ssize_t step[MAX_IN];
    double *out[MAX_OUT];       /* outputs; state n writes out[k] + n * ostep[k]                */
    Py_ssize_t ostep[MAX_OUT];
    const unsigned char *fd;    /* hybrid dynamics: forward-dynamics flag per joint             */
    int use_fext;               /* f_ext given (in[F_EXT_SLOT] valid)                           */
    int body, frame;            /* Jacobians: body index, frame code                            */
    const double *point;        /* Jacobians: point in body coordinates (3)                      */
    double dt;                  /* integrate: time step                                         */
    forward_fn forward;         /* forward_state: mb_aba, mb_fd_crb or mb_fd_sparse               */
    const struct mb_lanes_impl *lanes; /* aba, rnea, crba batches: groups of states in lanes, or NULL */
    int (*lanes_group)(const mb_model *, void *, const double *const *, const double *const *,
                       const double *const *, double *const *);  /* lanes->aba_group, … */
    int lanes_bad_x;            /* status of a non-finite third input (τ or q̈); 0: q only (CRBA) */
    const mb_rollout *rollout;  /* rollout: the run's settings; out[0..3] = T, Q, QD, QDD         */
    double *tau_out, *info;     /* rollout: TAU (N, R, nv), info (N, 4)                          */
} job;

typedef int (*state_fn)(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n);

#define IN(j, k, n) ((j)->in[k] + (n) * (j)->step[k])
#define OUT(j, k, n) ((j)->out[k] + (n) * (j)->ostep[k])

static int all_finite(const double *x, Py_ssize_t n)
{
    for (Py_ssize_t k = 0; k < n; k++)
        if (!isfinite(x[k]))
            return 0;
    return 1;
}

/* The rate inputs of one state: q̇ (code MB_BAD_QD), x (code bad_x), f_ext. */
static int check_rates(const mb_model *m, const double *qd, const double *x, int bad_x, const double *fext)
{
    if (!all_finite(qd, m->nv))
        return MB_BAD_QD;
    if (x && !all_finite(x, m->nv))
        return bad_x;
    if (fext && !all_finite(fext, 6 * (Py_ssize_t)m->nb))
        return MB_BAD_FEXT;
    return MB_OK;
}

/* rnea: in = q, qd, qdd, f_ext; out = tau */
static int rnea_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n), *qd = IN(j, 1, n), *qdd = IN(j, 2, n);
    const double *fe = j->use_fext ? IN(j, 3, n) : NULL;
    int st = mb_check_configuration(m, q);
    if (st == MB_OK)
        st = check_rates(m, qd, qdd, MB_BAD_QDD, fe);
    if (st == MB_OK)
        mb_rnea(m, d, q, qd, qdd, fe, OUT(j, 0, n));
    return st;
}

/* crba: in = q; out = H */
static int crba_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n);
    const int st = mb_check_configuration(m, q);
    if (st == MB_OK)
        mb_crba(m, d, q, OUT(j, 0, n));
    return st;
}

/* hand_c: in = q, qd, f_ext; out = H, C */
static int hand_c_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n), *qd = IN(j, 1, n);
    const double *fe = j->use_fext ? IN(j, 2, n) : NULL;
    int st = mb_check_configuration(m, q);
    if (st == MB_OK)
        st = check_rates(m, qd, NULL, 0, fe);
    if (st != MB_OK)
        return st;
    double *zero = d->tmp;
    for (int k = 0; k < m->nv; k++)
        zero[k] = 0.0;
    mb_crba(m, d, q, OUT(j, 0, n));
    mb_rnea(m, d, q, qd, zero, fe, OUT(j, 1, n));
    return MB_OK;
}

/* aba, fd_crb, fd_sparse: in = q, qd, tau, f_ext; out = qdd by the job's forward-dynamics algorithm */
static int forward_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n), *qd = IN(j, 1, n), *tau = IN(j, 2, n);
    const double *fe = j->use_fext ? IN(j, 3, n) : NULL;
    int st = mb_check_configuration(m, q);
    if (st == MB_OK)
        st = check_rates(m, qd, tau, MB_BAD_TAU, fe);
    if (st == MB_OK)
        st = j->forward(m, d, q, qd, tau, fe, OUT(j, 0, n));
    return st;
}

/* hybrid: in = q, qd, qdd, tau, f_ext; out = qdd, tau (given values read where they are used) */
static int hybrid_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n), *qd = IN(j, 1, n), *qdd_in = IN(j, 2, n), *tau_in = IN(j, 3, n);
    const double *fe = j->use_fext ? IN(j, 4, n) : NULL;
    double *qdd = OUT(j, 0, n), *tau = OUT(j, 1, n);
    int st = mb_check_configuration(m, q);
    if (st == MB_OK)
        st = check_rates(m, qd, NULL, 0, fe);
    if (st != MB_OK)
        return st;
    for (int i = 0; i < m->nb; i++)
        for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++) {
            if (j->fd[i]) {
                if (!isfinite(tau_in[k]))
                    return MB_BAD_TAU;
                tau[k] = tau_in[k];
            } else {
                if (!isfinite(qdd_in[k]))
                    return MB_BAD_QDD;
                qdd[k] = qdd_in[k];
            }
        }
    return mb_hybrid(m, d, j->fd, q, qd, qdd, tau, fe);
}

/* Floating base: in = xfb, q, qd, tau-or-qdd (real joints only), f_ext; out = xd, qdd-or-tau.
 * The full-model vectors (emulation entries 0) are assembled in the workspace. */
static int floating_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n, int forward)
{
    enum { NE = 6 };  /* emulated joint variables: Px Py Pz Rx Ry Rz */
    const int nq = m->nq, nv = m->nv;
    const double *x = IN(j, 0, n), *fe = j->use_fext ? IN(j, 4, n) : NULL;
    double *q = d->tmp, *qd = q + nq, *in = qd + nv, *out = in + nv;
    memset(d->tmp, 0, sizeof(double) * (nq + 3 * nv));
    memcpy(q + NE, IN(j, 1, n), sizeof(double) * (nq - NE));
    memcpy(qd + NE, IN(j, 2, n), sizeof(double) * (nv - NE));
    memcpy(in + NE, IN(j, 3, n), sizeof(double) * (nv - NE));
    if (!all_finite(x, 13))
        return MB_BAD_XFB;
    if (x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3] < 1e-24)
        return MB_ZERO_QUAT_FB;
    int st = mb_check_configuration(m, q);
    if (st == MB_ZERO_QUAT)
        return MB_ZERO_QUAT_FB;
    if (st == MB_OK)
        st = check_rates(m, qd, in, forward ? MB_BAD_TAU : MB_BAD_QDD, fe);
    if (st == MB_OK)
        st = forward ? mb_fdfb(m, d, x, q, qd, in, fe, OUT(j, 0, n), out)
                     : mb_idfb(m, d, x, q, qd, in, fe, OUT(j, 0, n), out);
    if (st == MB_OK)
        memcpy(OUT(j, 1, n), out + NE, sizeof(double) * (nv - NE));
    return st;
}

static int fdfb_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    return floating_state(m, d, j, n, 1);
}

static int idfb_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    return floating_state(m, d, j, n, 0);
}

/* body_states: in = q, qd?, qdd?; out = R0, p0, V?, A? */
static int body_states_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n), *qd = j->in[1] ? IN(j, 1, n) : NULL;
    const double *qdd = qd && j->in[2] ? IN(j, 2, n) : NULL;
    int st = mb_check_configuration(m, q);
    if (st == MB_OK && qd && !all_finite(qd, m->nv))
        st = MB_BAD_QD;
    if (st == MB_OK && qdd && !all_finite(qdd, m->nv))
        st = MB_BAD_QDD;
    if (st == MB_OK)
        mb_body_states(m, d, q, qd, qdd, OUT(j, 0, n), OUT(j, 1, n), qd ? OUT(j, 2, n) : NULL,
                       qdd ? OUT(j, 3, n) : NULL);
    return st;
}

/* jacobian: in = q; out = J (6 × nv) */
static int jacobian_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n);
    const int st = mb_check_configuration(m, q);
    if (st == MB_OK)
        mb_jacobian(m, d, q, j->body, j->point, j->frame, OUT(j, 0, n));
    return st;
}

/* com_jacobian: in = q; out = Σ m_i J_i(c_i) (3 × nv) */
static int com_jacobian_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n);
    const int st = mb_check_configuration(m, q);
    if (st == MB_OK)
        mb_com_jacobian(m, d, q, OUT(j, 0, n));
    return st;
}

/* integrate: in = q, v; out = q ⊕ v·dt */
static int integrate_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    (void)d;
    const double *q = IN(j, 0, n), *v = IN(j, 1, n);
    int st = mb_check_configuration(m, q);
    if (st == MB_OK && !all_finite(v, m->nv))
        st = MB_BAD_QD;
    if (st == MB_OK)
        mb_integrate(m, q, v, j->dt, OUT(j, 0, n));
    return st;
}

/* energy: in = q, qd; out = KE (1), htot (6), Itot (36) */
static int energy_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n), *qd = IN(j, 1, n);
    int st = mb_check_configuration(m, q);
    if (st == MB_OK && !all_finite(qd, m->nv))
        st = MB_BAD_QD;
    if (st == MB_OK)
        mb_energy(m, d, q, qd, OUT(j, 0, n), OUT(j, 1, n), OUT(j, 2, n));
    return st;
}

/* rollout: in = q0, qd0; out = T, Q, QD, QDD (+ tau_out) rows of run n; info[n] = (count,
 * code, t_from, t_to) with code 0 finished, −1 stopped at a non-finite state, > 0 a status. */
static int rollout_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const mb_rollout *r = j->rollout;
    const double *q0 = IN(j, 0, n), *qd0 = IN(j, 1, n);
    double *info = j->info + 4 * n;
    const Py_ssize_t R = r->capacity;
    mb_rollout_out o = {OUT(j, 0, n), OUT(j, 1, n), OUT(j, 2, n), OUT(j, 3, n), j->tau_out + n * R * m->nv,
                        0, 0, 0.0, 0.0};
    int st = mb_check_configuration(m, q0);
    if (st == MB_OK && !all_finite(qd0, m->nv))
        st = MB_BAD_QD;
    if (st == MB_OK)
        st = mb_run_rollout(m, d, r, q0, qd0, &o);
    info[0] = (double)o.count;
    info[1] = st != MB_OK ? st : o.non_finite ? -1 : 0;
    info[2] = o.t_from, info[3] = o.t_to;
    return st == MB_NO_MEMORY ? st : MB_OK;  /* other failures are reported per run in info */
}

/* ------------------------------------------------------------------------------------------ */
/* Batches: a range of states per thread, each thread with its own workspace.                   */

typedef struct {
    const mb_model *m;
    state_fn fn;
    const job *j;
    Py_ssize_t lo, hi;
    Py_ssize_t bad;   /* index of the first failing state, or hi */
    int status;
} chunk;

/* The lanes batched ABA, RNEA and CRBA use: AVX2's when the CPU has it (module init); NULL: none
 * (use_lanes). */
static const mb_lanes_impl *lanes_active = &mb_lanes_baseline;

/* States n … n+W−1 (W ≤ 8) at once through the job's lane kernel (aba_lanes.c: ABA or RNEA with
 * inputs q, q̇ and x = τ or q̈; CRBA with q only) when every one of them passes the checks of its
 * state function and the lanes succeed; 0 leaves the group to the state function, state by state,
 * which then reports the first failure as a single call would. */
static int lanes_group(const job *j, const mb_model *m, void *dl, Py_ssize_t n, int W)
{
    const double *q[8], *qd[8], *x[8];
    double *out[8];
    for (int l = 0; l < W; l++) {
        q[l] = IN(j, 0, n + l), out[l] = OUT(j, 0, n + l);
        qd[l] = j->lanes_bad_x ? IN(j, 1, n + l) : NULL, x[l] = j->lanes_bad_x ? IN(j, 2, n + l) : NULL;
        if (mb_check_configuration(m, q[l]) != MB_OK ||
            (j->lanes_bad_x && check_rates(m, qd[l], x[l], j->lanes_bad_x, NULL) != MB_OK))
            return 0;
    }
    return j->lanes_group(m, dl, q, qd, x, out) == MB_OK;
}

static void *run_chunk(void *arg)
{
    chunk *c = arg;
    c->status = MB_OK;
    c->bad = c->hi;
    mb_data *d = mb_data_new(c->m);
    const mb_lanes_impl *impl = c->j->lanes;
    void *dl = d && impl ? impl->data_new(c->m) : NULL;
    if (!d || (impl && !dl)) {
        mb_data_free(d);
        c->status = MB_NO_MEMORY;
        c->bad = c->lo;
        return NULL;
    }
    const int W = dl ? impl->width : 1;
    for (Py_ssize_t n = c->lo; n < c->hi;) {
        if (dl && n + W <= c->hi && lanes_group(c->j, c->m, dl, n, W)) {
            n += W;
            continue;
        }
        const int st = c->fn(c->m, d, c->j, n);
        if (st != MB_OK) {
            c->status = st;
            c->bad = n;
            break;
        }
        n++;
    }
    if (dl)
        impl->data_free(dl);
    mb_data_free(d);
    return NULL;
}

/* Run states 0…N−1; returns the status of the first failing state (lowest index) or MB_OK.
 * Called without the GIL. */
static int run_batch_from(const mb_model *m, state_fn fn, const job *j, Py_ssize_t N, Py_ssize_t min_parallel)
{
    enum { MAX_THREADS = 256 };
    int T = num_threads;
    if (N < min_parallel || T < 2)
        T = 1;
    if (T > MAX_THREADS)
        T = MAX_THREADS;
    if (T > N)
        T = (int)(N > 0 ? N : 1);
    chunk c[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int t = 0; t < T; t++)
        c[t] = (chunk){m, fn, j, N * t / T, N * (t + 1) / T, 0, MB_OK};
    for (int t = 1; t < T; t++)
        started[t] = pthread_create(&tid[t], NULL, run_chunk, &c[t]) == 0;
    run_chunk(&c[0]);
    for (int t = 1; t < T; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            run_chunk(&c[t]);  /* no thread to be had: do its share here */
    }
    for (int t = 0; t < T; t++)
        if (c[t].status != MB_OK)
            return c[t].status;
    return MB_OK;
}

static int run_batch(const mb_model *m, state_fn fn, const job *j, Py_ssize_t N)
{
    return run_batch_from(m, fn, j, N, PARALLEL_MIN_BATCH);
}

/* The one place where a status code becomes a Python error. */
static PyObject *raise_status(int status)
{
    if (status == MB_NO_MEMORY)
        return PyErr_NoMemory();
    PyErr_SetString(PyExc_ValueError, mb_status_message(status));
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Argument layouts                                                                              */

/* Is o a float64, aligned C-contiguous array with `extra` leading dimensions (0 single, 1 batch)
 * and the trailing shape (t0[, t1])?  Sets *lead to the leading size (1 for single). */
static int layout_ok(PyObject *o, int extra, int tail_nd, npy_intp t0, npy_intp t1, npy_intp *lead)
{
    if (!PyArray_Check(o))
        return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) ||
        PyArray_NDIM(a) != extra + tail_nd)
        return 0;
    const npy_intp *s = PyArray_DIMS(a);
    if (s[extra] != t0 || (tail_nd == 2 && s[extra + 1] != t1))
        return 0;
    *lead = extra ? s[0] : 1;
    return 1;
}

typedef struct {
    PyObject *obj;
    int tail_nd;
    npy_intp t0, t1;
} arg_spec;

/* Fill a job's inputs from specs (obj NULL or None = absent, pointer left NULL).  Returns 1 and
 * the batch size N (0 in single mode), 0 for "not this layout" (caller returns None), -1 on error. */
static int bind_inputs(arg_spec *specs, int count, job *j, Py_ssize_t *N, int *batch)
{
    if (!PyArray_Check(specs[0].obj))
        return 0;
    const int extra = PyArray_NDIM((PyArrayObject *)specs[0].obj) - specs[0].tail_nd;
    if (extra != 0 && extra != 1)
        return 0;
    npy_intp lead[MAX_IN], n = 1;
    for (int k = 0; k < count; k++) {
        if (!specs[k].obj || specs[k].obj == Py_None) {
            j->in[k] = NULL;
            lead[k] = 1;
            continue;
        }
        if (!layout_ok(specs[k].obj, extra, specs[k].tail_nd, specs[k].t0, specs[k].t1, &lead[k]))
            return 0;
        if (lead[k] != 1) {
            if (n != 1 && lead[k] != n) {
                PyErr_SetString(PyExc_ValueError, "batch dimensions do not match");
                return -1;
            }
            n = lead[k];
        }
    }
    for (int k = 0; k < count; k++) {
        if (!specs[k].obj || specs[k].obj == Py_None)
            continue;
        j->in[k] = PyArray_DATA((PyArrayObject *)specs[k].obj);
        j->step[k] = lead[k] == 1 ? 0 : specs[k].t0 * (specs[k].tail_nd == 2 ? specs[k].t1 : 1);
    }
    *batch = extra;
    *N = extra ? n : 1;
    return 1;
}

/* ---- Reused memory for large outputs --------------------------------------------------------
 * A batch writes its result into new memory.  Above glibc's mmap threshold (32 MB at most) every
 * such allocation maps fresh pages, which the kernel zeroes on first touch and unmaps on free: a
 * sixth of a 10 000-state Talos CRBA (115 MB), every call.  Outputs of REUSE_MIN_BYTES or more are
 * therefore allocated through a NumPy memory handler (NEP 49, the mechanism NumPy provides for
 * caching allocators) that keeps the last such block freed and hands it to the next output of the
 * same size — the pattern of a loop over batches.  At most one block of at most REUSE_MAX_BYTES
 * is held, and only until the next large output (release_output_memory() frees it at once).  The handler is set only around our own
 * allocations, so NumPy's other arrays are untouched. */
enum { REUSE_MIN_BYTES = 1 << 20 };
#define REUSE_MAX_BYTES ((size_t)256 << 20)

static struct {
    void *block;
    size_t size;
    pthread_mutex_t lock;  /* NumPy frees arrays wherever their last reference goes */
} reuse = {NULL, 0, PTHREAD_MUTEX_INITIALIZER};

static void *reuse_malloc(void *ctx, size_t size)
{
    (void)ctx;
    void *p, *stale;
    pthread_mutex_lock(&reuse.lock);
    p = reuse.block && reuse.size == size ? reuse.block : NULL;
    stale = p ? NULL : reuse.block;  /* another size: not the loop this block waits for, so let it go */
    reuse.block = NULL;
    pthread_mutex_unlock(&reuse.lock);
    free(stale);
    return p ? p : malloc(size ? size : 1);
}

static void *reuse_calloc(void *ctx, size_t nelem, size_t elsize)
{
    (void)ctx;
    return calloc(nelem ? nelem : 1, elsize ? elsize : 1);
}

static void *reuse_realloc(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    return realloc(ptr, size ? size : 1);
}

static void reuse_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    if (size < REUSE_MIN_BYTES || size > REUSE_MAX_BYTES) {
        free(ptr);
        return;
    }
    pthread_mutex_lock(&reuse.lock);
    void *old = reuse.block;
    reuse.block = ptr, reuse.size = size;
    pthread_mutex_unlock(&reuse.lock);
    free(old);
}

static PyDataMem_Handler reuse_handler = {
    "multibody_reuse_large_outputs", 1, {NULL, reuse_malloc, reuse_calloc, reuse_realloc, reuse_free}};
static PyObject *reuse_capsule;  /* the handler as NumPy takes it, made at import */

/* use_lanes(name): "baseline" or "avx2" (where built and supported) for the lane groups of batched
 * ABA, RNEA and CRBA, "none" for one state at a time; returns the name in use before.  Tests run
 * every implementation; the benchmark times the one-state kernel. */
static const char *lanes_name(const mb_lanes_impl *impl)
{
    if (!impl)
        return "none";
#ifdef MB_HAVE_LANES_AVX2
    if (impl == &mb_lanes_avx2)
        return "avx2";
#endif
    return "baseline";
}

static PyObject *py_use_lanes(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (!name)
        return PyErr_Format(PyExc_TypeError, "use_lanes: expected a name, got %R", arg);
    const mb_lanes_impl *chosen = NULL;
    if (strcmp(name, "baseline") == 0)
        chosen = &mb_lanes_baseline;
#ifdef MB_HAVE_LANES_AVX2
    else if (strcmp(name, "avx2") == 0 && __builtin_cpu_supports("avx2"))
        chosen = &mb_lanes_avx2;
#endif
    else if (strcmp(name, "none") != 0)
        return PyErr_Format(PyExc_ValueError, "use_lanes: %R is not built or not supported by this CPU", arg);
    const char *before = lanes_name(lanes_active);
    lanes_active = chosen;
    return PyUnicode_FromString(before);
}

static PyObject *py_release_output_memory(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    pthread_mutex_lock(&reuse.lock);
    void *old = reuse.block;
    reuse.block = NULL, reuse.size = 0;
    pthread_mutex_unlock(&reuse.lock);
    free(old);
    Py_RETURN_NONE;
}

/* A new float64 output array of shape dims[0..k); large ones through the reuse handler. */
static PyArrayObject *new_array(int k, npy_intp *dims)
{
    size_t bytes = sizeof(double);
    for (int t = 0; t < k; t++)
        bytes *= (size_t)dims[t];
    if (bytes < REUSE_MIN_BYTES)
        return (PyArrayObject *)PyArray_SimpleNew(k, dims, NPY_DOUBLE);
    PyObject *previous = PyDataMem_SetHandler(reuse_capsule);
    if (!previous)
        return NULL;
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(k, dims, NPY_DOUBLE);
    PyObject *ours = PyDataMem_SetHandler(previous);
    Py_DECREF(previous);
    if (!ours) {
        Py_XDECREF(a);
        return NULL;
    }
    Py_DECREF(ours);
    return a;
}

/* New output array: (N, t0[, t1]) in batch mode, (t0[, t1]) single (t0 = 0: scalar per state). */
static PyArrayObject *new_output(int batch, Py_ssize_t N, int nd, npy_intp t0, npy_intp t1)
{
    npy_intp dims[3];
    int k = 0;
    if (batch)
        dims[k++] = N;
    if (nd >= 1)
        dims[k++] = t0;
    if (nd >= 2)
        dims[k++] = t1;
    return new_array(k, dims);
}

/* New output array with up to three trailing dimensions. */
static PyArrayObject *new_output_dims(int batch, Py_ssize_t N, int nd, const npy_intp *tail)
{
    npy_intp dims[4];
    int k = 0;
    if (batch)
        dims[k++] = N;
    for (int t = 0; t < nd; t++)
        dims[k++] = tail[t];
    return new_array(k, dims);
}

static void bind_output(job *j, int k, PyArrayObject *a, Py_ssize_t per_state)
{
    j->out[k] = PyArray_DATA(a);
    j->ostep[k] = per_state;
}

/* Run a job: single states on the model's own workspace with the GIL, batches without it. */
static int execute(CModel *cm, state_fn fn, const job *j, int batch, Py_ssize_t N)
{
    int st;
    if (!batch)
        return fn(&cm->m, cm->single, j, 0);
    Py_BEGIN_ALLOW_THREADS
    st = run_batch(&cm->m, fn, j, N);
    Py_END_ALLOW_THREADS
    return st;
}

static CModel *get_model(PyObject *o)
{
    if (!PyObject_TypeCheck(o, &CModelType)) {
        PyErr_SetString(PyExc_TypeError, "expected a CModel (Model._c) as first argument");
        return NULL;
    }
    return (CModel *)o;
}

static int nargs_ok(Py_ssize_t nargs, Py_ssize_t want, const char *fn)
{
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", fn, want, nargs);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Entry points                                                                                  */

/* The model of an entry point called with `want` arguments, the CModel first; NULL with the error set. */
static CModel *entry_model(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t want, const char *name)
{
    return nargs_ok(nargs, want, name) ? get_model(args[0]) : NULL;
}

/* The tail of every entry point with one array result (…, t0[, t1]): make it, run fn over the
 * states bound in j, and turn a failing status into its error. */
static PyObject *run_into_new_output(CModel *cm, state_fn fn, job *j, int batch, Py_ssize_t N, int nd, npy_intp t0,
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

static PyObject *py_rnea(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return one_vector_result(args, nargs, "rnea", rnea_state, NULL);
}

static PyObject *py_aba(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return one_vector_result(args, nargs, "aba", forward_state, mb_aba);
}

static PyObject *py_fd_crb(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return one_vector_result(args, nargs, "fd_crb", forward_state, mb_fd_crb);
}

static PyObject *py_fd_sparse(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return one_vector_result(args, nargs, "fd_sparse", forward_state, mb_fd_sparse);
}

static PyObject *py_crba(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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

static PyObject *py_hand_c(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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
static PyObject *py_hybrid(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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

static PyObject *py_fdfb(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return floating_entry(args, nargs, "fdfb", fdfb_state);
}

static PyObject *py_idfb(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return floating_entry(args, nargs, "idfb", idfb_state);
}

/* body_states(cmodel, q, qd|None, qdd|None) -> (R0, p0, V|None, A|None) */
static PyObject *py_body_states(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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

/* jacobian(cmodel, q, body, point (3,) float64, frame 0|1|2) -> J (…, 6, nv) */
static PyObject *py_jacobian(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    CModel *cm = entry_model(args, nargs, 5, "jacobian");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    const long body = PyLong_AsLong(args[2]), frame = PyLong_AsLong(args[4]);
    if (PyErr_Occurred())
        return NULL;
    if (body < 0 || body >= m->nb || frame < 0 || frame > 2) {
        PyErr_Format(PyExc_ValueError, "jacobian: body %ld or frame %ld out of range", body, frame);
        return NULL;
    }
    npy_intp three;
    if (!layout_ok(args[3], 0, 1, 3, 0, &three)) {
        PyErr_SetString(PyExc_ValueError, "point: expected a float64 array of shape (3,)");
        return NULL;
    }
    arg_spec specs[1] = {{args[1], 1, m->nq, 0}};
    job j = {0};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 1, &j, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    j.body = (int)body, j.frame = (int)frame, j.point = PyArray_DATA((PyArrayObject *)args[3]);
    return run_into_new_output(cm, jacobian_state, &j, batch, N, 2, 6, m->nv);
}

/* com_jacobian(cmodel, q) -> Σ m_i J_i(c_i) (…, 3, nv) */
static PyObject *py_com_jacobian(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    CModel *cm = entry_model(args, nargs, 2, "com_jacobian");
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
    return run_into_new_output(cm, com_jacobian_state, &j, batch, N, 2, 3, m->nv);
}

/* integrate(cmodel, q, v, dt) -> q ⊕ v·dt */
static PyObject *py_integrate(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    CModel *cm = entry_model(args, nargs, 4, "integrate");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    const double dt = PyFloat_AsDouble(args[3]);
    if (dt == -1.0 && PyErr_Occurred())
        return NULL;
    if (!isfinite(dt)) {
        PyErr_SetString(PyExc_ValueError, "dt: expected a finite number");
        return NULL;
    }
    arg_spec specs[2] = {{args[1], 1, m->nq, 0}, {args[2], 1, m->nv, 0}};
    job j = {0};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 2, &j, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    j.dt = dt;
    return run_into_new_output(cm, integrate_state, &j, batch, N, 1, m->nq, 0);
}

/* energy(cmodel, q, qd) -> (KE, htot, Itot) */
static PyObject *py_energy(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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

/* ------------------------------------------------------------------------------------------ */
/* Sparse kernels of multibody.sparse: fill caller-given outputs, batches of (B or 1, n, n)      */

/* o must be a C-contiguous aligned array of `type` with ndim dims; dims[k] ≥ 0 must match, −1
 * accepts any size (returned in dims).  Writable when `out`. */
static PyArrayObject *strict_array(PyObject *o, const char *name, int type, int ndim, npy_intp *dims, int out)
{
    if (!PyArray_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a NumPy array", name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_TYPE(a) != type || PyArray_NDIM(a) != ndim || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) ||
        (out && !PyArray_ISWRITEABLE(a))) {
        PyErr_Format(PyExc_ValueError, "%s: expected a %s%s C-contiguous %d-D array", name, out ? "writable " : "",
                     type == NPY_DOUBLE ? "float64" : "int64", ndim);
        return NULL;
    }
    for (int k = 0; k < ndim; k++) {
        if (dims[k] >= 0 && PyArray_DIM(a, k) != dims[k]) {
            PyErr_Format(PyExc_ValueError, "%s: dimension %d is %zd, expected %zd", name, k,
                         (Py_ssize_t)PyArray_DIM(a, k), (Py_ssize_t)dims[k]);
            return NULL;
        }
        dims[k] = PyArray_DIM(a, k);
    }
    return a;
}

/* lam as C ints, checked: −1 ≤ lam[i] < i.  Caller frees. */
static int *lam_ints(PyObject *o, npy_intp n)
{
    npy_intp dims[1] = {n};
    PyArrayObject *a = strict_array(o, "lam", NPY_INT64, 1, dims, 0);
    if (!a)
        return NULL;
    const npy_int64 *x = PyArray_DATA(a);
    int *lam = malloc(sizeof(int) * (n ? n : 1));
    if (!lam)
        return (int *)PyErr_NoMemory();
    for (npy_intp i = 0; i < n; i++) {
        if (x[i] < -1 || x[i] >= i) {
            free(lam);
            PyErr_Format(PyExc_ValueError, "lam: must satisfy -1 <= lam[i] < i, got lam[%zd] = %lld", (Py_ssize_t)i,
                         (long long)x[i]);
            return NULL;
        }
        lam[i] = (int)x[i];
    }
    return lam;
}

/* Leading size of a batched input: 1 or B. */
static int lead_ok(PyArrayObject *a, npy_intp B, const char *name)
{
    const npy_intp b = PyArray_DIM(a, 0);
    if (b != 1 && b != B) {
        PyErr_Format(PyExc_ValueError, "%s: batch size %zd, expected 1 or %zd", name, (Py_ssize_t)b, (Py_ssize_t)B);
        return 0;
    }
    return 1;
}

/* ltdl_kernel(H (B,n,n), lam, L (B,n,n), d (B,n), info (B,)) */
static PyObject *py_ltdl_kernel(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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
static PyObject *py_ltl_kernel(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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
static PyObject *py_mpy_kernel(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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
static PyObject *py_solve_ltdl_kernel(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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


/* ------------------------------------------------------------------------------------------ */
/* rollout: whole fixed-step runs (rollout.c)                                                  */

static int get_long(PyObject *o, const char *name, long lo, long hi, long *out)
{
    const long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred())
        return 0;
    if (v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "%s: expected an integer in %ld..%ld, got %ld", name, lo, hi, v);
        return 0;
    }
    *out = v;
    return 1;
}

static int get_double(PyObject *o, const char *name, double lo, int allow_lo, double *out)
{
    const double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred())
        return 0;
    if (!isfinite(v) || v < lo || (v == lo && !allow_lo)) {
        PyErr_Format(PyExc_ValueError, "%s: expected a finite number %s %g", name, allow_lo ? ">=" : ">", lo);
        return 0;
    }
    *out = v;
    return 1;
}

static int finite_array(PyArrayObject *a, const char *name)
{
    if (!all_finite(PyArray_DATA(a), PyArray_SIZE(a))) {
        PyErr_Format(PyExc_ValueError, "%s: contains NaN or inf", name);
        return 0;
    }
    return 1;
}

/* rollout(cmodel, integrator, Q0 (N,nq), QD0 (N,nv), t_final, dt, record_every, keep_last,
 *         period, kp (nv) | None, kd (nv), times (M,), q_ref (M,nq), qd_ref (M,nv), tau_ff (M,nv),
 *         f_ext (nb,6) | None, damping (nv) | None,
 *         T (N,R), Q (N,R,nq), QD (N,R,nv), QDD (N,R,nv), TAU (N,R,nv), info (N,4)) -> None
 * Fills the caller's arrays; info[n] = (samples written, code, t_from, t_to), code 0 finished,
 * −1 stopped at a non-finite state in the step [t_from, t_to], > 0 a status code (status.h).
 * Runs with the GIL released, on all threads when N ≥ 2.  kp None: no controller (τ = 0). */
static PyObject *py_rollout(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
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
    PyArrayObject *Q0 = strict_array(args[2], "Q0", NPY_DOUBLE, 2, dq, 0);
    if (!Q0)
        return NULL;
    const npy_intp N = dq[0];
    dv[0] = N;
    PyArrayObject *QD0 = strict_array(args[3], "QD0", NPY_DOUBLE, 2, dv, 0);
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
        PyArrayObject *kp = strict_array(args[9], "kp", NPY_DOUBLE, 1, dg, 0);
        PyArrayObject *kd = kp ? strict_array(args[10], "kd", NPY_DOUBLE, 1, dg, 0) : NULL;
        PyArrayObject *times = kd ? strict_array(args[11], "times", NPY_DOUBLE, 1, dt_, 0) : NULL;
        if (!times)
            return NULL;
        const npy_intp M = dt_[0];
        npy_intp dr[2] = {M, m->nq}, dvr[2] = {M, m->nv}, dff[2] = {M, m->nv};
        PyArrayObject *qr = strict_array(args[12], "q_ref", NPY_DOUBLE, 2, dr, 0);
        PyArrayObject *qdr = qr ? strict_array(args[13], "qd_ref", NPY_DOUBLE, 2, dvr, 0) : NULL;
        PyArrayObject *ff = qdr ? strict_array(args[14], "tau_ff", NPY_DOUBLE, 2, dff, 0) : NULL;
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
        PyArrayObject *fe = strict_array(args[15], "f_ext", NPY_DOUBLE, 2, df, 0);
        if (!fe || !finite_array(fe, "f_ext"))
            return NULL;
        r.fext = PyArray_DATA(fe);
    }
    if (args[16] != Py_None) {
        npy_intp dd[1] = {m->nv};
        PyArrayObject *damp = strict_array(args[16], "damping", NPY_DOUBLE, 1, dd, 0);
        if (!damp || !finite_array(damp, "damping"))
            return NULL;
        r.damping = PyArray_DATA(damp);
    }
    npy_intp dT[2] = {N, -1};
    PyArrayObject *T = strict_array(args[17], "T", NPY_DOUBLE, 2, dT, 1);
    if (!T)
        return NULL;
    const npy_intp R = dT[1];
    npy_intp dQ[3] = {N, R, m->nq}, dV[3] = {N, R, m->nv}, dI[2] = {N, 4};
    PyArrayObject *Q = strict_array(args[18], "Q", NPY_DOUBLE, 3, dQ, 1);
    PyArrayObject *QD = Q ? strict_array(args[19], "QD", NPY_DOUBLE, 3, dV, 1) : NULL;
    PyArrayObject *QDD = QD ? strict_array(args[20], "QDD", NPY_DOUBLE, 3, dV, 1) : NULL;
    PyArrayObject *TAU = QDD ? strict_array(args[21], "TAU", NPY_DOUBLE, 3, dV, 1) : NULL;
    PyArrayObject *info = TAU ? strict_array(args[22], "info", NPY_DOUBLE, 2, dI, 1) : NULL;
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

/* ------------------------------------------------------------------------------------------ */
/* ground_contact: the compliant contact law of one state (contact.c)                            */

/* A float64 vector of length n from any array-like (new reference), or NULL with a named error. */
static PyArrayObject *double_vector(PyObject *o, const char *name, npy_intp n)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(o, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!a) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: expected %zd numbers", name, (Py_ssize_t)n);
        return NULL;
    }
    if (PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != n) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd numbers (shape (%zd,)), got a %d-D array of size %zd", name,
                     (Py_ssize_t)n, (Py_ssize_t)n, PyArray_NDIM(a), (Py_ssize_t)PyArray_SIZE(a));
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* ground_contact(cmodel, q (nq), qd (nv), z (ns), bodies (np,) int64, points (np, 3), nd, K, D, mu)
 *   -> (f_ext (nb, 6), zdot (ns,), F (np, 3), pos (np, 3), in_contact (np,) bool, sticking (np,) bool)
 * ns = (nd − 1)·np tangential deformations when mu > 0, else 0.  Single state, GIL held. */
static PyObject *py_ground_contact(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (!nargs_ok(nargs, 10, "ground_contact"))
        return NULL;
    CModel *cm = get_model(args[0]);
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    long nd;
    double K, D, mu;
    if (!get_long(args[6], "nd", 2, 3, &nd) || !get_double(args[7], "K", 0.0, 0, &K) ||
        !get_double(args[9], "mu", 0.0, 1, &mu) || !get_double(args[8], "D", 0.0, mu == 0.0, &D))
        return NULL;
    npy_intp db[1] = {-1};
    PyArrayObject *bodies = strict_array(args[4], "bodies", NPY_INT64, 1, db, 0);
    if (!bodies)
        return NULL;
    const npy_intp np_ = db[0];
    npy_intp dp[2] = {np_, 3};
    PyArrayObject *points = strict_array(args[5], "points", NPY_DOUBLE, 2, dp, 0);
    if (!points || !finite_array(points, "points"))
        return NULL;
    const npy_int64 *bd = PyArray_DATA(bodies);
    for (npy_intp k = 0; k < np_; k++)
        if (bd[k] < 0 || bd[k] >= m->nb) {
            PyErr_Format(PyExc_ValueError, "bodies: point %zd is on body %lld; expected 0..%d", (Py_ssize_t)k,
                         (long long)bd[k], m->nb - 1);
            return NULL;
        }
    const npy_intp ns = mu > 0.0 ? (nd - 1) * np_ : 0;
    PyArrayObject *q = double_vector(args[1], "q", m->nq);
    PyArrayObject *qd = q ? double_vector(args[2], "qd", m->nv) : NULL;
    PyArrayObject *z = qd ? double_vector(args[3], "z", ns) : NULL;
    PyObject *out[6] = {NULL};
    int st = MB_OK;
    if (!z)
        goto done;
    st = mb_check_configuration(m, PyArray_DATA(q));
    if (st == MB_OK && !all_finite(PyArray_DATA(qd), m->nv))
        st = MB_BAD_QD;
    if (st != MB_OK) {
        raise_status(st);
        goto done;
    }
    if (!all_finite(PyArray_DATA(z), ns)) {
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
    const mb_ground_contact_spec g = {(int)np_, (int)nd, (const long long *)bd, PyArray_DATA(points), K, D, mu};
    mb_ground_contact(m, cm->single, PyArray_DATA(q), PyArray_DATA(qd), PyArray_DATA(z), &g,
                      PyArray_DATA((PyArrayObject *)out[0]), PyArray_DATA((PyArrayObject *)out[1]),
                      PyArray_DATA((PyArrayObject *)out[2]), PyArray_DATA((PyArrayObject *)out[3]),
                      PyArray_DATA((PyArrayObject *)out[4]), PyArray_DATA((PyArrayObject *)out[5]));
    Py_DECREF(q), Py_DECREF(qd), Py_DECREF(z);
    return Py_BuildValue("(NNNNNN)", out[0], out[1], out[2], out[3], out[4], out[5]);
done:
    Py_XDECREF(q), Py_XDECREF(qd), Py_XDECREF(z);
    for (int k = 0; k < 6; k++)
        Py_XDECREF(out[k]);
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* kkt_solve, fdgq_solve: the small dense solves of constrained dynamics (kkt.c)                 */

/* A float64 C-contiguous array of ndim dims (−1: any) from any array-like (new reference). */
static PyArrayObject *double_array(PyObject *o, const char *name, int ndim, npy_intp d0, npy_intp d1)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(o, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!a) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: expected an array of numbers", name);
        return NULL;
    }
    const npy_intp want[2] = {d0, d1};
    int ok = PyArray_NDIM(a) == ndim;
    for (int k = 0; ok && k < ndim; k++)
        ok = want[k] < 0 || PyArray_DIM(a, k) == want[k];
    if (!ok) {
        if (ndim == 1)
            PyErr_Format(PyExc_ValueError, "%s: expected shape (%zd,), got a %d-D array of size %zd", name,
                         (Py_ssize_t)d0, PyArray_NDIM(a), (Py_ssize_t)PyArray_SIZE(a));
        else
            PyErr_Format(PyExc_ValueError, "%s: expected a 2-D array with %zd rows and %zd columns (-1: any), got a "
                         "%d-D array", name, (Py_ssize_t)d0, (Py_ssize_t)d1, PyArray_NDIM(a));
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* kkt_solve(H (n,n), d (n), J (m,n), rhs (m), h_tol, rank_tol) -> (status, qdd (n), lam (m))
 * status 0 solved, 1 H not positive definite, 2 J H⁻¹Jᵀ singular (qdd, lam then meaningless). */
static PyObject *py_kkt_solve(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (!nargs_ok(nargs, 6, "kkt_solve"))
        return NULL;
    double h_tol, rank_tol;
    if (!get_double(args[4], "h_tol", 0.0, 1, &h_tol) || !get_double(args[5], "rank_tol", 0.0, 1, &rank_tol))
        return NULL;
    PyArrayObject *H = double_array(args[0], "H", 2, -1, -1);
    if (!H)
        return NULL;
    const npy_intp n = PyArray_DIM(H, 0);
    PyArrayObject *d = NULL, *J = NULL, *r = NULL, *qdd = NULL, *lam = NULL;
    if (PyArray_DIM(H, 1) != n || n < 1 || n > 100000) {
        PyErr_SetString(PyExc_ValueError, "H: expected a non-empty square matrix");
        goto fail;
    }
    d = double_array(args[1], "d", 1, n, 0);
    J = d ? double_array(args[2], "J", 2, -1, n) : NULL;
    if (!J)
        goto fail;
    const npy_intp m = PyArray_DIM(J, 0);
    r = double_array(args[3], "rhs", 1, m, 0);
    if (!r)
        goto fail;
    npy_intp dn[1] = {n}, dm[1] = {m};
    qdd = (PyArrayObject *)PyArray_SimpleNew(1, dn, NPY_DOUBLE);
    lam = qdd ? (PyArrayObject *)PyArray_ZEROS(1, dm, NPY_DOUBLE, 0) : NULL;
    if (!lam)
        goto fail;
    const int st = mb_kkt_solve((int)n, (int)m, PyArray_DATA(H), PyArray_DATA(d), PyArray_DATA(J), PyArray_DATA(r),
                                h_tol, rank_tol, PyArray_DATA(qdd), PyArray_DATA(lam));
    Py_DECREF(H), Py_DECREF(d), Py_DECREF(J), Py_DECREF(r);
    if (st == MB_KKT_NO_MEMORY) {
        Py_DECREF(qdd), Py_DECREF(lam);
        return PyErr_NoMemory();
    }
    return Py_BuildValue("(iNN)", st, qdd, lam);
fail:
    Py_XDECREF(H), Py_XDECREF(d), Py_XDECREF(J), Py_XDECREF(r), Py_XDECREF(qdd), Py_XDECREF(lam);
    return NULL;
}

/* fdgq_solve(H (n,n), C (n), tau (n), G (n,ny), gs (n)) -> (qdd (n), tauc (n)), or None if Gᵀ H G
 * is not positive definite: FDgq's q̈ = G (GᵀHG)⁻¹ Gᵀ(τ − C − H gs) + gs and τc = H q̈ + C − τ. */
static PyObject *py_fdgq_solve(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (!nargs_ok(nargs, 5, "fdgq_solve"))
        return NULL;
    PyArrayObject *a[5] = {NULL};
    PyObject *res = NULL;
    a[0] = double_array(args[0], "H", 2, -1, -1);
    if (!a[0])
        return NULL;
    const npy_intp n = PyArray_DIM(a[0], 0);
    if (PyArray_DIM(a[0], 1) != n || n < 1 || n > 100000) {
        PyErr_SetString(PyExc_ValueError, "H: expected a non-empty square matrix");
        goto done;
    }
    if (!(a[1] = double_array(args[1], "C", 1, n, 0)) || !(a[2] = double_array(args[2], "tau", 1, n, 0)) ||
        !(a[3] = double_array(args[3], "G", 2, n, -1)) || !(a[4] = double_array(args[4], "gs", 1, n, 0)))
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
    for (int k = 0; k < 5; k++)
        Py_XDECREF(a[k]);
    return res;
}

/* ------------------------------------------------------------------------------------------ */
/* Threads and module                                                                            */

static PyObject *py_set_num_threads(PyObject *self, PyObject *arg)
{
    (void)self;
    const long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 1) {
        PyErr_Format(PyExc_ValueError, "n: expected a number of threads >= 1, got %ld", n);
        return NULL;
    }
    num_threads = n > 256 ? 256 : (int)n;
    Py_RETURN_NONE;
}

static PyObject *py_get_num_threads(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyLong_FromLong(num_threads);
}

/* sincos(x) -> (sin x, cos x) by mb_sincos (jcalc.c), for the tests that hold it to libm. */
static PyObject *py_sincos(PyObject *self, PyObject *arg)
{
    (void)self;
    const double x = PyFloat_AsDouble(arg);
    if (x == -1.0 && PyErr_Occurred())
        return NULL;
    double s, c;
    mb_sincos(x, &s, &c);
    return Py_BuildValue("(dd)", s, c);
}

static PyObject *py_status_message(PyObject *self, PyObject *arg)
{
    (void)self;
    const long s = PyLong_AsLong(arg);
    if (s == -1 && PyErr_Occurred())
        return NULL;
    return PyUnicode_FromString(mb_status_message((int)s));
}


/* ---- fast_function: the public single-call entry (mb.rnea, mb.crba, mb.aba) ----------------
 *
 * A Python `def` wrapper costs ~100 ns per call — a sixth of a UR5 RNEA.  fast_function(kernel,
 * fallback) is a callable object (vectorcall) that takes the public arguments (model, q, …),
 * reads model._c and calls the C kernel (one of the METH_FASTCALL functions above) directly; when
 * the kernel answers None (the arrays need converting), model is not a numeric Model, or the call
 * does not fit (wrong count, unknown keyword), it hands the original call to `fallback`, the
 * Python function that does everything (and raises the readable errors).  The parameters are
 * read from the fallback's code object; every optional one must default to None.  It carries a
 * __dict__, so functools.update_wrapper gives it the fallback's name, docstring and __wrapped__
 * (inspect.signature and doctest follow that). */
enum { FAST_MAX_ARGS = 8 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    _PyCFunctionFast kernel;
    PyObject *kernel_obj, *fallback, *names, *dict;
    Py_ssize_t n_params, n_required;
} FastFunction;

static PyObject *attr_c;  /* interned "_c" */

static PyObject *fast_function_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastFunction *f = (FastFunction *)callable;
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *a[FAST_MAX_ARGS];
    if (nargs < 1 || nargs > f->n_params)
        goto fallback;
    for (Py_ssize_t k = 1; k < f->n_params; k++)
        a[k] = k < nargs ? args[k] : NULL;
    for (Py_ssize_t w = 0; w < nkw; w++) {  /* keywords into their positions */
        PyObject *key = PyTuple_GET_ITEM(kwnames, w);
        Py_ssize_t k = 1;
        while (k < f->n_params && PyUnicode_Compare(key, PyTuple_GET_ITEM(f->names, k)) != 0)
            k++;
        if (k == f->n_params || a[k])
            goto fallback;
        a[k] = args[nargs + w];
    }
    for (Py_ssize_t k = 1; k < f->n_params; k++)
        if (!a[k]) {
            if (k < f->n_required)
                goto fallback;
            a[k] = Py_None;
        }
    PyObject *c = PyObject_GetAttr(args[0], attr_c);
    if (!c) {
        PyErr_Clear();
        goto fallback;
    }
    if (!PyObject_TypeCheck(c, &CModelType)) {
        Py_DECREF(c);
        goto fallback;
    }
    a[0] = c;
    PyObject *out = f->kernel(f->kernel_obj, a, f->n_params);
    Py_DECREF(c);
    if (out != Py_None)
        return out;  /* the result, or NULL with the kernel's error set */
    Py_DECREF(out);
fallback:
    return PyObject_Vectorcall(f->fallback, args, nargsf, kwnames);
}

static PyObject *fast_function_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *kernel, *fallback;
    if (!PyArg_ParseTuple(args, "OO:fast_function", &kernel, &fallback))
        return NULL;
    if (!PyCFunction_Check(kernel) || PyCFunction_GET_FLAGS(kernel) != METH_FASTCALL) {
        PyErr_SetString(PyExc_TypeError, "fast_function: kernel must be a METH_FASTCALL function of this module");
        return NULL;
    }
    PyObject *code = PyObject_GetAttrString(fallback, "__code__");
    if (!code)
        return NULL;
    PyObject *defaults = PyObject_GetAttrString(fallback, "__defaults__");
    PyObject *varnames = PyObject_GetAttrString(code, "co_varnames");
    PyObject *argcount = PyObject_GetAttrString(code, "co_argcount");
    Py_DECREF(code);
    FastFunction *f = NULL;
    if (!defaults || !varnames || !argcount)
        goto done;
    const Py_ssize_t n = PyLong_AsSsize_t(argcount);
    const Py_ssize_t nd = defaults == Py_None ? 0 : PyTuple_Size(defaults);
    if (n < 1 || n > FAST_MAX_ARGS || nd < 0 || nd >= n) {
        PyErr_Format(PyExc_ValueError, "fast_function: fallback must take 1 to %d arguments", FAST_MAX_ARGS);
        goto done;
    }
    for (Py_ssize_t k = 0; k < nd; k++)
        if (PyTuple_GET_ITEM(defaults, k) != Py_None) {
            PyErr_SetString(PyExc_ValueError, "fast_function: every optional argument must default to None");
            goto done;
        }
    f = (FastFunction *)type->tp_alloc(type, 0);
    if (!f)
        goto done;
    f->vectorcall = fast_function_call;
    f->kernel = (_PyCFunctionFast)(void (*)(void))PyCFunction_GET_FUNCTION(kernel);
    f->kernel_obj = Py_XNewRef(PyCFunction_GET_SELF(kernel));
    f->fallback = Py_NewRef(fallback);
    f->names = PyTuple_GetSlice(varnames, 0, n);
    f->n_params = n;
    f->n_required = n - nd;
    if (!f->names)
        Py_CLEAR(f);
done:
    Py_XDECREF(defaults), Py_XDECREF(varnames), Py_XDECREF(argcount);
    return (PyObject *)f;
}

static int fast_function_traverse(FastFunction *f, visitproc visit, void *arg)
{
    Py_VISIT(f->kernel_obj);
    Py_VISIT(f->fallback);
    Py_VISIT(f->names);
    Py_VISIT(f->dict);
    return 0;
}

static int fast_function_clear(FastFunction *f)
{
    Py_CLEAR(f->kernel_obj);
    Py_CLEAR(f->fallback);
    Py_CLEAR(f->names);
    Py_CLEAR(f->dict);
    return 0;
}

static void fast_function_dealloc(FastFunction *f)
{
    PyObject_GC_UnTrack(f);
    fast_function_clear(f);
    Py_TYPE(f)->tp_free((PyObject *)f);
}

/* Pickled by reference, like a function: the name it was given (update_wrapper's __qualname__). */
static PyObject *fast_function_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyObject_GetAttrString(self, "__qualname__");
}

static PyMethodDef fast_function_methods[] = {
    {"__reduce__", fast_function_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef fast_function_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject FastFunctionType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "multibody.core._core.fast_function",
    .tp_basicsize = sizeof(FastFunction),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "fast_function(kernel, fallback): call the C kernel on model._c, else the Python fallback.",
    .tp_new = fast_function_new,
    .tp_dealloc = (destructor)fast_function_dealloc,
    .tp_traverse = (traverseproc)fast_function_traverse,
    .tp_clear = (inquiry)fast_function_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(FastFunction, vectorcall),
    .tp_dictoffset = offsetof(FastFunction, dict),
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_methods = fast_function_methods,
    .tp_getset = fast_function_getset,
};

static PyMethodDef methods[] = {
    {"rnea", (PyCFunction)(void (*)(void))py_rnea, METH_FASTCALL,
     "rnea(cmodel, q, qd, qdd, f_ext) -> tau, or None if the arrays need converting"},
    {"crba", (PyCFunction)(void (*)(void))py_crba, METH_FASTCALL, "crba(cmodel, q) -> H or None"},
    {"hand_c", (PyCFunction)(void (*)(void))py_hand_c, METH_FASTCALL, "hand_c(cmodel, q, qd, f_ext) -> (H, C) or None"},
    {"aba", (PyCFunction)(void (*)(void))py_aba, METH_FASTCALL, "aba(cmodel, q, qd, tau, f_ext) -> qdd or None"},
    {"fd_crb", (PyCFunction)(void (*)(void))py_fd_crb, METH_FASTCALL, "fd_crb(cmodel, q, qd, tau, f_ext) -> qdd or None"},
    {"fd_sparse", (PyCFunction)(void (*)(void))py_fd_sparse, METH_FASTCALL,
     "fd_sparse(cmodel, q, qd, tau, f_ext) -> qdd or None"},
    {"hybrid", (PyCFunction)(void (*)(void))py_hybrid, METH_FASTCALL,
     "hybrid(cmodel, fd, q, qd, qdd, tau, f_ext) -> (qdd, tau) or None"},
    {"fdfb", (PyCFunction)(void (*)(void))py_fdfb, METH_FASTCALL,
     "fdfb(cmodel, xfb, q, qd, tau, f_ext) -> (xd, qdd) or None (real joints only)"},
    {"idfb", (PyCFunction)(void (*)(void))py_idfb, METH_FASTCALL,
     "idfb(cmodel, xfb, q, qd, qdd, f_ext) -> (xd, tau) or None (real joints only)"},
    {"energy", (PyCFunction)(void (*)(void))py_energy, METH_FASTCALL, "energy(cmodel, q, qd) -> (KE, htot, Itot) or None"},
    {"body_states", (PyCFunction)(void (*)(void))py_body_states, METH_FASTCALL,
     "body_states(cmodel, q, qd, qdd) -> (R0, p0, V, A) or None (qd/qdd may be None)"},
    {"jacobian", (PyCFunction)(void (*)(void))py_jacobian, METH_FASTCALL,
     "jacobian(cmodel, q, body, point, frame) -> J or None"},
    {"com_jacobian", (PyCFunction)(void (*)(void))py_com_jacobian, METH_FASTCALL,
     "com_jacobian(cmodel, q) -> sum of m_i J_i(c_i) or None"},
    {"integrate", (PyCFunction)(void (*)(void))py_integrate, METH_FASTCALL,
     "integrate(cmodel, q, v, dt) -> q (+) v dt or None"},
    {"ground_contact", (PyCFunction)(void (*)(void))py_ground_contact, METH_FASTCALL,
     "ground_contact(cmodel, q, qd, z, bodies, points, nd, K, D, mu) -> (f_ext, zdot, F, pos, in_contact, "
     "sticking): spatial_v2 gcPosVel + gcontact + Fpt for all contact points of one state"},
    {"kkt_solve", (PyCFunction)(void (*)(void))py_kkt_solve, METH_FASTCALL,
     "kkt_solve(H, d, J, rhs, h_tol, rank_tol) -> (status, qdd, lam): TMT eq. (6) by the range-space method"},
    {"fdgq_solve", (PyCFunction)(void (*)(void))py_fdgq_solve, METH_FASTCALL,
     "fdgq_solve(H, C, tau, G, gs) -> (qdd, tauc) or None: FDgq's reduced solve (RBDA eq. 3.20)"},
    {"rollout", (PyCFunction)(void (*)(void))py_rollout, METH_FASTCALL,
     "rollout(cmodel, integrator, Q0, QD0, t_final, dt, record_every, keep_last, period, kp, kd, times, q_ref, "
     "qd_ref, tau_ff, f_ext, damping, T, Q, QD, QDD, TAU, info): whole fixed-step runs into the "
     "given arrays"},
    {"ltdl_kernel", (PyCFunction)(void (*)(void))py_ltdl_kernel, METH_FASTCALL,
     "ltdl_kernel(H, lam, L, d, info): LTDL of each H[b] into L, d; info[b] = failing pivot or -1"},
    {"ltl_kernel", (PyCFunction)(void (*)(void))py_ltl_kernel, METH_FASTCALL,
     "ltl_kernel(H, lam, L, info): LTL of each H[b] into L; info[b] = failing pivot or -1"},
    {"mpy_kernel", (PyCFunction)(void (*)(void))py_mpy_kernel, METH_FASTCALL,
     "mpy_kernel(op, M, lam, x, y): y[b] = op(M[b]) x[b], op 0 H, 1 L, 2 L^T, 3 L^-1, 4 L^-T"},
    {"solve_ltdl_kernel", (PyCFunction)(void (*)(void))py_solve_ltdl_kernel, METH_FASTCALL,
     "solve_ltdl_kernel(L, d, lam, rhs, x): x[b] = L^-1 D^-1 L^-T rhs[b]"},
    {"set_num_threads", py_set_num_threads, METH_O, "Threads used by large batches (≥ 1)."},
    {"get_num_threads", py_get_num_threads, METH_NOARGS, "Threads used by large batches."},
    {"sincos", py_sincos, METH_O, "sincos(x) -> (sin x, cos x) as the core's joint transforms compute them."},
    {"status_message", py_status_message, METH_O, "Message of a kernel status code (status.h)."},
    {"use_lanes", py_use_lanes, METH_O,
     "use_lanes(name): 'baseline', 'avx2' or 'none' for batched ABA, RNEA and CRBA; returns the name used before."},
    {"release_output_memory", py_release_output_memory, METH_NOARGS,
     "Free the block kept for the next large output (see new_array in _core.c)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_core", "The C core of multibody: CModel and the algorithms' entry points.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    if (PyType_Ready(&CModelType) < 0 || PyType_Ready(&FastFunctionType) < 0)
        return NULL;
    attr_c = PyUnicode_InternFromString("_c");
    reuse_capsule = PyCapsule_New(&reuse_handler, "mem_handler", NULL);
    if (!attr_c || !reuse_capsule)
        return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (!mod)
        return NULL;
#ifdef MB_HAVE_LANES_AVX2
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        lanes_active = &mb_lanes_avx2;
#endif
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    num_threads = cpus < 1 ? 1 : cpus > 256 ? 256 : (int)cpus;
    Py_INCREF(&CModelType);
    Py_INCREF(&FastFunctionType);
    if (PyModule_AddObject(mod, "CModel", (PyObject *)&CModelType) < 0 ||
        PyModule_AddObject(mod, "fast_function", (PyObject *)&FastFunctionType) < 0 ||
        PyModule_AddIntConstant(mod, "PARALLEL_MIN_BATCH", PARALLEL_MIN_BATCH) < 0 ||
        PyModule_AddIntConstant(mod, "LANES", lanes_active->width) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
