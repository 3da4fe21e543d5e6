/* py_scene.c — the contacts of a model's collision geometry (sim/scene_contact.c) and the compliant
 * law on them, one state at a time (GIL held), and the engine's shape names for the loaders.
 *
 * A scene arrives as the five arrays of multibody.model.geometry.Geoms.packed():
 *   gint (ng, 3) int64, gdat (ng, 15) float64, hulls (n,) float64, pairs (np, 2) int64, pdat (np, 5)
 * (the layout is scene_contact.h's MB_SG_* / MB_SP_*), checked and its hulls parsed, and kept for the next call
 * while its arrays are the same read-only objects (py_scene_from). */
#include "py/py_boundary.h"
#include "engine/engine.h"
#include "sim/scene_contact.h"

/* geom_shapes() -> the engine's shape names, in code order (engine/geometry.c's rows) */
PyObject *py_geom_shapes(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    PyObject *t = PyTuple_New(G_COUNT);
    for (int k = 0; t && k < G_COUNT; k++) {
        PyObject *s = PyUnicode_FromString(mb_geom_name(k));
        if (!s) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, s);
    }
    return t;
}

/* The last scene parsed, kept while its five arrays are the same read-only objects (Geoms.packed makes them
 * once per model's geoms): each compiled call of a run parsed the hulls and checked the scene again — 15 % of
 * tiago_dual's run on a floor, whose stop events take one compiled step each.  The entry holds the arrays
 * (their data is the scene's); each caller holds the entry from py_scene_from to py_scene_release, so a run
 * on other threads keeps its scene when another call replaces the last one.  Every change under the GIL. */
typedef struct {
    long refs;              /* the cache's, and one per caller */
    PyObject *arrays[5];    /* gint, gdat, hulls, pairs, pdat */
    int max_body;           /* the largest body a geom names: a model with fewer bodies is checked again */
    mb_scene s;
} scene_entry;
static scene_entry *last_scene;

static void entry_drop(scene_entry *e)
{
    if (--e->refs > 0)
        return;
    e->s.owner = NULL;
    mb_scene_free(&e->s);
    for (int k = 0; k < 5; k++)
        Py_DECREF(e->arrays[k]);
    free(e);
}

void py_scene_release(mb_scene *s)
{
    if (s->owner) {
        entry_drop(s->owner);
        memset(s, 0, sizeof *s);
    } else
        mb_scene_free(s);
}

/* the five arrays read-only ndarrays (their contents cannot change while the entry holds them)? */
static int read_only(PyObject *const *args)
{
    for (int k = 0; k < 5; k++)
        if (!PyArray_Check(args[k]) || PyArray_ISWRITEABLE((PyArrayObject *)args[k]))
            return 0;
    return 1;
}

/* s from the last scene where args are its arrays and m has its bodies: 1, else 0 */
static int scene_kept(PyObject *const *args, const mb_model *m, mb_scene *s)
{
    scene_entry *e = last_scene;
    if (!e || e->max_body >= m->nb || !read_only(args))
        return 0;
    for (int k = 0; k < 5; k++)
        if (args[k] != e->arrays[k])
            return 0;
    e->refs++;
    *s = e->s;
    s->owner = e;
    return 1;
}

/* the scene s just parsed from args becomes the last one (where its arrays are the arguments themselves,
 * read-only: not the gate's copies, which end with the call) */
static void scene_keep(PyObject *const *args, PyArrayObject *const *gated, mb_scene *s)
{
    for (int k = 0; k < 5; k++)
        if ((PyObject *)gated[k] != args[k])
            return;
    if (!read_only(args))
        return;
    scene_entry *e = malloc(sizeof *e);
    if (!e)
        return;  /* (not kept: the caller's own) */
    e->refs = 2, e->s = *s, e->max_body = -1;
    for (int g = 0; g < s->ng; g++)
        if (s->gint[(size_t)g * MB_SG_INTS + MB_SG_BODY] > e->max_body)
            e->max_body = (int)s->gint[(size_t)g * MB_SG_INTS + MB_SG_BODY];
    for (int k = 0; k < 5; k++) {
        e->arrays[k] = args[k];
        Py_INCREF(args[k]);
    }
    e->s.owner = s->owner = e;
    if (last_scene)
        entry_drop(last_scene);
    last_scene = e;
}

