/* aba.c — forward dynamics by the articulated-body algorithm (RBDA table 7.1; spatial_v2 FDab).
 *
 *   pass 1, i = 0 … nb−1:     Xup_i, vJ = S_i q̇_i, v_i = Xup_i v_λ(i) + vJ, c_i = v_i ×m vJ,
 *                             IA_i = I_i, pA_i = v_i ×* I_i v_i − X*_0i f_ext,i
 *   pass 2, i = nb−1 … 0:     U_i = IA_i S_i, D_i = S_iᵀ U_i + armature_i, u_i = τ_i − S_iᵀ pA_i
 *                             Ia = IA_i − U_i D_i⁻¹ U_iᵀ,  pa = pA_i + Ia c_i + U_i D_i⁻¹ u_i
 *                             IA_λ(i) += Xup_iᵀ Ia Xup_i,  pA_λ(i) += Xup_iᵀ pa
 *   pass 3, i = 0 … nb−1:     a_i = Xup_i a_λ(i) + c_i  (a_base = −a_grav)
 *                             q̈_i = D_i⁻¹ (u_i − U_iᵀ a_i),  a_i += S_i q̈_i
 *
 * Everything is in body coordinates, as in the book.  The base-coordinate variant (Pinocchio's:
 * IA_λ += Ia without a congruence) is faster but loses digits where small distal bodies sit far
 * from the base origin — iCub's fingers: a backward error of 1e-9 instead of 7e-12 against
 * Pinocchio (tests/test_urdf_robots.py) — so it is not used.
 *
 * The three passes are separate functions because hybrid dynamics (hybrid.c, HD) and the
 * floating base (floating.c, FDfb) run the same passes: a joint with fd[i] = 0 is an
 * inverse-dynamics joint whose q̈ is known (folded into c_i), and `first` lets FDfb start the
 * recursion below its floating base.
 *
 * This file is compiled three ways: as itself (scalar, the architecture's baseline), by aba_avx2.c
 * (scalar in AVX2 code, which mb_aba calls on CPUs that have it: the same numbers) and by aba_lanes.c
 * (`real` a vector of MB_LANES states).
 */
#include <math.h>
#include <string.h>

#include "common/core.h"
#include "model/poses.h"
#include "common/spatial.h"

#if !defined(MB_LANE_BUILD) && !defined(MB_ABA_AVX2)
/* Inverse of the small SPD block D (n×n, row-major, n ≤ 6) by Gauss-Jordan with partial pivoting;
 * 0 if D is (numerically) singular. */
int mb_invert_small(const double *D, int n, double *Dinv)
{
    if (n == 1) {
        if (!(D[0] > 0.0))
            return 0;
        Dinv[0] = 1.0 / D[0];
        return 1;
    }
    double A[6][12], scale = 0.0;
    for (int r = 0; r < n; r++) {
        scale = fmax(scale, fabs(D[n * r + r]));
        for (int c = 0; c < n; c++) {
            A[r][c] = D[n * r + c];
            A[r][n + c] = r == c ? 1.0 : 0.0;
        }
    }
    if (scale == 0.0)
        return 0;
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(A[r][c]) > fabs(A[piv][c]))
                piv = r;
        if (!(fabs(A[piv][c]) > 1e-14 * scale))
            return 0;
        if (piv != c)
            for (int k = 0; k < 2 * n; k++) {
                const double t = A[c][k];
                A[c][k] = A[piv][k];
                A[piv][k] = t;
            }
        const double dd = A[c][c];
        for (int k = 0; k < 2 * n; k++)
            A[c][k] /= dd;
        for (int r = 0; r < n; r++)
            if (r != c && A[r][c] != 0.0) {
                const double e = A[r][c];
                for (int k = 0; k < 2 * n; k++)
                    A[r][k] -= e * A[c][k];
            }
    }
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++)
            Dinv[n * r + c] = A[r][n + c];
    return 1;
}
#endif

/* A free joint at the root (parent: the fixed base) with no rotor inertia has S = 1 in body
 * coordinates and can exert any spatial force, so its D block is IA itself: pass 3 solves
 * IA a = τ − pA by one 6×6 Cholesky and q̈ = a − Xup a_base, skipping U, D⁻¹ and the products. */
static int is_free_root(const mb_model *m, int i, const unsigned char *fd)
{
    if (m->jtype[i] != MB_FREE || m->parent[i] >= 0 || (fd && !fd[i]))
        return 0;
    for (int e = 0; e < 6; e++)
        if (m->armature[m->v_start[i] + e] != 0.0 || m->dof_unit[m->v_start[i] + e] != e)
            return 0;
    return 1;
}

