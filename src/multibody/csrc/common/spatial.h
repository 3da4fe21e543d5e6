/* spatial.h — spatial algebra on plain arrays (RBDA ch. 2; spatial_v2 crm, crf, plux, mcI).
 *
 * Spatial vectors are real[6] = [angular; linear].  A transform is kept as a pose (R, p):
 * R (row-major 3×3) rotates child coordinates into parent coordinates, p is the child origin in
 * parent coordinates, and the motion transform parent → child is X = plux(Rᵀ, p).  Functions
 * apply X, X⁻¹, Xᵀ, X* directly (≈ 30 flops instead of 108 for a 6×6 product).  Everything is
 * static inline: the algorithms' inner loops must not pay for calls.  No output may alias an
 * input unless the comment says so.
 */
#ifndef MULTIBODY_SPATIAL_H
#define MULTIBODY_SPATIAL_H

#include "common/lanes.h"
#include "model/model.h"

/* out = X m: ω' = Rᵀ ω, v' = Rᵀ (v + ω × p)  (motion, parent → child) */
static inline void mb_motion_to_child(const real *R, const real *p, const real *m, real *out)
{
    const real w0 = m[0], w1 = m[1], w2 = m[2];
    const real l0 = m[3] + w1 * p[2] - w2 * p[1];
    const real l1 = m[4] + w2 * p[0] - w0 * p[2];
    const real l2 = m[5] + w0 * p[1] - w1 * p[0];
    out[0] = R[0] * w0 + R[3] * w1 + R[6] * w2;
    out[1] = R[1] * w0 + R[4] * w1 + R[7] * w2;
    out[2] = R[2] * w0 + R[5] * w1 + R[8] * w2;
    out[3] = R[0] * l0 + R[3] * l1 + R[6] * l2;
    out[4] = R[1] * l0 + R[4] * l1 + R[7] * l2;
    out[5] = R[2] * l0 + R[5] * l1 + R[8] * l2;
}

/* out = X⁻¹ m: ω = R ω', v = R v' + p × ω  (motion, child → parent) */
static inline void mb_motion_to_parent(const real *R, const real *p, const real *m, real *out)
{
    const real w0 = R[0] * m[0] + R[1] * m[1] + R[2] * m[2];
    const real w1 = R[3] * m[0] + R[4] * m[1] + R[5] * m[2];
    const real w2 = R[6] * m[0] + R[7] * m[1] + R[8] * m[2];
    out[3] = R[0] * m[3] + R[1] * m[4] + R[2] * m[5] + p[1] * w2 - p[2] * w1;
    out[4] = R[3] * m[3] + R[4] * m[4] + R[5] * m[5] + p[2] * w0 - p[0] * w2;
    out[5] = R[6] * m[3] + R[7] * m[4] + R[8] * m[5] + p[0] * w1 - p[1] * w0;
    out[0] = w0;
    out[1] = w1;
    out[2] = w2;
}

/* out = X⁻¹ S_k for a unit-axis column S_k = σ e_s (model.h: dof_axis; neg: σ = −1): column s of X⁻¹,
 * signed — mb_motion_to_parent's numbers bit for bit (its products with S_k's zeros add only ±0),
 * with 6 of its 30 products left instead of 30. */
static inline void mb_unit_motion_to_parent(const real *R, const real *p, int s, int neg, real *out)
{
    if (s < 3) {  /* revolute: ω = σ R e_s, v = p × ω */
        const real w0 = neg ? -R[s] : R[s], w1 = neg ? -R[3 + s] : R[3 + s], w2 = neg ? -R[6 + s] : R[6 + s];
        out[3] = p[1] * w2 - p[2] * w1;
        out[4] = p[2] * w0 - p[0] * w2;
        out[5] = p[0] * w1 - p[1] * w0;
        out[0] = w0, out[1] = w1, out[2] = w2;
    } else {      /* prismatic: ω = 0, v = σ R e_{s−3} */
        const int c = s - 3;
        out[0] = out[1] = out[2] = MB_SPLAT(0.0);
        out[3] = neg ? -R[c] : R[c];
        out[4] = neg ? -R[3 + c] : R[3 + c];
        out[5] = neg ? -R[6 + c] : R[6 + c];
    }
}

/* out += Xᵀ f: a child-coordinate force in parent coordinates, f = R f', n = R n' + p × f */
static inline void mb_force_to_parent_add(const real *R, const real *p, const real *f, real *out)
{
    const real g0 = R[0] * f[3] + R[1] * f[4] + R[2] * f[5];
    const real g1 = R[3] * f[3] + R[4] * f[4] + R[5] * f[5];
    const real g2 = R[6] * f[3] + R[7] * f[4] + R[8] * f[5];
    out[0] += R[0] * f[0] + R[1] * f[1] + R[2] * f[2] + p[1] * g2 - p[2] * g1;
    out[1] += R[3] * f[0] + R[4] * f[1] + R[5] * f[2] + p[2] * g0 - p[0] * g2;
    out[2] += R[6] * f[0] + R[7] * f[1] + R[8] * f[2] + p[0] * g1 - p[1] * g0;
    out[3] += g0;
    out[4] += g1;
    out[5] += g2;
}

