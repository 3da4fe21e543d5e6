/* Static triangle meshes (terrain, ODE's dCreateTriMesh): a bounding-volume hierarchy over the
 * triangles, and contacts of spheres, boxes and capsules against the triangles it keeps.
 *
 * Hierarchy: axis-aligned boxes, split at the median centroid along the longest axis, at most
 * LEAF triangles a leaf; a query walks it with an explicit stack, so a shape touching a few of
 * a 10 000-triangle terrain visits about log2(2500) nodes, not every triangle.
 *
 * Normals: a triangle's front is counter-clockwise.  A contact where the shape is over the
 * triangle's interior takes the face normal; a sphere (or a capsule's sphere) meeting an edge or
 * corner takes the direction from that point, but only when no triangle whose face covers that
 * point already gave a face contact — so a sphere rolling over the shared edge of two coplanar
 * triangles sees the plane's normal and nothing else (no snagging).  Boxes are pushed along the
 * face normal of the triangles under them (terrain): their corners below a triangle, the
 * triangle's corners inside the box and the points where the triangle's edges leave the box.
 * Cylinders likewise, by their rim points below a triangle and the triangle's corners inside them.
 * Contacts from neighbouring triangles at one point are merged (the deepest kept).
 * Convex hulls: convex.c's mb_convex_triangle gives each triangle's points; merged here, and cut to
 * 4 there (mb_mesh_manifold).
 * Shapes behind a triangle (centre under its plane) are not pushed through it.
 */
#include <stdlib.h>
#include "engine/engine.h"

#define LEAF 4
#define EPS 1e-12

/* ---- building the hierarchy -------------------------------------------------------------------- */
typedef struct { double c[3], key; int t; } Item;   /* key: the centroid along the split axis */
static int cmp_item(const void *a, const void *b)
{
    double x = ((const Item *)a)->key, y = ((const Item *)b)->key;
    return (x > y) - (x < y);
}

static void tri_bounds(const mb_trimesh *m, const int64_t *tri, int t, double *lo, double *hi)
{
    for (int c = 0; c < 3; c++) {
        const double *p = m->v + 3 * tri[3 * t + c];
        for (int k = 0; k < 3; k++) {
            if (c == 0 || p[k] < lo[k]) lo[k] = p[k];
            if (c == 0 || p[k] > hi[k]) hi[k] = p[k];
        }
    }
}

static int build_node(mb_trimesh *m, const int64_t *tri, Item *items, int first, int count)
{
    int id = m->nnodes++;
    mb_bvh_node *nd = m->nodes + id;
    for (int i = 0; i < count; i++) {
        double lo[3], hi[3]; tri_bounds(m, tri, items[first + i].t, lo, hi);
        for (int k = 0; k < 3; k++) {
            if (i == 0 || lo[k] < nd->lo[k]) nd->lo[k] = lo[k];
            if (i == 0 || hi[k] > nd->hi[k]) nd->hi[k] = hi[k];
        }
    }
    if (count <= LEAF) { nd->left = first; nd->count = count; return id; }
    double clo[3], chi[3];
    mb_copy3(items[first].c, clo); mb_copy3(items[first].c, chi);
    for (int i = 1; i < count; i++) for (int k = 0; k < 3; k++) {
        double c = items[first + i].c[k];
        if (c < clo[k]) clo[k] = c;
        if (c > chi[k]) chi[k] = c;
    }
    int ax = 0;
    for (int k = 1; k < 3; k++) if (chi[k] - clo[k] > chi[ax] - clo[ax]) ax = k;
    for (int i = 0; i < count; i++) items[first + i].key = items[first + i].c[ax];
    qsort(items + first, (size_t)count, sizeof(Item), cmp_item);
    int half = count / 2;
    nd->count = 0;
    build_node(m, tri, items, first, half);                 /* the left child is id + 1 */
    int right = build_node(m, tri, items, first + half, count - half);
    m->nodes[id].left = right;                              /* nd may have moved: index again */
    return id;
}

