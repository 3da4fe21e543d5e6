/* Shapes and the geometry the colliders share (see geometry.h): one row per shape with its
 * bounding box and support function, and the closest-point, clipping and slab routines that
 * collide.c, convex.c, trimesh.c and ray.c used to carry a copy each of.
 *
 * Support functions: the farthest point of a convex solid along a direction (Snethen's
 * XenoCollide; van den Bergen, Collision Detection in Interactive 3D Environments, 4.3), the
 * one thing Minkowski portal refinement (collide.c) needs of a shape.  Bounding boxes: the
 * extent of the rotated shape along each world axis, for the sweep and prune (step.c), the
 * mesh queries (trimesh.c) and the ray hierarchy (ray.c).
 */
#include "engine/engine.h"

#define EPS 1e-12

/* ---- bounding boxes: half extents e along each world axis k (row k of R) -------------------- */
static void around(mb_geom_pose *g, const double *e)
{
    for (int k = 0; k < 3; k++) { g->lo[k] = g->p[k] - e[k]; g->hi[k] = g->p[k] + e[k]; }
}
static void sphere_bounds(mb_geom_pose *g)
{
    double e[3] = {g->size[0], g->size[0], g->size[0]};
    around(g, e);
}
static void box_bounds(mb_geom_pose *g)
{
    double e[3];
    for (int k = 0; k < 3; k++) {
        const double *Rk = g->R + 3 * k;
        e[k] = 0.5 * (fabs(Rk[0]) * g->size[0] + fabs(Rk[1]) * g->size[1] + fabs(Rk[2]) * g->size[2]);
    }
    around(g, e);
}
static void capsule_bounds(mb_geom_pose *g)
{
    double e[3];
    for (int k = 0; k < 3; k++) e[k] = 0.5 * fabs(g->R[3 * k + 2]) * g->size[1] + g->size[0];
    around(g, e);
}
static void cylinder_bounds(mb_geom_pose *g)
{   /* the caps' discs: radius times the sine of the axis's angle to world axis k */
    double e[3];
    for (int k = 0; k < 3; k++) {
        const double *Rk = g->R + 3 * k;
        double s = 1 - Rk[2] * Rk[2];
        e[k] = 0.5 * fabs(Rk[2]) * g->size[1] + g->size[0] * sqrt(s > 0 ? s : 0);
    }
    around(g, e);
}
static void ellipsoid_bounds(mb_geom_pose *g)
{   /* the support along world axis k: |diag(r) R^T e_k| = sqrt(sum_j (R_kj r_j)^2) */
    double e[3];
    for (int k = 0; k < 3; k++) {
        const double *Rk = g->R + 3 * k;
        double a = Rk[0] * g->size[0], b = Rk[1] * g->size[1], c = Rk[2] * g->size[2];
        e[k] = sqrt(a * a + b * b + c * c);
    }
    around(g, e);
}
static void plane_bounds(mb_geom_pose *g)
{   /* unbounded: the broad phase tests planes against every box on their own (step.c) */
    for (int k = 0; k < 3; k++) { g->lo[k] = -INFINITY; g->hi[k] = INFINITY; }
}
static void convex_bounds(mb_geom_pose *g) { mb_geom_hull_extent(g->hull, g->R, g->p, g->lo, g->hi); }
static void trimesh_bounds(mb_geom_pose *g)
{   /* the mesh's own box (its vertices are in world coordinates); none yet: an empty box at p */
    if (g->mesh) { mb_copy3(g->mesh->lo, g->lo); mb_copy3(g->mesh->hi, g->hi); }
    else { mb_copy3(g->p, g->lo); mb_copy3(g->p, g->hi); }
}

/* The box is exact: the least and largest of each world coordinate R_k . v over the vertices (as mb_mv3
 * computes it: the same products summed in the same order).  min and max do not round and do not depend
 * on the order they are taken in, so the hull's coordinate columns (h->cols) are scanned two vertices a
 * lane pair, into local bounds: the scan with its bounds in lo and hi through memory (which may alias R)
 * and a branch per comparison was 55 % of a hard-contact step of solo12 on its 17 hulls of 256 vertices
 * (issue 33's profile); from the columns (and four lanes where the CPU has AVX2: scan4) the run took 0.35 -> 0.21 s
 * CPU (machine loaded), the box the same to the bit. */