/* out = Xᵀ f (out may be f): mb_force_to_parent_add into a zero vector, without its reads of out */
static inline void mb_force_to_parent(const real *R, const real *p, const real *f, real *out)
{
    const real g0 = R[0] * f[3] + R[1] * f[4] + R[2] * f[5];
    const real g1 = R[3] * f[3] + R[4] * f[4] + R[5] * f[5];
    const real g2 = R[6] * f[3] + R[7] * f[4] + R[8] * f[5];
    const real n0 = R[0] * f[0] + R[1] * f[1] + R[2] * f[2] + p[1] * g2 - p[2] * g1;
    const real n1 = R[3] * f[0] + R[4] * f[1] + R[5] * f[2] + p[2] * g0 - p[0] * g2;
    const real n2 = R[6] * f[0] + R[7] * f[1] + R[8] * f[2] + p[0] * g1 - p[1] * g0;
    out[0] = n0, out[1] = n1, out[2] = n2, out[3] = g0, out[4] = g1, out[5] = g2;
}

/* out = X* f: a parent-coordinate force in child coordinates, f' = Rᵀ f, n' = Rᵀ (n − p × f) */
static inline void mb_force_to_child(const real *R, const real *p, const real *f, real *out)
{
    const real n0 = f[0] - (p[1] * f[5] - p[2] * f[4]);
    const real n1 = f[1] - (p[2] * f[3] - p[0] * f[5]);
    const real n2 = f[2] - (p[0] * f[4] - p[1] * f[3]);
    out[0] = R[0] * n0 + R[3] * n1 + R[6] * n2;
    out[1] = R[1] * n0 + R[4] * n1 + R[7] * n2;
    out[2] = R[2] * n0 + R[5] * n1 + R[8] * n2;
    out[3] = R[0] * f[3] + R[3] * f[4] + R[6] * f[5];
    out[4] = R[1] * f[3] + R[4] * f[4] + R[7] * f[5];
    out[5] = R[2] * f[3] + R[5] * f[4] + R[8] * f[5];
}

/* X m and Xᵀ f for Xup = a turn by θ (cos c, sin s) about the coordinate axis e_K with no tree
 * rotation (model.h: pose_kind): Rᵀ only mixes components A = K+1, B = K+2 (mod 3).  One copy
 * per axis (K a compile-time constant), chosen by the *_kind dispatchers below.  The force's
 * `add` (a constant at each use): out += Xᵀ f, else out = Xᵀ f, where out may be f (CRBA's
 * composite column carried to the root in place). */
#define MB_TURN_TRANSFORMS(SUFFIX, K)                                                                   \
    static inline void mb_motion_to_child_##SUFFIX(real c, real s, const real *p, const real *m,        \
                                                   real *out)                                           \
    {                                                                                                   \
        enum { KA = ((K) + 1) % 3, KB = ((K) + 2) % 3 };                                                \
        const real l[3] = {m[3] + m[1] * p[2] - m[2] * p[1], m[4] + m[2] * p[0] - m[0] * p[2],          \
                             m[5] + m[0] * p[1] - m[1] * p[0]};                                         \
        out[K] = m[K], out[KA] = c * m[KA] + s * m[KB], out[KB] = c * m[KB] - s * m[KA];                \
        out[3 + (K)] = l[K], out[3 + KA] = c * l[KA] + s * l[KB], out[3 + KB] = c * l[KB] - s * l[KA];  \
    }                                                                                                   \
    static inline void mb_force_to_parent_##SUFFIX(int add, real c, real s, const real *p, const real *f, \
                                                   real *out)                                           \
    {                                                                                                   \
        enum { KA = ((K) + 1) % 3, KB = ((K) + 2) % 3 };                                                \
        real g[3], n[3];                                                                                \
        g[K] = f[3 + (K)], g[KA] = c * f[3 + KA] - s * f[3 + KB], g[KB] = s * f[3 + KA] + c * f[3 + KB]; \
        n[K] = f[K], n[KA] = c * f[KA] - s * f[KB], n[KB] = s * f[KA] + c * f[KB];                      \
        const real r[6] = {n[0] + p[1] * g[2] - p[2] * g[1], n[1] + p[2] * g[0] - p[0] * g[2],          \
                           n[2] + p[0] * g[1] - p[1] * g[0], g[0], g[1], g[2]};                         \
        for (int e = 0; e < 6; e++)                                                                     \
            out[e] = add ? out[e] + r[e] : r[e];                                                        \
    }
MB_TURN_TRANSFORMS(x, 0)
MB_TURN_TRANSFORMS(y, 1)
MB_TURN_TRANSFORMS(z, 2)

/* mb_motion_to_child / mb_force_to_parent_add for body pose (R, p) of pose_kind `kind`. */
static inline void mb_motion_to_child_kind(int kind, const real *R, const real *p, const real *m, real *out)
{
    switch (kind) {  /* c = R_aa, s = R_ba */
    case 0: mb_motion_to_child_x(R[4], R[7], p, m, out); break;
    case 1: mb_motion_to_child_y(R[8], R[2], p, m, out); break;
    case 2: mb_motion_to_child_z(R[0], R[3], p, m, out); break;
    default: mb_motion_to_child(R, p, m, out);
    }
}

static inline void mb_force_to_parent_add_kind(int kind, const real *R, const real *p, const real *f, real *out)
{
    switch (kind) {
    case 0: mb_force_to_parent_x(1, R[4], R[7], p, f, out); break;
    case 1: mb_force_to_parent_y(1, R[8], R[2], p, f, out); break;
    case 2: mb_force_to_parent_z(1, R[0], R[3], p, f, out); break;
    default: mb_force_to_parent_add(R, p, f, out);
    }
}

