/* rnea_derivatives.c — ∂τ/∂q, ∂τ/∂q̇ and M of inverse dynamics, analytically
 * (Carpentier & Mansard, "Analytical Derivatives of Rigid Body Dynamics Algorithms", RSS 2018:
 * RNEA in the world frame, differentiated).
 *
 * Everything is in world (base) coordinates, where a joint's motion subspace J_k = X_0i⁻¹ S_k
 * moves with the body and everything else (gravity, f_ext, a_base) stays put.  ∂/∂q_k is the
 * tangent direction of mb.integrate: the body of joint k turns by exp(ε S_k) on the right (body
 * frame), i.e. its whole subtree by exp(ε J_k) in the world, so J_j, Y_i (world inertias) and the
 * part of v_i, a_i made by the joints k … i are carried along ("attached": ∂x = J_k × x).
 *
 *   forward, body i with parent λ, for each column k of joint i:
 *       v_i = v_λ + Σ J_k q̇_k,   a_i = a_λ + Σ J_k q̈_k + v_λ × Σ J_k q̇_k      (a_base = −a_grav)
 *       u_k    = v_λ × J_k                        ∂v_i/∂q_k = u_k + J_k × v_i (attached part)
 *       dAq_k  = a_λ × J_k + v_λ × u_k           ∂a_i/∂q_k = dAq_k + u_k × v_i + J_k × a_i
 *       dAv_k  = u_k + v_i × J_k                 ∂a_i/∂q̇_k = dAv_k + J_k × v_i
 *       Y_i = world inertia,  f_i = Y_i a_i + v_i ×* Y_i v_i   (f_ext kept apart: it does not turn)
 *       B_i u = Y_i (u × v_i) + u ×* (Y_i v_i) + v_i ×* (Y_i u)    (what v's part adds to ∂f)
 *         = [B11 u_ω; −2 h_f × u_ω]:  with Y = [Ī, c×; −c×, m], v = [ω; l], h = Y v = [h_n; h_f],
 *         B's right column of blocks vanishes (Jacobi identity) and
 *         B11 = ω×Ī − Ī ω× − (l× c× + c× l×) − h_n× = (A + Aᵀ − c lᵀ − l cᵀ + 2 (l·c) 1) − h_n×, A = ω×Ī,
 *         so a subtree's Bc is 12 numbers: the symmetric part of B11, Σ h_n, Σ h_f.
 *   backward, sums over the subtree of i: Yc_i = Σ Y, Bc_i = Σ B, F_i = Σ f, Fx_i = Σ f_ext; then
 *       ∂f_subtree/∂q_k = J_k ×* F + Yc dAq_k + Bc u_k  (the J_k ×* F of an attached force cancels
 *       in J_jᵀ F for j below k; a world-fixed f_ext adds −J_j ×* Fx instead).  With τ_j = J_jᵀ(F − Fx):
 *     j at or below k (k in joint i or above, j in joint i):
 *       ∂τ_j/∂q_k = (Yc_i J_j)·dAq_k + (Bc_iᵀ J_j)·u_k − (J_j ×* Fx_i)·J_k
 *       ∂τ_j/∂q̇_k = (Yc_i J_j)·dAv_k + (Bc_iᵀ J_j)·J_k,      M_jk = (Yc_i J_j)·J_k
 *     j strictly above k (k in joint i):
 *       ∂τ_j/∂q_k = J_j·(J_k ×* F_i + Yc_i dAq_k + Bc_i u_k)
 *       ∂τ_j/∂q̇_k = J_j·(Yc_i dAv_k + Bc_i J_k)
 * Joints on different branches do not see each other: those entries are 0.  Armature adds to M's
 * diagonal only (∂τ/∂q, ∂τ/∂q̇ do not see it).  Cost O(nv · depth), like CRBA.
 *
 * Written in `real` (lanes.h): rnea_derivatives_lanes.c compiles the forward pass from the world
 * poses on and the backward pass again over vector lanes of states, for batches.
 */
#include <string.h>

#include "common/core.h"
#include "common/spatial.h"

