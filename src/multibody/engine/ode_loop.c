/* n steps of an ODE world in C — collide, make the contact joints, step, empty the group — so that
 * timings of ODE (python -m multibody.bench.engine, the report's table 5.2) leave out Python, as
 * the engine's World.run and MuJoCo's rollout do.  ode.py compiles this file on first use against
 * Debian's libode-dev and loads it with ctypes; the Python near callback in ode.py makes the same
 * contacts (with fdir='plane': ODE's own friction axes), which tests/test_engine_ode.py checks.
 *
 * Each geom's data pointer (dGeomSetData) holds its surface {mu, bounce}; two geoms combine as in
 * the engine: mu the geometric mean (an infinite mu yields to the other), bounce the larger. */
#include <math.h>
#include <ode/ode.h>

#define MAX_CONTACTS 8

typedef struct {
    dWorldID world;
    dJointGroupID group;
    double bounce_vel, soft_erp, soft_cfm;
    int pyramid;          /* friction bounds mu times the normal force (dContactApprox1) */
    int ncontacts;
} Loop;

static double combine_mu(double a, double b) { return isinf(a) ? b : (isinf(b) ? a : sqrt(a * b)); }

static void near(void *data, dGeomID o1, dGeomID o2)
{
    Loop *L = (Loop *)data;
    dBodyID b1 = dGeomGetBody(o1), b2 = dGeomGetBody(o2);
    if (!b1 && !b2) return;
    if (b1 && b2 && dAreConnectedExcluding(b1, b2, dJointTypeContact)) return;
    dContact c[MAX_CONTACTS];
    int n = dCollide(o1, o2, MAX_CONTACTS, &c[0].geom, sizeof(dContact));
    if (n <= 0) return;
    const double *s1 = (const double *)dGeomGetData(o1), *s2 = (const double *)dGeomGetData(o2);
    double mu = combine_mu(s1[0], s2[0]), e = s1[1] > s2[1] ? s1[1] : s2[1];
    for (int k = 0; k < n; k++) {
        dSurfaceParameters *s = &c[k].surface;
        s->mode = dContactSoftERP | dContactSoftCFM;
        s->soft_erp = L->soft_erp; s->soft_cfm = L->soft_cfm;
        s->mu = isinf(mu) ? dInfinity : mu;
        if (L->pyramid && !isinf(mu)) s->mode |= dContactApprox1_1 | dContactApprox1_2;
        if (e > 0) { s->mode |= dContactBounce; s->bounce = e; s->bounce_vel = L->bounce_vel; }
        dJointID j = dJointCreateContact(L->world, L->group, &c[k]);
        dJointAttach(j, dGeomGetBody(c[k].geom.g1), dGeomGetBody(c[k].geom.g2));
    }
    L->ncontacts += n;
}

/* Returns the contacts of the last step, or -1 when a step failed. */
int mb_ode_run(dWorldID world, dSpaceID space, dJointGroupID group, int n, double h, int quick, int collide,
               double bounce_vel, double soft_erp, double soft_cfm, int pyramid)
{
    Loop L = {world, group, bounce_vel, soft_erp, soft_cfm, pyramid, 0};
    for (int i = 0; i < n; i++) {
        L.ncontacts = 0;
        if (collide) dSpaceCollide(space, &L, near);
        int ok = quick ? dWorldQuickStep(world, h) : dWorldStep(world, h);
        dJointGroupEmpty(group);
        if (!ok) return -1;
    }
    return L.ncontacts;
}