#if !defined(MB_LANE_BUILD) && !defined(MB_ABA_AVX2)
int mb_lanes_supported(const mb_model *m)
{
    if (m->planar)
        return 0;
    for (int i = 0; i < m->nb; i++)
        if (m->nv_joint[i] > 1 && !is_free_root(m, i, NULL))
            return 0;
    return 1;
}
#endif

/* IA a = rhs for a free root's 6×6 block IA by kkt.c's Cholesky; lane by lane in the lanes build. */
/* Are all n entries finite (in every lane)?  Tells a singular block from one that overflowed. */
static int finite_block(const real *a, int n)
{
    for (int k = 0; k < n; k++)
        if (!mb_all(a[k] - a[k] == 0.0))
            return 0;
    return 1;
}

static int free_root_solve(const real *IA, const real *rhs, real *a)
{
#ifndef MB_LANE_BUILD
    double L[36];
    return mb_cholesky_solve(6, IA, L, rhs, a);
#else
    for (int l = 0; l < MB_LANES; l++) {
        double A[36], L[36], b[6], x[6];
        for (int k = 0; k < 36; k++)
            A[k] = IA[k][l];
        for (int k = 0; k < 6; k++)
            b[k] = rhs[k][l];
        if (!mb_cholesky_solve(6, A, L, b, x))
            return 0;
        for (int k = 0; k < 6; k++)
            a[k][l] = x[k];
    }
    return 1;
#endif
}

/* A one-dof joint whose motion subspace is a coordinate axis, S = ±e_s (model.h: dof_axis): s, or −1. */
/* A one-dof joint's pivot D (ABA's D_i = Sᵀ IA S + armature): Dinv = 1/D, and u, U kept for pass 3;
 * a pivot that is not positive is a singular tree (finite) or overflow (NaN: finite inputs too large). */
static inline int keep_pivot(const mb_model *m, mb_data *d, int i, int vs, real Dk, real uk, const real *U,
                             real *Dinv)
{
    if (!mb_every(Dk > 0.0))
        return mb_all(Dk - Dk == 0.0) ? mb_singular_at(m, i) : MB_OVERFLOW;
    Dinv[0] = 1.0 / Dk;
    d->u[vs] = uk;
    memcpy(d->U + 6 * vs, U, sizeof(real) * 6);
    return MB_OK;
}

static inline int unit_axis(const mb_model *m, int i)
{
    return m->nv_joint[i] == 1 ? m->dof_axis[m->v_start[i]] : -1;
}

/* σ x for S = σ e_s (σ = ±1): x or −x, exactly S_s x. */
static inline real axis_sign(const mb_model *m, int k, int s, real x)
{
    return m->S[6 * k + s] < 0.0 ? -x : x;
}

/* X m and out += Xᵀ f for body i's pose, by the structure of its R (spatial.h: mb_motion_to_child_turn). */
MB_FOLD void to_child(const mb_model *m, int i, const real *R, const real *p, const real *x, real *out)
{
    mb_motion_to_child_turn(m->turn_code[i], R, p, x, out);
}

MB_FOLD void to_parent_add(const mb_model *m, int i, const real *R, const real *p, const real *f, real *out)
{
    mb_force_to_parent_turn(m->turn_code[i], 1, R, p, f, out);
}

/* U = row s of the upper-triangle IA (MB_U6), s a compile-time constant at each call. */
MB_FOLD void unit_row(const real *IA, int s, real *U)
{
    MB_UNROLL for (int r = 0; r < 6; r++)
        U[r] = IA[MB_U6(s, r)];
}

/* c = v ×m vJ for vJ = q̇ e_s: the column s of crm(v) times q̇, four products (its entries s and, for
 * s < 3, 3 + s are zero; pass 2's unit_handover relies on it).  (x × e_k) has x_kb at ka and −x_ka at
 * kb, with ka, kb = k+1, k+2 (mod 3). */
MB_FOLD void bias_unit(const real *v, int s, real qd, real *c)
{
    const int k = s % 3, ka = (k + 1) % 3, kb = (k + 2) % 3;
    for (int r = 0; r < 6; r++)
        c[r] = MB_SPLAT(0.0);
    if (s < 3) {  /* [ω × e_k; v × e_k] q̇ */
        c[ka] = v[kb] * qd, c[kb] = -(v[ka] * qd);
        c[3 + ka] = v[3 + kb] * qd, c[3 + kb] = -(v[3 + ka] * qd);
    } else {      /* [0; ω × e_k] q̇ */
        c[3 + ka] = v[kb] * qd, c[3 + kb] = -(v[ka] * qd);
    }
}