/* out += v ×m m   (spatial_v2 crm(v) * m) */
static inline void mb_crm_add(const real *v, const real *m, real *out)
{
    out[0] += v[1] * m[2] - v[2] * m[1];
    out[1] += v[2] * m[0] - v[0] * m[2];
    out[2] += v[0] * m[1] - v[1] * m[0];
    out[3] += v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1];
    out[4] += v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2];
    out[5] += v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0];
}

/* out += v ×* f   (spatial_v2 crf(v) * f) */
static inline void mb_crf_add(const real *v, const real *f, real *out)
{
    out[0] += v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4];
    out[1] += v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5];
    out[2] += v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3];
    out[3] += v[1] * f[5] - v[2] * f[4];
    out[4] += v[2] * f[3] - v[0] * f[5];
    out[5] += v[0] * f[4] - v[1] * f[3];
}

/* out = v ×* f: mb_crf_add into a zero vector, without its reads of out (the same numbers, but that
 * 0 + (−0) is +0) */
static inline void mb_crf(const real *v, const real *f, real *out)
{
    out[0] = v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4];
    out[1] = v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5];
    out[2] = v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3];
    out[3] = v[1] * f[5] - v[2] * f[4];
    out[4] = v[2] * f[3] - v[0] * f[5];
    out[5] = v[0] * f[4] - v[1] * f[3];
}

/* dst += src, n entries (not overlapping: a parent's sums and its child's); for one state four
 * at a time (the compiler keeps these short loops scalar) */
static inline void mb_add_to(real *restrict dst, const real *restrict src, int n)
{
    int r = 0;
#ifndef MB_LANE_BUILD
    typedef double v4u __attribute__((vector_size(32), aligned(8)));
    for (; r + 4 <= n; r += 4)
        *(v4u *)(dst + r) += *(const v4u *)(src + r);
#endif
    for (; r < n; r++)
        dst[r] += src[r];
}

/* dst += u x, 6 entries (as mb_add_to) */
static inline void mb_add_scaled6(real *restrict dst, const real *restrict u, real x)
{
    int r = 0;
#ifndef MB_LANE_BUILD
    typedef double v4u __attribute__((vector_size(32), aligned(8)));
    *(v4u *)dst += *(const v4u *)u * x;
    r = 4;
#endif
    for (; r < 6; r++)
        dst[r] += u[r] * x;
}

/* out = I v for a 10-parameter rigid-body inertia: [Ī ω + h × v; m v − h × ω]  (RBDA eq. 2.63).
 * Two spellings of the same product for the lanes build: mb_inertia_mul for a body's inertia
 * (model, double) times a motion in lanes, mb_composite_mul for a composite inertia in lanes
 * (CRBA's Ic) times a motion-subspace column (model, double); both are this one in the scalar build. */
#define MB_INERTIA_MUL(NAME, J_TYPE, V_TYPE)                                                            \
    static inline void NAME(const J_TYPE *J, const V_TYPE *v, real *out)                                \
    {                                                                                                   \
        const J_TYPE m = J[0], h0 = J[1], h1 = J[2], h2 = J[3];                                         \
        const V_TYPE w0 = v[0], w1 = v[1], w2 = v[2], l0 = v[3], l1 = v[4], l2 = v[5];                  \
        out[0] = J[4] * w0 + J[5] * w1 + J[6] * w2 + h1 * l2 - h2 * l1;                                 \
        out[1] = J[5] * w0 + J[7] * w1 + J[8] * w2 + h2 * l0 - h0 * l2;                                 \
        out[2] = J[6] * w0 + J[8] * w1 + J[9] * w2 + h0 * l1 - h1 * l0;                                 \
        out[3] = m * l0 - (h1 * w2 - h2 * w1);                                                          \
        out[4] = m * l1 - (h2 * w0 - h0 * w2);                                                          \
        out[5] = m * l2 - (h0 * w1 - h1 * w0);                                                          \
    }
MB_INERTIA_MUL(mb_inertia_mul, double, real)
#ifdef MB_LANE_BUILD
MB_INERTIA_MUL(mb_composite_mul, real, double)
#else
#define mb_composite_mul mb_inertia_mul
#endif

/* out += Xᵀ I X for 10-parameter inertias: a child's rigid-body inertia in its parent (RBDA §2.18).
 * With y = R h:  h' = y + m p,  Ī' = R Ī Rᵀ + m(|p|² 1 − p pᵀ) + 2(p·y) 1 − (y pᵀ + p yᵀ). */
/* out += the 10-parameter inertia with first moment y = R h and rotational inertia RIR = R Ī Rᵀ
 * (both already turned into parent axes), moved to the parent origin by p. */
static inline void mb_inertia_shift_add(const real *p, real m, const real y[3], real RIR[3][3], real *out)
{
    const real d = m * (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) + 2.0 * (p[0] * y[0] + p[1] * y[1] + p[2] * y[2]);
    int col = 4;
    for (int r = 0; r < 3; r++)
        for (int c = r; c < 3; c++) {
            real e = RIR[r][c] - m * p[r] * p[c] - (y[r] * p[c] + p[r] * y[c]);
            if (r == c)
                e += d;
            out[col++] += e;
        }
    out[0] += m;
    out[1] += y[0] + m * p[0];
    out[2] += y[1] + m * p[1];
    out[3] += y[2] + m * p[2];
}

