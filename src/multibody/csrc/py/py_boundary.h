/* py_boundary.h — what the files of the CPython boundary (py_*.c, _core.c) share.
 *
 *   py_model.c       CModel: the constant C model and the single-state workspace
 *   gate.h           the one array gate (also #included by the modules codegen.compile builds)
 *   py_gate.c        arguments: the gate, shapes, batch layouts, scalar ranges (errors name them)
 *   py_states.c      per-state functions: check state n of a job, run its kernel
 *   py_batch.c       running a job: GIL, threads, SIMD lanes; status code → Python error
 *   py_output.c      output arrays (large ones reuse the last block freed, small dropped ones come back)
 *   py_dynamics.c    py_kinematics.c  py_sparse.c  py_rollout.c  py_contact.c  py_kkt.c  py_scene.c: entry points
 *   py_fastcall.c    fast_function: the public single-call entry
 *   _core.c          the method table and the module
 *
 * NumPy's C API lives in one table per extension: _core.c fills it (import_array) and defines
 * MB_CORE_IMPORTS_ARRAY before including this header; every other file only reads it. */
#ifndef MB_PY_BOUNDARY_H
#define MB_PY_BOUNDARY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL mb_core_ARRAY_API
#ifndef MB_CORE_IMPORTS_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/core.h"
#include "common/gate.h"
#include "common/vec.h"

/* Batches at least this large run on all threads; smaller ones stay on the calling thread, where
 * starting threads would cost more than it saves. */
#define PARALLEL_MIN_BATCH 256

/* ---- py_model.c ------------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    mb_model m;
    mb_data *single;  /* workspace of the single-state calls (GIL held) */
} CModel;

extern PyTypeObject CModelType;
CModel *get_model(PyObject *o);

/* ---- jobs: the arrays of one call, and a per-state function that checks and computes state n -- */

enum { MAX_IN = 6, MAX_OUT = 4 };

/* A forward-dynamics algorithm: (m, d, q, qd, tau, f_ext, qdd) -> status (core.h). */
typedef int (*forward_fn)(const mb_model *, mb_data *, const double *, const double *, const double *,
                          const double *, double *);

typedef struct job {
    const char *name;           /* the entry point, for errors                                  */
    const double *in[MAX_IN];   /* inputs; state n reads in[k] + n * step[k] (step 0: shared)  */
    Py_ssize_t step[MAX_IN];
    double *out[MAX_OUT];       /* outputs; state n writes out[k] + n * ostep[k]                */
    Py_ssize_t ostep[MAX_OUT];
    int n_out;                  /* outputs bound (bind_output); out[k] NULL: not asked for     */
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
    double *y_end;              /* rollout: Y_END (N, nq + nv), the state where each run ended   */
} job;

typedef int (*state_fn)(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n);

#define IN(j, k, n) ((j)->in[k] + (n) * (j)->step[k])
#define OUT(j, k, n) ((j)->out[k] + (n) * (j)->ostep[k])

/* ---- py_states.c ----------------------------------------------------------------------------- */


int check_rates(const mb_model *m, const double *qd, const double *x, int bad_x, const double *fext);
int rnea_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n);
int crba_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n);
int hand_c_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n);
int forward_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n);
int hybrid_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n);
int fdfb_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n);
int idfb_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n);
int body_states_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n);
int jacobian_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n);
int com_jacobian_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n);
int integrate_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n);
int energy_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n);

/* ---- py_batch.c ------------------------------------------------------------------------------ */

void set_threads(int n);  /* threads of large batches, 1…256 */
extern const mb_lanes_impl *lanes_active;
void pick_lanes(void);  /* module init: the widest lanes this CPU runs (py_batch.c) */
int run_batch_from(const mb_model *m, state_fn fn, const job *j, Py_ssize_t N, Py_ssize_t min_parallel);
int run_batch(const mb_model *m, state_fn fn, const job *j, Py_ssize_t N);
/* A status beyond status.h's table: the Python error is already set (execute's result check). */
#define STATUS_PY_ERROR (-1)
PyObject *raise_status(int status);
PyObject *py_use_lanes(PyObject *self, PyObject *arg);
PyObject *py_set_num_threads(PyObject *self, PyObject *arg);
PyObject *py_get_num_threads(PyObject *self, PyObject *unused);

