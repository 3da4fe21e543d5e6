/* fd_crb.c — forward dynamics by the composite-rigid-body algorithm (RBDA §6.2; spatial_v2 FDcrb):
 *
 *   H = CRBA(q)  (armature on its diagonal),  C = ID(q, q̇, 0, f_ext),  solve H q̈ = τ − C
 *
 * by a dense Cholesky factorisation H = L Lᵀ (kkt.c). */

#include "common/core.h"

int mb_fd_crb(const mb_model *m, mb_data *d, const double *q, const double *qd, const double *tau,
              const double *fext, double *qdd)
{
    const int nv = m->nv;
    double *C = d->tmp, *zero = d->tmp + nv, *rhs = d->tmp + 2 * nv;
    for (int k = 0; k < nv; k++)
        zero[k] = 0.0;
    mb_crba(m, d, q, d->H);
    mb_rnea(m, d, q, qd, zero, fext, C);
    for (int k = 0; k < nv; k++)
        rhs[k] = tau[k] - C[k];
    return mb_cholesky_solve(nv, d->H, d->L, rhs, qdd) ? MB_OK : mb_pivot_status(d->H, nv * nv);
}
