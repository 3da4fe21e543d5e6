/* CPython entry points of the engine: the Sim object wraps an mb_world whose arrays are owned
 * by Python (multibody.engine.World keeps them and rebuilds the Sim when bodies, joints or
 * geometries are added).  Shapes and dtypes are checked here; a step releases the GIL.
 *
 * Threads: a step runs without the GIL, so two threads may step one world at once, or read it
 * while another steps (the workspace a step grows is freed under a reader's feet).  Each Sim has
 * a mutex that every method holds while it touches W; steps from several threads run one after
 * the other.  Rule against deadlock: nobody waits for the mutex while holding the GIL (sim_lock
 * lets the GIL go while it waits), so holding the mutex while taking the GIL back is safe.
 *
 * Arguments: every array passes the one gate (common/gate.h), as the core's entry points' do,
 * with errors that name the argument; shapes are checked here (take). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <pthread.h>
#include "common/gate.h"
#include "engine/engine.h"

static PyObject *SimulationError;

typedef struct {
    PyObject_HEAD
    mb_world W;
    PyArrayObject *arrays[9];     /* state load bprop jint jdat gint gdat wpar hulls */
    int ready;
    pthread_mutex_t lock;  /* held by whoever reads or writes W (see the top of this file) */
} SimObject;

/* Take the world's lock from a thread that holds the GIL: wait for it without the GIL, so that
 * a step in another thread (which needs the GIL back to return) can finish. */
static void sim_lock(SimObject *self)
{
    if (pthread_mutex_trylock(&self->lock) == 0) return;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&self->lock);
    Py_END_ALLOW_THREADS
}

static void sim_unlock(SimObject *self) { pthread_mutex_unlock(&self->lock); }

static PyObject *Sim_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    SimObject *self = (SimObject *)PyType_GenericNew(type, args, kw);
    if (self && pthread_mutex_init(&self->lock, NULL) != 0) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

/* Shape of a gated array in words, for errors: "(4, 3)", or "a 3-D array" past two dimensions. */
static void shape_text(PyArrayObject *a, char *buf, size_t len)
{
    const int nd = PyArray_NDIM(a);
    if (nd == 1) snprintf(buf, len, "(%zd,)", (Py_ssize_t)PyArray_DIM(a, 0));
    else if (nd == 2) snprintf(buf, len, "(%zd, %zd)", (Py_ssize_t)PyArray_DIM(a, 0), (Py_ssize_t)PyArray_DIM(a, 1));
    else snprintf(buf, len, "a %d-D array", nd);
}

/* o through the gate as `type`, then its shape: cols > 0: (rows, cols), any row count when rows < 0;
 * cols == 0: (rows,).  flags: MB_GATE_WRITABLE for the arrays a Sim keeps (state, load, bprop,
 * jint, jdat, gint, gdat, wpar): they are the World's, which edits them between steps and reads
 * the state the step writes, so they are used in place, never as a converted copy (where the
 * World's edits would not reach the step).  A new reference, or NULL with the error set. */