/* the scene from args[0..4]; 0 with the error set if it is bad.  The caller releases it (py_scene_release). */
int py_scene_from(PyObject *const *args, gate_hold *held, const mb_model *m, mb_scene *s)
{
    memset(s, 0, sizeof *s);
    if (scene_kept(args, m, s))
        return 1;
    npy_intp dgi[2] = {-1, MB_SG_INTS}, dgd[2] = {-1, MB_SG_SIZE}, dh[1] = {-1}, dp[2] = {-1, 2},
             dpd[2] = {-1, MB_SP_SIZE};
    PyArrayObject *gint = gated_array(held, args[0], "gint", NPY_INT64, 2, dgi, 0);
    if (!gint)
        return 0;
    dgd[0] = dgi[0];
    PyArrayObject *gdat = gated_array(held, args[1], "gdat", NPY_DOUBLE, 2, dgd, 0);
    PyArrayObject *hulls = gdat ? gated_array(held, args[2], "hulls", NPY_DOUBLE, 1, dh, 0) : NULL;
    PyArrayObject *pairs = hulls ? gated_array(held, args[3], "pairs", NPY_INT64, 2, dp, 0) : NULL;
    if (!pairs)
        return 0;
    dpd[0] = dp[0];
    PyArrayObject *pdat = gated_array(held, args[4], "pdat", NPY_DOUBLE, 2, dpd, 0);
    if (!pdat || !finite_array(gdat, "gdat") || !finite_array(hulls, "hulls") || !finite_array(pdat, "pdat"))
        return 0;
    if (dgi[0] > INT_MAX / MB_SG_SIZE || dp[0] > INT_MAX / MB_SCENE_PAIR_MAX) {
        PyErr_SetString(PyExc_ValueError, "gint, pairs: too many geoms or pairs");
        return 0;
    }
    s->ng = (int)dgi[0], s->npair = (int)dp[0];
    s->gint = PyArray_DATA(gint), s->gdat = PyArray_DATA(gdat);
    s->pairs = PyArray_DATA(pairs), s->pdat = PyArray_DATA(pdat);
    char msg[256];
    int st = mb_scene_load_hulls(s, PyArray_DATA(hulls), (int64_t)dh[0], msg, sizeof msg);
    if (st < 0) {
        PyErr_NoMemory();
        return 0;
    }
    if (st || mb_scene_check(m, s, msg, sizeof msg)) {
        mb_scene_free(s);
        PyErr_Format(PyExc_ValueError, "scene: %s", msg);
        return 0;
    }
    if (mb_scene_index_slots(s)) {
        mb_scene_free(s);
        PyErr_NoMemory();
        return 0;
    }
    scene_keep(args, (PyArrayObject *const[]){gint, gdat, hulls, pairs, pdat}, s);
    return 1;
}

/* scene_pair_slots(gint, pairs) -> (np,) int64: each candidate pair's contact slots (mb_scene_pair_slots: as many as
 * its collider ever reports points), the layout multibody.model.geometry.Geoms.slot_start reads */
static PyObject *scene_pair_slots_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "scene_pair_slots(gint, pairs)");
        return NULL;
    }
    npy_intp dgi[2] = {-1, MB_SG_INTS}, dp[2] = {-1, 2};
    PyArrayObject *gint = gated_array(held, args[0], "gint", NPY_INT64, 2, dgi, 0);
    PyArrayObject *pairs = gint ? gated_array(held, args[1], "pairs", NPY_INT64, 2, dp, 0) : NULL;
    if (!pairs)
        return NULL;
    const npy_int64 *gi = PyArray_DATA(gint), *pp = PyArray_DATA(pairs);
    PyObject *out = PyArray_SimpleNew(1, (npy_intp[]){dp[0]}, NPY_INT64);
    if (!out)
        return NULL;
    npy_int64 *n = PyArray_DATA((PyArrayObject *)out);
    for (npy_intp p = 0; p < dp[0]; p++) {
        const npy_int64 a = pp[2 * p], b = pp[2 * p + 1];
        if (a < 0 || a >= dgi[0] || b < 0 || b >= dgi[0]) {
            Py_DECREF(out);
            PyErr_Format(PyExc_ValueError, "pairs: pair %zd names geom %lld; expected 0..%zd", (Py_ssize_t)p,
                         (long long)(a < 0 || a >= dgi[0] ? a : b), (Py_ssize_t)dgi[0] - 1);
            return NULL;
        }
        const int ta = (int)gi[a * MB_SG_INTS + MB_SG_TYPE], tb = (int)gi[b * MB_SG_INTS + MB_SG_TYPE];
        if (mb_collide_max_points(ta, tb) < 0) {
            Py_DECREF(out);
            PyErr_Format(PyExc_ValueError, "pairs: pair %zd's shapes (codes %d, %d) have no collider", (Py_ssize_t)p,
                         ta, tb);
            return NULL;
        }
        n[p] = mb_scene_pair_slots(ta, tb);
    }
    return out;
}