mb_trimesh *mb_trimesh_build(const double *v, int nv, const int64_t *tri, int nt)
{
    mb_trimesh *m = calloc(1, sizeof *m);
    Item *items = malloc(sizeof(Item) * (size_t)(nt > 0 ? nt : 1));
    if (!m || !items) { free(m); free(items); return NULL; }
    m->nv = nv; m->nt = nt;
    m->v = malloc(sizeof(double) * 3 * (size_t)(nv > 0 ? nv : 1));
    m->tri = malloc(sizeof(int) * 3 * (size_t)(nt > 0 ? nt : 1));
    m->normal = malloc(sizeof(double) * 3 * (size_t)(nt > 0 ? nt : 1));
    m->nodes = malloc(sizeof(mb_bvh_node) * (size_t)(2 * nt + 1));
    if (!m->v || !m->tri || !m->normal || !m->nodes) { free(items); mb_trimesh_free(m); return NULL; }
    memcpy(m->v, v, sizeof(double) * 3 * (size_t)nv);
    for (int t = 0; t < nt; t++) {
        items[t].t = t;
        for (int k = 0; k < 3; k++)
            items[t].c[k] = (v[3 * tri[3 * t] + k] + v[3 * tri[3 * t + 1] + k] + v[3 * tri[3 * t + 2] + k]) / 3.0;
    }
    if (nt > 0) build_node(m, tri, items, 0, nt);
    for (int i = 0; i < nt; i++) {                          /* triangles in leaf order */
        const int64_t *src = tri + 3 * items[i].t;
        int *dst = m->tri + 3 * i;
        for (int c = 0; c < 3; c++) dst[c] = (int)src[c];
        double e1[3], e2[3], *n = m->normal + 3 * i;
        mb_sub3(v + 3 * dst[1], v + 3 * dst[0], e1); mb_sub3(v + 3 * dst[2], v + 3 * dst[0], e2);
        mb_cross3(e1, e2, n);
        if (!mb_normalize3(n)) { n[0] = 0; n[1] = 0; n[2] = 0; }   /* degenerate: never collides */
    }
    free(items);
    if (nt > 0) { mb_copy3(m->nodes[0].lo, m->lo); mb_copy3(m->nodes[0].hi, m->hi); }
    return m;
}

void mb_trimesh_free(mb_trimesh *m)
{
    if (!m) return;
    free(m->v); free(m->tri); free(m->normal); free(m->nodes); free(m);
}

static void corners(const mb_trimesh *m, int t, double c[3][3])
{
    for (int i = 0; i < 3; i++) mb_copy3(m->v + 3 * m->tri[3 * t + i], c[i]);
}

/* ---- closest point of a triangle (Ericson, Real-Time Collision Detection 5.1.5) ------------- */
/* returns 1 when the closest point is in the triangle's interior (its face region) */
static int closest_on_triangle(const double *p, const double t[3][3], double *q)
{
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    mb_sub3(t[1], t[0], ab); mb_sub3(t[2], t[0], ac); mb_sub3(p, t[0], ap);
    double d1 = mb_dot3(ab, ap), d2 = mb_dot3(ac, ap);
    if (d1 <= 0 && d2 <= 0) { mb_copy3(t[0], q); return 0; }
    mb_sub3(p, t[1], bp);
    double d3 = mb_dot3(ab, bp), d4 = mb_dot3(ac, bp);
    if (d3 >= 0 && d4 <= d3) { mb_copy3(t[1], q); return 0; }
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) { double s = d1 / (d1 - d3); for (int k = 0; k < 3; k++) q[k] = t[0][k] + s * ab[k]; return 0; }
    mb_sub3(p, t[2], cp);
    double d5 = mb_dot3(ab, cp), d6 = mb_dot3(ac, cp);
    if (d6 >= 0 && d5 <= d6) { mb_copy3(t[2], q); return 0; }
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) { double s = d2 / (d2 - d6); for (int k = 0; k < 3; k++) q[k] = t[0][k] + s * ac[k]; return 0; }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
        double s = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        for (int k = 0; k < 3; k++) q[k] = t[1][k] + s * (t[2][k] - t[1][k]);
        return 0;
    }
    double den = 1.0 / (va + vb + vc), v = vb * den, w = vc * den;
    for (int k = 0; k < 3; k++) q[k] = t[0][k] + v * ab[k] + w * ac[k];
    return 1;
}

