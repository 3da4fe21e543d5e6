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

#include "common/core.h"
#include "common/trig.h"

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

/* dot3 with a constant (model) vector: the same products and sums */
static inline real dot3_model(const real *x, const double *y)
{
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
}

/* FDab for a planar model (m->planar), no external forces.  Each body's numbers lie together in its
 * 36 of the workspace's IA (one address a body, its parent's one more), BODY_* below: X_i =
 * [1 0; x3 cs sn; x6 −sn cs] as (x3, x6, cs, sn), c_i = (0, c_a, c_b) (v ×m vJ has no ω part) as
 * (c_a, c_b), IA_i as 3×3.  The known entries (X's first row, c's 0) enter no product: a·1 and
 * a + 0·b are a (to the sign of a zero), so the sums are those of the full products, with less work. */
enum { BODY_IA = 0, BODY_PA = 9, BODY_V = 12, BODY_C = 15, BODY_X = 17, BODY_U = 21, BODY_UI = 24, BODY_DINV = 25,
       BODY_A = 26, BODY_N = 36 };

MB_LANES_STATIC int MB_NAME(mb_aba_planar)(const mb_model *m, mb_data *d, const real *q, const real *qd,
                                           const real *tau, real *qdd)
{
    const int nb = m->nb;
    const int *parent = m->parent, *jtype = m->jtype, *v_start = m->v_start, *q_start = m->q_start;
    const int *nv_joint = m->nv_joint;
    const double *plnr = m->plnr, *plnr_S = m->plnr_S, *armature = m->armature;
    real *restrict body = d->IA;
    for (int i = 0; i < nb; i++) {  /* pass 1: X_i, v_i, c_i, IA_i = I_i, pA_i = v ×* I v */
        const int par = parent[i], jt = jtype[i], vs = v_start[i];
        const double *P = plnr + PB_N * i;
        real *B = body + BODY_N * i;
        real cs = MB_SPLAT(P[PB_COS]), sn = MB_SPLAT(P[PB_SIN]), pa = MB_SPLAT(P[PB_TA]), pb = MB_SPLAT(P[PB_TB]);
        real vJ0 = MB_SPLAT(0.0), vJ1 = MB_SPLAT(0.0), vJ2 = MB_SPLAT(0.0);
        if (jt == MB_REVOLUTE) {  /* turn by q: θ = θ_tree + q;  S = (1, 0, 0) */
            real cq, sq;
            mb_sincos_joint(q[q_start[i]], &sq, &cq);
            const real c2 = P[PB_COS] * cq - P[PB_SIN] * sq, s2 = P[PB_SIN] * cq + P[PB_COS] * sq;
            cs = c2, sn = s2;
            vJ0 = qd[vs];
        } else if (jt == MB_PRISMATIC) {  /* slide by q along the axis (joint frame) */
            const double *S = plnr_S + 3 * vs;
            const real x = q[q_start[i]];
            pa += (P[PB_COS] * S[1] - P[PB_SIN] * S[2]) * x;
            pb += (P[PB_SIN] * S[1] + P[PB_COS] * S[2]) * x;
            if (nv_joint[i] == 1)
                vJ0 = S[0] * qd[vs], vJ1 = S[1] * qd[vs], vJ2 = S[2] * qd[vs];
        }
        const real x3 = -cs * pb + sn * pa, x6 = sn * pb + cs * pa;  /* X = [1 0; Rᵀ(−p_b, p_a)ᵀ Rᵀ] */
        real v0, v1, v2, c1, c2;
        if (par < 0) {
            v0 = vJ0, v1 = vJ1, v2 = vJ2;
            c1 = c2 = MB_SPLAT(0.0);
        } else {  /* v = X v_λ + vJ, c = v ×m vJ */
            const real *vp = body + BODY_N * par + BODY_V;
            v0 = vp[0], v1 = x3 * vp[0] + cs * vp[1] + sn * vp[2], v2 = x6 * vp[0] - sn * vp[1] + cs * vp[2];
            if (jt == MB_REVOLUTE) {
                v0 += vJ0;
                c1 = v2 * vJ0, c2 = -(v1 * vJ0);
            } else {
                v0 += vJ0, v1 += vJ1, v2 += vJ2;
                c1 = v2 * vJ0 - v0 * vJ2, c2 = v0 * vJ1 - v1 * vJ0;
            }
        }
        B[BODY_X] = x3, B[BODY_X + 1] = x6, B[BODY_X + 2] = cs, B[BODY_X + 3] = sn;
        B[BODY_V] = v0, B[BODY_V + 1] = v1, B[BODY_V + 2] = v2;
        B[BODY_C] = c1, B[BODY_C + 1] = c2;
        const double Ikk = P[PB_IKK], ha = P[PB_HA], hb = P[PB_HB], mass = P[PB_M];
        real *IA = B + BODY_IA;
        IA[0] = MB_SPLAT(Ikk), IA[1] = MB_SPLAT(-hb), IA[2] = MB_SPLAT(ha);
        IA[3] = MB_SPLAT(-hb), IA[4] = MB_SPLAT(mass), IA[5] = MB_SPLAT(0.0);
        IA[6] = MB_SPLAT(ha), IA[7] = MB_SPLAT(0.0), IA[8] = MB_SPLAT(mass);
        const real Iv1 = -hb * v0 + mass * v1, Iv2 = ha * v0 + mass * v2;  /* (I v)_ω enters no pA */
        B[BODY_PA] = v1 * Iv2 - v2 * Iv1, B[BODY_PA + 1] = -v0 * Iv2, B[BODY_PA + 2] = v0 * Iv1;
    }
    for (int i = nb - 1; i >= 0; i--) {  /* pass 2: U, D, u; IA_λ += Xᵀ Ia X, pA_λ += Xᵀ pa */
        const int par = parent[i], vs = v_start[i];
        real *B = body + BODY_N * i;
        real Ia[9], pa0 = B[BODY_PA], pa1 = B[BODY_PA + 1], pa2 = B[BODY_PA + 2];
        for (int k = 0; k < 9; k++)
            Ia[k] = B[BODY_IA + k];
        if (nv_joint[i] == 1) {
            real U0, U1, U2, D, ui;
            if (jtype[i] == MB_REVOLUTE) {  /* S = (1, 0, 0): the dot products pick entries */
                U0 = Ia[0], U1 = Ia[3], U2 = Ia[6];
                D = U0 + armature[vs];
                ui = tau[vs] - pa0;
            } else {
                const double *S = plnr_S + 3 * vs;
                U0 = dot3_model(Ia, S), U1 = dot3_model(Ia + 3, S), U2 = dot3_model(Ia + 6, S);
                D = (U0 * S[0] + U1 * S[1] + U2 * S[2]) + armature[vs];
                ui = tau[vs] - (pa0 * S[0] + pa1 * S[1] + pa2 * S[2]);
            }
            if (!mb_every(D > 0.0))
                return mb_all(D - D == 0.0) ? mb_singular_at(m, i) : MB_OVERFLOW;
            const real Dinv = 1.0 / D;
            B[BODY_U] = U0, B[BODY_U + 1] = U1, B[BODY_U + 2] = U2, B[BODY_UI] = ui, B[BODY_DINV] = Dinv;
            if (par < 0)
                continue;
            const real ud = ui * Dinv, Ur[3] = {U0, U1, U2};
            for (int r = 0; r < 3; r++) {
                const real ur = Ur[r] * Dinv;
                Ia[3 * r] -= ur * U0, Ia[3 * r + 1] -= ur * U1, Ia[3 * r + 2] -= ur * U2;
            }
            pa0 += U0 * ud, pa1 += U1 * ud, pa2 += U2 * ud;
        }
        if (par < 0)
            continue;
        const real c1 = B[BODY_C], c2 = B[BODY_C + 1];
        pa0 += Ia[1] * c1 + Ia[2] * c2, pa1 += Ia[4] * c1 + Ia[5] * c2, pa2 += Ia[7] * c1 + Ia[8] * c2;  /* pa += Ia c */
        /* IA_λ += Xᵀ (Ia X), pA_λ += Xᵀ pa */
        const real x3 = B[BODY_X], x6 = B[BODY_X + 1], cs = B[BODY_X + 2], sn = B[BODY_X + 3];
        real M[9];  /* Ia X */
        for (int r = 0; r < 3; r++) {
            const real i0 = Ia[3 * r], i1 = Ia[3 * r + 1], i2 = Ia[3 * r + 2];
            M[3 * r] = i0 + i1 * x3 + i2 * x6;
            M[3 * r + 1] = i1 * cs - i2 * sn;
            M[3 * r + 2] = i1 * sn + i2 * cs;
        }
        real *Bp = body + BODY_N * par, *IAp = Bp + BODY_IA;
        for (int cc = 0; cc < 3; cc++) {
            const real m0 = M[cc], m1 = M[3 + cc], m2 = M[6 + cc];
            IAp[cc] += m0 + x3 * m1 + x6 * m2;
            IAp[3 + cc] += cs * m1 - sn * m2;
            IAp[6 + cc] += sn * m1 + cs * m2;
        }
        Bp[BODY_PA] += pa0 + x3 * pa1 + x6 * pa2;
        Bp[BODY_PA + 1] += cs * pa1 - sn * pa2;
        Bp[BODY_PA + 2] += sn * pa1 + cs * pa2;
    }
    const real g0 = MB_SPLAT(-m->plnr_grav[0]), g1 = MB_SPLAT(-m->plnr_grav[1]), g2 = MB_SPLAT(-m->plnr_grav[2]);
    for (int i = 0; i < nb; i++) {  /* pass 3: a = X a_λ + c;  q̈ = (u − Uᵀ a)/D;  a += S q̈ */
        const int par = parent[i], vs = v_start[i];
        real *B = body + BODY_N * i;
        const real x3 = B[BODY_X], x6 = B[BODY_X + 1], cs = B[BODY_X + 2], sn = B[BODY_X + 3];
        const real *ap = par < 0 ? NULL : body + BODY_N * par + BODY_A;
        const real p0 = ap ? ap[0] : g0, p1 = ap ? ap[1] : g1, p2 = ap ? ap[2] : g2;  /* a_λ, a_0 = −a_grav */
        real a0 = p0, a1 = x3 * p0 + cs * p1 + sn * p2, a2 = x6 * p0 - sn * p1 + cs * p2;
        a1 += B[BODY_C], a2 += B[BODY_C + 1];
        if (nv_joint[i] == 1) {
            const real x = (B[BODY_UI] - (B[BODY_U] * a0 + B[BODY_U + 1] * a1 + B[BODY_U + 2] * a2)) * B[BODY_DINV];
            qdd[vs] = x;
            if (jtype[i] == MB_REVOLUTE)  /* S = (1, 0, 0) */
                a0 += x;
            else {
                const double *S = plnr_S + 3 * vs;
                a0 += S[0] * x, a1 += S[1] * x, a2 += S[2] * x;
            }
        }
        B[BODY_A] = a0, B[BODY_A + 1] = a1, B[BODY_A + 2] = a2;
    }
    return MB_OK;
}