typedef long long v2l __attribute__((vector_size(16)));
static inline v2d min2(v2d a, v2d b) { v2l m = (v2l)(a < b); return (v2d)(((v2l)a & m) | ((v2l)b & ~m)); }
static inline v2d max2(v2d a, v2d b) { v2l m = (v2l)(a > b); return (v2d)(((v2l)a & m) | ((v2l)b & ~m)); }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The same scan four vertices a lane set, compiled for AVX2 and taken where the CPU has it (the build is
 * portable: -march=native is not on by default).  The same IEEE products and sums in the same order, no fused
 * multiply-add (-ffp-contract=off, and "avx2" does not enable FMA): the box is the two-lane scan's to the bit.
 * Writes the six bounds over vertices [0, 4 (nv / 4)) and returns that count. */
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4l __attribute__((vector_size(32)));
__attribute__((target("avx2"))) static int scan4(const double *X, const double *Y, const double *Z, int nv,
                                                 const double *R, double *b6)
{
    const double r0 = R[0], r1 = R[1], r2 = R[2], r3 = R[3], r4 = R[4], r5 = R[5], r6 = R[6], r7 = R[7], r8 = R[8];
    v4d L0 = {INFINITY, INFINITY, INFINITY, INFINITY}, L1 = L0, L2 = L0, H0 = -L0, H1 = H0, H2 = H0;
    int i = 0;
    for (; i + 4 <= nv; i += 4) {
        v4d x, y, z;
        memcpy(&x, X + i, sizeof x), memcpy(&y, Y + i, sizeof y), memcpy(&z, Z + i, sizeof z);
        const v4d a = r0 * x + r1 * y + r2 * z, b = r3 * x + r4 * y + r5 * z, c = r6 * x + r7 * y + r8 * z;
        v4l m;
        m = (v4l)(a < L0), L0 = (v4d)(((v4l)a & m) | ((v4l)L0 & ~m));
        m = (v4l)(a > H0), H0 = (v4d)(((v4l)a & m) | ((v4l)H0 & ~m));
        m = (v4l)(b < L1), L1 = (v4d)(((v4l)b & m) | ((v4l)L1 & ~m));
        m = (v4l)(b > H1), H1 = (v4d)(((v4l)b & m) | ((v4l)H1 & ~m));
        m = (v4l)(c < L2), L2 = (v4d)(((v4l)c & m) | ((v4l)L2 & ~m));
        m = (v4l)(c > H2), H2 = (v4d)(((v4l)c & m) | ((v4l)H2 & ~m));
    }
    const v4d *V[6] = {&L0, &L1, &L2, &H0, &H1, &H2};
    for (int k = 0; k < 6; k++) {
        double e = (*V[k])[0];
        for (int j = 1; j < 4; j++) e = k < 3 ? ((*V[k])[j] < e ? (*V[k])[j] : e) : ((*V[k])[j] > e ? (*V[k])[j] : e);
        b6[k] = e;
    }
    return i;
}
static int has_avx2(void)
{
    static int known = -1;
    if (known < 0) known = __builtin_cpu_supports("avx2") ? 1 : 0;
    return known;
}
#endif