/* ---- candidate contacts of one pair, merged and trimmed at the end ------------------------------ */
#define MAXC 64
typedef struct {
    mb_contact_point c[MAXC];
    int face[MAXC];      /* 1: face contact (normal = the triangle's) */
    int tri[MAXC];
    int n;
    double tol;          /* two contacts closer than this are one */
} Buffer;

static void keep(Buffer *B, const double *pos, const double *nrm, double depth, int face, int tri)
{
    for (int i = 0; i < B->n; i++) {                          /* the same point from a neighbour */
        double d[3]; mb_sub3(B->c[i].pos, pos, d);
        if (mb_dot3(d, d) < B->tol * B->tol && mb_dot3(B->c[i].normal, nrm) > 1 - 1e-6) {
            if (depth > B->c[i].depth) { mb_copy3(pos, B->c[i].pos); B->c[i].depth = depth; B->face[i] = face; B->tri[i] = tri; }
            return;
        }
    }
    int i = B->n;
    if (i == MAXC) {                                          /* full: replace the shallowest */
        i = 0;
        for (int k = 1; k < MAXC; k++) if (B->c[k].depth < B->c[i].depth) i = k;
        if (B->c[i].depth >= depth) return;
    } else B->n++;
    mb_copy3(pos, B->c[i].pos); mb_copy3(nrm, B->c[i].normal); B->c[i].depth = depth; B->face[i] = face; B->tri[i] = tri;
}

/* ---- sphere ------------------------------------------------------------------------------------ */
/* edge and corner contacts are only candidates here: the point q is remembered in pos and
 * dropped later if some face contact's triangle covers it */
static void sphere_triangle(const double *c, double r, const double t[3][3], const double *n, int ti, Buffer *B)
{
    double q[3], d[3];
    double s = mb_dot3(c, n) - mb_dot3(t[0], n);                    /* height of the centre over the plane */
    if (s < 0 || s > r) return;                               /* behind, or out of reach */
    int face = closest_on_triangle(c, t, q);
    mb_sub3(c, q, d);
    double dist = mb_norm3(d);
    if (dist > r) return;
    if (face) {                                               /* halfway into the overlap, as sphere_plane */
        double pos[3]; for (int k = 0; k < 3; k++) pos[k] = c[k] - n[k] * (r - 0.5 * (r - s));
        keep(B, pos, n, r - s, 1, ti);
        return;
    }
    double nrm[3];
    if (dist > EPS) mb_scale3(d, 1.0 / dist, nrm); else mb_copy3(n, nrm);
    keep(B, q, nrm, r - dist, 0, ti);
}

/* drop edge/corner contacts lying on a triangle that gave a face contact, then hand out the
 * deepest max contacts; positions of edge contacts move halfway into the overlap */
static int flush(Buffer *B, const mb_trimesh *m, mb_contact_point *out, int max, int sphere_like)
{
    int n = 0;
    for (int i = 0; i < B->n; i++) {
        if (!B->face[i] && sphere_like) {
            int covered = 0;
            for (int k = 0; k < B->n && !covered; k++) {
                if (!B->face[k]) continue;
                double t[3][3]; corners(m, B->tri[k], t);
                const double *nk = m->normal + 3 * B->tri[k];
                if (fabs(mb_dot3(nk, B->c[i].pos) - mb_dot3(nk, t[0])) < B->tol && mb_geom_in_triangle(B->c[i].pos, t, nk, B->tol)) covered = 1;
            }
            if (covered) continue;
            /* the contact point halfway into the overlap, as the sphere pairs of collide.c */
            for (int k = 0; k < 3; k++) B->c[i].pos[k] -= B->c[i].normal[k] * 0.5 * B->c[i].depth;
        }
        mb_contact_point *c = B->c + i;
        if (n < max) out[n++] = *c;
        else {                                                /* keep the deepest */
            int w = 0;
            for (int k = 1; k < n; k++) if (out[k].depth < out[w].depth) w = k;
            if (out[w].depth < c->depth) out[w] = *c;
        }
    }
    return n;
}

/* ---- box --------------------------------------------------------------------------------------- */
typedef struct { double A[3][3], h[3], p[3]; } BoxF;