static PyArrayObject *take(PyObject *o, const char *name, int type, int flags, npy_intp cols, npy_intp rows)
{
    PyArrayObject *a = mb_gate(o, name, type, flags);
    if (!a) return NULL;
    const int ok = cols == 0 ? PyArray_NDIM(a) == 1 && PyArray_DIM(a, 0) == rows
                             : PyArray_NDIM(a) == 2 && PyArray_DIM(a, 1) == cols && (rows < 0 || PyArray_DIM(a, 0) == rows);
    if (!ok) {
        char got[64];
        shape_text(a, got, sizeof got);
        if (cols == 0) PyErr_Format(PyExc_ValueError, "%s: expected shape (%zd,), got %s", name, (Py_ssize_t)rows, got);
        else if (rows < 0) PyErr_Format(PyExc_ValueError, "%s: expected shape (n, %zd), got %s", name, (Py_ssize_t)cols, got);
        else PyErr_Format(PyExc_ValueError, "%s: expected shape (%zd, %zd), got %s", name, (Py_ssize_t)rows,
                          (Py_ssize_t)cols, got);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* ---- triangle meshes, rays, angular motors (helper `rays`) -------------------------------- */
static void free_meshes(mb_world *W)
{
    if (!W->meshes) return;
    for (int g = 0; g < W->ng; g++) mb_trimesh_free(W->meshes[g]);
    free(W->meshes); W->meshes = NULL;
}

static PyObject *Sim_set_mesh_locked(SimObject *self, PyObject *args)
{   /* set_mesh(g, vertices (nv, 3) float64 in world, triangles (nt, 3) int64): geom g's triangles */
    int g; PyObject *vo, *to;
    if (!PyArg_ParseTuple(args, "iOO", &g, &vo, &to)) return NULL;
    mb_world *W = &self->W;
    if (!self->ready || g < 0 || g >= W->ng || W->gint[(size_t)g * GI_SIZE + GI_TYPE] != G_TRIMESH) {
        PyErr_Format(PyExc_ValueError, "g: expected the index of a triangle-mesh geometry, got %d", g); return NULL; }
    PyArrayObject *v = take(vo, "vertices", NPY_DOUBLE, 0, 3, -1);
    if (!v) return NULL;
    PyArrayObject *t = take(to, "triangles", NPY_INT64, 0, 3, -1);
    if (!t) { Py_DECREF(v); return NULL; }
    npy_intp nv = PyArray_DIM(v, 0), nt = PyArray_DIM(t, 0);
    const double *vd = PyArray_DATA(v); const int64_t *td = PyArray_DATA(t);
    const char *bad = NULL;
    for (npy_intp i = 0; i < 3 * nv && !bad; i++) if (!isfinite(vd[i])) bad = "vertices: expected finite numbers";
    for (npy_intp i = 0; i < 3 * nt && !bad; i++) if (td[i] < 0 || td[i] >= nv) bad = "triangles: expected vertex indices in [0, number of vertices)";
    if (nv > INT32_MAX / 3 || nt > INT32_MAX / 3) bad = "vertices, triangles: too many";
    mb_trimesh *m = NULL;
    if (!bad) m = mb_trimesh_build(vd, (int)nv, td, (int)nt);
    Py_DECREF(v); Py_DECREF(t);
    if (bad) { PyErr_SetString(PyExc_ValueError, bad); return NULL; }
    if (!m) return PyErr_NoMemory();
    if (!W->meshes) {
        W->meshes = calloc((size_t)W->ng, sizeof(mb_trimesh *));
        if (!W->meshes) { mb_trimesh_free(m); return PyErr_NoMemory(); }
    }
    mb_trimesh_free(W->meshes[g]);
    W->meshes[g] = m;
    Py_RETURN_NONE;
}

static PyObject *Sim_ray_cast_locked(SimObject *self, PyObject *args)
{   /* ray_cast(origins (n, 3), directions (n, 3) unit, max_distance, all) ->
     * (ray index, geom, distance, normal): each ray's nearest hit, or all its hits */
    PyObject *oo, *dobj; double tmax; int all;
    if (!PyArg_ParseTuple(args, "OOdp", &oo, &dobj, &tmax, &all)) return NULL;
    PyArrayObject *O = take(oo, "origins", NPY_DOUBLE, 0, 3, -1);
    if (!O) return NULL;
    PyArrayObject *Dd = take(dobj, "directions", NPY_DOUBLE, 0, 3, PyArray_DIM(O, 0));
    if (!Dd) { Py_DECREF(O); return NULL; }
    mb_world *W = &self->W;
    npy_intp n = PyArray_DIM(O, 0), cap = all ? n * (W->ng > 0 ? W->ng : 1) : n;
    mb_ray_hit *hits = malloc(sizeof(mb_ray_hit) * (size_t)(cap > 0 ? cap : 1));
    int64_t *ray = malloc(sizeof(int64_t) * (size_t)(cap > 0 ? cap : 1));
    if (!hits || !ray) { free(hits); free(ray); Py_DECREF(O); Py_DECREF(Dd); return PyErr_NoMemory(); }
    mb_world_geom_poses(W);
    /* a hierarchy over the geoms pays for itself after a few rays through a crowded world */
    mb_ray_tree T, *tree = NULL;
    if (n >= 8 && W->ng >= 32) {
        if (mb_ray_tree_build(W, &T)) { free(hits); free(ray); Py_DECREF(O); Py_DECREF(Dd); return PyErr_NoMemory(); }
        tree = &T;
    }
    const double *o = PyArray_DATA(O), *d = PyArray_DATA(Dd);
    npy_intp k = 0;
    for (npy_intp i = 0; i < n; i++) {
        int c = mb_world_ray(W, tree, o + 3 * i, d + 3 * i, tmax, all, hits + k);
        for (int q = 0; q < c; q++) ray[k + q] = i;
        k += c;
    }
    if (tree) mb_ray_tree_free(tree);
    Py_DECREF(O); Py_DECREF(Dd);
    npy_intp d1[1] = {k}, d3[2] = {k, 3};
    PyObject *ri = PyArray_ZEROS(1, d1, NPY_INT64, 0), *gi = PyArray_ZEROS(1, d1, NPY_INT64, 0),
             *tt = PyArray_ZEROS(1, d1, NPY_DOUBLE, 0), *nn = PyArray_ZEROS(2, d3, NPY_DOUBLE, 0);
    if (!ri || !gi || !tt || !nn) { Py_XDECREF(ri); Py_XDECREF(gi); Py_XDECREF(tt); Py_XDECREF(nn); free(hits); free(ray); return NULL; }
    for (npy_intp i = 0; i < k; i++) {
        ((int64_t *)PyArray_DATA((PyArrayObject *)ri))[i] = ray[i];
        ((int64_t *)PyArray_DATA((PyArrayObject *)gi))[i] = hits[i].geom;
        ((double *)PyArray_DATA((PyArrayObject *)tt))[i] = hits[i].t;
        mb_copy3(hits[i].normal, (double *)PyArray_DATA((PyArrayObject *)nn) + 3 * i);
    }
    free(hits); free(ray);
    return Py_BuildValue("(NNNN)", ri, gi, tt, nn);
}

static PyObject *Sim_amotor_locked(SimObject *self, PyObject *arg)
{   /* amotor(j) -> (angles (3,), rates (3,), world axes (3, 3)) of AMotor j (unused axes: 0) */
    long j = PyLong_AsLong(arg);
    if (j == -1 && PyErr_Occurred()) return NULL;
    mb_world *W = &self->W;
    if (j < 0 || j >= W->nj || W->jint[(size_t)j * JI_SIZE + JI_TYPE] != J_AMOTOR) {
        PyErr_Format(PyExc_ValueError, "j: expected the index of an AMotor, got %ld", j); return NULL; }
    for (int b = 0; b < W->nb; b++) mb_quat_to_R(W->state + (size_t)b * BS_SIZE + BS_QUAT, W->R + 9 * (size_t)b);
    double ax[3][3] = {{0}}, ang[3] = {0}, rate[3] = {0};
    mb_amotor_axes(W, (int)j, ax, ang, rate);
    npy_intp d1[1] = {3}, d2[2] = {3, 3};
    PyObject *a = PyArray_ZEROS(1, d1, NPY_DOUBLE, 0), *r = PyArray_ZEROS(1, d1, NPY_DOUBLE, 0), *x = PyArray_ZEROS(2, d2, NPY_DOUBLE, 0);
    if (!a || !r || !x) { Py_XDECREF(a); Py_XDECREF(r); Py_XDECREF(x); return NULL; }
    memcpy(PyArray_DATA((PyArrayObject *)a), ang, sizeof ang); memcpy(PyArray_DATA((PyArrayObject *)r), rate, sizeof rate);
    memcpy(PyArray_DATA((PyArrayObject *)x), ax, sizeof ax);
    return Py_BuildValue("(NNN)", a, r, x);
}
static PyObject *engine_ray_convex(PyObject *mod, PyObject *args)
{   /* ray_convex(planes (nf, 4): n . x <= d inside, origin, unit direction, max_distance)
     * -> (distance, normal) or None: mb_ray_convex_planes, for convex shapes and its tests */
    PyObject *po, *oo, *dobj; double tmax;
    if (!PyArg_ParseTuple(args, "OOOd", &po, &oo, &dobj, &tmax)) return NULL;
    PyArrayObject *P = take(po, "planes", NPY_DOUBLE, 0, 4, -1);
    if (!P) return NULL;
    PyArrayObject *O = take(oo, "origin", NPY_DOUBLE, 0, 0, 3), *Dd = O ? take(dobj, "direction", NPY_DOUBLE, 0, 0, 3) : NULL;
    if (!Dd) { Py_DECREF(P); Py_XDECREF(O); return NULL; }
    double t, n[3];
    int hit = mb_ray_convex_planes(PyArray_DATA(P), (int)PyArray_DIM(P, 0), PyArray_DATA(O), PyArray_DATA(Dd), tmax, &t, n);
    Py_DECREF(P); Py_DECREF(O); Py_DECREF(Dd);
    if (!hit) Py_RETURN_NONE;
    return Py_BuildValue("(d(ddd))", t, n[0], n[1], n[2]);
}
/* ---- end of triangle meshes, rays, angular motors ------------------------------------------ */

static void Sim_dealloc(SimObject *self)
{
    if (self->ready) { free_meshes(&self->W); mb_hulls_free(&self->W); mb_world_free(&self->W); }   /* no method runs: each holds a reference */
    for (int i = 0; i < 9; i++) Py_XDECREF(self->arrays[i]);
    pthread_mutex_destroy(&self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Sim_init_locked(SimObject *self, PyObject *args, PyObject *kw)
{
    PyObject *o[9] = {NULL};
    static char *names[] = {"state", "load", "bprop", "jint", "jdat", "gint", "gdat", "wpar", "hulls", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOOOO|O", names, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7], &o[8])) return -1;
    if (self->ready) { free_meshes(&self->W); mb_hulls_free(&self->W); mb_world_free(&self->W); self->ready = 0; }
    for (int i = 0; i < 9; i++) Py_CLEAR(self->arrays[i]);
    PyArrayObject **A = self->arrays;
    const int shared = MB_GATE_WRITABLE;  /* the World's arrays, used in place (see take) */
    if (!(A[0] = take(o[0], "state", NPY_DOUBLE, shared, BS_SIZE, -1))) return -1;
    npy_intp nb = PyArray_DIM(A[0], 0);
    if (!(A[1] = take(o[1], "load", NPY_DOUBLE, shared, BL_SIZE, nb)) ||
        !(A[2] = take(o[2], "bprop", NPY_DOUBLE, shared, BP_SIZE, nb)) ||
        !(A[3] = take(o[3], "jint", NPY_INT64, shared, JI_SIZE, -1))) return -1;
    npy_intp nj = PyArray_DIM(A[3], 0);
    if (!(A[4] = take(o[4], "jdat", NPY_DOUBLE, shared, JD_SIZE, nj)) ||
        !(A[5] = take(o[5], "gint", NPY_INT64, shared, GI_SIZE, -1))) return -1;
    npy_intp ng = PyArray_DIM(A[5], 0);
    if (!(A[6] = take(o[6], "gdat", NPY_DOUBLE, shared, GD_SIZE, ng)) ||
        !(A[7] = take(o[7], "wpar", NPY_DOUBLE, shared, 0, WP_SIZE))) return -1;
    mb_world *W = &self->W;
    memset(W, 0, sizeof *W);
    W->nb = (int)nb; W->nj = (int)nj; W->ng = (int)ng;
    W->state = PyArray_DATA(A[0]); W->load = PyArray_DATA(A[1]); W->bprop = PyArray_DATA(A[2]);
    W->jint = PyArray_DATA(A[3]); W->jdat = PyArray_DATA(A[4]); W->gint = PyArray_DATA(A[5]);
    W->gdat = PyArray_DATA(A[6]); W->wpar = PyArray_DATA(A[7]);
    for (npy_intp j = 0; j < nj; j++) {
        int64_t t = W->jint[j * JI_SIZE], b1 = W->jint[j * JI_SIZE + 1], b2 = W->jint[j * JI_SIZE + 2];
        if (t < 0 || (t > J_HINGE2 && t != J_AMOTOR) || b1 < 0 || b1 >= nb || b2 < -1 || b2 >= nb) {
            PyErr_Format(PyExc_ValueError, "jint: joint %zd has an invalid type or body index", (Py_ssize_t)j); return -1; }
    }
    for (npy_intp g = 0; g < ng; g++) {
        int64_t t = W->gint[g * GI_SIZE], b = W->gint[g * GI_SIZE + 1];
        if (t < 0 || t >= G_COUNT) {
            PyErr_Format(PyExc_ValueError, "gint: geometry %zd has an invalid type (shape code %lld, which the engine does not know)",
                         (Py_ssize_t)g, (long long)t); return -1; }
        if (b < -1 || b >= nb || (geom_shapes[t].static_only && b != -1)) {
            PyErr_Format(PyExc_ValueError, "gint: geometry %zd has an invalid type or body index (a %s %s)", (Py_ssize_t)g,
                         geom_shapes[t].name, geom_shapes[t].static_only ? "is static: body -1" : "on a body out of range"); return -1; }
    }
    {   /* every pair of shapes that can meet has a collider (collide.c's table), refused here if not */
        char why[160];
        if (mb_collide_check(W->gint, (int)ng, why, sizeof why)) { PyErr_Format(PyExc_ValueError, "gint: %s", why); return -1; }
    }
    /* convex hulls: one float64 block each (shapes.Convex.packed), GD_SIZE3 of a G_CONVEX = its index */
    const double *hd = NULL; npy_intp nh = 0;
    if (o[8] && o[8] != Py_None) {
        /* the World never edits its hull blocks after packing them, so a converted copy will do */
        if (!(A[8] = mb_gate(o[8], "hulls", NPY_DOUBLE, 0))) return -1;
        if (PyArray_NDIM(A[8]) != 1) {
            PyErr_Format(PyExc_ValueError, "hulls: expected one dimension (the packed blocks), got a %d-D array",
                         PyArray_NDIM(A[8])); return -1; }
        hd = PyArray_DATA(A[8]); nh = PyArray_DIM(A[8], 0);
    }
    char msg[160];
    int hr = mb_hulls_load(W, hd, (int64_t)nh, msg, sizeof msg);
    if (hr) { mb_hulls_free(W); if (hr < 0) PyErr_NoMemory(); else PyErr_Format(PyExc_ValueError, "hulls: %s", msg); return -1; }
    for (npy_intp g = 0; g < ng; g++) {
        double k = W->gdat[g * GD_SIZE + GD_SIZE3];
        const int64_t t = W->gint[g * GI_SIZE];
        if ((t == G_CONVEX || t == G_HFIELD) && !(k >= 0 && k < W->nhulls && k == floor(k) &&
                                                  (W->hulls[(int)k].nv == 0) == (t == G_HFIELD))) {
            mb_hulls_free(W);
            snprintf(msg, sizeof msg, "gdat: %s geometry %lld names hull %g of %d", t == G_CONVEX ? "convex" : "height field",
                     (long long)g, k, W->nhulls);
            PyErr_SetString(PyExc_ValueError, msg); return -1; }
    }
    if (mb_world_init(W)) { mb_hulls_free(W); mb_world_free(W); PyErr_NoMemory(); return -1; }
    self->ready = 1;
    return 0;
}

static int Sim_init(SimObject *self, PyObject *args, PyObject *kw)
{
    sim_lock(self);
    const int r = Sim_init_locked(self, args, kw);
    sim_unlock(self);
    return r;
}

static PyObject *Sim_step(SimObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) { PyErr_SetString(PyExc_TypeError, "step(dt, n=1)"); return NULL; }
    double h = PyFloat_AsDouble(args[0]);
    if (h == -1.0 && PyErr_Occurred()) return NULL;
    long n = nargs > 1 ? PyLong_AsLong(args[1]) : 1;
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (!(h > 0) || !isfinite(h)) { PyErr_Format(PyExc_ValueError, "dt: expected a finite time step > 0, got %g", h); return NULL; }
    if (n < 0) { PyErr_SetString(PyExc_ValueError, "n: expected a number of steps >= 0"); return NULL; }
    int err = 0;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&self->lock);
    Py_END_ALLOW_THREADS
    /* Steps run without the GIL in chunks; between chunks a look at the signals lets Ctrl-C stop a long
     * run (the world is whole between steps; World.run counts the steps taken).  The lock stays held. */
    enum { STEPS_BETWEEN_SIGNAL_CHECKS = 2048 };
    for (long done = 0; done < n && !err;) {
        long stop = n - done > STEPS_BETWEEN_SIGNAL_CHECKS ? done + STEPS_BETWEEN_SIGNAL_CHECKS : n;
        Py_BEGIN_ALLOW_THREADS
        for (; done < stop && !err; done++) err = mb_world_step(&self->W, h);
        Py_END_ALLOW_THREADS                      /* the lock is still held: W's message is ours */
        if (!err && done < n && PyErr_CheckSignals() < 0) { sim_unlock(self); return NULL; }
    }
    if (err > 0) {
        PyObject *v = Py_BuildValue("(sil)", self->W.message, self->W.bad_body, self->W.steps + 1);
        PyErr_SetObject(SimulationError, v); Py_XDECREF(v);
    }
    sim_unlock(self);
    if (err < 0) return PyErr_NoMemory();
    if (err > 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Sim_steps(SimObject *self, PyObject *unused)
{
    (void)unused;
    sim_lock(self);
    long steps = self->W.steps;
    sim_unlock(self);
    return PyLong_FromLong(steps);
}

static PyObject *Sim_joint_coords_locked(SimObject *self, PyObject *unused)
{
    npy_intp dims[2] = {self->W.nj, 2};
    PyObject *p = PyArray_ZEROS(2, dims, NPY_DOUBLE, 0), *r = PyArray_ZEROS(2, dims, NPY_DOUBLE, 0);
    if (!p || !r) { Py_XDECREF(p); Py_XDECREF(r); return NULL; }
    for (int b = 0; b < self->W.nb; b++) mb_quat_to_R(self->W.state + (size_t)b * BS_SIZE + BS_QUAT, self->W.R + 9 * (size_t)b);
    mb_world_joint_coords(&self->W, PyArray_DATA((PyArrayObject *)p), PyArray_DATA((PyArrayObject *)r), 0);
    return Py_BuildValue("(NN)", p, r);
}

static PyObject *Sim_set_turns_locked(SimObject *self, PyObject *arg)
{   /* whole turns already made by each joint axis (kept across a rebuild of the Sim) */
    PyArrayObject *a = take(arg, "turns", NPY_DOUBLE, 0, 2, self->W.nj);
    if (!a) return NULL;
    const double *t = PyArray_DATA(a);
    for (int i = 0; i < 2 * self->W.nj; i++) if (!isfinite(t[i])) { Py_DECREF(a); PyErr_SetString(PyExc_ValueError, "turns: expected finite numbers"); return NULL; }
    memcpy(self->W.jturns, t, sizeof(double) * 2 * (size_t)self->W.nj);
    Py_DECREF(a);
    Py_RETURN_NONE;
}

static PyObject *new_array(int nd, npy_intp *dims) { return PyArray_ZEROS(nd, dims, NPY_DOUBLE, 0); }
#define D(o) ((double *)PyArray_DATA((PyArrayObject *)(o)))
#define I64(o) ((int64_t *)PyArray_DATA((PyArrayObject *)(o)))

static PyObject *contacts_dict(mb_world *W, PyObject *d)
{
    npy_intp nc = W->nc, d3[2] = {nc, 3}, d1[1] = {nc}, d4[2] = {nc, 4};
    PyObject *pos = new_array(2, d3), *nrm = new_array(2, d3), *depth = new_array(1, d1), *ids = PyArray_ZEROS(2, d4, NPY_INT64, 0);
    if (!pos || !nrm || !depth || !ids) { Py_XDECREF(pos); Py_XDECREF(nrm); Py_XDECREF(depth); Py_XDECREF(ids); return NULL; }
    for (npy_intp c = 0; c < nc; c++) {
        const mb_contact_point *C = W->contacts + c;
        mb_copy3(C->pos, D(pos) + 3 * c); mb_copy3(C->normal, D(nrm) + 3 * c); D(depth)[c] = C->depth;
        int64_t *id = I64(ids) + 4 * c; id[0] = C->g1; id[1] = C->g2; id[2] = C->b1; id[3] = C->b2;
    }
    PyDict_SetItemString(d, "contact_position", pos); PyDict_SetItemString(d, "contact_normal", nrm);
    PyDict_SetItemString(d, "contact_depth", depth); PyDict_SetItemString(d, "contact_ids", ids);
    Py_DECREF(pos); Py_DECREF(nrm); Py_DECREF(depth); Py_DECREF(ids);
    return d;
}

static PyObject *Sim_last_step_locked(SimObject *self, PyObject *unused)
{
    mb_world *W = &self->W;
    if (W->residual < 0) W->residual = W->m ? mb_world_residual(W) : 0.0;
    npy_intp m = W->m, dJ[3] = {m, 2, 6}, d1[1] = {m}, d2[2] = {m, 2}, dc[2] = {W->nc, 3};
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    PyObject *J = new_array(3, dJ), *lam = new_array(1, d1), *rhs = new_array(1, d1), *lo = new_array(1, d1),
             *hi = new_array(1, d1), *cfm = new_array(1, d1), *b = new_array(1, d1), *w = new_array(1, d1),
             *bodies = PyArray_ZEROS(2, d2, NPY_INT64, 0), *src = PyArray_ZEROS(1, d1, NPY_INT64, 0),
             *cf = new_array(2, dc);
    PyObject *all[] = {J, lam, rhs, lo, hi, cfm, b, w, bodies, src, cf};
    for (int i = 0; i < 11; i++) if (!all[i]) { for (int k = 0; k < 11; k++) Py_XDECREF(all[k]); Py_DECREF(d); return NULL; }
    for (npy_intp i = 0; i < m; i++) {
        const mb_row *r = W->rows + i;
        memcpy(D(J) + 12 * i, r->J1, 6 * sizeof(double)); memcpy(D(J) + 12 * i + 6, r->J2, 6 * sizeof(double));
        D(lam)[i] = W->lambda[i]; D(rhs)[i] = r->rhs; D(cfm)[i] = r->cfm; D(b)[i] = W->b[i]; D(w)[i] = W->w[i];
        double l = r->lo, hh = r->hi;                         /* the bounds the solver used */
        if (W->solver_used == SOLVER_DANTZIG && !W->used_tree) { l = W->lo[i]; hh = W->hi[i]; }
        if (r->findex >= 0 && (W->solver_used == SOLVER_PGS || r->cone_pair >= 0)) { hh = r->mu * fabs(W->lambda[r->findex]); l = -hh; }
        D(lo)[i] = l; D(hi)[i] = hh;
        I64(bodies)[2 * i] = r->b1; I64(bodies)[2 * i + 1] = r->b2; I64(src)[i] = r->source;
        if (r->source < 0) {                                  /* force of the contact on body 1 */
            int c = -(r->source + 1);
            for (int k = 0; k < 3; k++) D(cf)[3 * c + k] += W->lambda[i] * r->J1[k];
        }
    }
    const char *keys[] = {"J", "lambda", "rhs", "lo", "hi", "cfm", "b", "w", "row_bodies", "row_source", "contact_force"};
    for (int i = 0; i < 11; i++) { PyDict_SetItemString(d, keys[i], all[i]); Py_DECREF(all[i]); }
    if (!contacts_dict(W, d)) { Py_DECREF(d); return NULL; }
    PyObject *v;
    v = PyFloat_FromDouble(W->residual); PyDict_SetItemString(d, "residual", v); Py_XDECREF(v);
    v = PyUnicode_FromString(W->solver_used == SOLVER_DANTZIG ? "dantzig" : "pgs"); PyDict_SetItemString(d, "solver", v); Py_XDECREF(v);
    v = PyLong_FromLong(W->fallback); PyDict_SetItemString(d, "fallback", v); Py_XDECREF(v);
    v = PyUnicode_FromString(W->why ? W->why : ""); PyDict_SetItemString(d, "why", v); Py_XDECREF(v);
    v = PyLong_FromLong(W->pivots); PyDict_SetItemString(d, "pivots", v); Py_XDECREF(v);
    v = PyLong_FromLong(W->iterations); PyDict_SetItemString(d, "iterations", v); Py_XDECREF(v);
    v = PyLong_FromLong(W->steps); PyDict_SetItemString(d, "step", v); Py_XDECREF(v);
    v = PyBool_FromLong(W->used_tree); PyDict_SetItemString(d, "tree", v); Py_XDECREF(v);
    return d;
}

static PyObject *Sim_collide_locked(SimObject *self, PyObject *unused)
{
    int n = mb_world_collide_only(&self->W);
    if (n == -2) { PyErr_Format(PyExc_ValueError, "collide: %s", self->W.message); return NULL; }
    if (n < 0) return PyErr_NoMemory();
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    if (!contacts_dict(&self->W, d)) { Py_DECREF(d); return NULL; }
    return d;
}

/* The methods that run with the GIL, each holding the world's lock while it reads or writes W. */
#define LOCKED(name)                                                                        \
    static PyObject *name(SimObject *self, PyObject *arg)                                   \
    {                                                                                       \
        sim_lock(self);                                                                     \
        PyObject *r = name##_locked(self, arg);                                             \
        sim_unlock(self);                                                                   \
        return r;                                                                           \
    }
LOCKED(Sim_joint_coords)
LOCKED(Sim_set_turns)
LOCKED(Sim_last_step)
LOCKED(Sim_collide)
LOCKED(Sim_set_mesh)
LOCKED(Sim_ray_cast)
LOCKED(Sim_amotor)
#undef LOCKED

static PyMethodDef Sim_methods[] = {
    {"step", (PyCFunction)(void (*)(void))Sim_step, METH_FASTCALL, "step(dt, n=1): advance n steps of dt seconds"},
    {"steps", (PyCFunction)Sim_steps, METH_NOARGS, "steps(): the number of steps this world has taken"},
    {"joint_coords", (PyCFunction)Sim_joint_coords, METH_NOARGS, "(positions, rates), each (nj, 2)"},
    {"last_step", (PyCFunction)Sim_last_step, METH_NOARGS, "rows, multipliers and contacts of the last step"},
    {"collide", (PyCFunction)Sim_collide, METH_NOARGS, "collision detection alone: the contacts"},
    {"set_turns", (PyCFunction)Sim_set_turns, METH_O, "set_turns(turns (nj, 2)): whole turns of each joint axis"},
    {"set_mesh", (PyCFunction)Sim_set_mesh, METH_VARARGS, "set_mesh(g, vertices, triangles): the triangles of mesh geom g"},
    {"ray_cast", (PyCFunction)Sim_ray_cast, METH_VARARGS, "ray_cast(origins, directions, max_distance, all) -> (ray, geom, t, normal)"},
    {"amotor", (PyCFunction)Sim_amotor, METH_O, "amotor(j) -> (angles, rates, world axes) of an AMotor"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject SimType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "multibody.engine._engine.Sim",
    .tp_basicsize = sizeof(SimObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Sim(state, load, bprop, jint, jdat, gint, gdat, wpar): the C world over Python-owned arrays",
    .tp_new = Sim_new,
    .tp_init = (initproc)Sim_init,
    .tp_dealloc = (destructor)Sim_dealloc,
    .tp_methods = Sim_methods,
};

/* the collision table as Python sees it (tests): the two shapes' names and whether the pair has
 * a collider */
static PyObject *engine_shape_pair(PyObject *mod, PyObject *args)
{
    int ta, tb, flip;
    if (!PyArg_ParseTuple(args, "ii", &ta, &tb)) return NULL;
    const char *na = mb_geom_name(ta), *nb = mb_geom_name(tb);
    if (!na || !nb) {
        PyErr_Format(PyExc_ValueError, "shape code %d: the engine does not know it (codes 0 to %d)", na ? tb : ta, G_COUNT - 1);
        return NULL;
    }
    return Py_BuildValue("(ssO)", na, nb, mb_collide_find(ta, tb, &flip) ? Py_True : Py_False);
}

/* lcp_friction(A (n, n), b, lo, hi, findex (int64: −1 or its normal's row), mu, seed (int64 MB_LCP_* states, or
 * None)) -> (status, x, lo used, hi used, pivots): lcp.c's mb_lcp_friction as the hard contact calls it (block
 * principal pivoting from the first pass; seeded with a guess of the free rows where one is given), for its
 * tests */
static PyObject *engine_lcp_friction(PyObject *mod, PyObject *args)
{
    PyObject *o[7];
    if (!PyArg_ParseTuple(args, "OOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6])) return NULL;
    PyArrayObject *A = mb_gate(o[0], "A", NPY_DOUBLE, 0);
    if (!A) return NULL;
    if (PyArray_NDIM(A) != 2 || PyArray_DIM(A, 0) != PyArray_DIM(A, 1)) {
        PyErr_SetString(PyExc_ValueError, "A: expected a square matrix (n, n)");
        Py_DECREF(A);
        return NULL;
    }
    const npy_intp n = PyArray_DIM(A, 0);
    PyArrayObject *v[6] = {NULL};
    const char *names[6] = {"b", "lo", "hi", "findex", "mu", "seed"};
    int ok = 1;
    for (int k = 0; k < 6 && ok; k++) {
        if (k == 5 && o[6] == Py_None) break;
        ok = (v[k] = take(o[k + 1], names[k], k == 3 || k == 5 ? NPY_INT64 : NPY_DOUBLE, 0, 0, n)) != NULL;
    }
    double *work = ok ? calloc((size_t)(2 * n * n + 20 * n + 32), sizeof(double)) : NULL;
    int *iwork = work ? calloc((size_t)(11 * n + 16), sizeof(int)) : NULL;
    PyObject *x = iwork ? PyArray_SimpleNew(1, &n, NPY_DOUBLE) : NULL, *lo = x ? PyArray_SimpleNew(1, &n, NPY_DOUBLE) : NULL;
    PyObject *hi = lo ? PyArray_SimpleNew(1, &n, NPY_DOUBLE) : NULL, *out = NULL;
    if (hi) {
        double *flo = work + n * n + 8 * n + 16, *fhi = flo + n, *bpp = fhi + n;   /* bpp: n^2 + 7 n */
        int *findex = iwork + 8 * n + 8, *seed = findex + n, *bpp_i = iwork + 4 * n + 4, pivots = 0;
        const int64_t *fi = PyArray_DATA(v[3]), *si = v[5] ? PyArray_DATA(v[5]) : NULL;
        memcpy(PyArray_DATA((PyArrayObject *)lo), PyArray_DATA(v[1]), sizeof(double) * (size_t)n);
        memcpy(PyArray_DATA((PyArrayObject *)hi), PyArray_DATA(v[2]), sizeof(double) * (size_t)n);
        for (npy_intp i = 0; i < n; i++) {
            findex[i] = fi[i] >= 0 && fi[i] < n ? (int)fi[i] : -1;
            seed[i] = si ? (int)si[i] : 0;
        }
        const int st = mb_lcp_friction((int)n, PyArray_DATA(A), PyArray_DATA(v[0]), PyArray_DATA((PyArrayObject *)lo),
                                       PyArray_DATA((PyArrayObject *)hi), findex, PyArray_DATA(v[4]), NULL,
                                       PyArray_DATA((PyArrayObject *)x), flo, fhi, work, iwork, &pivots, 1000 + 100 * (int)n,
                                       bpp, bpp_i, si ? seed : NULL);
        out = Py_BuildValue("(iOOOi)", st, x, lo, hi, pivots);
    } else if (ok && !PyErr_Occurred()) {
        PyErr_NoMemory();
    }
    Py_XDECREF(x); Py_XDECREF(lo); Py_XDECREF(hi);
    free(work); free(iwork);
    Py_DECREF(A);
    for (int k = 0; k < 6; k++) Py_XDECREF(v[k]);
    return out;
}

static PyMethodDef module_methods[] = {
    {"ray_convex", engine_ray_convex, METH_VARARGS, "ray_convex(planes, origin, direction, max_distance) -> (t, normal) or None"},
    {"shape_pair", engine_shape_pair, METH_VARARGS, "shape_pair(code_a, code_b) -> (name_a, name_b, has_collider)"},
    {"lcp_friction", engine_lcp_friction, METH_VARARGS,
     "lcp_friction(A, b, lo, hi, findex, mu, seed) -> (status, x, lo, hi, pivots): the hard contact's pyramid LCP"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_engine", "The engine's step in C.", -1, module_methods};

PyMODINIT_FUNC PyInit__engine(void)
{
    import_array();
    if (PyType_Ready(&SimType) < 0) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m) return NULL;
    Py_INCREF(&SimType); PyModule_AddObject(m, "Sim", (PyObject *)&SimType);
    SimulationError = PyErr_NewException("multibody.engine.SimulationError", PyExc_RuntimeError, NULL);
    Py_INCREF(SimulationError); PyModule_AddObject(m, "SimulationError", SimulationError);
#define C(name) PyModule_AddIntConstant(m, #name, name)
    C(BS_POS); C(BS_QUAT); C(BS_VEL); C(BS_OMEGA); C(BS_SIZE); C(BL_FORCE); C(BL_TORQUE); C(BL_SIZE);
    C(BP_MASS); C(BP_INVMASS); C(BP_I); C(BP_INVI); C(BP_SIZE);
    C(J_BALL); C(J_HINGE); C(J_SLIDER); C(J_FIXED); C(J_UNIVERSAL); C(J_HINGE2); C(JI_SIZE);
    C(JD_ANCHOR1); C(JD_ANCHOR2); C(JD_AXIS1); C(JD_AXIS1_B2); C(JD_AXIS2); C(JD_QREL); C(JD_DOT0); C(JD_OFFSET);
    C(JD_AXES); C(JA_MOTOR_VEL); C(JA_MOTOR_FMAX); C(JA_LO); C(JA_HI); C(JA_BOUNCE); C(JA_STOP_ERP); C(JA_STOP_CFM); C(JA_DAMPING);
    C(JA_SIZE); C(JD_ERP); C(JD_CFM); C(JD_SUSP_ERP); C(JD_SUSP_CFM); C(JD_SIZE);
    C(G_TRIMESH); C(J_AMOTOR); C(JD_AM_MODE); C(JD_AM_NAXES); C(JD_AM_AXIS3); C(JD_AM_AXES); C(JD_AM_REL);
    C(JD_AM_REF1); C(JD_AM_REF2); C(JD_AM_QREL);
    C(G_SPHERE); C(G_BOX); C(G_CAPSULE); C(G_CYLINDER); C(G_PLANE); C(GI_SIZE);
    C(G_CONVEX); C(G_ELLIPSOID); C(G_HFIELD); C(HULL_MAX_VERTS); C(GD_GROUP); C(G_COUNT);
    C(GD_POS); C(GD_QUAT); C(GD_SIZE3); C(GD_MU); C(GD_BOUNCE); C(GD_PLANE_D); C(GD_SIZE);
    C(WP_GRAVITY); C(WP_ERP); C(WP_CFM); C(WP_DT); C(WP_SOLVER); C(WP_ITERATIONS); C(WP_SOR); C(WP_FRICTION);
    C(WP_BOUNCE_VEL); C(WP_CONTACT_ERP); C(WP_CONTACT_CFM); C(WP_SURFACE_LAYER); C(WP_MAX_CORRECTING_VEL);
    C(WP_MAX_SPEED); C(WP_CONTACTS); C(WP_BROADPHASE); C(WP_TREE); C(WP_EXACT_ROWS); C(WP_MAX_PIVOTS); C(WP_TOLERANCE); C(WP_JOINTS_VERSION); C(WP_SIZE);
#undef C
    return m;
}
