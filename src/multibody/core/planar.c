/* planar.c — the articulated-body algorithm for planar trees in planar vectors
 * (RBDA table 7.1 with the 3-D "planar" spatial arithmetic of RBDA §2.16; spatial_v2 FDab on models
 * built with plnr/Xpln joints).
 *
 * A tree moves in a plane when every joint frame is turned from its parent's about one coordinate
 * axis e_k only, its revolute joints turn about e_k and its prismatic joints slide in the plane
 * ⊥ e_k.  Then every body's velocity is [ω; v_a; v_b] (ω about e_k, v in the plane spanned by
 * e_a, e_b with a = k+1, b = k+2 mod 3), and the joint forces depend only on the in-plane parts
 * of everything: the 3-vectors of RBDA §2.16 replace the 6-vectors, 3×3 matrices the 6×6 ones,
 * and FDab costs about a fifth — which is what makes small planar systems (pendulums, walkers,
 * the seeds' examples) fast to simulate.  Out-of-plane offsets, products of inertia and gravity
 * only load the joints' constraint reactions, never their motion, so they are dropped exactly:
 * the result equals mb_aba's to rounding (tests/test_core.py compares them).
 *
 * Planar vectors:  motion [ω; v_a; v_b], force [n; f_a; f_b].  A body's pose in its parent is an
 * angle θ and an origin p = (p_a, p_b); the motion transform parent → child is
 *     X = [1 0; Rᵀ (−p_b, p_a)ᵀ  Rᵀ],  R = [c −s; s c],
 * the rigid-body inertia about the body origin is [Ī_kk  −h_b  h_a; −h_b  m  0; h_a  0  m]
 * (h = m·c the first moment of mass), and
 *     v ×m m = [0; v_b m_ω − ω m_b; ω m_a − v_a m_ω],   v ×* f = [v_a f_b − v_b f_a; −ω f_b; ω f_a].
 *
 * Written in `real` (lanes.h): aba_lanes.c compiles FDab again on lanes of states, for the batches'
 * RK4 steps in lanes (rollout_lanes.h); the model's setup is the scalar build's only.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "trig.h"

enum { PB_COS = 0, PB_SIN, PB_TA, PB_TB, PB_IKK, PB_HA, PB_HB, PB_M, PB_N };

#ifndef MB_LANE_BUILD
static int near(double x, double y)
{
    return fabs(x - y) <= 1e-14;
}

/* Decide whether the model is planar and, if so, fill its planar tables (model.h: planar …).
 * Returns 0 only when out of memory. */
int mb_planar_setup(mb_model *m)
{
    m->planar = 0;
    if (m->nb == 0)
        return 1;
    int k = -1;  /* the common normal e_k: the first revolute axis, else that of the tree rotations */
    for (int i = 0; i < m->nb && k < 0; i++)
        if (m->jtype[i] == MB_REVOLUTE)
            k = m->axis_kind[i];
    if (k < 0)
        return 1;
    const int a = (k + 1) % 3, b = (k + 2) % 3;
    for (int i = 0; i < m->nb; i++) {
        const double *T = m->tree_R + 9 * i, *ax = m->axis + 3 * i;
        const int jt = m->jtype[i];
        if (!(near(T[4 * k], 1.0) && near(T[3 * k + a], 0.0) && near(T[3 * k + b], 0.0) &&
              near(T[3 * a + k], 0.0) && near(T[3 * b + k], 0.0)))
            return 1;  /* the joint frame is tilted out of the plane */
        if (!((jt == MB_REVOLUTE && m->axis_kind[i] == k) || (jt == MB_PRISMATIC && near(ax[k], 0.0)) ||
              jt == MB_FIXED))
            return 1;
    }
    m->plnr = malloc(sizeof(double) * (PB_N * m->nb + 3 * (m->nv ? m->nv : 1)));
    if (!m->plnr)
        return 0;
    m->plnr_S = m->plnr + PB_N * m->nb;
    const int kk = k == 0 ? 4 : k == 1 ? 7 : 9;  /* Ī_kk in the 10-parameter inertia */
    for (int i = 0; i < m->nb; i++) {
        const double *T = m->tree_R + 9 * i, *t = m->tree_p + 3 * i, *J = m->inertia + MB_NI * i;
        double *P = m->plnr + PB_N * i;
        P[PB_COS] = T[4 * a], P[PB_SIN] = T[3 * b + a];  /* the tree rotation's angle about e_k */
        P[PB_TA] = t[a], P[PB_TB] = t[b];
        P[PB_IKK] = J[kk], P[PB_HA] = J[MB_I_H + a], P[PB_HB] = J[MB_I_H + b], P[PB_M] = J[MB_I_M];
        for (int v = m->v_start[i]; v < m->v_start[i] + m->nv_joint[i]; v++) {
            double *S = m->plnr_S + 3 * v;
            if (m->jtype[i] == MB_REVOLUTE)
                S[0] = 1.0, S[1] = 0.0, S[2] = 0.0;
            else
                S[0] = 0.0, S[1] = m->axis[3 * i + a], S[2] = m->axis[3 * i + b];
        }
    }
    m->plnr_grav[0] = 0.0, m->plnr_grav[1] = m->a_grav[3 + a], m->plnr_grav[2] = m->a_grav[3 + b];
    m->planar = 1;
    return 1;
}
#endif