static void box_frame(const mb_geom_pose *g, BoxF *b)
{
    for (int k = 0; k < 3; k++) {
        b->A[k][0] = g->R[k]; b->A[k][1] = g->R[3 + k]; b->A[k][2] = g->R[6 + k];
        b->h[k] = 0.5 * g->size[k];
    }
    mb_copy3(g->p, b->p);
}
static double box_radius(const BoxF *b, const double *L)
{
    return b->h[0] * fabs(mb_dot3(L, b->A[0])) + b->h[1] * fabs(mb_dot3(L, b->A[1])) + b->h[2] * fabs(mb_dot3(L, b->A[2]));
}
static int inside_box(const BoxF *b, const double *x, double tol)
{
    double d[3]; mb_sub3(x, b->p, d);
    for (int k = 0; k < 3; k++) if (fabs(mb_dot3(d, b->A[k])) > b->h[k] + tol) return 0;
    return 1;
}

/* separating axis test of the box against the triangle on the box axes and edge crosses */
static int box_triangle_separated(const BoxF *b, const double t[3][3])
{
    double L[3], e[3][3];
    for (int i = 0; i < 3; i++) mb_sub3(t[(i + 1) % 3], t[i], e[i]);
    for (int k = 0; k < 12; k++) {
        if (k < 3) mb_copy3(b->A[k], L);
        else { mb_cross3(b->A[(k - 3) / 3], e[(k - 3) % 3], L); if (!mb_normalize3(L) || mb_norm3(L) < 1e-9) continue; }
        double c = mb_dot3(L, b->p), r = box_radius(b, L), lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < 3; i++) { double x = mb_dot3(L, t[i]); if (x < lo) lo = x; if (x > hi) hi = x; }
        if (lo > c + r || hi < c - r) return 1;
    }
    return 0;
}

static void box_triangle(const BoxF *b, const double t[3][3], const double *n, int ti, Buffer *B)
{
    double d = mb_dot3(n, t[0]), c = mb_dot3(n, b->p), r = box_radius(b, n);
    if (c < d) return;                                        /* centre behind the triangle */
    double bottom = c - r;                                    /* lowest point of the box along n */
    if (bottom > d) return;
    if (box_triangle_separated(b, t)) return;
    for (int s = 0; s < 8; s++) {                             /* corners below the triangle */
        double v[3];
        for (int k = 0; k < 3; k++)
            v[k] = b->p[k] + ((s & 1) ? b->h[0] : -b->h[0]) * b->A[0][k] + ((s & 2) ? b->h[1] : -b->h[1]) * b->A[1][k]
                 + ((s & 4) ? b->h[2] : -b->h[2]) * b->A[2][k];
        double depth = d - mb_dot3(n, v);
        if (depth < 0 || !mb_geom_in_triangle(v, t, n, B->tol)) continue;
        double pos[3]; for (int k = 0; k < 3; k++) pos[k] = v[k] + 0.5 * depth * n[k];
        keep(B, pos, n, depth, 1, ti);
    }
    for (int i = 0; i < 3; i++) {                             /* the triangle's corners in the box */
        if (inside_box(b, t[i], 1e-12)) {
            double depth = mb_dot3(n, t[i]) - bottom, pos[3];
            for (int k = 0; k < 3; k++) pos[k] = t[i][k] - 0.5 * depth * n[k];
            keep(B, pos, n, depth, 1, ti);
        }
        /* where the edge t[i] -> t[i+1] enters and leaves the box (slab clipping) */
        const double *p0 = t[i], *p1 = t[(i + 1) % 3];
        double e[3]; mb_sub3(p1, p0, e);
        double tin = 0, tout = 1; int ok = 1;
        for (int k = 0; k < 3 && ok; k++) {
            double o = mb_dot3(b->A[k], p0) - mb_dot3(b->A[k], b->p), de = mb_dot3(b->A[k], e);
            if (fabs(de) < EPS) { if (fabs(o) > b->h[k]) ok = 0; continue; }
            double t0 = (-b->h[k] - o) / de, t1 = (b->h[k] - o) / de;
            if (t0 > t1) { double tmp = t0; t0 = t1; t1 = tmp; }
            if (t0 > tin) tin = t0;
            if (t1 < tout) tout = t1;
            if (tin > tout) ok = 0;
        }
        if (!ok) continue;
        double ends[2] = {tin, tout};
        for (int s = 0; s < 2; s++) {
            if (ends[s] <= 0 || ends[s] >= 1) continue;          /* a corner: done above */
            double x[3], pos[3]; for (int k = 0; k < 3; k++) x[k] = p0[k] + ends[s] * e[k];
            double depth = mb_dot3(n, x) - bottom;
            for (int k = 0; k < 3; k++) pos[k] = x[k] - 0.5 * depth * n[k];
            keep(B, pos, n, depth, 1, ti);
        }
    }
}