void mb_geom_hull_extent(const mb_hull *h, const double *R, const double *p, double *lo, double *hi)
{
    const double r0 = R[0], r1 = R[1], r2 = R[2], r3 = R[3], r4 = R[4], r5 = R[5], r6 = R[6], r7 = R[7], r8 = R[8];
    double l0 = INFINITY, l1 = INFINITY, l2 = INFINITY, h0 = -INFINITY, h1 = -INFINITY, h2 = -INFINITY;
    const int nv = h->nv;
    int i = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (h->cols && nv >= 4 && has_avx2()) {
        double b6[6];
        i = scan4(h->cols, h->cols + nv, h->cols + 2 * nv, nv, R, b6);
        l0 = b6[0], l1 = b6[1], l2 = b6[2], h0 = b6[3], h1 = b6[4], h2 = b6[5];
    }
#endif
    if (h->cols && nv - i >= 2) {
        const double *X = h->cols, *Y = X + nv, *Z = Y + nv;
        v2d L0 = {l0, l0}, L1 = {l1, l1}, L2 = {l2, l2}, H0 = {h0, h0}, H1 = {h1, h1}, H2 = {h2, h2};
        for (; i + 2 <= nv; i += 2) {
            const v2d x = ld2(X + i), y = ld2(Y + i), z = ld2(Z + i);
            const v2d a = r0 * x + r1 * y + r2 * z, b = r3 * x + r4 * y + r5 * z, c = r6 * x + r7 * y + r8 * z;
            L0 = min2(a, L0), H0 = max2(a, H0), L1 = min2(b, L1), H1 = max2(b, H1), L2 = min2(c, L2), H2 = max2(c, H2);
        }
        l0 = L0[0] < L0[1] ? L0[0] : L0[1], l1 = L1[0] < L1[1] ? L1[0] : L1[1], l2 = L2[0] < L2[1] ? L2[0] : L2[1];
        h0 = H0[0] > H0[1] ? H0[0] : H0[1], h1 = H1[0] > H1[1] ? H1[0] : H1[1], h2 = H2[0] > H2[1] ? H2[0] : H2[1];
    }
    for (; i < nv; i++) {   /* the odd vertex, or a hull without columns */
        const double *v = h->v + 3 * i;
        const double a = r0 * v[0] + r1 * v[1] + r2 * v[2], b = r3 * v[0] + r4 * v[1] + r5 * v[2],
                     c = r6 * v[0] + r7 * v[1] + r8 * v[2];
        l0 = a < l0 ? a : l0, h0 = a > h0 ? a : h0, l1 = b < l1 ? b : l1, h1 = b > h1 ? b : h1;
        l2 = c < l2 ? c : l2, h2 = c > h2 ? c : h2;
    }
    lo[0] = l0 + p[0], lo[1] = l1 + p[1], lo[2] = l2 + p[2];
    hi[0] = h0 + p[0], hi[1] = h1 + p[1], hi[2] = h2 + p[2];
}

/* ---- support functions: sphere, box, capsule, cylinder and hull in geometry.h (inline) -------- */
void mb_geom_hull_support(const mb_hull *h, const double *dir, double *out)
{
    int best = 0; double m = -INFINITY;
    for (int i = 0; i < h->nv; i++) { double t = mb_dot3(dir, h->v + 3 * i); if (t > m) { m = t; best = i; } }
    mb_copy3(h->v + 3 * best, out);
}

void mb_geom_ellipsoid_support(const mb_geom_pose *g, const double *l, double *s)
{
    double rl[3] = {g->size[0] * l[0], g->size[1] * l[1], g->size[2] * l[2]}, n = mb_norm3(rl);
    if (n > 1e-300) for (int k = 0; k < 3; k++) s[k] = g->size[k] * rl[k] / n;
}

/* ---- the shapes -------------------------------------------------------------------------------- */
const mb_geom_shape geom_shapes[G_COUNT] = {
    [G_SPHERE]   = {"sphere",   0, sphere_bounds,   mb_geom_sphere_support},
    [G_BOX]      = {"box",      0, box_bounds,      mb_geom_box_support},
    [G_CAPSULE]  = {"capsule",  0, capsule_bounds,  mb_geom_capsule_support},
    [G_CYLINDER] = {"cylinder", 0, cylinder_bounds, mb_geom_cylinder_support},
    [G_PLANE]    = {"plane",    1, plane_bounds,    NULL},
    [G_CONVEX]   = {"convex",   0, convex_bounds,   mb_geom_convex_support},
    [G_TRIMESH]  = {"trimesh",  1, trimesh_bounds,  NULL},
    [G_ELLIPSOID] = {"ellipsoid", 0, ellipsoid_bounds, mb_geom_ellipsoid_support},
    [G_HFIELD]   = {"hfield",   1, mb_hfield_bounds, NULL},
};

const char *mb_geom_name(int type)
{
    return type >= 0 && type < G_COUNT ? geom_shapes[type].name : NULL;
}

