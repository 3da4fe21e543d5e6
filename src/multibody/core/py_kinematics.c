/* py_kinematics.c — Entry points of kinematics: jacobian, com_jacobian, integrate (body_states is in
 * py_dynamics.c with the other state functions of several outputs). */
#include "py_boundary.h"

/* jacobian(cmodel, q, body, point (3,) float64, frame 0|1|2) -> J (…, 6, nv) */
PyObject *py_jacobian(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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
PyObject *py_com_jacobian(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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
PyObject *py_integrate(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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