/* ---- cylinder ---------------------------------------------------------------------------------- */
/* As box_triangle, along the face normal: the rim points cylinder_plane (collide.c) takes against
 * the triangle's plane (the lowest points of both caps, and a quarter turn either side) where they
 * are below the triangle, and the triangle's corners inside the cylinder. */
static void cylinder_triangle(const mb_geom_pose *g, const double t[3][3], const double *n, int ti, Buffer *B)
{
    double R = g->size[0], hl = 0.5 * g->size[1], ax[3] = {g->R[2], g->R[5], g->R[8]}, u[3], v[3];
    double d = mb_dot3(n, t[0]), c = mb_dot3(n, g->p), a = mb_dot3(n, ax);
    if (c < d) return;                                        /* centre behind the triangle */
    double s2 = 1 - a * a, bottom = c - hl * fabs(a) - R * sqrt(s2 > 0 ? s2 : 0);
    if (bottom > d) return;
    for (int k = 0; k < 3; k++) u[k] = -(n[k] - a * ax[k]);  /* down the plane, across the axis */
    if (!mb_normalize3(u)) { double w[3]; plane_space(ax, u, w); }
    mb_cross3(ax, u, v);
    for (int cap = -1; cap <= 1; cap += 2)
        for (int q = 0; q < 4; q++) {
            double cs = q == 0 ? 1 : (q == 2 ? -1 : 0), sn = q == 1 ? 1 : (q == 3 ? -1 : 0), x[3];
            for (int k = 0; k < 3; k++) x[k] = g->p[k] + cap * hl * ax[k] + R * (cs * u[k] + sn * v[k]);
            double depth = d - mb_dot3(n, x);
            if (depth < 0 || !mb_geom_in_triangle(x, t, n, B->tol)) continue;
            double pos[3]; for (int k = 0; k < 3; k++) pos[k] = x[k] + 0.5 * depth * n[k];
            keep(B, pos, n, depth, 1, ti);
        }
    for (int i = 0; i < 3; i++) {
        double r[3]; mb_sub3(t[i], g->p, r);
        double z = mb_dot3(r, ax), rho2 = mb_dot3(r, r) - z * z;
        if (fabs(z) > hl || rho2 > R * R) continue;
        double depth = mb_dot3(n, t[i]) - bottom, pos[3];
        for (int k = 0; k < 3; k++) pos[k] = t[i][k] - 0.5 * depth * n[k];
        keep(B, pos, n, depth, 1, ti);
    }
}

/* ---- the walk over the hierarchy ---------------------------------------------------------------- */
typedef void (*TriVisit)(const mb_trimesh *m, int t, void *ctx);

static void query(const mb_trimesh *m, const double *lo, const double *hi, TriVisit visit, void *ctx)
{
    if (m->nt == 0) return;
    int stack[128], sp = 0;
    stack[sp++] = 0;
    while (sp) {
        const mb_bvh_node *nd = m->nodes + stack[--sp];
        if (nd->lo[0] > hi[0] || nd->hi[0] < lo[0] || nd->lo[1] > hi[1] || nd->hi[1] < lo[1] ||
            nd->lo[2] > hi[2] || nd->hi[2] < lo[2]) continue;
        if (nd->count) {
            for (int i = 0; i < nd->count; i++) {
                const double *n = m->normal + 3 * (nd->left + i);
                if (n[0] != 0 || n[1] != 0 || n[2] != 0) visit(m, nd->left + i, ctx);   /* degenerate: skip */
            }
            continue;
        }
        if (sp + 2 > 128) continue;                           /* deeper than any median split makes */
        stack[sp++] = (int)(nd - m->nodes) + 1; stack[sp++] = nd->left;
    }
}