#ifdef MB_LANE_BUILD  /* the pieces of scratch, in lanes */
typedef struct {
    real *J, *U, *dAq, *dAv, *v, *a, *F, *Fx, *Yc, *Bc, *tmp;
} rnead_lanes;
#define mb_rnead rnead_lanes
/* a model vector (double) as `real`: broadcast to every lane here, read in place in the scalar build */
#define MODEL_REAL(name, src, n)                                                                        \
    real name[n];                                                                                       \
    for (int t_ = 0; t_ < (n); t_++)                                                                    \
        name[t_] = MB_SPLAT((src)[t_])
#else
#define MODEL_REAL(name, src, n) const double *name = (src)
#endif

/* out = Y v for a world inertia Y (it depends on q: real in the lanes build too) */
MB_INERTIA_MUL(world_inertia_mul, real, real)

enum { COLS = 4 * 6, BODY = 6 + 6 + 6 + 6 + MB_NI + 12 + 6 };
enum { B_SYM = 0, B_HN = 6, B_HF = 9, B_N = 12 };  /* B11's symmetric part (xx xy xz yy yz zz), Σ h_n, Σ h_f */

#ifndef MB_LANE_BUILD
long mb_rnea_derivatives_scratch(const mb_model *m)
{
    return (long)COLS * m->nv + (long)BODY * m->nb + 1;
}
#endif

/* The pieces of scratch (core.h: mb_rnead). */
MB_LANES_STATIC mb_rnead MB_NAME(mb_rnead_layout)(const mb_model *m, real *scratch)
{
    mb_rnead w;
    const int nb = m->nb, nv = m->nv;
    w.J = scratch, w.U = w.J + 6 * nv, w.dAq = w.U + 6 * nv, w.dAv = w.dAq + 6 * nv;
    w.v = w.dAv + 6 * nv, w.a = w.v + 6 * nb, w.F = w.a + 6 * nb, w.Fx = w.F + 6 * nb, w.Yc = w.Fx + 6 * nb;
    w.Bc = w.Yc + MB_NI * nb, w.tmp = w.Bc + B_N * nb;
    return w;
}

/* out = a × b (motion cross product, spatial_v2 crm(a) b) */
static inline void cross_m(const real *a, const real *b, real *out)
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
    out[3] = a[1] * b[5] - a[2] * b[4] + a[4] * b[2] - a[5] * b[1];
    out[4] = a[2] * b[3] - a[0] * b[5] + a[5] * b[0] - a[3] * b[2];
    out[5] = a[0] * b[4] - a[1] * b[3] + a[3] * b[1] - a[4] * b[0];
}

static inline void cross3_add(double s, const real *a, const real *b, real *out)
{
    out[0] += s * (a[1] * b[2] - a[2] * b[1]);
    out[1] += s * (a[2] * b[0] - a[0] * b[2]);
    out[2] += s * (a[0] * b[1] - a[1] * b[0]);
}

/* The 12 numbers of B_i (see the top) for world inertia Y, velocity v, momentum h = Y v. */
static void coriolis_map(const real *Y, const real *v, const real *h, real *B)
{
    const real I[3][3] = {{Y[4], Y[5], Y[6]}, {Y[5], Y[7], Y[8]}, {Y[6], Y[8], Y[9]}};
    const real *c = Y + 1, *w = v, *l = v + 3;
    real A[3][3];  /* ω × Ī, column by column */
    for (int k = 0; k < 3; k++) {
        A[0][k] = w[1] * I[2][k] - w[2] * I[1][k];
        A[1][k] = w[2] * I[0][k] - w[0] * I[2][k];
        A[2][k] = w[0] * I[1][k] - w[1] * I[0][k];
    }
    const real lc = 2.0 * (l[0] * c[0] + l[1] * c[1] + l[2] * c[2]);
    int n = 0;
    for (int r = 0; r < 3; r++)
        for (int k = r; k < 3; k++) {
            real e = A[r][k] + A[k][r] - c[r] * l[k] - l[r] * c[k];
            if (r == k)
                e += lc;
            B[B_SYM + n++] = e;
        }
    B[B_HN] = h[0], B[B_HN + 1] = h[1], B[B_HN + 2] = h[2];
    B[B_HF] = h[3], B[B_HF + 1] = h[4], B[B_HF + 2] = h[5];
}

