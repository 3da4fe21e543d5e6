/* contact.c — compliant ground contact: spatial_v2 gcPosVel + gcontact + Fpt, all points at once.
 *
 * The ground is the plane x[nd−1] = 0 (nd = 3: z up; nd = 2, planar models: y up).  For each
 * contact point r fixed in body b (the seed's model.gc.point / model.gc.body):
 *
 *   gcPosVel   p = p0_b + R0_b r,   ṗ = R0_b (v_b + ω_b × r)       (body-coordinate [ω; v])
 *   gcontact   depth d = −p_n, f_n = √d (K d − D ṗ_n)  (Azad & Featherstone, ACRA 2010);
 *              in contact (f_n > 0), friction from the tangential ground deformation u:
 *                sticking  f_t = −√d (K u + D ṗ_t),  u̇ = ṗ_t
 *                sliding   |f_t| > μ f_n: f_t scaled onto the cone (fcone = |f_t| / μ f_n),
 *                          u̇ = −(f_t / √d + K u) / D
 *              out of contact f = 0, u̇ = −(K/D) u (the ground relaxes);  μ = 0: no u, f_t = 0
 *   Fpt        f_ext[b] += [p × f; f]  (spatial force about the base origin, base coordinates)
 *
 * The same operations, in the same order, as multibody.simulation.contact's NumPy law, so the
 * two agree to rounding (tests/test_contact.py).  Inputs are checked by the caller (py_contact.c).
 */
#include <math.h>
#include <string.h>

#include "common/core.h"

void mb_ground_contact(const mb_model *m, mb_data *d, const double *q, const double *qd, const double *z,
                       const mb_ground_contact_spec *g, double *fext, double *zdot, double *F, double *pos,
                       unsigned char *in_contact, unsigned char *sticking)
{
    const int nd = g->nd, nt = nd - 1;
    const double K = g->K, D = g->D, mu = g->mu;
    mb_body_states(m, d, q, qd, NULL, d->R0, d->p0, d->v, NULL);
    memset(fext, 0, sizeof(double) * 6 * m->nb);
    for (int k = 0; k < g->npt; k++) {
        const int b = (int)g->bodies[k];
        const double *r = g->points + 3 * k, *R = d->R0 + 9 * b, *p0 = d->p0 + 3 * b, *V = d->v + 6 * b;
        double *x = pos + 3 * k, *f = F + 3 * k, vel[3];
        const double vb[3] = {V[3] + (V[1] * r[2] - V[2] * r[1]), V[4] + (V[2] * r[0] - V[0] * r[2]),
                              V[5] + (V[0] * r[1] - V[1] * r[0])};
        for (int i = 0; i < 3; i++) {
            x[i] = p0[i] + (R[3 * i] * r[0] + R[3 * i + 1] * r[1] + R[3 * i + 2] * r[2]);
            vel[i] = R[3 * i] * vb[0] + R[3 * i + 1] * vb[1] + R[3 * i + 2] * vb[2];
        }
        const double zn = x[nd - 1], zdn = vel[nd - 1];
        const double zr = sqrt(fmax(0.0, -zn));
        const double fn = zr * (-K * zn - D * zdn);
        f[0] = f[1] = f[2] = 0.0;
        in_contact[k] = fn > 0.0;
        sticking[k] = 0;
        if (mu > 0.0) {
            const double *u = z + nt * k;
            double *ud = zdot + nt * k;
            if (!(fn > 0.0)) {
                for (int i = 0; i < nt; i++)
                    ud[i] = (-K / D) * u[i];
            } else {
                double ft[2], sum = 0.0;
                for (int i = 0; i < nt; i++) {
                    ft[i] = -zr * K * u[i] - zr * D * vel[i];  /* sticking law first */
                    ud[i] = vel[i];                            /* the ground moves with the point */
                    sum += ft[i] * ft[i];
                }
                const double fcone = sqrt(sum) / (mu * fn);
                if (fcone > 1.0) {  /* sliding: back onto the friction cone */
                    for (int i = 0; i < nt; i++) {
                        ft[i] /= fcone;
                        ud[i] = -(ft[i] + zr * K * u[i]) / (zr * D);
                    }
                } else
                    sticking[k] = 1;
                for (int i = 0; i < nt; i++)
                    f[i] = ft[i];
            }
        }
        if (!(fn > 0.0))
            continue;
        f[nd - 1] = fn;
        double *fb = fext + 6 * b;  /* Fpt: [x × f; f] */
        fb[0] += x[1] * f[2] - x[2] * f[1];
        fb[1] += x[2] * f[0] - x[0] * f[2];
        fb[2] += x[0] * f[1] - x[1] * f[0];
        fb[3] += f[0], fb[4] += f[1], fb[5] += f[2];
    }
}