typedef struct { const mb_geom_pose *g; Buffer *B; BoxF box; } Ctx;

static void visit_sphere(const mb_trimesh *m, int t, void *ctx)
{
    Ctx *x = ctx; double T[3][3]; corners(m, t, T);
    sphere_triangle(x->g->p, x->g->size[0], T, m->normal + 3 * t, t, x->B);
}
static void visit_capsule(const mb_trimesh *m, int t, void *ctx)
{   /* the end spheres, and the segment's point nearest the triangle when it lies deeper */
    Ctx *x = ctx; double T[3][3]; corners(m, t, T);
    const double *n = m->normal + 3 * t;
    const mb_geom_pose *g = x->g;
    double hl = 0.5 * g->size[1], e0[3], e1[3], ax[3] = {g->R[2], g->R[5], g->R[8]};
    for (int k = 0; k < 3; k++) { e0[k] = g->p[k] - hl * ax[k]; e1[k] = g->p[k] + hl * ax[k]; }
    sphere_triangle(e0, g->size[0], T, n, t, x->B);
    sphere_triangle(e1, g->size[0], T, n, t, x->B);
    /* nearest point of the segment to the triangle: a crossing of the plane inside it, or the
     * nearest of the segment against the three edges */
    double best = INFINITY, at[3];
    double s0 = mb_dot3(n, e0) - mb_dot3(n, T[0]), s1 = mb_dot3(n, e1) - mb_dot3(n, T[0]);
    if ((s0 < 0) != (s1 < 0)) {
        double u = s0 / (s0 - s1), x0[3]; for (int k = 0; k < 3; k++) x0[k] = e0[k] + u * (e1[k] - e0[k]);
        if (mb_geom_in_triangle(x0, T, n, 0.0)) { best = 0; mb_copy3(x0, at); }
    }
    for (int i = 0; i < 3 && best > 0; i++) {
        double c1[3], c2[3], d[3];
        mb_geom_closest_segments(e0, e1, T[i], T[(i + 1) % 3], c1, c2);
        mb_sub3(c1, c2, d);
        double dd = mb_dot3(d, d);
        if (dd < best) { best = dd; mb_copy3(c1, at); }
    }
    double end_gap = fmin(s0, s1);                            /* the ends' heights over the plane */
    if (isfinite(best) && sqrt(best) < end_gap - 1e-12) sphere_triangle(at, g->size[0], T, n, t, x->B);
}
static void visit_box(const mb_trimesh *m, int t, void *ctx)
{
    Ctx *x = ctx; double T[3][3]; corners(m, t, T);
    box_triangle(&x->box, T, m->normal + 3 * t, t, x->B);
}
static void visit_cylinder(const mb_trimesh *m, int t, void *ctx)
{
    Ctx *x = ctx; double T[3][3]; corners(m, t, T);
    cylinder_triangle(x->g, T, m->normal + 3 * t, t, x->B);
}
static void visit_convex(const mb_trimesh *m, int t, void *ctx)
{
    Ctx *x = ctx; double T[3][3], *n = m->normal + 3 * t; corners(m, t, T);
    mb_contact_point c[4];
    int k = mb_convex_triangle(x->g, (const double (*)[3])T, n, c, 0, 4);
    if (x->B->n + k > MAXC) x->B->n = mb_mesh_outline(x->g, x->B->c, x->B->n);   /* full: thin it */
    for (int i = 0; i < k; i++) keep(x->B, c[i].pos, c[i].normal, c[i].depth, 1, t);
}

/* The pair colliders of the table (collide.c): the shape g against the mesh, normals from the
 * mesh into g.  One walk of the hierarchy with the shape's visit, then the buffer handed out:
 * spheres and capsules drop edge contacts a face covers (flush's sphere_like), convex hulls cut
 * theirs to one manifold (mb_mesh_manifold). */
enum { FLUSH_SOLID = 0, FLUSH_ROUND = 1, FLUSH_MANIFOLD = 2 };