/* out = Bsym x (3-vector) */
static inline void sym3_mul(const real *S, const real *x, real *out)
{
    out[0] = S[0] * x[0] + S[1] * x[1] + S[2] * x[2];
    out[1] = S[1] * x[0] + S[3] * x[1] + S[4] * x[2];
    out[2] = S[2] * x[0] + S[4] * x[1] + S[5] * x[2];
}

/* out = Bc u (6-vector) */
static inline void coriolis_mul(const real *B, const real *u, real *out)
{
    sym3_mul(B + B_SYM, u, out);
    cross3_add(-1.0, B + B_HN, u, out);
    out[3] = out[4] = out[5] = MB_SPLAT(0.0);
    cross3_add(-2.0, B + B_HF, u, out + 3);
}

/* out = angular part of Bcᵀ J (its linear part is 0) */
static inline void coriolis_tmul(const real *B, const real *J, real *out)
{
    sym3_mul(B + B_SYM, J, out);
    cross3_add(1.0, B + B_HN, J, out);
    cross3_add(2.0, B + B_HF, J + 3, out);
}

static inline real dot3(const real *a, const real *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* dAq_k = a_λ × J_k + v_λ × u_k for the columns of body i */
static inline void column_accelerations(const mb_model *m, const mb_rnead *w, int i, const real *minus_grav)
{
    static const real zero[6] = {0};
    const int par = m->parent[i];
    const real *vp = par < 0 ? zero : w->v + 6 * par, *ap = par < 0 ? minus_grav : w->a + 6 * par;
    for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++) {
        real *Aq = w->dAq + 6 * k;
        cross_m(ap, w->J + 6 * k, Aq);
        mb_crm_add(vp, w->U + 6 * k, Aq);
    }
}

/* Forward pass (see the top) at q̈, from the world poses R0, p0 of q; qdd NULL: at q̈ = 0 and
 * without dAq (mb_rnead_add_qdd makes it). */
MB_LANES_STATIC void MB_NAME(mb_rnead_forward_posed)(const mb_model *m, const mb_rnead *w, const real *R0s,
                                                     const real *p0s, const real *qd, const real *qdd,
                                                     const real *fext)
{
    const int nb = m->nb;
    const real zero[6] = {0}, minus_grav[6] = {MB_SPLAT(-m->a_grav[0]), MB_SPLAT(-m->a_grav[1]),
                                               MB_SPLAT(-m->a_grav[2]), MB_SPLAT(-m->a_grav[3]),
                                               MB_SPLAT(-m->a_grav[4]), MB_SPLAT(-m->a_grav[5])};
    for (int i = 0; i < nb; i++) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const real *R0 = R0s + 9 * i, *p0 = p0s + 3 * i;
        real vJ[6] = {0}, aJ[6] = {0}, h[6];
        const real *vp = par < 0 ? zero : w->v + 6 * par, *ap = par < 0 ? minus_grav : w->a + 6 * par;
        real *vi = w->v + 6 * i, *ai = w->a + 6 * i, *Y = w->Yc + MB_NI * i, *Fi = w->F + 6 * i;
        for (int k = vs; k < vs + nj; k++) {
            real *Jk = w->J + 6 * k;
            const int s = m->dof_axis[k];  /* J_k = X_0i⁻¹ S_k: a signed column of X_0i⁻¹ for S_k = ±e_s */
            if (s >= 0) {
                mb_unit_motion_to_parent(R0, p0, s, m->S[6 * k + s] < 0.0, Jk);
            } else {
                MODEL_REAL(Sk, m->S + 6 * k, 6);
                mb_motion_to_parent(R0, p0, Sk, Jk);
            }
            for (int r = 0; r < 6; r++)
                vJ[r] += Jk[r] * qd[k];
            if (qdd)
                for (int r = 0; r < 6; r++)
                    aJ[r] += Jk[r] * qdd[k];
        }
        for (int r = 0; r < 6; r++)
            vi[r] = vp[r] + vJ[r], ai[r] = ap[r] + aJ[r];
        mb_crm_add(vp, vJ, ai);
        for (int k = vs; k < vs + nj; k++) {
            const real *Jk = w->J + 6 * k;
            real *Uk = w->U + 6 * k, *Av = w->dAv + 6 * k;
            cross_m(vp, Jk, Uk);
            cross_m(vi, Jk, Av);
            for (int r = 0; r < 6; r++)
                Av[r] += Uk[r];
        }
        if (qdd)  /* at q̈ = 0 (aba_derivatives.c) mb_rnead_add_qdd makes them, at its q̈ */
            column_accelerations(m, w, i, minus_grav);
        memset(Y, 0, sizeof(real) * MB_NI);
        MODEL_REAL(Ib, m->inertia + MB_NI * i, MB_NI);
        mb_inertia_to_parent_add(R0, p0, Ib, Y);
        world_inertia_mul(Y, ai, Fi);
        world_inertia_mul(Y, vi, h);
        mb_crf_add(vi, h, Fi);
        coriolis_map(Y, vi, h, w->Bc + B_N * i);
        if (fext)
            memcpy(w->Fx + 6 * i, fext + 6 * i, 6 * sizeof(real));
    }
}

