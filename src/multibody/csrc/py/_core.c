/* _core.c — the module multibody.core._core: its method table and initialisation.
 *
 * This is the boundary between Python and the kernels (py_boundary.h lists its files):
 *   - CModel: the constant C model (model.h) built once from a Python Model's arrays, with one
 *     workspace (data.h) for single-state calls, which run with the GIL held;
 *   - one METH_FASTCALL function per algorithm.  Every array argument passes the one gate
 *     (gate.h: None, complex, object and masked arrays refused; byte order, alignment, strides and
 *     integer or bool dtypes converted); the arrays must then be in one of two layouts, else the
 *     function returns None (the Python face reshapes them, with its readable shape errors, and
 *     calls again):
 *       single:  1-D arrays of exactly (nq,) / (nv,), f_ext (nb, 6)
 *                → result for one state, no batch dimension;
 *       batch:   2-D (N or 1, n) arrays (f_ext (N or 1, nb, 6)), leading size 1 = shared by all
 *                states → result (N, …), computed with the GIL released, split across threads
 *                when N ≥ PARALLEL_MIN_BATCH;
 *   - per-state checks (finite numbers, non-zero quaternions) in C, before each state's kernel,
 *     and the one place that turns a status code (status.h) into a ValueError;
 *   - a result that overflowed from finite inputs is a ResultOverflowError (a ValueError).
 */
#define MB_CORE_IMPORTS_ARRAY  /* this file calls import_array(); the others share its table */
#include "py/py_boundary.h"

