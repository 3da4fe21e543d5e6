/* vec.h — small vectors, 3×3 products, quaternions and the finiteness test of inputs in double: the one
 * copy the core and the engine share (they had one each).
 *
 * Header-only and static inline, so every caller compiles them into its own loops as before.
 * Each helper is one fixed expression: a caller that moved onto it computes the same sums in the
 * same order, bit for bit (no FMA: setup.py builds with -ffp-contract=off).  Matrices are 3×3
 * row-major; quaternions are scalar-first [w, x, y, z]. */
#ifndef MB_VEC_H
#define MB_VEC_H

#include <math.h>
#include <stddef.h>
#include <string.h>

static inline double mb_dot3(const double *a, const double *b) { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2]; }

/* c = a × b (c may be a or b: the three entries are formed before any is stored) */
static inline void mb_cross3(const double *a, const double *b, double *c)
{
    double x = a[1]*b[2] - a[2]*b[1], y = a[2]*b[0] - a[0]*b[2], z = a[0]*b[1] - a[1]*b[0];
    c[0] = x; c[1] = y; c[2] = z;
}

static inline void mb_sub3(const double *a, const double *b, double *c) { c[0] = a[0]-b[0]; c[1] = a[1]-b[1]; c[2] = a[2]-b[2]; }
static inline void mb_add3(const double *a, const double *b, double *c) { c[0] = a[0]+b[0]; c[1] = a[1]+b[1]; c[2] = a[2]+b[2]; }
static inline void mb_scale3(const double *a, double s, double *c) { c[0] = a[0]*s; c[1] = a[1]*s; c[2] = a[2]*s; }
static inline void mb_copy3(const double *a, double *c) { c[0] = a[0]; c[1] = a[1]; c[2] = a[2]; }
static inline double mb_norm3(const double *a) { return sqrt(mb_dot3(a, a)); }

/* a / |a| in place; 0 (a untouched) when |a| is zero or too small to divide by */
static inline int mb_normalize3(double *a)
{
    double n = mb_norm3(a);
    if (!(n > 1e-300)) return 0;
    a[0] /= n; a[1] /= n; a[2] /= n;
    return 1;
}

/* c = R a and c = Rᵀ a (c may be a) */
static inline void mb_mv3(const double *R, const double *a, double *c)
{
    double x = R[0]*a[0] + R[1]*a[1] + R[2]*a[2], y = R[3]*a[0] + R[4]*a[1] + R[5]*a[2],
           z = R[6]*a[0] + R[7]*a[1] + R[8]*a[2];
    c[0] = x; c[1] = y; c[2] = z;
}
static inline void mb_mtv3(const double *R, const double *a, double *c)
{
    double x = R[0]*a[0] + R[3]*a[1] + R[6]*a[2], y = R[1]*a[0] + R[4]*a[1] + R[7]*a[2],
           z = R[2]*a[0] + R[5]*a[1] + R[8]*a[2];
    c[0] = x; c[1] = y; c[2] = z;
}

/* Rotation of a unit quaternion, taken as unit (the core's mb_quat_to_rot normalises first). */
static inline void mb_quat_to_R(const double *q, double *R)
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    R[0] = 1 - 2*(y*y + z*z); R[1] = 2*(x*y - w*z);     R[2] = 2*(x*z + w*y);
    R[3] = 2*(x*y + w*z);     R[4] = 1 - 2*(x*x + z*z); R[5] = 2*(y*z - w*x);
    R[6] = 2*(x*z - w*y);     R[7] = 2*(y*z + w*x);     R[8] = 1 - 2*(x*x + y*y);
}

/* c = a ⊗ b:  w = a0 b0 - a1 b1 - a2 b2 - a3 b3,  x = a0 b1 + a1 b0 + a2 b3 - a3 b2,
 *             y = a0 b2 - a1 b3 + a2 b0 + a3 b1,  z = a0 b3 + a1 b2 - a2 b1 + a3 b0,
 * the four sums in four lanes: term k is a_k times b permuted and signed (x - y is x + (-y) and
 * -(a b) is a (-b), exactly), added left to right as written, so each entry is the scalar
 * formula's bits.  c may be a or b. */