#ifndef MB_LANE_BUILD
/* Forward pass (see the top) at q̈ (NULL: 0, dAq left to mb_rnead_add_qdd), with the world poses of q. */
void mb_rnead_forward(const mb_model *m, mb_data *d, const mb_rnead *w, const double *q, const double *qd,
                      const double *qdd, const double *fext)
{
    mb_tree_poses(m, q, d->R, d->p);
    mb_world_poses(m, d->R, d->p, d->R0, d->p0);
    mb_rnead_forward_posed(m, w, d->R0, d->p0, qd, qdd, fext);
}

#endif

/* τ at the forward pass's q̈: C_k = J_kᵀ Σ_subtree (f − f_ext) (RNEA's backward pass, world frame). */
MB_LANES_STATIC void MB_NAME(mb_rnead_bias)(const mb_model *m, const mb_rnead *w, const real *fext, real *C)
{
    real *G = w->tmp;
    for (int r = 0; r < 6 * m->nb; r++) {
        G[r] = w->F[r];
        if (fext)
            G[r] -= w->Fx[r];
    }
    for (int i = m->nb - 1; i >= 0; i--) {
        const real *Gi = G + 6 * i;
        for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++)
            C[k] = mb_dot6(w->J + 6 * k, Gi);
        if (m->parent[i] >= 0)
            mb_add_to(G + 6 * m->parent[i], Gi, 6);
    }
}

/* Move the forward pass from q̈ = 0 to q̈: a_i += Σ_{joints k ⪯ i} J_k q̈_k, f_i += Y_i (that), dAq anew. */
#ifndef MB_LANE_BUILD
MB_CLONES_AVX2
#endif
MB_LANES_STATIC void MB_NAME(mb_rnead_add_qdd)(const mb_model *m, const mb_rnead *w, const real *qdd)
{
    const real minus_grav[6] = {MB_SPLAT(-m->a_grav[0]), MB_SPLAT(-m->a_grav[1]), MB_SPLAT(-m->a_grav[2]),
                                MB_SPLAT(-m->a_grav[3]), MB_SPLAT(-m->a_grav[4]), MB_SPLAT(-m->a_grav[5])};
    real *da = w->tmp;
    for (int i = 0; i < m->nb; i++) {
        const int par = m->parent[i];
        real *dai = da + 6 * i, t[6];
        for (int r = 0; r < 6; r++)
            dai[r] = par < 0 ? MB_SPLAT(0.0) : da[6 * par + r];
        for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++)
            mb_add_scaled6(dai, w->J + 6 * k, qdd[k]);
        mb_add_to(w->a + 6 * i, dai, 6);
        world_inertia_mul(w->Yc + MB_NI * i, dai, t);
        mb_add_to(w->F + 6 * i, t, 6);
        column_accelerations(m, w, i, minus_grav);
    }
}

/* Backward pass (see the top): subtree sums, then the entries of joint i.  M may be NULL.  Writes
 * only the tree's entries (the rest are 0: the caller zeroes them, or, as −M⁻¹·∂τ does, never reads them). */
