/* aba_derivatives.c — ∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ of forward dynamics
 * (Carpentier & Mansard, RSS 2018, §IV-C).
 *
 * Differentiating ID(q, q̇, FD(q, q̇, τ)) = τ gives ∂FD/∂x = −M⁻¹ ∂ID/∂x at q̈ = FD(q, q̇, τ).
 * One set of world-frame quantities serves all of it:
 *   RNEA's forward pass at q̈ = 0 (rnea_derivatives.c): poses, J, v, world inertias Y, f at q̈ = 0
 *   M⁻¹(q) from J and Y                        (minv.c)
 *   C = τ at q̈ = 0 (the bias), q̈ = M⁻¹ (τ − C)   (forward dynamics without a second tree pass)
 *   the forward pass moved to q̈, then ∂τ/∂q, ∂τ/∂q̇ (rnea_derivatives.c)
 *   ∂q̈/∂q = −M⁻¹ ∂τ/∂q,   ∂q̈/∂q̇ = −M⁻¹ ∂τ/∂q̇,   ∂q̈/∂τ = M⁻¹.
 * ∂/∂q is in the tangent space of mb.integrate (rnea_derivatives.c).
 */
#include <string.h>

#include "core.h"

long mb_aba_derivatives_scratch(const mb_model *m)
{
    return mb_rnea_derivatives_scratch(m) + mb_minv_world_scratch(m) + 2L * m->nv * m->nv + 2L * m->nv;
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
    const mb_rnead w = mb_rnead_layout(m, scratch);
    double *dtau_dq = scratch + mb_rnea_derivatives_scratch(m), *dtau_dqd = dtau_dq + (long)nv * nv;
    double *qdd = dtau_dqd + (long)nv * nv, *rhs = qdd + nv, *work = rhs + nv;
    mb_rnead_forward(m, d, &w, q, qd, NULL, fext);
    const int st = mb_minv_world(m, d, work, w.J, w.Yc, Minv);
    if (st != MB_OK)
        return st;
    mb_rnead_bias(m, &w, fext, rhs);
    for (int k = 0; k < nv; k++)
        rhs[k] = tau[k] - rhs[k];
    for (int r = 0; r < nv; r++) {
        double s = 0.0;
        for (int c = 0; c < nv; c++)
            s += Minv[(long)nv * r + c] * rhs[c];
        qdd[r] = s;
    }
    mb_rnead_add_qdd(m, &w, qdd);
    mb_rnead_backward(m, &w, fext, dtau_dq, dtau_dqd, NULL);
    minus_product(nv, Minv, dtau_dq, dqdd_dq);
    minus_product(nv, Minv, dtau_dqd, dqdd_dqd);
    return MB_OK;
}