/* scene_contacts(cmodel, q, gint, gdat, hulls, pairs, pdat) -> (pair (n,) int64, pos (n, 3), normal (n, 3), depth (n,),
 * slot (n,) int64: each contact's state slot, mb_scene_contact.slot) */
static PyObject *scene_contacts_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    CModel *cm = entry_model(args, nargs, 7, "scene_contacts");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    PyArrayObject *q = gated_array(held, args[1], "q", NPY_DOUBLE, 1, (npy_intp[]){m->nq}, 0);
    mb_scene s;
    if (!q || !py_scene_from(args + 2, held, m, &s))
        return NULL;
    PyObject *result = NULL, *out[5] = {NULL};
    mb_scene_contact *c = NULL;
    int st = mb_check_configuration(m, PyArray_DATA(q));
    if (st != MB_OK) {
        raise_status(st);
        goto done;
    }
    int cap = 64, n;
    for (;;) {   /* room for every contact: a second pass when the first finds more */
        c = malloc(sizeof *c * (size_t)cap);
        if (!c) {
            PyErr_NoMemory();
            goto done;
        }
        n = mb_scene_contacts(m, cm->single, PyArray_DATA(q), &s, c, cap, NULL);
        if (n <= cap)
            break;
        free(c);
        cap = n;
    }
    if (n == -2) {
        PyErr_NoMemory();
        goto done;
    }
    if (n < 0) {   /* mb_scene_check found a collider for every pair: not reached */
        PyErr_SetString(PyExc_RuntimeError, "scene_contacts: a pair without a collider");
        goto done;
    }
    npy_intp d1[1] = {n}, d3[2] = {n, 3};
    out[0] = PyArray_SimpleNew(1, d1, NPY_INT64), out[1] = PyArray_SimpleNew(2, d3, NPY_DOUBLE);
    out[2] = PyArray_SimpleNew(2, d3, NPY_DOUBLE), out[3] = PyArray_SimpleNew(1, d1, NPY_DOUBLE);
    out[4] = PyArray_SimpleNew(1, d1, NPY_INT64);
    for (int k = 0; k < 5; k++)
        if (!out[k])
            goto done;
    npy_int64 *pair = PyArray_DATA((PyArrayObject *)out[0]), *slot = PyArray_DATA((PyArrayObject *)out[4]);
    double *pos = PyArray_DATA((PyArrayObject *)out[1]), *nrm = PyArray_DATA((PyArrayObject *)out[2]),
           *depth = PyArray_DATA((PyArrayObject *)out[3]);
    for (int i = 0; i < n; i++) {
        pair[i] = c[i].pair, depth[i] = c[i].depth, slot[i] = c[i].slot;
        memcpy(pos + 3 * i, c[i].pos, 3 * sizeof(double));
        memcpy(nrm + 3 * i, c[i].normal, 3 * sizeof(double));
    }
    result = Py_BuildValue("(NNNNN)", out[0], out[1], out[2], out[3], out[4]);
    out[0] = out[1] = out[2] = out[3] = out[4] = NULL;
done:
    for (int k = 0; k < 5; k++)
        Py_XDECREF(out[k]);
    free(c);
    py_scene_release(&s);
    return result;
}

/* scene_forces(cmodel, q, qd, gint, gdat, hulls, pairs, pdat, pair (nc,), pos (nc, 3), normal (nc, 3),
 *              depth (nc,), K, D, u (nc, 2)) -> (f_ext (nb, 6), udot (nc, 2), F (nc, 3), state (nc,) uint8) */
