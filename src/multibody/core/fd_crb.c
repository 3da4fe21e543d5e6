/* fd_crb.c — forward dynamics by the composite-rigid-body algorithm (RBDA §6.2; spatial_v2 FDcrb):
 *
 *   H = CRBA(q)  (armature on its diagonal),  C = ID(q, q̇, 0, f_ext),  solve H q̈ = τ − C
 *
 * by a dense Cholesky factorisation H = L Lᵀ. */
#include <math.h>

#include "core.h"

/* x = H⁻¹ b for SPD H (n×n) with L as scratch; 0 if a pivot is lost to round-off (H singular). */
int mb_cholesky_solve(int n, const double *H, double *L, const double *b, double *x)
{
    for (int j = 0; j < n; j++) {
        double s = H[n * j + j];
        for (int k = 0; k < j; k++)
            s -= L[n * j + k] * L[n * j + k];
        if (!(s > 0.0 && s > 1e-13 * H[n * j + j]))
            return 0;
        L[n * j + j] = sqrt(s);
        for (int i = j + 1; i < n; i++) {
            double t = H[n * i + j];
            for (int k = 0; k < j; k++)
                t -= L[n * i + k] * L[n * j + k];
            L[n * i + j] = t / L[n * j + j];
        }
    }
    for (int i = 0; i < n; i++) {  /* L y = b */
        double s = b[i];
        for (int k = 0; k < i; k++)
            s -= L[n * i + k] * x[k];
        x[i] = s / L[n * i + i];
    }
    for (int i = n - 1; i >= 0; i--) {  /* Lᵀ x = y */
        double s = x[i];
        for (int k = i + 1; k < n; k++)
            s -= L[n * k + i] * x[k];
        x[i] = s / L[n * i + i];
    }
    return 1;
}

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
    return mb_cholesky_solve(nv, d->H, d->L, rhs, qdd) ? MB_OK : MB_SINGULAR;
}