/* ---- py_gate.c ------------------------------------------------------------------------------- */

/* The arrays an entry point got from the gate (new references), released together at its end. */
enum { GATE_HOLD_MAX = 48 };
typedef struct {
    PyObject *o[GATE_HOLD_MAX];
    int n;
} gate_hold;

/* One state input of a job: the argument, its name, its trailing shape (t0[, t1]). */
typedef struct {
    const char *name;
    PyObject *obj;
    int tail_nd;
    npy_intp t0, t1;
    int optional;  /* None means "absent" (f_ext, body_states' rates); else None is a TypeError */
} arg_spec;

PyArrayObject *hold_gate(gate_hold *h, PyObject *o, const char *name, int type, int flags);
void hold_release(gate_hold *h);
int bind_inputs(const arg_spec *specs, int count, job *j, gate_hold *h, Py_ssize_t *N, int *batch);
PyArrayObject *gated_array(gate_hold *h, PyObject *o, const char *name, int type, int ndim, npy_intp *dims, int flags);
int *lam_ints(gate_hold *h, PyObject *o, npy_intp n);
int lead_ok(PyArrayObject *a, npy_intp B, const char *name);
/* ValueError subclass of results that overflowed from finite inputs (a simulation that blew up). */
extern PyObject *ResultOverflowError;
int outputs_overflowed(const job *j, int batch, Py_ssize_t N);

/* 1 if every output of a job that ran N states is finite; else 0 with the error set.  Finite
 * inputs can still overflow (q̇ = 1e200 squares to inf): no result hands back inf or NaN. */
static inline int outputs_finite(const job *j, int batch, Py_ssize_t N)
{
    for (int k = 0; k < j->n_out; k++)
        if (j->out[k] && !mb_gate_finite(j->out[k], N * j->ostep[k]))
            return outputs_overflowed(j, batch, N);
    return 1;
}

/* Run a job: single states on the model's own workspace with the GIL, batches without it; then
 * check its outputs.  Inline, so that each entry point calls its state function directly. */
