/* hybrid.c — hybrid dynamics (RBDA §9.2; spatial_v2 HD).
 *
 * Forward-dynamics joints (fd[i] = 1) have τ given and q̈ unknown; inverse-dynamics joints
 * (fd[i] = 0) have q̈ given and τ unknown.  It is ABA (aba.c) with two changes, made through the
 * same three passes: c_i += S_i q̈_i at inverse-dynamics joints before pass 2 (their acceleration
 * is known, so they pass the full inertia on), and pass 3 computes τ_i = S_iᵀ (IA_i a_i + pA_i)
 * there.  On entry qdd holds the given q̈ at ID joints and tau the given τ at FD joints; on exit
 * both are complete. */
#include "common/core.h"

int mb_hybrid(const mb_model *m, mb_data *d, const unsigned char *fd, const double *q, const double *qd,
              double *qdd, double *tau, const double *fext)
{
    double minus_grav[6];
    mb_aba_start(m, d, q, qd, fext, minus_grav);
    for (int i = 0; i < m->nb; i++)  /* c_i += S_i q̈_i at inverse-dynamics joints */
        if (!fd[i])
            for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++)
                for (int r = 0; r < 6; r++)
                    d->c[6 * i + r] += m->S[6 * k + r] * qdd[k];
    const int st = mb_aba_articulated_pass(m, d, tau, fd, 0);
    if (st != MB_OK)
        return st;
    return mb_aba_acceleration_pass(m, d, minus_grav, fd, qdd, tau, 0, tau);
}