/* Pass 1 for bodies first … nb−1 (poses already in d->R, d->p; a body whose parent is < 0 starts
 * from rest).  pA_i = v_i ×* I_i v_i; external forces, if any, are subtracted (world poses in d->R0,
 * d->p0).  IA_i = I_i is not copied here but where pass 2 starts from it (ABA_IA_BASE); the lanes build
 * copies it here, in upper-triangle form (spatial.h: MB_U6; pass 2 reads no more), as its I_i is the
 * model's double, not lanes. */
MB_LANES_STATIC void MB_NAME(mb_aba_velocity_pass)(const mb_model *m, mb_data *d, const real *q,
                                                   const real *qd, const double *fext, int first)
{
    (void)q, (void)fext;
    real vJ[6], Iv[6];
    for (int i = first; i < m->nb; i++) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i], s = unit_axis(m, i);
        real *v = d->v + 6 * i, *c = d->c + 6 * i, *pA = d->pA + 6 * i;
        if (par < 0)
            for (int r = 0; r < 6; r++)
                v[r] = MB_SPLAT(0.0);
        else
            to_child(m, i, d->R + 9 * i, d->p + 3 * i, d->v + 6 * par, v);
        if (s >= 0) {  /* vJ = σ q̇ e_s */
            const real qdk = axis_sign(m, vs, s, qd[vs]);
            v[s] += qdk;
            switch (s) {  /* s a constant in each copy */
            case 0: bias_unit(v, 0, qdk, c); break;
            case 1: bias_unit(v, 1, qdk, c); break;
            case 2: bias_unit(v, 2, qdk, c); break;
            case 3: bias_unit(v, 3, qdk, c); break;
            case 4: bias_unit(v, 4, qdk, c); break;
            default: bias_unit(v, 5, qdk, c);
            }
        } else {
            memset(vJ, 0, sizeof vJ);
            for (int k = vs; k < vs + nj; k++)
                for (int r = 0; r < 6; r++)
                    vJ[r] += m->S[6 * k + r] * qd[k];
            for (int r = 0; r < 6; r++)
                v[r] += vJ[r];
            memset(c, 0, 6 * sizeof(real));
            if (par >= 0)
                mb_crm_add(v, vJ, c);
        }
#ifdef MB_LANE_BUILD  /* (the scalar build's pass 2 reads I_i from the model: ABA_IA_BASE) */
        mb_copy_sym6_upper(m->inertia6 + 36 * i, d->IA + 36 * i);
#endif
        mb_inertia_mul(m->inertia + MB_NI * i, v, Iv);
        mb_crf(v, Iv, pA);
#ifndef MB_LANE_BUILD
        if (fext) {
            double fx[6];
            mb_force_to_child(d->R0 + 9 * i, d->p0 + 3 * i, fext + 6 * i, fx);
            for (int r = 0; r < 6; r++)
                pA[r] -= fx[r];
        }
#endif
    }
}

/* out += Xupᵀ A Xup on upper triangles (mb_sym6_upper_add) for a full A: the general pose, and a
 * turn about e_TURN (model.h: pose_kind). */
#define ABA_SYM6_ADD(NAME, TURN)                                                                        \
    static void NAME(const real *R, const real *p, const real *A, const real *base, real *out)          \
    {                                                                                                   \
        mb_sym6_upper_add(TURN, -1, -1, 0, R, p, A, base, out);                                         \
    }
ABA_SYM6_ADD(sym6_add, -1)
ABA_SYM6_ADD(sym6_add_turn_x, 0)
ABA_SYM6_ADD(sym6_add_turn_y, 1)
ABA_SYM6_ADD(sym6_add_turn_z, 2)

/* Pass 2's hand-over from a one-dof joint with S = ±e_K (a revolute or prismatic joint along a
 * coordinate axis of its frame; model.h: dof_axis) and no rotor inertia: U = ±IA e_K and D = IA_KK,
 * so Ia = IA − U Uᵀ/D (the sign squares away: IA's row K is used) has row and column K zero in exact arithmetic — they are left out rather
 * than carried as rounding residue — and so has c_K (bias_unit; c_{3+K} too for K < 3).  With K a
 * compile-time constant those zeros fold through Ia c and the congruence Xupᵀ Ia Xup
 * (mb_sym6_upper_add), which skip about a third of their products; everything is in upper-triangle
 * form.  One copy per K and pose: the general one, and for K < 3 a turn about e_K with no tree
 * rotation (model.h: pose_kind) or after a signed-permutation one (turn_code). */
