/* py_model.c — CModel: the constant C model (model.h) built once from a Python Model's arrays, with the
 * workspace (data.h) of the single-state calls, which run with the GIL held.  This file copies and
 * checks the given tables; mb_model_compile (model/compile.c) derives the rest. */
#include "py/py_boundary.h"

static void cmodel_free_arrays(mb_model *m)
{
    free(m->parent), free(m->jtype), free(m->q_start), free(m->nq_joint), free(m->v_start);
    free(m->nv_joint), free(m->tree_R), free(m->tree_p), free(m->axis), free(m->pitch);
    free(m->inertia), free(m->inertia6), free(m->S), free(m->armature), free(m->dof_parent);
    free(m->axis_kind), free(m->pose_kind), free(m->dof_unit), free(m->dof_axis), free(m->plnr);
    free(m->sub_cols);
    if (m->body_names)
        for (int i = 0; i < m->nb; i++)
            free(m->body_names[i]);
    free(m->body_names);
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
    PyArrayObject *a = mb_gate(o, name, type, 0);
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

/* The body names (a sequence of nb str) as C strings in m->body_names, which error messages quote
 * (status.c: the body a kernel found singular).  -1 with the error set. */
static int copy_names(PyObject *o, mb_model *m)
{
    PyObject *seq = PySequence_Fast(o, "CModel: body_names must be a sequence of str");
    if (!seq)
        return -1;
    if (PySequence_Fast_GET_SIZE(seq) != m->nb) {
        PyErr_Format(PyExc_ValueError, "CModel: body_names has %zd entries, expected %d",
                     PySequence_Fast_GET_SIZE(seq), m->nb);
        Py_DECREF(seq);
        return -1;
    }
    m->body_names = calloc(m->nb ? (size_t)m->nb : 1, sizeof(char *));
    int rc = m->body_names ? 0 : -1;
    if (rc)
        PyErr_NoMemory();
    for (int i = 0; !rc && i < m->nb; i++) {
        PyObject *name = PySequence_Fast_GET_ITEM(seq, i);
        const char *utf8 = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        if (!utf8) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "CModel: body_names[%d] must be a str, got %R", i, name);
            rc = -1;
        } else if (!(m->body_names[i] = strdup(utf8))) {
            PyErr_NoMemory();
            rc = -1;
        }
    }
    Py_DECREF(seq);
    return rc;
}

/* dof_parent must be the tree's expanded parent array (RBDA table 6.4, expandLambda; Model.dof_parent):
 * the sparse kernels walk it, so a wrong entry would read outside the factor or loop forever.
 * -1 with the error set. */
static int check_dof_parent(const mb_model *m)
{
    int *last = malloc(sizeof(int) * (m->nb ? (size_t)m->nb : 1));  /* last variable of body i or its ancestors */
    if (!last) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < m->nb && !rc; i++) {
        int prev = m->parent[i] < 0 ? -1 : last[m->parent[i]];
        for (int j = 0; j < m->nv_joint[i] && !rc; j++) {
            int k = m->v_start[i] + j, expected = j == 0 ? prev : k - 1;
            if (m->dof_parent[k] != expected) {
                PyErr_Format(PyExc_ValueError, "CModel: dof_parent[%d] is %d, expected %d (the tree's expanded "
                             "parent array)", k, m->dof_parent[k], expected);
                rc = -1;
            }
        }
        last[i] = m->nv_joint[i] > 0 ? m->v_start[i] + m->nv_joint[i] - 1 : prev;
    }
    free(last);
    return rc;
}

/* CModel(parent, jtype, q_start, nq_joint, v_start, nv_joint, tree_rotation, tree_translation,
 *        jaxis, jpitch, inertia10, S, armature, dof_parent, a_grav[, body_names]) */
static PyObject *CModel_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *o[16] = {NULL};
    if (kw && PyDict_Size(kw)) {
        PyErr_SetString(PyExc_TypeError, "CModel takes positional arguments only");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "CModel", 15, 16, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7],
                           &o[8], &o[9], &o[10], &o[11], &o[12], &o[13], &o[14], &o[15]))
        return NULL;
    CModel *self = (CModel *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    mb_model *m = &self->m;
    PyArrayObject *par = mb_gate(o[0], "parent", NPY_INT64, 0);
    if (!par)
        goto fail;
    if (PyArray_NDIM(par) != 1) {
        PyErr_SetString(PyExc_ValueError, "CModel: parent must be 1-D");
        Py_DECREF(par);
        goto fail;
    }
    m->nb = (int)PyArray_DIM(par, 0);
    Py_DECREF(par);
    const Py_ssize_t nb = m->nb;
    if (copy_ints(o[0], "parent", nb, &m->parent) || copy_ints(o[1], "jtype", nb, &m->jtype) ||
        copy_ints(o[2], "q_start", nb, &m->q_start) || copy_ints(o[3], "nq_joint", nb, &m->nq_joint) ||
        copy_ints(o[4], "v_start", nb, &m->v_start) || copy_ints(o[5], "nv_joint", nb, &m->nv_joint))
        goto fail;
    m->nq = m->nv = m->max_nvj = 0;
    for (int i = 0; i < m->nb; i++) {
        if (m->parent[i] < -1 || m->parent[i] >= i || m->jtype[i] < 0 || m->jtype[i] >= MB_JOINT_COUNT ||
            m->q_start[i] != m->nq || m->v_start[i] != m->nv || m->nv_joint[i] > 6 || m->nv_joint[i] < 0) {
            PyErr_Format(PyExc_ValueError, "CModel: inconsistent tree tables at body %d", i);
            goto fail;
        }
        if (m->nq_joint[i] != mb_joint_nq(m->jtype[i]) || m->nv_joint[i] != mb_joint_nv(m->jtype[i])) {
            PyErr_Format(PyExc_ValueError, "CModel: body %d's joint (type %d) has nq %d and nv %d, but the "
                         "tables say nq_joint %d and nv_joint %d", i, m->jtype[i], mb_joint_nq(m->jtype[i]),
                         mb_joint_nv(m->jtype[i]), m->nq_joint[i], m->nv_joint[i]);
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
    if (check_dof_parent(m))
        goto fail;
    double *g = NULL;
    if (copy_doubles(o[14], "a_grav", 6, &g))
        goto fail;
    memcpy(m->a_grav, g, sizeof m->a_grav);
    free(g);
    if (o[15] && o[15] != Py_None && copy_names(o[15], m))
        goto fail;
    if (mb_model_compile(m) != MB_OK) {  /* the derived tables (model/compile.c) */
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

PyTypeObject CModelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "multibody.core._core.CModel",
    .tp_basicsize = sizeof(CModel),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Constant C model (model.h) built from a multibody.Model's arrays; owned by that Model.",
    .tp_new = CModel_new,
    .tp_dealloc = (destructor)CModel_dealloc,
    .tp_getset = CModel_getset,
};


CModel *get_model(PyObject *o)
{
    if (!PyObject_TypeCheck(o, &CModelType)) {
        PyErr_SetString(PyExc_TypeError, "expected a CModel (Model._c) as first argument");
        return NULL;
    }
    return (CModel *)o;
}