static inline int execute(CModel *cm, state_fn fn, const job *j, int batch, Py_ssize_t N)
{
    int st;
    if (!batch) {
        st = fn(&cm->m, cm->single, j, 0);
    } else {
        Py_BEGIN_ALLOW_THREADS
        st = run_batch(&cm->m, fn, j, N);
        Py_END_ALLOW_THREADS
    }
    if (st == MB_OK && !outputs_finite(j, batch, N))
        st = STATUS_PY_ERROR;
    return st;
}
int nargs_ok(Py_ssize_t nargs, Py_ssize_t want, const char *fn);
CModel *entry_model(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t want, const char *name);
int get_long(PyObject *o, const char *name, long lo, long hi, long *out);
int get_double(PyObject *o, const char *name, double lo, int allow_lo, double *out);
int finite_array(PyArrayObject *a, const char *name);
PyObject *py_gate(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* ---- py_output.c ----------------------------------------------------------------------------- */

extern PyDataMem_Handler reuse_handler;
extern PyObject *reuse_capsule;
PyObject *py_release_output_memory(PyObject *self, PyObject *unused);
PyObject *py_kept_output_bytes(PyObject *self, PyObject *unused);
PyObject *py_output_array(PyObject *self, PyObject *shape);
PyArrayObject *new_array(int k, npy_intp *dims);
PyArrayObject *new_output(int batch, Py_ssize_t N, int nd, npy_intp t0, npy_intp t1);
PyArrayObject *new_output_dims(int batch, Py_ssize_t N, int nd, const npy_intp *tail);
void bind_output(job *j, int k, PyArrayObject *a, Py_ssize_t per_state);

/* ---- entry points (METH_FASTCALL) ------------------------------------------------------------- */

/* py_contact.c: the ground contact law's settings (bodies, points, nd, K, D, mu) from six arguments */
int contact_spec_from(PyObject *const *args, gate_hold *held, const mb_model *m, mb_ground_contact_spec *spec);
/* py_constraints.c: the constraint tables (items, terms, coef, gains (alpha, beta, rank_tol)) checked against m */
int constraint_tables_from(PyObject *items, PyObject *terms, PyObject *coef, PyObject *gains, gate_hold *held,
                           const mb_model *m, mb_constraints *cs);
PyObject *run_into_new_output(CModel *cm, state_fn fn, job *j, int batch, Py_ssize_t N, int nd, npy_intp t0,
                              npy_intp t1);
PyObject *run_into_outputs(CModel *cm, state_fn fn, job *j, int batch, Py_ssize_t N, int n, PyArrayObject **out,
                           const Py_ssize_t *per_state);
/* An entry point whose body impl(args, nargs, h) takes arrays through the gate into h. */
#define GATED_ENTRY(name, impl)                                                                     \
    PyObject *name(PyObject *self, PyObject *const *args, Py_ssize_t nargs)                          \
    {                                                                                                \
        (void)self;                                                                                  \
        gate_hold h;                                                                                 \
        h.n = 0;                                                                                     \
        PyObject *result = impl(args, nargs, &h);                                                    \
        hold_release(&h);                                                                            \
        return result;                                                                               \
    }
#define MB_ENTRY(name) PyObject *name(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
MB_ENTRY(py_rnea);
MB_ENTRY(py_aba);
MB_ENTRY(py_fd_crb);
MB_ENTRY(py_fd_sparse);
MB_ENTRY(py_crba);
MB_ENTRY(py_hand_c);
MB_ENTRY(py_hybrid);
MB_ENTRY(py_fdfb);
MB_ENTRY(py_idfb);
MB_ENTRY(py_body_states);
MB_ENTRY(py_energy);
MB_ENTRY(py_jacobian);
MB_ENTRY(py_com_jacobian);
MB_ENTRY(py_integrate);
MB_ENTRY(py_ltdl_kernel);
MB_ENTRY(py_ltl_kernel);
MB_ENTRY(py_mpy_kernel);
MB_ENTRY(py_solve_ltdl_kernel);
MB_ENTRY(py_rollout);
MB_ENTRY(py_passive);  /* py_rollout.c: passive.c's laws at one state (the tests' seam) */
PyObject *py_steppers(PyObject *self, PyObject *unused);  /* py_rollout.c: the fixed-step methods' table */
MB_ENTRY(py_ground_contact);
MB_ENTRY(py_scene_contacts);   /* py_scene.c: contacts of the model's geoms, the compliant law on them */
MB_ENTRY(py_scene_forces);
MB_ENTRY(py_scene_pair_slots);
struct mb_scene;
/* py_scene.c: a scene (gint, gdat, hulls, pairs, pdat: Geoms.packed) from args[0..4], checked, its hulls
 * parsed and its slots indexed (the caller frees them: mb_scene_free); 0 with the error set */
int py_scene_from(PyObject *const *args, gate_hold *held, const mb_model *m, struct mb_scene *s);
void py_scene_release(struct mb_scene *s);
PyObject *py_geom_shapes(PyObject *self, PyObject *unused);
MB_ENTRY(py_kkt_solve);
MB_ENTRY(py_fdgq_solve);
MB_ENTRY(py_constraint_rows);
MB_ENTRY(py_constrained_accelerations);
MB_ENTRY(py_rnea_derivatives);  /* py_derivatives.c */
MB_ENTRY(py_aba_derivatives);
MB_ENTRY(py_minv);

/* ---- py_fastcall.c --------------------------------------------------------------------------- */

extern PyTypeObject FastFunctionType;
extern PyObject *attr_c;

#endif