void mb_geom_segment(const mb_geom_pose *g, double *e0, double *e1)
{
    double hl = 0.5 * g->size[1], lp[3] = {0, 0, hl};
    mb_geom_point(g, lp, e1); lp[2] = -hl; mb_geom_point(g, lp, e0);
}

/* ---- closest points ---------------------------------------------------------------------------- */
void mb_geom_closest_on_segment(const double *p, const double *a, const double *b, double *out)
{
    double ab[3], ap[3]; mb_sub3(b, a, ab); mb_sub3(p, a, ap);
    double L = mb_dot3(ab, ab), t = L > EPS ? mb_dot3(ap, ab) / L : 0.0;
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    for (int k = 0; k < 3; k++) out[k] = a[k] + t * ab[k];
}

void mb_geom_closest_segments(const double *p1, const double *q1, const double *p2, const double *q2,
                           double *c1, double *c2)
{
    double d1[3], d2[3], r[3]; mb_sub3(q1, p1, d1); mb_sub3(q2, p2, d2); mb_sub3(p1, p2, r);
    double a = mb_dot3(d1, d1), e = mb_dot3(d2, d2), f = mb_dot3(d2, r), s, t;
    if (a <= EPS && e <= EPS) { s = t = 0; }
    else if (a <= EPS) { s = 0; t = f / e; t = t < 0 ? 0 : (t > 1 ? 1 : t); }
    else {
        double c = mb_dot3(d1, r);
        if (e <= EPS) { t = 0; s = -c / a; s = s < 0 ? 0 : (s > 1 ? 1 : s); }
        else {
            double b = mb_dot3(d1, d2), den = a * e - b * b;
            s = den > EPS ? (b * f - c * e) / den : 0.0;
            s = s < 0 ? 0 : (s > 1 ? 1 : s);
            t = (b * s + f) / e;
            if (t < 0) { t = 0; s = -c / a; s = s < 0 ? 0 : (s > 1 ? 1 : s); }
            else if (t > 1) { t = 1; s = (b - c) / a; s = s < 0 ? 0 : (s > 1 ? 1 : s); }
        }
    }
    for (int k = 0; k < 3; k++) { c1[k] = p1[k] + s * d1[k]; c2[k] = p2[k] + t * d2[k]; }
}

/* ---- polygons, triangles, boxes ---------------------------------------------------------------- */
int mb_geom_clip(double (*in)[3], int nin, const double *side, double off, double (*out)[3], int cap)
{
    int m = 0;
    for (int i = 0; i < nin && m < cap - 1; i++) {
        const double *P = in[i], *Q = in[(i + 1) % nin];
        double dp = mb_dot3(side, P) - off, dq = mb_dot3(side, Q) - off;
        if (dp <= 0) { mb_copy3(P, out[m]); m++; }
        if ((dp < 0 && dq > 0) || (dp > 0 && dq < 0)) {
            double t = dp / (dp - dq);
            for (int k = 0; k < 3; k++) out[m][k] = P[k] + t * (Q[k] - P[k]);
            m++;
        }
    }
    return m;
}

int mb_geom_in_triangle(const double *p, const double t[3][3], const double *n, double tol)
{
    for (int i = 0; i < 3; i++) {
        double e[3], ep[3], c[3];
        mb_sub3(t[(i + 1) % 3], t[i], e); mb_sub3(p, t[i], ep); mb_cross3(e, ep, c);
        if (mb_dot3(c, n) < -tol * mb_norm3(e)) return 0;
    }
    return 1;
}

int mb_geom_ray_box(const double *lo, const double *hi, const double *o, const double *inv, double reach)
{
    double t0 = 0, t1 = reach;
    for (int k = 0; k < 3; k++) {
        double a = (lo[k] - o[k]) * inv[k], b = (hi[k] - o[k]) * inv[k];
        if (isnan(a) || isnan(b)) { if (o[k] < lo[k] || o[k] > hi[k]) return 0; continue; }   /* 0 * inf */
        if (a > b) { double x = a; a = b; b = x; }
        if (a > t0) t0 = a;
        if (b < t1) t1 = b;
        if (t0 > t1) return 0;
    }
    return 1;
}