static inline void mb_inertia_to_parent_add(const real *R, const real *p, const real *J, real *out)
{
    const real y[3] = {R[0] * J[1] + R[1] * J[2] + R[2] * J[3],
                         R[3] * J[1] + R[4] * J[2] + R[5] * J[3],
                         R[6] * J[1] + R[7] * J[2] + R[8] * J[3]};
    const real Ib[3][3] = {{J[4], J[5], J[6]}, {J[5], J[7], J[8]}, {J[6], J[8], J[9]}};
    real RIR[3][3];
    for (int r = 0; r < 3; r++) {
        real t[3];  /* row r of R Ī */
        for (int k = 0; k < 3; k++)
            t[k] = R[3 * r] * Ib[0][k] + R[3 * r + 1] * Ib[1][k] + R[3 * r + 2] * Ib[2][k];
        for (int c = r; c < 3; c++)
            RIR[r][c] = t[0] * R[3 * c] + t[1] * R[3 * c + 1] + t[2] * R[3 * c + 2];
    }
    mb_inertia_shift_add(p, J[0], y, RIR, out);
}

/* The same for R a turn by θ (cos c, sin s) about the coordinate axis e_K (model.h: pose_kind):
 * only components A = K+1, B = K+2 (mod 3) mix.  One copy per axis, K a compile-time constant. */
#define MB_INERTIA_TURN_ADD(NAME, K)                                                                    \
    static inline void NAME(real c, real s, const real *p, const real *J, real *out)                    \
    {                                                                                                   \
        enum { KA = ((K) + 1) % 3, KB = ((K) + 2) % 3 };                                                \
        const real Ib[3][3] = {{J[4], J[5], J[6]}, {J[5], J[7], J[8]}, {J[6], J[8], J[9]}};             \
        real y[3], C[3][3], RIR[3][3];                                                                  \
        y[K] = J[1 + (K)], y[KA] = c * J[1 + KA] - s * J[1 + KB], y[KB] = s * J[1 + KA] + c * J[1 + KB]; \
        for (int q = 0; q < 3; q++) {                                                                   \
            C[K][q] = Ib[K][q];                                                                         \
            C[KA][q] = c * Ib[KA][q] - s * Ib[KB][q];                                                   \
            C[KB][q] = s * Ib[KA][q] + c * Ib[KB][q];                                                   \
        }                                                                                               \
        for (int r = 0; r < 3; r++) {                                                                   \
            RIR[r][K] = C[r][K];                                                                        \
            RIR[r][KA] = c * C[r][KA] - s * C[r][KB];                                                   \
            RIR[r][KB] = s * C[r][KA] + c * C[r][KB];                                                   \
        }                                                                                               \
        mb_inertia_shift_add(p, J[0], y, RIR, out);                                                     \
    }
MB_INERTIA_TURN_ADD(mb_inertia_turn_x_add, 0)
MB_INERTIA_TURN_ADD(mb_inertia_turn_y_add, 1)
MB_INERTIA_TURN_ADD(mb_inertia_turn_z_add, 2)

/* out += Xupᵀ I Xup for body i's pose (R, p) in its parent, by pose_kind (see above). */
static inline void mb_inertia_to_parent_add_kind(int kind, const real *R, const real *p, const real *J,
                                                 real *out)
{
    switch (kind) {  /* a turn about a coordinate axis: c = R_aa, s = R_ba */
    case 0: mb_inertia_turn_x_add(R[4], R[7], p, J, out); break;
    case 1: mb_inertia_turn_y_add(R[8], R[2], p, J, out); break;
    case 2: mb_inertia_turn_z_add(R[0], R[3], p, J, out); break;
    default: mb_inertia_to_parent_add(R, p, J, out);
    }
}

/* 6×6 spatial inertia (row-major) of a 10-parameter inertia (spatial_v2 mcI layout). */
static inline void mb_inertia_to_matrix(const double *J, double *M)
{
    const double m = J[0], h0 = J[1], h1 = J[2], h2 = J[3];
    const double B[6][6] = {
        {J[4], J[5], J[6], 0.0, -h2, h1},
        {J[5], J[7], J[8], h2, 0.0, -h0},
        {J[6], J[8], J[9], -h1, h0, 0.0},
        {0.0, h2, -h1, m, 0.0, 0.0},
        {-h2, 0.0, h0, 0.0, m, 0.0},
        {h1, -h0, 0.0, 0.0, 0.0, m}};
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++)
            M[6 * r + c] = B[r][c];
}

/* out += Xᵀ A X for a symmetric 6×6 A given in child coordinates (articulated inertias, ABA).
 * X = plux(Rᵀ, p) = diag(Rᵀ, Rᵀ)·T with T = [1 0; −p× 1].  First M = diag(R,R) A diag(Rᵀ,Rᵀ)
 * block by block, then Tᵀ M T = [M11 − M12 P + P M21 − P M22 P, M12 + P M22; M21 − M22 P, M22]
 * with P = p×: products with P are cross products, so this costs ~⅓ of two dense 6×6 products.
 * mb_sym6_shift_add is the second stage (out += Tᵀ M T), shared with the per-axis turns below. */
