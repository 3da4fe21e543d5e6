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

void mb_geom_hull_extent(const mb_hull *h, const double *R, const double *p, double *lo, double *hi)
{
    for (int k = 0; k < 3; k++) { lo[k] = INFINITY; hi[k] = -INFINITY; }
    for (int i = 0; i < h->nv; i++) {
        double x[3]; mb_mv3(R, h->v + 3 * i, x);
        for (int k = 0; k < 3; k++) { if (x[k] < lo[k]) lo[k] = x[k]; if (x[k] > hi[k]) hi[k] = x[k]; }
    }
    mb_add3(lo, p, lo); mb_add3(hi, p, hi);
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
