/* py_kinematics.c — Entry points of kinematics: jacobian, com_jacobian, integrate (body_states is in
 * py_dynamics.c with the other state functions of several outputs). */
#include "py/py_boundary.h"

/* jacobian(cmodel, q, body, point (3,) float64, frame 0|1|2) -> J (…, 6, nv) */
static PyObject *jacobian_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
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
    npy_intp three[1] = {3};
    PyArrayObject *point = gated_array(held, args[3], "point", NPY_DOUBLE, 1, three, 0);
    if (!point || !finite_array(point, "point"))
        return NULL;
    const arg_spec specs[1] = {{"q", args[1], 1, m->nq, 0, 0}};
    job j = {.name = "jacobian"};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 1, &j, held, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    j.body = (int)body, j.frame = (int)frame, j.point = PyArray_DATA(point);
    return run_into_new_output(cm, jacobian_state, &j, batch, N, 2, 6, m->nv);
}

/* com_jacobian(cmodel, q) -> Σ m_i J_i(c_i) (…, 3, nv) */
static PyObject *com_jacobian_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
    CModel *cm = entry_model(args, nargs, 2, "com_jacobian");
    if (!cm)
        return NULL;
    const mb_model *m = &cm->m;
    const arg_spec specs[1] = {{"q", args[1], 1, m->nq, 0, 0}};
    job j = {.name = "com_jacobian"};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 1, &j, held, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    return run_into_new_output(cm, com_jacobian_state, &j, batch, N, 2, 3, m->nv);
}

/* integrate(cmodel, q, v, dt) -> q ⊕ v·dt */
static PyObject *integrate_entry(PyObject *const *args, Py_ssize_t nargs, gate_hold *held)
{
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
    const arg_spec specs[2] = {{"q", args[1], 1, m->nq, 0, 0}, {"v", args[2], 1, m->nv, 0, 0}};
    job j = {.name = "integrate"};
    Py_ssize_t N;
    int batch;
    const int ok = bind_inputs(specs, 2, &j, held, &N, &batch);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    j.dt = dt;
    return run_into_new_output(cm, integrate_state, &j, batch, N, 1, m->nq, 0);
}

/* The public entry points: each runs its _entry with a hold for the arrays the gate makes. */
GATED_ENTRY(py_jacobian, jacobian_entry)
GATED_ENTRY(py_com_jacobian, com_jacobian_entry)
GATED_ENTRY(py_integrate, integrate_entry)