static inline void mb_sym6_shift_add(const real *p, real M11[3][3], real M12[3][3], real M22[3][3],
                                     real *out)
{
    /* N = M22 P (column j of P is e_j × … ; (M P)[r][c] = Σ_k M[r][k] P[k][c]) with
     * P = [[0,−p2,p1],[p2,0,−p0],[−p1,p0,0]] */
    real MP22[3][3], MP12[3][3];
    for (int r = 0; r < 3; r++) {
        MP22[r][0] = M22[r][1] * p[2] - M22[r][2] * p[1];
        MP22[r][1] = M22[r][2] * p[0] - M22[r][0] * p[2];
        MP22[r][2] = M22[r][0] * p[1] - M22[r][1] * p[0];
        MP12[r][0] = M12[r][1] * p[2] - M12[r][2] * p[1];
        MP12[r][1] = M12[r][2] * p[0] - M12[r][0] * p[2];
        MP12[r][2] = M12[r][0] * p[1] - M12[r][1] * p[0];
    }
    /* lower-left block L21 = M21 − M22 P; upper-right = L21ᵀ */
    real L21[3][3];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            L21[r][c] = M12[c][r] - MP22[r][c];
    /* upper-left: M11 − M12 P + P M21 − P M22 P = M11 − MP12 − MP12ᵀ + Pᵀ... use
     * P (M21 − M22 P) = P L21, and −M12 P = −MP12:  U11 = M11 − MP12 + P L21 */
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            /* (P L21)[r][c] = Σ_k P[r][k] L21[k][c] = (p × L21[:,c])[r] */
            const real x0 = L21[0][c], x1 = L21[1][c], x2 = L21[2][c];
            const real pl = r == 0 ? p[1] * x2 - p[2] * x1 : r == 1 ? p[2] * x0 - p[0] * x2 : p[0] * x1 - p[1] * x0;
            out[6 * r + c] += M11[r][c] - MP12[r][c] + pl;
            out[6 * (3 + r) + c] += L21[r][c];
            out[6 * c + 3 + r] += L21[r][c];
            out[6 * (3 + r) + 3 + c] += M22[r][c];
        }
}

static inline void mb_sym6_to_parent_add(const real *R, const real *p, const real *A, real *out)
{
    real M11[3][3], M12[3][3], M22[3][3];  /* rotated blocks; M21 = M12ᵀ */
    real T1[3][3], T2[3][3], T3[3][3];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            real s1 = {0}, s2 = {0}, s3 = {0};  /* rows of R times blocks of A */
            for (int k = 0; k < 3; k++) {
                s1 += R[3 * r + k] * A[6 * k + c];
                s2 += R[3 * r + k] * A[6 * k + 3 + c];
                s3 += R[3 * r + k] * A[6 * (3 + k) + 3 + c];
            }
            T1[r][c] = s1;
            T2[r][c] = s2;
            T3[r][c] = s3;
        }
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            real s1 = {0}, s2 = {0}, s3 = {0};
            for (int k = 0; k < 3; k++) {
                s1 += T1[r][k] * R[3 * c + k];
                s2 += T2[r][k] * R[3 * c + k];
                s3 += T3[r][k] * R[3 * c + k];
            }
            M11[r][c] = s1;
            M12[r][c] = s2;
            M22[r][c] = s3;
        }
    mb_sym6_shift_add(p, M11, M12, M22, out);
}

/* out += Xᵀ A X as mb_sym6_to_parent_add, for Xup = a turn by θ (cos c, sin s) about the
 * coordinate axis e_K with no tree rotation (model.h: pose_kind): the rotation stage then only
 * mixes rows and columns A = K+1, B = K+2 (mod 3) of each 3×3 block.  One copy per axis (K is a
 * compile-time constant, so the indices fold and the loops unroll). */
#define MB_SYM6_TURN_ADD(NAME, K)                                                                       \
    static inline void NAME(real c, real s, const real *p, const real *A, real *out)                    \
    {                                                                                                   \
        enum { KA = ((K) + 1) % 3, KB = ((K) + 2) % 3 };                                                \
        real M[3][3][3]; /* rotated blocks 11, 12, 22 */                                                \
        for (int blk = 0; blk < 3; blk++) {                                                             \
            const int r0 = blk == 2 ? 3 : 0, c0 = blk == 0 ? 0 : 3;                                     \
            real C[3][3];                                                                               \
            for (int q = 0; q < 3; q++) {                                                               \
                const real xa = A[6 * (r0 + KA) + c0 + q], xb = A[6 * (r0 + KB) + c0 + q];              \
                C[K][q] = A[6 * (r0 + K) + c0 + q];                                                     \
                C[KA][q] = c * xa - s * xb;                                                             \
                C[KB][q] = s * xa + c * xb;                                                             \
            }                                                                                           \
            for (int r = 0; r < 3; r++) {                                                               \
                M[blk][r][K] = C[r][K];                                                                 \
                M[blk][r][KA] = c * C[r][KA] - s * C[r][KB];                                            \
                M[blk][r][KB] = s * C[r][KA] + c * C[r][KB];                                            \
            }                                                                                           \
        }                                                                                               \
        mb_sym6_shift_add(p, M[0], M[1], M[2], out);                                                    \
    }

MB_SYM6_TURN_ADD(mb_sym6_turn_x_add, 0)
MB_SYM6_TURN_ADD(mb_sym6_turn_y_add, 1)
MB_SYM6_TURN_ADD(mb_sym6_turn_z_add, 2)

/* Symmetric 6×6 matrices in upper-triangle form (ABA's articulated inertias, aba.c): entry (r, c)
 * with c ≥ r of a row-major 6×6 array holds the matrix, the lower triangle is not read or written
 * until mb_sym6_mirror fills it.  Half the loads, stores and products of the full form. */
#define MB_U6(r, c) ((r) <= (c) ? 6 * (r) + (c) : 6 * (c) + (r))

/* MB_FOLD: a function called with compile-time constant int arguments, to be folded at each call;
 * MB_UNROLL: a loop of constant trip count whose index selects structural zeros, to be unrolled. */