static PyObject *scene_forces_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    CModel *cm = entry_model(args, nargs, 15, "scene_forces");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    PyArrayObject *q = gated_array(held, args[1], "q", NPY_DOUBLE, 1, (npy_intp[]){m->nq}, 0);
    PyArrayObject *qd = q ? gated_array(held, args[2], "qd", NPY_DOUBLE, 1, (npy_intp[]){m->nv}, 0) : NULL;
    mb_scene s;
    if (!qd || !py_scene_from(args + 3, held, m, &s))
        return NULL;
    PyObject *result = NULL, *out[4] = {NULL};
    mb_scene_contact *c = NULL;
    npy_intp dn[1] = {-1}, d3[2] = {-1, 3}, d2[2] = {-1, 2};
    PyArrayObject *cp = gated_array(held, args[8], "pair", NPY_INT64, 1, dn, 0);
    if (cp)
        d3[0] = d2[0] = dn[0];
    PyArrayObject *cpos = cp ? gated_array(held, args[9], "pos", NPY_DOUBLE, 2, d3, 0) : NULL;
    PyArrayObject *cnrm = cpos ? gated_array(held, args[10], "normal", NPY_DOUBLE, 2, d3, 0) : NULL;
    PyArrayObject *cdep = cnrm ? gated_array(held, args[11], "depth", NPY_DOUBLE, 1, dn, 0) : NULL;
    double K, D;
    if (!cdep || !get_double(args[12], "K", 0.0, 1, &K) || !get_double(args[13], "D", 0.0, 1, &D))
        goto done;
    PyArrayObject *u = gated_array(held, args[14], "u", NPY_DOUBLE, 2, d2, 0);
    if (!u || !finite_array(cpos, "pos") || !finite_array(cnrm, "normal") || !finite_array(cdep, "depth") ||
        !finite_array(u, "u"))
        goto done;
    const npy_intp nc = dn[0];
    if (nc > INT_MAX / 3) {
        PyErr_SetString(PyExc_ValueError, "pair: too many contacts");
        goto done;
    }
    int st = mb_check_configuration(m, PyArray_DATA(q));
    if (st == MB_OK && !mb_all_finite(PyArray_DATA(qd), m->nv))
        st = MB_BAD_QD;
    if (st != MB_OK) {
        raise_status(st);
        goto done;
    }
    c = malloc(sizeof *c * (size_t)(nc > 0 ? nc : 1));
    if (!c) {
        PyErr_NoMemory();
        goto done;
    }
    const npy_int64 *pp = PyArray_DATA(cp);
    const double *pos = PyArray_DATA(cpos), *nrm = PyArray_DATA(cnrm), *dep = PyArray_DATA(cdep);
    int friction = 0;
    for (npy_intp i = 0; i < nc; i++) {
        if (pp[i] < 0 || pp[i] >= s.npair) {
            PyErr_Format(PyExc_ValueError, "pair: contact %zd names pair %lld; expected 0..%d", (Py_ssize_t)i,
                         (long long)pp[i], s.npair - 1);
            goto done;
        }
        if (fabs(mb_norm3(nrm + 3 * i) - 1.0) > 1e-9) {
            PyErr_Format(PyExc_ValueError, "normal: contact %zd's normal is not a unit vector", (Py_ssize_t)i);
            goto done;
        }
        const double *pd = s.pdat + (size_t)pp[i] * MB_SP_SIZE;
        friction |= pd[MB_SP_CONDIM] >= 3 && pd[MB_SP_FRICTION] > 0;
        c[i].pair = (int)pp[i], c[i].depth = dep[i], c[i].slot = -1;   /* (the law reads no slot) */
        memcpy(c[i].pos, pos + 3 * i, 3 * sizeof(double));
        memcpy(c[i].normal, nrm + 3 * i, 3 * sizeof(double));
    }
    if (friction && !(D > 0)) {
        PyErr_SetString(PyExc_ValueError, "D: expected a finite number > 0 when a contact has friction");
        goto done;
    }
    npy_intp df[2] = {m->nb, 6}, du[2] = {nc, 2}, dF[2] = {nc, 3}, ds[1] = {nc};
    out[0] = PyArray_SimpleNew(2, df, NPY_DOUBLE), out[1] = PyArray_SimpleNew(2, du, NPY_DOUBLE);
    out[2] = PyArray_SimpleNew(2, dF, NPY_DOUBLE), out[3] = PyArray_SimpleNew(1, ds, NPY_UINT8);
    for (int k = 0; k < 4; k++)
        if (!out[k])
            goto done;
    mb_scene_contact_forces(m, cm->single, PyArray_DATA(q), PyArray_DATA(qd), &s, c, (int)nc, K, D,
                            PyArray_DATA(u), PyArray_DATA((PyArrayObject *)out[0]),
                            PyArray_DATA((PyArrayObject *)out[1]), PyArray_DATA((PyArrayObject *)out[2]),
                            PyArray_DATA((PyArrayObject *)out[3]));
    result = Py_BuildValue("(NNNN)", out[0], out[1], out[2], out[3]);
    out[0] = out[1] = out[2] = out[3] = NULL;
done:
    for (int k = 0; k < 4; k++)
        Py_XDECREF(out[k]);
    free(c);
    py_scene_release(&s);
    return result;
}

GATED_ENTRY(py_scene_contacts, scene_contacts_entry)
GATED_ENTRY(py_scene_forces, scene_forces_entry)
GATED_ENTRY(py_scene_pair_slots, scene_pair_slots_entry)