#define ABA_UNIT_HANDOVER(NAME, K, TURN) ABA_UNIT_HANDOVER_P(NAME, K, TURN, 0)
#define ABA_UNIT_HANDOVER_P(NAME, K, TURN, P0)                                                          \
    static void NAME(const real *IA, real dinv, const real *c, const real *R, const real *p, real *pa,  \
                     const real *base, real *IA_parent)                                                 \
    {                                                                                                   \
        enum { CZERO = (K) < 3 ? (1 << (K)) | (8 << (K)) : 7 | (1 << (K)) };                            \
        real Ia[36];                                                                                    \
        MB_UNROLL for (int r = 0; r < 6; r++) {                                                         \
            const real ur = IA[MB_U6(K, r)] * dinv;                                                     \
            MB_UNROLL for (int cc = 0; cc < 6; cc++)                                                    \
                if (cc >= r && r != (K) && cc != (K))                                                   \
                    Ia[6 * r + cc] = IA[6 * r + cc] - ur * IA[MB_U6(K, cc)];                            \
        }                                                                                               \
        MB_UNROLL for (int r = 0; r < 6; r++) { /* pa += Ia c */                                        \
            if (r == (K))                                                                               \
                continue;                                                                               \
            real s = MB_SPLAT(0.0);                                                                     \
            int have = 0;                                                                               \
            MB_UNROLL for (int cc = 0; cc < 6; cc++)                                                    \
                if (!(CZERO >> cc & 1)) {                                                               \
                    const real t = Ia[MB_U6(r, cc)] * c[cc];                                            \
                    s = have ? s + t : t;                                                               \
                    have = 1;                                                                           \
                }                                                                                       \
            pa[r] += s;                                                                                 \
        }                                                                                               \
        mb_sym6_upper_add(TURN, (K) < 3 ? (K) : -1, (K) < 3 ? -1 : (K) - 3, P0, R, p, Ia, base, IA_parent); \
    }
ABA_UNIT_HANDOVER(handover_turn_x, 0, 0)
ABA_UNIT_HANDOVER(handover_turn_y, 1, 1)
ABA_UNIT_HANDOVER(handover_turn_z, 2, 2)
ABA_UNIT_HANDOVER(handover_unit_0, 0, -1)
ABA_UNIT_HANDOVER(handover_unit_1, 1, -1)
ABA_UNIT_HANDOVER(handover_unit_2, 2, -1)
ABA_UNIT_HANDOVER(handover_unit_3, 3, -1)
ABA_UNIT_HANDOVER(handover_unit_4, 4, -1)
ABA_UNIT_HANDOVER(handover_unit_5, 5, -1)
/* revolute about e_K under a signed-permutation tree rotation: R = T·R_K(θ), row ρ ±e_Kᵀ (model.h:
 * turn_code = 3 + 3ρ + K, spatial.h mb_turn_zero) */
ABA_UNIT_HANDOVER(handover_perm_00, 0, 3)
ABA_UNIT_HANDOVER(handover_perm_01, 1, 4)
ABA_UNIT_HANDOVER(handover_perm_02, 2, 5)
ABA_UNIT_HANDOVER(handover_perm_10, 0, 6)
ABA_UNIT_HANDOVER(handover_perm_11, 1, 7)
ABA_UNIT_HANDOVER(handover_perm_12, 2, 8)
ABA_UNIT_HANDOVER(handover_perm_20, 0, 9)
ABA_UNIT_HANDOVER(handover_perm_21, 1, 10)
ABA_UNIT_HANDOVER(handover_perm_22, 2, 11)
/* the revolute copies for a joint at its parent frame's origin, p = 0 (unit_handover 27 + the code above) */
ABA_UNIT_HANDOVER_P(handover_turn_x_p0, 0, 0, 1)
ABA_UNIT_HANDOVER_P(handover_turn_y_p0, 1, 1, 1)
ABA_UNIT_HANDOVER_P(handover_turn_z_p0, 2, 2, 1)
ABA_UNIT_HANDOVER_P(handover_unit_0_p0, 0, -1, 1)
ABA_UNIT_HANDOVER_P(handover_unit_1_p0, 1, -1, 1)
ABA_UNIT_HANDOVER_P(handover_unit_2_p0, 2, -1, 1)
ABA_UNIT_HANDOVER_P(handover_perm_00_p0, 0, 3, 1)
ABA_UNIT_HANDOVER_P(handover_perm_01_p0, 1, 4, 1)
ABA_UNIT_HANDOVER_P(handover_perm_02_p0, 2, 5, 1)
ABA_UNIT_HANDOVER_P(handover_perm_10_p0, 0, 6, 1)
ABA_UNIT_HANDOVER_P(handover_perm_11_p0, 1, 7, 1)
ABA_UNIT_HANDOVER_P(handover_perm_12_p0, 2, 8, 1)
ABA_UNIT_HANDOVER_P(handover_perm_20_p0, 0, 9, 1)
ABA_UNIT_HANDOVER_P(handover_perm_21_p0, 1, 10, 1)
ABA_UNIT_HANDOVER_P(handover_perm_22_p0, 2, 11, 1)
/* prismatic along e_{K−3} under a tree rotation with row and column t ±e_t (turn_code 3 + 4t) */
ABA_UNIT_HANDOVER(handover_slide_30, 3, 3)
ABA_UNIT_HANDOVER(handover_slide_31, 3, 7)
ABA_UNIT_HANDOVER(handover_slide_32, 3, 11)
ABA_UNIT_HANDOVER(handover_slide_40, 4, 3)
ABA_UNIT_HANDOVER(handover_slide_41, 4, 7)
ABA_UNIT_HANDOVER(handover_slide_42, 4, 11)
ABA_UNIT_HANDOVER(handover_slide_50, 5, 3)
ABA_UNIT_HANDOVER(handover_slide_51, 5, 7)
ABA_UNIT_HANDOVER(handover_slide_52, 5, 11)