#if defined(__GNUC__)
#define MB_FOLD static inline __attribute__((always_inline))
#define MB_UNROLL _Pragma("GCC unroll 8")
#else
#define MB_FOLD static inline
#define MB_UNROLL
#endif

/* Lower triangle := upper triangle, for the readers of the full matrix. */
static inline void mb_sym6_mirror(real *A)
{
    for (int r = 1; r < 6; r++)
        for (int c = 0; c < r; c++)
            A[6 * r + c] = A[6 * c + r];
}

/* out = A's upper triangle (A a full symmetric 6×6 of the model, double). */
MB_FOLD void mb_copy_sym6_upper(const double *A, real *out)
{
    MB_UNROLL for (int r = 0; r < 6; r++)
        MB_UNROLL for (int c = 0; c < 6; c++)
            if (c >= r)
                out[6 * r + c] = MB_SPLAT(A[6 * r + c]);
}

/* t0 + t1 + t2 over the terms whose bit is set in `mask`, a compile-time constant: the others are
 * structural zeros, left out rather than added as 0·x (the compiler may not drop those: x could
 * be ∞).  Called with constant masks only, so it folds to the one sum. */
MB_FOLD real mb_sum3(int mask, real t0, real t1, real t2)
{
    switch (mask & 7) {
    case 1: return t0;
    case 2: return t1;
    case 4: return t2;
    case 3: return t0 + t1;
    case 5: return t0 + t2;
    case 6: return t1 + t2;
    case 7: return t0 + t1 + t2;
    default: return MB_SPLAT(0.0);
    }
}

/* The structure of a pose's R known at compile time, `turn` (model.h: turn_code):
 *   −1            none (a general rotation);
 *   t = 0…2       a turn about e_t with no tree rotation: row and column t of R are the identity's;
 *   3 + 3ρ + k    R = T·R_k(θ), a turn about e_k after a signed-permutation tree rotation T: column k
 *                 of R is ±e_ρ and row ρ is ±e_kᵀ, the other four entries are ±cos θ, ±sin θ.
 * Is R_rj a structural zero? */
MB_FOLD int mb_turn_zero(int turn, int r, int j)
{
    if (turn < 0)
        return 0;
    const int row = turn < 3 ? turn : (turn - 3) / 3, col = turn < 3 ? turn : (turn - 3) % 3;
    return (r == row) != (j == col);
}

/* Which of the three terms of (R B)_rk = Σ_j R_rj B_jk are there (see mb_sum3), for a block B whose
 * row zr and column zc are zero (−1: none). */
MB_FOLD int mb_rb_mask(int turn, int zr, int zc, int r, int k)
{
    int mask = 0;
    for (int j = 0; j < 3 && k != zc; j++)
        if (j != zr && !mb_turn_zero(turn, r, j))
            mask |= 1 << j;
    return mask;
}

/* R_rj x, with a turn's R_tt = 1 not multiplied (a permuted turn's ±1 is: its sign is in R). */
MB_FOLD real mb_r_times(int turn, const real *R, int r, int j, real x)
{
    return turn >= 0 && turn < 3 && r == turn && j == turn ? x : R[3 * r + j] * x;
}

/* X m (mb_motion_to_child) and out += Xᵀ f (mb_force_to_parent_add) for a pose whose R has the
 * structure `turn` (above, a compile-time constant): the same sums in the same order with R's
 * structural zeros left out, so on the same R the same numbers (zero products add only ±0). */
MB_FOLD real mb_rt_dot(int turn, const real *R, int j, real x0, real x1, real x2)  /* (Rᵀ x)_j */
{
    return mb_sum3((!mb_turn_zero(turn, 0, j)) | (!mb_turn_zero(turn, 1, j)) << 1 | (!mb_turn_zero(turn, 2, j)) << 2,
                   mb_turn_zero(turn, 0, j) ? MB_SPLAT(0.0) : R[j] * x0,
                   mb_turn_zero(turn, 1, j) ? MB_SPLAT(0.0) : R[3 + j] * x1,
                   mb_turn_zero(turn, 2, j) ? MB_SPLAT(0.0) : R[6 + j] * x2);
}

MB_FOLD real mb_r_dot(int turn, const real *R, int r, real x0, real x1, real x2)  /* (R x)_r */
{
    return mb_sum3((!mb_turn_zero(turn, r, 0)) | (!mb_turn_zero(turn, r, 1)) << 1 | (!mb_turn_zero(turn, r, 2)) << 2,
                   mb_turn_zero(turn, r, 0) ? MB_SPLAT(0.0) : R[3 * r] * x0,
                   mb_turn_zero(turn, r, 1) ? MB_SPLAT(0.0) : R[3 * r + 1] * x1,
                   mb_turn_zero(turn, r, 2) ? MB_SPLAT(0.0) : R[3 * r + 2] * x2);
}

MB_FOLD void mb_motion_to_child_pat(int turn, const real *R, const real *p, const real *m, real *out)
{
    const real w0 = m[0], w1 = m[1], w2 = m[2];
    const real l0 = m[3] + w1 * p[2] - w2 * p[1];
    const real l1 = m[4] + w2 * p[0] - w0 * p[2];
    const real l2 = m[5] + w0 * p[1] - w1 * p[0];
    out[0] = mb_rt_dot(turn, R, 0, w0, w1, w2);
    out[1] = mb_rt_dot(turn, R, 1, w0, w1, w2);
    out[2] = mb_rt_dot(turn, R, 2, w0, w1, w2);
    out[3] = mb_rt_dot(turn, R, 0, l0, l1, l2);
    out[4] = mb_rt_dot(turn, R, 1, l0, l1, l2);
    out[5] = mb_rt_dot(turn, R, 2, l0, l1, l2);
}