#ifndef MB_LANE_BUILD
MB_CLONES_AVX2
#endif
MB_LANES_STATIC void MB_NAME(mb_rnead_backward)(const mb_model *m, const mb_rnead *w, const real *fext,
                                                real *dtau_dq, real *dtau_dqd, real *M)
{
    const int nb = m->nb, nv = m->nv;
    const real *J = w->J, *U = w->U, *dAq = w->dAq, *dAv = w->dAv;
    real *F = w->F, *Fx = w->Fx, *Yc = w->Yc, *Bc = w->Bc;
    for (int i = nb - 1; i >= 0; i--) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const real *Yi = Yc + MB_NI * i, *Bi = Bc + B_N * i, *Fi = F + 6 * i, *Fxi = Fx + 6 * i;
        for (int j = vs; j < vs + nj; j++) {
            const real *Jj = J + 6 * j;
            real r1[6], r2[3], r3[6] = {0}, psi_q[6], psi_v[6], t[6];
            world_inertia_mul(Yi, Jj, r1);
            coriolis_tmul(Bi, Jj, r2);
            if (fext) {  /* r3 = −J_j ×* Fx */
                real c[6] = {0};
                mb_crf_add(Jj, Fxi, c);
                for (int r = 0; r < 6; r++)
                    r3[r] = -c[r];
            }
            /* ψ: the subtree's ∂f for column j, seen by the joints above */
            world_inertia_mul(Yi, dAq + 6 * j, psi_q);
            mb_crf_add(Jj, Fi, psi_q);
            coriolis_mul(Bi, U + 6 * j, t);
            for (int r = 0; r < 6; r++)
                psi_q[r] += t[r];
            world_inertia_mul(Yi, dAv + 6 * j, psi_v);
            coriolis_mul(Bi, Jj, t);
            for (int r = 0; r < 6; r++)
                psi_v[r] += t[r];
            real *rq = dtau_dq + (long)nv * j, *rv = dtau_dqd + (long)nv * j;
            for (int b = i; b >= 0; b = m->parent[b])
                for (int k = m->v_start[b]; k < m->v_start[b] + m->nv_joint[b]; k++) {
                    const real *Jk = J + 6 * k;
                    rq[k] = mb_dot6(r1, dAq + 6 * k) + dot3(r2, U + 6 * k);
                    if (fext)
                        rq[k] += mb_dot6(r3, Jk);
                    rv[k] = mb_dot6(r1, dAv + 6 * k) + dot3(r2, Jk);
                    if (M)
                        M[(long)nv * j + k] = M[(long)nv * k + j] = mb_dot6(r1, Jk);
                    if (b != i) {
                        dtau_dq[(long)nv * k + j] = mb_dot6(Jk, psi_q);
                        dtau_dqd[(long)nv * k + j] = mb_dot6(Jk, psi_v);
                    }
                }
        }
        if (par >= 0) {
            mb_add_to(Yc + MB_NI * par, Yi, MB_NI);
            mb_add_to(Bc + B_N * par, Bi, B_N);
            mb_add_to(F + 6 * par, Fi, 6);
            if (fext)
                mb_add_to(Fx + 6 * par, Fxi, 6);
        }
    }
    if (M)
        for (int k = 0; k < nv; k++)
            M[(long)nv * k + k] += m->armature[k];
}

#ifndef MB_LANE_BUILD
void mb_rnea_derivatives(const mb_model *m, mb_data *d, double *scratch, const double *q, const double *qd,
                         const double *qdd, const double *fext, double *dtau_dq, double *dtau_dqd, double *M)
{
    const mb_rnead w = mb_rnead_layout(m, scratch);
    const size_t bytes = sizeof(double) * m->nv * m->nv;
    memset(dtau_dq, 0, bytes);  /* the entries of joints on different branches */
    memset(dtau_dqd, 0, bytes);
    if (M)
        memset(M, 0, bytes);
    mb_rnead_forward(m, d, &w, q, qd, qdd, fext);
    mb_rnead_backward(m, &w, fext, dtau_dq, dtau_dqd, M);
}
#endif