#include <unistd.h>

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
    {"scene_contacts", (PyCFunction)(void (*)(void))py_scene_contacts, METH_FASTCALL,
     "scene_contacts(cmodel, q, gint, gdat, hulls, pairs, pdat) -> (pair, pos, normal, depth, slot)"},
    {"scene_forces", (PyCFunction)(void (*)(void))py_scene_forces, METH_FASTCALL,
     "scene_forces(cmodel, q, qd, gint, gdat, hulls, pairs, pdat, pair, pos, normal, depth, K, D, u) -> "
     "(f_ext, udot, F, state)"},
    {"scene_pair_slots", (PyCFunction)(void (*)(void))py_scene_pair_slots, METH_FASTCALL,
     "scene_pair_slots(gint, pairs) -> (np,) int64: each candidate pair's contact slots"},
    {"geom_shapes", py_geom_shapes, METH_NOARGS, "The engine's collision shapes' names, in code order."},
    {"kkt_solve", (PyCFunction)(void (*)(void))py_kkt_solve, METH_FASTCALL,
     "kkt_solve(H, d, J, rhs, h_tol, rank_tol) -> (status, qdd, lam): TMT eq. (6) by the range-space method"},
    {"fdgq_solve", (PyCFunction)(void (*)(void))py_fdgq_solve, METH_FASTCALL,
     "fdgq_solve(H, C, tau, G, gs) -> (qdd, tauc) or None: FDgq's reduced solve (RBDA eq. 3.20)"},
    {"constraint_rows", (PyCFunction)(void (*)(void))py_constraint_rows, METH_FASTCALL,
     "constraint_rows(cmodel, table, q, qd) -> (c, cdot, J, bias): constraints.c's rows"},
    {"constrained_accelerations", (PyCFunction)(void (*)(void))py_constrained_accelerations, METH_FASTCALL,
     "constrained_accelerations(cmodel, table, q, qd, tau, f_ext) -> (status, qdd, lam): "
     "TMT eq. (6) with Baumgarte stabilisation (constraints.c)"},
    {"rollout", (PyCFunction)(void (*)(void))py_rollout, METH_FASTCALL,
     "rollout(cmodel, Q0, QD0, outputs, plan, run): whole fixed-step runs of a Plan (simulation/rollout.py) "
     "into the given arrays"},
    {"passive", (PyCFunction)(void (*)(void))py_passive, METH_FASTCALL,
     "passive(cmodel, passive, q, v, tau) -> (tau_all, f_ext | None): passive.c's laws at one state"},
    {"steppers", py_steppers, METH_NOARGS,
     "steppers() -> ((name, order, stages, stable_decay, flags, a, b, c, source), ...): the fixed-step methods "
     "of the compiled loop, row i for integrator code i (rollout.c's mb_steppers)"},
    {"ltdl_kernel", (PyCFunction)(void (*)(void))py_ltdl_kernel, METH_FASTCALL,
     "ltdl_kernel(H, lam, L, d, info): LTDL of each H[b] into L, d; info[b] = failing pivot or -1"},
    {"ltl_kernel", (PyCFunction)(void (*)(void))py_ltl_kernel, METH_FASTCALL,
     "ltl_kernel(H, lam, L, info): LTL of each H[b] into L; info[b] = failing pivot or -1"},
    {"mpy_kernel", (PyCFunction)(void (*)(void))py_mpy_kernel, METH_FASTCALL,
     "mpy_kernel(op, M, lam, x, y): y[b] = op(M[b]) x[b], op 0 H, 1 L, 2 L^T, 3 L^-1, 4 L^-T"},
    {"solve_ltdl_kernel", (PyCFunction)(void (*)(void))py_solve_ltdl_kernel, METH_FASTCALL,
     "solve_ltdl_kernel(L, d, lam, rhs, x): x[b] = L^-1 D^-1 L^-T rhs[b]"},
    {"gate", (PyCFunction)(void (*)(void))py_gate, METH_FASTCALL,
     "gate(name, x) -> x as a native, aligned, C-contiguous float64 array (gate.h: the rules every array "
     "argument of the core passes); TypeError/ValueError naming `name`"},
    {"rnea_derivatives", (PyCFunction)(void (*)(void))py_rnea_derivatives, METH_FASTCALL,
     "rnea_derivatives(cmodel, q, qd, qdd, f_ext) -> (dtau_dq, dtau_dqd, M) or None"},
    {"aba_derivatives", (PyCFunction)(void (*)(void))py_aba_derivatives, METH_FASTCALL,
     "aba_derivatives(cmodel, q, qd, tau, f_ext) -> (dqdd_dq, dqdd_dqd, Minv) or None"},
    {"minv", (PyCFunction)(void (*)(void))py_minv, METH_FASTCALL, "minv(cmodel, q) -> Minv or None"},
    {"set_num_threads", py_set_num_threads, METH_O, "Threads used by large batches (≥ 1)."},
    {"get_num_threads", py_get_num_threads, METH_NOARGS, "Threads used by large batches."},
    {"sincos", py_sincos, METH_O, "sincos(x) -> (sin x, cos x) as the core's joint transforms compute them."},
    {"status_message", py_status_message, METH_O, "Message of a kernel status code (status.h)."},
    {"use_lanes", py_use_lanes, METH_O,
     "use_lanes(name): 'baseline', 'avx2', 'avx512' or 'none' for batched ABA, RNEA and CRBA; returns the name used before."},
    {"release_output_memory", py_release_output_memory, METH_NOARGS,
     "Free the block kept for the next large output (see new_array in py_output.c)."},
    {"kept_output_bytes", py_kept_output_bytes, METH_NOARGS,
     "Size in bytes of the blocks kept for the next large outputs (0: none)."},
    {"output_array", py_output_array, METH_O,
     "output_array(shape) -> a new float64 array, uninitialised, allocated as the large outputs are."},
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
    ResultOverflowError = PyErr_NewExceptionWithDoc(
        "multibody.core._core.ResultOverflowError",
        "A result overflowed (inf or NaN) although every input was finite: the inputs are too large "
        "(a simulation that blew up).  A ValueError.", PyExc_ValueError, NULL);
    if (!attr_c || !reuse_capsule || !ResultOverflowError)
        return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (!mod)
        return NULL;
    pick_lanes();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    set_threads(cpus > 256 ? 256 : (int)cpus);
    Py_INCREF(&CModelType);
    Py_INCREF(&FastFunctionType);
    if (PyModule_AddObject(mod, "CModel", (PyObject *)&CModelType) < 0 ||
        PyModule_AddObject(mod, "fast_function", (PyObject *)&FastFunctionType) < 0 ||
        PyModule_AddObjectRef(mod, "ResultOverflowError", ResultOverflowError) < 0 ||
        PyModule_AddIntConstant(mod, "PARALLEL_MIN_BATCH", PARALLEL_MIN_BATCH) < 0 ||
        PyModule_AddIntConstant(mod, "LANES", lanes_active->width) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