typedef double mb_v4d __attribute__((vector_size(32)));
typedef long long mb_v4i __attribute__((vector_size(32)));
static inline void mb_quat_mul(const double *a, const double *b, double *c)
{
    mb_v4d B; memcpy(&B, b, sizeof B);
    const mb_v4d n1 = {-0.0, 0.0, -0.0, 0.0}, n2 = {-0.0, 0.0, 0.0, -0.0}, n3 = {-0.0, -0.0, 0.0, 0.0};
    mb_v4i s1 = (mb_v4i)__builtin_shuffle(B, (mb_v4i){1, 0, 3, 2}) ^ (mb_v4i)n1;
    mb_v4i s2 = (mb_v4i)__builtin_shuffle(B, (mb_v4i){2, 3, 0, 1}) ^ (mb_v4i)n2;
    mb_v4i s3 = (mb_v4i)__builtin_shuffle(B, (mb_v4i){3, 2, 1, 0}) ^ (mb_v4i)n3;
    mb_v4d r = ((a[0] * B + a[1] * (mb_v4d)s1) + a[2] * (mb_v4d)s2) + a[3] * (mb_v4d)s3;
    memcpy(c, &r, sizeof r);
}
static inline void mb_quat_conj(const double *a, double *c) { c[0] = a[0]; c[1] = -a[1]; c[2] = -a[2]; c[3] = -a[3]; }

/* y[lo .. hi] += a x[lo .. hi] on a run of consecutive entries (a dof run of a tree: sparse.c's LTDL, the implicit
 * contact step's rows): four entries a vector operation (one instruction in an AVX2 clone, clones.h; two in the
 * portable build), then two, then one, each entry's operations (a product, then a sum) unchanged, so every width
 * gives the same bits; written out rather than left to the vectoriser, whose checks and remainder loops cost
 * more than the few entries of a run.  (y −= a x is this with −a: (−a)·x is −(a·x) exactly, the same bits.) */
typedef double mb_pair __attribute__((vector_size(16)));
typedef double mb_quad __attribute__((vector_size(32)));

static inline void mb_add_scaled_run(double *y, const double *x, double a, int lo, int hi)
{
    const mb_quad a4 = {a, a, a, a};
    const mb_pair a2 = {a, a};
    int j = lo;
    for (; j + 3 <= hi; j += 4) {
        mb_quad xv, yv;
        memcpy(&xv, x + j, sizeof xv);
        memcpy(&yv, y + j, sizeof yv);
        yv += a4 * xv;
        memcpy(y + j, &yv, sizeof yv);
    }
    if (j + 1 <= hi) {
        mb_pair xv, yv;
        memcpy(&xv, x + j, sizeof xv);
        memcpy(&yv, y + j, sizeof yv);
        yv += a2 * xv;
        memcpy(y + j, &yv, sizeof yv);
        j += 2;
    }
    if (j == hi)
        y[j] += a * x[j];
}

/* Are all n numbers finite?  Without a branch per number: x·0 is ±0 for a finite x and NaN for an infinite
 * one or NaN, and a sum of such products is 0 exactly when all are finite; two numbers per instruction (a
 * pair of doubles: every x86-64 and ARM64 CPU has them), in four independent sums (one sum waited out each
 * addition's latency: 1.7 µs a call on the compliant scene's 2 576 contact states).  The one finiteness
 * test of the inputs: the boundary's checks (py/), the configuration's (jcalc.c: mb_check_configuration,
 * which a batch runs on every state) and the compiled loop's (rollout.c).  (Outputs: gate.h's
 * mb_gate_finite; lanes: rollout_lanes.h.) */
typedef double mb_number_pair __attribute__((vector_size(16)));

static inline int mb_all_finite(const double *x, ptrdiff_t n)
{
    mb_number_pair acc[4] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
    ptrdiff_t k = 0;
    for (; k + 8 <= n; k += 8)
        for (int j = 0; j < 4; j++) {
            mb_number_pair p;
            memcpy(&p, x + k + 2 * j, sizeof p);
            acc[j] += p * 0.0;
        }
    for (; k + 2 <= n; k += 2) {
        mb_number_pair p;
        memcpy(&p, x + k, sizeof p);
        acc[0] += p * 0.0;
    }
    const mb_number_pair sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    double s = sum[0] + sum[1];
    if (k < n)
        s += x[k] * 0.0;
    return s == 0.0;
}

#endif