/* Where IA_λ(i) starts as body i hands over to it: from the parent's own inertia I_λ(i) when body i is its
 * first child in pass 2's order (the one of largest index, model.h: aba_tree), so that no pass copies I
 * into IA; else from the sums already there.  The lanes build copies I in pass 1. */
#ifdef MB_LANE_BUILD
#define ABA_IA_BASE(i, par) (d->IA + 36 * (par))
#else
#define ABA_IA_BASE(i, par) (m->aba_tree[i] & MB_ABA_FIRST_CHILD ? m->inertia6 + 36 * (par) : d->IA + 36 * (par))
#endif

/* Pass 2 for bodies nb−1 … first.  Joints with fd[i] == 0 (fd may be NULL: all forward) are
 * inverse-dynamics joints: their known acceleration is already in c_i, and they pass the full
 * articulated inertia on.  The articulated inertias are kept in upper-triangle form (spatial.h:
 * MB_U6): the hand-over of a one-dof unit-axis joint (the common case) reads and writes no more;
 * every other joint fills in IA_i's lower triangle first (mb_sym6_mirror), and so does the end of
 * the pass for bodies before `first` (FDfb's base reads its IA whole).  Ia is built in a local
 * array (pass 3 needs only U, D⁻¹ and u of a forward joint, and the untouched IA_i of an
 * inverse-dynamics one); written through d->IA, the compiler must assume it aliases U and reloads
 * U after every store.
 * Returns MB_SINGULAR if a D block cannot be inverted. */
MB_LANES_STATIC int MB_NAME(mb_aba_articulated_pass)(const mb_model *m, mb_data *d, const real *tau,
                                                     const unsigned char *fd, int first)
{
    real pa[6], Ia_local[36];
    for (int i = m->nb - 1; i >= first; i--) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i], hand = m->unit_handover[i];
        const int forward = !fd || fd[i];
        const int unit = forward && hand >= 0 && m->armature[vs] == 0.0;  /* the common case: S = σ e_s, D = IA_ss
                                                                               * (the armature is read here: the loop's
                                                                               * implicit damping runs a copy of m with
                                                                               * its own) */
        real *IA = d->IA + 36 * i;
#ifndef MB_LANE_BUILD
        if (!(m->aba_tree[i] & MB_ABA_HAS_CHILD)) {  /* a leaf: IA_i = I_i, read from the model where it is only read */
            if (unit)
                IA = m->inertia6 + 36 * i;
            else
                mb_copy_sym6_upper(m->inertia6 + 36 * i, IA);
        }