/* out += Xᵀ f (add), else out = Xᵀ f with out possibly f: every product read before out is written */
MB_FOLD void mb_force_to_parent_pat(int turn, int add, const real *R, const real *p, const real *f, real *out)
{
    const real g0 = mb_r_dot(turn, R, 0, f[3], f[4], f[5]);
    const real g1 = mb_r_dot(turn, R, 1, f[3], f[4], f[5]);
    const real g2 = mb_r_dot(turn, R, 2, f[3], f[4], f[5]);
    const real r[6] = {mb_r_dot(turn, R, 0, f[0], f[1], f[2]) + p[1] * g2 - p[2] * g1,
                       mb_r_dot(turn, R, 1, f[0], f[1], f[2]) + p[2] * g0 - p[0] * g2,
                       mb_r_dot(turn, R, 2, f[0], f[1], f[2]) + p[0] * g1 - p[1] * g0, g0, g1, g2};
    for (int e = 0; e < 6; e++)
        out[e] = add ? out[e] + r[e] : r[e];
}

/* X m and out += Xᵀ f for a pose whose R has the structure `turn` (model.h: turn_code, the body's, read at
 * run time): a turn about e_k as mb_*_kind, a permuted turn (code 3 + 3ρ + k, a constant in each case,
 * so each copy folds) with the structure's zeros left out, else the general pose.  ABA's passes take
 * both, g(q)'s forward pass the first (rnea.c: mb_gravity_torques). */
#define MB_PERM_CASES(CALL)                                                                             \
    case 3: CALL(3); break;                                                                             \
    case 4: CALL(4); break;                                                                             \
    case 5: CALL(5); break;                                                                             \
    case 6: CALL(6); break;                                                                             \
    case 7: CALL(7); break;                                                                             \
    case 8: CALL(8); break;                                                                             \
    case 9: CALL(9); break;                                                                             \
    case 10: CALL(10); break;                                                                           \
    case 11: CALL(11); break;

MB_FOLD void mb_motion_to_child_turn(int turn, const real *R, const real *p, const real *x, real *out)
{
#define MB_TO_CHILD(T) mb_motion_to_child_pat(T, R, p, x, out)
    switch (turn) {
    case 0: mb_motion_to_child_x(R[4], R[7], p, x, out); break;  /* (mb_motion_to_child_kind's) */
    case 1: mb_motion_to_child_y(R[8], R[2], p, x, out); break;
    case 2: mb_motion_to_child_z(R[0], R[3], p, x, out); break;
    MB_PERM_CASES(MB_TO_CHILD)
    default: mb_motion_to_child(R, p, x, out);
    }
#undef MB_TO_CHILD
}

/* out += Xᵀ f (add) or out = Xᵀ f (out may be f; CRBA's column to the root), `add` a constant */
MB_FOLD void mb_force_to_parent_turn(int turn, int add, const real *R, const real *p, const real *f, real *out)
{
#define MB_TO_PARENT(T) mb_force_to_parent_pat(T, add, R, p, f, out)
    switch (turn) {
    case 0: mb_force_to_parent_x(add, R[4], R[7], p, f, out); break;  /* (mb_force_to_parent_add_kind's) */
    case 1: mb_force_to_parent_y(add, R[8], R[2], p, f, out); break;
    case 2: mb_force_to_parent_z(add, R[0], R[3], p, f, out); break;
    MB_PERM_CASES(MB_TO_PARENT)
    default:
        if (add)
            mb_force_to_parent_add(R, p, f, out);
        else
            mb_force_to_parent(R, p, f, out);
    }
#undef MB_TO_PARENT
}
#undef MB_PERM_CASES

/* M = R B Rᵀ for the 3×3 block B of the upper-triangle A at rows r0…r0+2, columns c0…c0+2 with row zr
 * and column zc zero; a diagonal block (sym) gets its upper triangle only.  All int arguments are
 * compile-time constants at every call. */
MB_FOLD void mb_rotate_block(int turn, int zr, int zc, int sym, const real *R, const real *A, int r0, int c0,
                             real M[3][3])
{
    real W[3][3];  /* W = R B */
    MB_UNROLL for (int r = 0; r < 3; r++)
        MB_UNROLL for (int k = 0; k < 3; k++) {
            const int mask = mb_rb_mask(turn, zr, zc, r, k);
            real t[3];
            for (int j = 0; j < 3; j++)
                t[j] = mask >> j & 1 ? mb_r_times(turn, R, r, j, A[MB_U6(r0 + j, c0 + k)]) : MB_SPLAT(0.0);
            W[r][k] = mb_sum3(mask, t[0], t[1], t[2]);
        }
    MB_UNROLL for (int r = 0; r < 3; r++)  /* M = W Rᵀ: M_rc = Σ_k W_rk R_ck */
        MB_UNROLL for (int c = 0; c < 3; c++) {
            if (sym && c < r)
                continue;
            int mask = 0;
            real t[3];
            for (int k = 0; k < 3; k++) {
                const int there = mb_rb_mask(turn, zr, zc, r, k) != 0 && !mb_turn_zero(turn, c, k);
                mask |= there << k;
                t[k] = there ? mb_r_times(turn, R, c, k, W[r][k]) : MB_SPLAT(0.0);
            }
            M[r][c] = mb_sum3(mask, t[0], t[1], t[2]);
        }
}

