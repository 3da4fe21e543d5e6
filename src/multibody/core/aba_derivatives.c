/* aba_derivatives.c — ∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ of forward dynamics
 * (Carpentier & Mansard, RSS 2018, §IV-C).
 *
 * Differentiating ID(q, q̇, FD(q, q̇, τ)) = τ gives ∂FD/∂x = −M⁻¹ ∂ID/∂x at q̈ = FD(q, q̇, τ):
 *   q̈ = ABA(q, q̇, τ, f_ext)                   (aba.c)
 *   ∂τ/∂q, ∂τ/∂q̇ at (q, q̇, q̈, f_ext)          (rnea_derivatives.c)
 *   M⁻¹(q)                                     (minv.c)
 *   ∂q̈/∂q = −M⁻¹ ∂τ/∂q,   ∂q̈/∂q̇ = −M⁻¹ ∂τ/∂q̇,   ∂q̈/∂τ = M⁻¹.
 * ∂/∂q is in the tangent space of mb.integrate (rnea_derivatives.c).
 */
#include <string.h>

#include "core.h"

long mb_aba_derivatives_scratch(const mb_model *m)
{
    const long a = mb_rnea_derivatives_scratch(m), b = mb_minv_scratch(m);
    return (a > b ? a : b) + 2L * m->nv * m->nv + m->nv;
}

/* out = −Minv T for n×n row-major matrices, Minv symmetric (out aliases neither).  Column c of T
 * is zero but for the joints on c's path to the root and in c's subtree (rnea_derivatives.c), so
 * row c of (Minv T)ᵀ = Σ_k T[k][c] Minv[k][:] sums only those rows; then one transpose. */
static void minus_product(int n, const double *Minv, const double *T, double *out)
{
    for (int c = 0; c < n; c++) {
        double *o = out + (long)n * c;
        memset(o, 0, sizeof(double) * n);
        for (int k = 0; k < n; k++) {
            const double x = T[(long)n * k + c];
            if (x == 0.0)
                continue;
            const double *b = Minv + (long)n * k;
            for (int r = 0; r < n; r++)
                o[r] -= x * b[r];
        }
    }
    for (int r = 0; r < n; r++)
        for (int c = r + 1; c < n; c++) {
            const double t = out[(long)n * r + c];
            out[(long)n * r + c] = out[(long)n * c + r];
            out[(long)n * c + r] = t;
        }
}

int mb_aba_derivatives(const mb_model *m, mb_data *d, double *scratch, const double *q, const double *qd,
                       const double *tau, const double *fext, double *dqdd_dq, double *dqdd_dqd, double *Minv)
{
    const int nv = m->nv;
    double *dtau_dq = scratch, *dtau_dqd = dtau_dq + (long)nv * nv, *qdd = dtau_dqd + (long)nv * nv;
    double *work = qdd + nv;
    int st = mb_aba(m, d, q, qd, tau, fext, qdd);
    if (st != MB_OK)
        return st;
    st = mb_minv(m, d, work, q, Minv);
    if (st != MB_OK)
        return st;
    mb_rnea_derivatives(m, d, work, q, qd, qdd, fext, dtau_dq, dtau_dqd, NULL);
    minus_product(nv, Minv, dtau_dq, dqdd_dq);
    minus_product(nv, Minv, dtau_dqd, dqdd_dqd);
    return MB_OK;
}