#endif
        const real *Ia = IA;
        real *Dinv = d->Dinv + 36 * i;
        const real *pA = d->pA + 6 * i, *c = d->c + 6 * i;
        memcpy(pa, pA, sizeof pa);
        if (unit) {
            const int s = m->dof_axis[vs], neg = m->S[6 * vs + s] < 0.0;
            real U[6];
            switch (s) {  /* U = σ column s of IA (= row s), s a constant in each copy */
            case 0: unit_row(IA, 0, U); break;
            case 1: unit_row(IA, 1, U); break;
            case 2: unit_row(IA, 2, U); break;
            case 3: unit_row(IA, 3, U); break;
            case 4: unit_row(IA, 4, U); break;
            default: unit_row(IA, 5, U);
            }
            if (neg)
                for (int r = 0; r < 6; r++)
                    U[r] = -U[r];
            const real Dk = IA[6 * s + s], uk = tau[vs] - (neg ? -pA[s] : pA[s]);
            const int st = keep_pivot(m, d, i, vs, Dk, uk, U, Dinv);
            if (st != MB_OK)
                return st;
            if (par < 0)
                continue;
            const real dinv = Dinv[0], ud = uk * dinv;
            for (int r = 0; r < 6; r++)
                pa[r] += U[r] * ud;
            const real *R = d->R + 9 * i, *p = d->p + 3 * i;
            real *IA_parent = d->IA + 36 * par;
            const real *base = ABA_IA_BASE(i, par);
            switch (hand) {  /* (compile.c: by s and the pose's turn_code) */
            case 18: handover_slide_30(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 19: handover_slide_31(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 20: handover_slide_32(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 21: handover_slide_40(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 22: handover_slide_41(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 23: handover_slide_42(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 24: handover_slide_50(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 25: handover_slide_51(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 26: handover_slide_52(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 27: handover_turn_x_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 28: handover_turn_y_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 29: handover_turn_z_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 30: handover_unit_0_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 31: handover_unit_1_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 32: handover_unit_2_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 36: handover_perm_00_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 37: handover_perm_01_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 38: handover_perm_02_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 39: handover_perm_10_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 40: handover_perm_11_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 41: handover_perm_12_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 42: handover_perm_20_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 43: handover_perm_21_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 44: handover_perm_22_p0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 9: handover_perm_00(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 10: handover_perm_01(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 11: handover_perm_02(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 12: handover_perm_10(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 13: handover_perm_11(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 14: handover_perm_12(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 15: handover_perm_20(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 16: handover_perm_21(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 17: handover_perm_22(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 0: handover_turn_x(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 1: handover_turn_y(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 2: handover_turn_z(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 3: handover_unit_0(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 4: handover_unit_1(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 5: handover_unit_2(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 6: handover_unit_3(IA, dinv, c, R, p, pa, base, IA_parent); break;
            case 7: handover_unit_4(IA, dinv, c, R, p, pa, base, IA_parent); break;
            default: handover_unit_5(IA, dinv, c, R, p, pa, base, IA_parent);
            }
            to_parent_add(m, i, R, p, pa, d->pA + 6 * par);
            continue;
        }
        mb_sym6_mirror(IA);
        if (is_free_root(m, i, fd))  /* pass 3 solves it */
            continue;
        if (forward && nj == 1) {  /* one dof: U = IA S, D = Sᵀ U + armature */
            const double *S = m->S + 6 * vs;
            real U[6], Dk = MB_SPLAT(0.0), uk = tau[vs];
            for (int r = 0; r < 6; r++) {
                const real *row = IA + 6 * r;
                U[r] = row[0] * S[0] + row[1] * S[1] + row[2] * S[2] + row[3] * S[3] + row[4] * S[4] + row[5] * S[5];
                uk -= S[r] * pA[r];
            }
            for (int r = 0; r < 6; r++)
                Dk += S[r] * U[r];
            Dk += m->armature[vs];
            const int st = keep_pivot(m, d, i, vs, Dk, uk, U, Dinv);
            if (st != MB_OK)
                return st;
            if (par < 0)
                continue;
            const real dinv = Dinv[0], ud = uk * dinv;
            for (int r = 0; r < 6; r++) {  /* Ia = IA − U Uᵀ / D,  pa = pA + U u / D */
                const real ur = U[r] * dinv;
                for (int cc = 0; cc < 6; cc++)
                    Ia_local[6 * r + cc] = IA[6 * r + cc] - ur * U[cc];
                pa[r] += U[r] * ud;
            }
            Ia = Ia_local;
        }
#ifndef MB_LANE_BUILD  /* the lanes run only trees of one-dof joints under a free root (aba_lanes.c) */
        else if ((!fd || fd[i]) && nj > 1) {
            for (int e = 0; e < nj; e++) {  /* U = IA S,  u = τ − Sᵀ pA */
                const int k = vs + e;
                const double *S = m->S + 6 * k;
                real *U = d->U + 6 * k, s = MB_SPLAT(0.0);
                for (int r = 0; r < 6; r++) {
                    const real *row = IA + 6 * r;
                    U[r] = row[0] * S[0] + row[1] * S[1] + row[2] * S[2] + row[3] * S[3] + row[4] * S[4] +
                           row[5] * S[5];
                    s += S[r] * pA[r];
                }
                d->u[k] = tau[k] - s;
            }
            real D[36];
            for (int e = 0; e < nj; e++)  /* D = Sᵀ U + armature */
                for (int g = 0; g < nj; g++) {
                    real s = MB_SPLAT(e == g ? m->armature[vs + e] : 0.0);
                    for (int r = 0; r < 6; r++)
                        s += m->S[6 * (vs + e) + r] * d->U[6 * (vs + g) + r];
                    D[nj * e + g] = s;
                }
            if (!mb_invert_small(D, nj, Dinv)) {
                const int st = mb_pivot_status(D, nj * nj);
                return st == MB_SINGULAR ? mb_singular_at(m, i) : st;
            }
            if (par < 0)
                continue;
            mb_copy36(IA, Ia_local);
            for (int e = 0; e < nj; e++)  /* Ia = IA − U D⁻¹ Uᵀ,  pa = pA + U D⁻¹ u */
                for (int g = 0; g < nj; g++) {
                    const real dd = Dinv[nj * e + g];
                    const real *Ue = d->U + 6 * (vs + e), *Ug = d->U + 6 * (vs + g);
                    for (int r = 0; r < 6; r++) {
                        const real ur = Ue[r] * dd;
                        for (int cc = 0; cc < 6; cc++)
                            Ia_local[6 * r + cc] -= ur * Ug[cc];
                        pa[r] += ur * d->u[vs + g];
                    }
                }
            Ia = Ia_local;
        }
#endif
        if (par < 0)
            continue;
        for (int r = 0; r < 6; r++) {  /* pa += Ia c */
            const real *row = Ia + 6 * r;
            pa[r] += row[0] * c[0] + row[1] * c[1] + row[2] * c[2] + row[3] * c[3] + row[4] * c[4] + row[5] * c[5];
        }
        const real *R = d->R + 9 * i, *p = d->p + 3 * i;  /* IA_λ += Xupᵀ Ia Xup */
        switch (m->pose_kind[i]) {
        case 0: sym6_add_turn_x(R, p, Ia, ABA_IA_BASE(i, par), d->IA + 36 * par); break;
        case 1: sym6_add_turn_y(R, p, Ia, ABA_IA_BASE(i, par), d->IA + 36 * par); break;
        case 2: sym6_add_turn_z(R, p, Ia, ABA_IA_BASE(i, par), d->IA + 36 * par); break;
        default: sym6_add(R, p, Ia, ABA_IA_BASE(i, par), d->IA + 36 * par);
        }
        mb_force_to_parent_add_kind(m->pose_kind[i], d->R + 9 * i, d->p + 3 * i, pa, d->pA + 6 * par);
    }
    for (int i = 0; i < first; i++)
        mb_sym6_mirror(d->IA + 36 * i);
    return MB_OK;
}

/* Pass 3 for bodies first … nb−1: accelerations root to leaves.  a_root is the acceleration of
 * the base the roots hang from (−a_grav; FDfb passes none: its bodies' parents are set).  At
 * inverse-dynamics joints (fd[i] == 0) it writes τ_i = S_iᵀ (IA_i a_i + pA_i) + armature q̈_i.
 * τ is read at a free root (see is_free_root); MB_SINGULAR if its IA is not positive definite. */
MB_LANES_STATIC int MB_NAME(mb_aba_acceleration_pass)(const mb_model *m, mb_data *d, const real *a_root,
                                                      const unsigned char *fd, real *qdd, real *tau_id, int first,
                                                      const real *tau)
{
    for (int i = first; i < m->nb; i++) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        real *a = d->a + 6 * i;
        const real *c = d->c + 6 * i;
        to_child(m, i, d->R + 9 * i, d->p + 3 * i, par < 0 ? a_root : d->a + 6 * par, a);
        if (is_free_root(m, i, fd)) {  /* IA a_i = τ − pA;  q̈ = a_i − Xup a_base */
            real rhs[6], a_i[6];
            for (int r = 0; r < 6; r++)
                rhs[r] = tau[vs + r] - d->pA[6 * i + r];
            if (!free_root_solve(d->IA + 36 * i, rhs, a_i))
                return finite_block(d->IA + 36 * i, 36) ? mb_singular_at(m, i) : MB_OVERFLOW;
            for (int r = 0; r < 6; r++)
                qdd[vs + r] = a_i[r] - a[r], a[r] = a_i[r];
            continue;
        }
        for (int r = 0; r < 6; r++)
            a[r] += c[r];
        if ((!fd || fd[i]) && nj == 1) {  /* one dof: q̈ = (u − Uᵀa) / D, no arrays (a 16-byte reload of
                                             * w[] written as two 8-byte halves stalls store forwarding) */
            const real *U = d->U + 6 * vs;
            const double *S = m->S + 6 * vs;
            const real qa = d->Dinv[36 * i] * (d->u[vs] - (U[0] * a[0] + U[1] * a[1] + U[2] * a[2] + U[3] * a[3] +
                                                            U[4] * a[4] + U[5] * a[5]));
            qdd[vs] = qa;
            const int s = m->dof_axis[vs];
            if (s >= 0)  /* S = σ e_s */
                a[s] += axis_sign(m, vs, s, qa);
            else
                for (int r = 0; r < 6; r++)
                    a[r] += S[r] * qa;
        } else if (!fd || fd[i]) {
            const real *Dinv = d->Dinv + 36 * i;
            real w[6];
            for (int g = 0; g < nj; g++) {  /* w = u − Uᵀ a */
                const real *U = d->U + 6 * (vs + g);
                w[g] = d->u[vs + g] - (U[0] * a[0] + U[1] * a[1] + U[2] * a[2] + U[3] * a[3] + U[4] * a[4] +
                                       U[5] * a[5]);
            }
            for (int e = 0; e < nj; e++) {  /* q̈ = D⁻¹ w */
                real s = MB_SPLAT(0.0);
                for (int g = 0; g < nj; g++)
                    s += Dinv[nj * e + g] * w[g];
                qdd[vs + e] = s;
            }
            for (int e = 0; e < nj; e++)
                for (int r = 0; r < 6; r++)
                    a[r] += m->S[6 * (vs + e) + r] * qdd[vs + e];
        } else {  /* τ = Sᵀ (IA a + pA) + armature q̈ */
            const real *IA = d->IA + 36 * i, *pA = d->pA + 6 * i;
            real F[6];
            for (int r = 0; r < 6; r++) {
                const real *row = IA + 6 * r;
                F[r] = pA[r] + row[0] * a[0] + row[1] * a[1] + row[2] * a[2] + row[3] * a[3] + row[4] * a[4] +
                       row[5] * a[5];
            }
            for (int k = vs; k < vs + nj; k++) {
                real s = m->armature[k] * qdd[k];
                for (int r = 0; r < 6; r++)
                    s += m->S[6 * k + r] * F[r];
                tau_id[k] = s;
            }
        }
    }
    return MB_OK;
}

/* What ABA and HD (hybrid.c) do first: the poses (base-frame ones too when f_ext is given), pass 1
 * from the root, and the base's acceleration −a_grav into a_base. */
MB_LANES_STATIC void MB_NAME(mb_aba_start)(const mb_model *m, mb_data *d, const real *q, const real *qd,
                                           const double *fext, real *a_base)
{
    for (int r = 0; r < 6; r++)
        a_base[r] = MB_SPLAT(-m->a_grav[r]);
    mb_tree_poses_inline(m, q, d->R, d->p);
#ifndef MB_LANE_BUILD
    if (fext)
        mb_world_poses(m, d->R, d->p, d->R0, d->p0);
#endif
    MB_NAME(mb_aba_velocity_pass)(m, d, q, qd, fext, 0);
}

MB_LANES_STATIC int MB_NAME(mb_aba)(const mb_model *m, mb_data *d, const real *q, const real *qd,
                                    const real *tau, const double *fext, real *qdd)
{
#if defined(MB_HAVE_ABA_AVX2) && !defined(MB_LANE_BUILD) && !defined(MB_ABA_AVX2)
    if (__builtin_cpu_supports("avx2"))  /* this function in AVX2 code (aba_avx2.c): the same numbers */
        return mb_aba_avx2(m, d, q, qd, tau, fext, qdd);
#endif
#ifndef MB_LANE_BUILD
    if (m->planar && !fext)  /* the same algorithm in planar vectors (planar.c) */
        return mb_aba_planar(m, d, q, qd, tau, qdd);
#endif
    real minus_grav[6];
    MB_NAME(mb_aba_start)(m, d, q, qd, fext, minus_grav);
    const int st = MB_NAME(mb_aba_articulated_pass)(m, d, tau, NULL, 0);
    if (st != MB_OK)
        return st;
    return MB_NAME(mb_aba_acceleration_pass)(m, d, minus_grav, NULL, qdd, NULL, 0, tau);
}