static int walk(const mb_geom_pose *g, const mb_geom_pose *mg, mb_contact_point *out, int max, TriVisit visit, int how)
{
    const mb_trimesh *m = mg->mesh;
    if (!m || max <= 0) return 0;
    Buffer *B = malloc(sizeof *B);
    if (!B) return 0;
    B->n = 0;
    Ctx x = {g, B, {{{0}}}};
    double size = g->hi[0] - g->lo[0];
    for (int k = 1; k < 3; k++) if (g->hi[k] - g->lo[k] > size) size = g->hi[k] - g->lo[k];
    B->tol = 1e-7 * (size > 1e-3 ? size : 1e-3);
    if (g->type == G_BOX) box_frame(g, &x.box);
    query(m, g->lo, g->hi, visit, &x);
    int n;
    if (how == FLUSH_MANIFOLD) { n = mb_mesh_manifold(g, B->c, B->n, max); memcpy(out, B->c, sizeof(mb_contact_point) * (size_t)n); }
    else n = flush(B, m, out, max, how == FLUSH_ROUND);
    free(B);
    return n;
}

int mb_trimesh_sphere(const mb_geom_pose *g, const mb_geom_pose *mg, mb_contact_point *out, int max) { return walk(g, mg, out, max, visit_sphere, FLUSH_ROUND); }
int mb_trimesh_capsule(const mb_geom_pose *g, const mb_geom_pose *mg, mb_contact_point *out, int max) { return walk(g, mg, out, max, visit_capsule, FLUSH_ROUND); }
int mb_trimesh_box(const mb_geom_pose *g, const mb_geom_pose *mg, mb_contact_point *out, int max) { return walk(g, mg, out, max, visit_box, FLUSH_SOLID); }
int mb_trimesh_cylinder(const mb_geom_pose *g, const mb_geom_pose *mg, mb_contact_point *out, int max) { return walk(g, mg, out, max, visit_cylinder, FLUSH_SOLID); }
int mb_trimesh_convex(const mb_geom_pose *g, const mb_geom_pose *mg, mb_contact_point *out, int max)
{   /* each triangle's points (convex.c's mb_convex_triangle), then one manifold */
    return walk(g, mg, out, max, visit_convex, FLUSH_MANIFOLD);
}

/* ---- rays -------------------------------------------------------------------------------------- */
int mb_trimesh_ray(const mb_trimesh *m, const double *o, const double *d, double tmax, double *t_out, double *normal)
{
    if (m->nt == 0) return 0;
    double inv[3] = {1.0 / d[0], 1.0 / d[1], 1.0 / d[2]}, best = tmax;
    int hit = -1, stack[128], sp = 0;
    stack[sp++] = 0;
    while (sp) {
        const mb_bvh_node *nd = m->nodes + stack[--sp];
        if (!mb_geom_ray_box(nd->lo, nd->hi, o, inv, best)) continue;
        if (!nd->count) { if (sp + 2 <= 128) { stack[sp++] = (int)(nd - m->nodes) + 1; stack[sp++] = nd->left; } continue; }
        for (int i = 0; i < nd->count; i++) {                 /* Moller-Trumbore, both sides */
            int t = nd->left + i;
            double T[3][3], e1[3], e2[3], p[3], s[3], q[3];
            corners(m, t, T);
            mb_sub3(T[1], T[0], e1); mb_sub3(T[2], T[0], e2); mb_cross3(d, e2, p);
            double det = mb_dot3(e1, p);
            if (fabs(det) < 1e-300) continue;                   /* parallel to the triangle: no crossing */
            double id = 1.0 / det;
            mb_sub3(o, T[0], s);
            double u = mb_dot3(s, p) * id;
            if (u < 0 || u > 1) continue;
            mb_cross3(s, e1, q);
            double v = mb_dot3(d, q) * id;
            if (v < 0 || u + v > 1) continue;
            double tt = mb_dot3(e2, q) * id;
            if (tt < 0 || tt > best) continue;
            best = tt; hit = t;
        }
    }
    if (hit < 0) return 0;
    *t_out = best;
    const double *n = m->normal + 3 * hit;
    double s = mb_dot3(n, d) > 0 ? -1.0 : 1.0;
    mb_scale3(n, s, normal);
    return 1;
}