static inline real dot3(const real *x, const real *y)
{
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
}

/* dot3 with a constant (model) vector: the same products and sums */
static inline real dot3_model(const real *x, const double *y)
{
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
}

/* out = X m (motion, parent → child) */
static inline void motion_to_child(const real *X, const real *m, real *out)
{
    out[0] = m[0];
    out[1] = X[3] * m[0] + X[4] * m[1] + X[5] * m[2];
    out[2] = X[6] * m[0] + X[7] * m[1] + X[8] * m[2];
}

/* FDab for a planar model (m->planar), no external forces; the workspace's 6-D arrays hold the
 * planar quantities in their first entries (d->R: X_i as 3×3, d->IA: 3×3 articulated inertias). */
MB_LANES_STATIC int MB_NAME(mb_aba_planar)(const mb_model *m, mb_data *d, const real *q, const real *qd,
                                           const real *tau, real *qdd)
{
    const int nb = m->nb;
    for (int i = 0; i < nb; i++) {  /* pass 1: X_i, v_i, c_i, IA_i = I_i, pA_i = v ×* I v */
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const double *P = m->plnr + PB_N * i, *S = m->plnr_S + 3 * vs;
        real *X = d->R + 9 * i, *v = d->v + 6 * i, *c = d->c + 6 * i, *IA = d->IA + 36 * i, *pA = d->pA + 6 * i;
        real cs = MB_SPLAT(P[PB_COS]), sn = MB_SPLAT(P[PB_SIN]), pa = MB_SPLAT(P[PB_TA]), pb = MB_SPLAT(P[PB_TB]);
        if (m->jtype[i] == MB_REVOLUTE) {  /* turn by q: θ = θ_tree + q */
            real cq, sq;
            mb_sincos_joint(q[m->q_start[i]], &sq, &cq);
            const real c2 = cs * cq - sn * sq, s2 = sn * cq + cs * sq;
            cs = c2, sn = s2;
        } else if (m->jtype[i] == MB_PRISMATIC) {  /* slide by q along the axis (joint frame) */
            const real x = q[m->q_start[i]];
            pa += (P[PB_COS] * S[1] - P[PB_SIN] * S[2]) * x;
            pb += (P[PB_SIN] * S[1] + P[PB_COS] * S[2]) * x;
        }
        X[0] = MB_SPLAT(1.0), X[1] = MB_SPLAT(0.0), X[2] = MB_SPLAT(0.0);  /* X = [1 0; Rᵀ(−p_b, p_a)ᵀ Rᵀ] */
        X[3] = -cs * pb + sn * pa, X[4] = cs, X[5] = sn;
        X[6] = sn * pb + cs * pa, X[7] = -sn, X[8] = cs;
        real vJ[3] = {MB_SPLAT(0.0), MB_SPLAT(0.0), MB_SPLAT(0.0)};
        if (m->jtype[i] == MB_REVOLUTE)  /* S = (1, 0, 0) */
            vJ[0] = qd[vs];
        else if (nj == 1)
            vJ[0] = S[0] * qd[vs], vJ[1] = S[1] * qd[vs], vJ[2] = S[2] * qd[vs];
        if (par < 0) {
            v[0] = vJ[0], v[1] = vJ[1], v[2] = vJ[2];
            c[0] = c[1] = c[2] = MB_SPLAT(0.0);
        } else {
            motion_to_child(X, d->v + 6 * par, v);
            v[0] += vJ[0], v[1] += vJ[1], v[2] += vJ[2];
            c[0] = MB_SPLAT(0.0), c[1] = v[2] * vJ[0] - v[0] * vJ[2], c[2] = v[0] * vJ[1] - v[1] * vJ[0];
        }
        const double Ikk = P[PB_IKK], ha = P[PB_HA], hb = P[PB_HB], mass = P[PB_M];
        IA[0] = MB_SPLAT(Ikk), IA[1] = MB_SPLAT(-hb), IA[2] = MB_SPLAT(ha);
        IA[3] = MB_SPLAT(-hb), IA[4] = MB_SPLAT(mass), IA[5] = MB_SPLAT(0.0);
        IA[6] = MB_SPLAT(ha), IA[7] = MB_SPLAT(0.0), IA[8] = MB_SPLAT(mass);
        const real Iv[3] = {Ikk * v[0] - hb * v[1] + ha * v[2], -hb * v[0] + mass * v[1], ha * v[0] + mass * v[2]};
        pA[0] = v[1] * Iv[2] - v[2] * Iv[1], pA[1] = -v[0] * Iv[2], pA[2] = v[0] * Iv[1];
    }
    for (int i = nb - 1; i >= 0; i--) {  /* pass 2: U, D, u; IA_λ += Xᵀ Ia X, pA_λ += Xᵀ pa */
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const real *X = d->R + 9 * i, *c = d->c + 6 * i, *pA = d->pA + 6 * i;
        real *IA = d->IA + 36 * i, Ia[9], pa[3];
        memcpy(Ia, IA, sizeof Ia);
        pa[0] = pA[0], pa[1] = pA[1], pa[2] = pA[2];
        if (nj == 1) {
            const double *S = m->plnr_S + 3 * vs;
            real *U = d->U + 6 * vs;
            const int turn = m->jtype[i] == MB_REVOLUTE;  /* S = (1, 0, 0): the dot products pick entries */
            for (int r = 0; r < 3; r++)
                U[r] = turn ? IA[3 * r] : dot3_model(IA + 3 * r, S);
            const real D = (turn ? U[0] : dot3_model(U, S)) + m->armature[vs];
            if (!mb_every(D > 0.0))
                return mb_all(D - D == 0.0) ? mb_singular_at(m, i) : MB_OVERFLOW;
            const real Dinv = 1.0 / D;
            d->Dinv[36 * i] = Dinv;
            d->u[vs] = tau[vs] - (turn ? pA[0] : dot3_model(pA, S));
            if (par < 0)
                continue;
            const real ud = d->u[vs] * Dinv;
            for (int r = 0; r < 3; r++) {
                const real ur = U[r] * Dinv;
                for (int cc = 0; cc < 3; cc++)
                    Ia[3 * r + cc] -= ur * U[cc];
                pa[r] += U[r] * ud;
            }
        }
        if (par < 0)
            continue;
        for (int r = 0; r < 3; r++)  /* pa += Ia c */
            pa[r] += dot3(Ia + 3 * r, c);
        /* IA_λ += Xᵀ (Ia X), pA_λ += Xᵀ pa with X's first row (1, 0, 0) taken as known: the products
         * by 1 and the added products by 0 are left out (the same sums, less work) */
        const real x3 = X[3], x4 = X[4], x5 = X[5], x6 = X[6], x7 = X[7], x8 = X[8];
        real M[9];  /* Ia X */
        for (int r = 0; r < 3; r++) {
            const real i0 = Ia[3 * r], i1 = Ia[3 * r + 1], i2 = Ia[3 * r + 2];
            M[3 * r] = i0 + i1 * x3 + i2 * x6;
            M[3 * r + 1] = i1 * x4 + i2 * x7;
            M[3 * r + 2] = i1 * x5 + i2 * x8;
        }
        real *IAp = d->IA + 36 * par, *pAp = d->pA + 6 * par;
        for (int cc = 0; cc < 3; cc++) {
            const real m0 = M[cc], m1 = M[3 + cc], m2 = M[6 + cc];
            IAp[cc] += m0 + x3 * m1 + x6 * m2;
            IAp[3 + cc] += x4 * m1 + x7 * m2;
            IAp[6 + cc] += x5 * m1 + x8 * m2;
        }
        pAp[0] += pa[0] + x3 * pa[1] + x6 * pa[2];
        pAp[1] += x4 * pa[1] + x7 * pa[2];
        pAp[2] += x5 * pa[1] + x8 * pa[2];
    }
    const real a_base[3] = {MB_SPLAT(-m->plnr_grav[0]), MB_SPLAT(-m->plnr_grav[1]), MB_SPLAT(-m->plnr_grav[2])};
    for (int i = 0; i < nb; i++) {  /* pass 3: a = X a_λ + c;  q̈ = (u − Uᵀ a)/D;  a += S q̈ */
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        const real *c = d->c + 6 * i;
        real *a = d->a + 6 * i;
        motion_to_child(d->R + 9 * i, par < 0 ? a_base : d->a + 6 * par, a);
        a[0] += c[0], a[1] += c[1], a[2] += c[2];
        if (nj == 1) {
            const double *S = m->plnr_S + 3 * vs;
            const real x = (d->u[vs] - dot3(d->U + 6 * vs, a)) * d->Dinv[36 * i];
            qdd[vs] = x;
            if (m->jtype[i] == MB_REVOLUTE)  /* S = (1, 0, 0) */
                a[0] += x;
            else
                a[0] += S[0] * x, a[1] += S[1] * x, a[2] += S[2] * x;
        }
    }
    return MB_OK;
}