/* out = base + Xᵀ A X on upper triangles, X = plux(Rᵀ, p) (see mb_sym6_to_parent_add for the blocks;
 * base = out: out += …, each entry read before it is written):
 * rotated blocks M = R A Rᵀ, then with P = p×, Y = P M22 and G = M12 P,
 *   out11 += M11 − (G + Gᵀ) − Y P,   out12 += M12 + Y,   out22 += M22.
 * A's row and column za (angular, 0…2) and 3 + zl (linear) are zero where za, zl ≥ 0 (a one-dof
 * joint's Ia, aba.c); turn ≥ 0: R has that structure (mb_turn_zero); p0: p is exactly 0 (a revolute
 * joint at its parent frame's origin, model.h: unit_handover), so only the rotated blocks are added (the
 * same numbers: the products with p are zeros, which change no sum but for the sign of a zero). */
MB_FOLD void mb_sym6_upper_add(int turn, int za, int zl, int p0, const real *R, const real *p, const real *A,
                               const real *base, real *out)
{
    real M11[3][3], M12[3][3], M22[3][3], Y[3][3], G[3][3];
    mb_rotate_block(turn, za, za, 1, R, A, 0, 0, M11);
    mb_rotate_block(turn, za, zl, 0, R, A, 0, 3, M12);
    mb_rotate_block(turn, zl, zl, 1, R, A, 3, 3, M22);
    if (p0) {  /* p = 0 exactly: Y, G and Y P are zeros, and out = base + M */
        MB_UNROLL for (int r = 0; r < 3; r++)
            MB_UNROLL for (int c = 0; c < 3; c++) {
                if (c >= r) {
                    out[6 * r + c] = base[6 * r + c] + M11[r][c];
                    out[6 * (3 + r) + 3 + c] = base[6 * (3 + r) + 3 + c] + M22[r][c];
                }
                out[6 * r + 3 + c] = base[6 * r + 3 + c] + M12[r][c];
            }
        return;
    }
    MB_UNROLL for (int c = 0; c < 3; c++) {  /* column c of Y = p × column c of M22 */
        const real m0 = c >= 0 ? M22[0][c] : M22[c][0], m1 = c >= 1 ? M22[1][c] : M22[c][1], m2 = M22[c][2];
        Y[0][c] = p[1] * m2 - p[2] * m1;
        Y[1][c] = p[2] * m0 - p[0] * m2;
        Y[2][c] = p[0] * m1 - p[1] * m0;
    }
    MB_UNROLL for (int r = 0; r < 3; r++) {  /* row r of G = row r of M12 × p */
        G[r][0] = M12[r][1] * p[2] - M12[r][2] * p[1];
        G[r][1] = M12[r][2] * p[0] - M12[r][0] * p[2];
        G[r][2] = M12[r][0] * p[1] - M12[r][1] * p[0];
    }
    MB_UNROLL for (int r = 0; r < 3; r++) {
        const real y0 = Y[r][0], y1 = Y[r][1], y2 = Y[r][2];
        const real yp[3] = {y1 * p[2] - y2 * p[1], y2 * p[0] - y0 * p[2], y0 * p[1] - y1 * p[0]};  /* row r of Y P */
        MB_UNROLL for (int c = 0; c < 3; c++) {
            if (c >= r) {
                out[6 * r + c] = base[6 * r + c] + (M11[r][c] - (G[r][c] + G[c][r]) - yp[c]);
                out[6 * (3 + r) + 3 + c] = base[6 * (3 + r) + 3 + c] + M22[r][c];
            }
            out[6 * r + 3 + c] = base[6 * r + 3 + c] + (M12[r][c] + Y[r][c]);
        }
    }
}

/* out = A for a 6×6 matrix, row by row: GCC's generic tuning turns memcpy of a fixed 288 bytes
 * into `rep movsq`, whose start-up costs more than the copy (measured: a seventh of ABA's pass 1). */
static inline void mb_copy36(const double *A, real *out)
{
    for (int r = 0; r < 36; r += 6) {
        out[r] = MB_SPLAT(A[r]), out[r + 1] = MB_SPLAT(A[r + 1]), out[r + 2] = MB_SPLAT(A[r + 2]);
        out[r + 3] = MB_SPLAT(A[r + 3]), out[r + 4] = MB_SPLAT(A[r + 4]), out[r + 5] = MB_SPLAT(A[r + 5]);
    }
}

static inline real mb_dot6(const real *a, const real *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

static inline void mb_pose_copy(const real *R, const real *p, real *Ro, real *po)
{
    for (int k = 0; k < 9; k++)
        Ro[k] = R[k];
    po[0] = p[0], po[1] = p[1], po[2] = p[2];
}

/* (Ro, po) = (Rp, pp) ∘ (R, p): the pose of a child C in frame A from C in P and P in A,
 * Ro = Rp R, po = pp + Rp p. */
static inline void mb_pose_compose(const real *Rp, const real *pp, const real *R, const real *p,
                                   real *Ro, real *po)
{
    for (int r = 0; r < 3; r++) {
        const real a0 = Rp[3 * r], a1 = Rp[3 * r + 1], a2 = Rp[3 * r + 2];
        po[r] = pp[r] + a0 * p[0] + a1 * p[1] + a2 * p[2];
        Ro[3 * r] = a0 * R[0] + a1 * R[3] + a2 * R[6];
        Ro[3 * r + 1] = a0 * R[1] + a1 * R[4] + a2 * R[7];
        Ro[3 * r + 2] = a0 * R[2] + a1 * R[5] + a2 * R[8];
    }
}

#endif
