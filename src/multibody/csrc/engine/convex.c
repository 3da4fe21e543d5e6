/* Convex polyhedra (hulls) against planes, spheres, capsules, boxes, each other and the triangles
 * of static meshes (trimesh.c calls mb_convex_triangle, at the end: terrain contacts along the face normal).
 *
 * Method: the separating-axis test between polytopes with Gauss-map pruning (Gregorius, "The
 * Separating Axis Test between Convex Polyhedra", GDC 2013).  The candidate axes are the face
 * normals of both hulls and the cross products of those edge pairs whose arcs on the Gauss map
 * cross (exactly the pairs that make a face of the Minkowski difference), so the largest
 * separation over the candidates is the exact penetration depth, not an estimate.  Then:
 *  - a face axis: the other hull's most anti-parallel face (the incident face) is clipped by the
 *    side planes of the reference face (Sutherland-Hodgman), the points below the reference face
 *    are kept and reduced to at most 4 (deepest, farthest from it, largest triangle, largest gain
 *    of area), so a hull resting on a face gets the corners a box gets;
 *  - an edge axis: one point midway between the closest points of the two edges.
 * A face is kept over an edge unless the edge is clearly shallower (5 %), as box_box does, so a
 * resting manifold does not flicker between the two.
 *
 * Spheres and capsules are a point or a segment with a radius.  When the segment cuts the hull,
 * the axes are the face normals and the hull edges whose Gauss arc crosses the segment's great
 * circle; otherwise the closest points are exact (segment ends against faces, segment against
 * edges).  A segment facing a face is clipped by that face's side planes: two points, so a
 * capsule lies still on a hull.  Boxes go through the hull path as 8 vertices and 6 faces.
 *
 * Why not coal or libccd: the package must build with gcc and pip alone (no C++ build
 * dependency); tests/test_engine_convex.py checks depth and normal against coal's GJK/EPA on
 * thousands of random pairs and python -m multibody.bench.engine times both.
 *
 * mb_hull data: shapes.Convex.packed() writes one float64 block per hull (vertices and planes are
 * read in place, indices are checked and converted to int once, in mb_hulls_load).
 */
#include <stdio.h>
#include <stdlib.h>
#include "engine/engine.h"

/* An edge axis wins only when it is this much shallower than the best face axis (box_box's and
 * ODE's dBoxBox fudge): with the exact minimum, a hull rocking near a face flickers between four
 * points and one and a pile never settles (measured); the price is a depth up to 1/0.95 of the
 * minimum and another normal in near ties (tests/test_engine_convex.py counts them). */
#define EDGE_BIAS 0.95
#define MAX_POLY (2 * HULL_MAX_VERTS + 8)   /* a convex polygon clipped by a convex polygon */

/* ---- loading the hulls from the Python block -------------------------------------------------- */
static int as_index(double x, int n, int *out)
{
    if (!(x >= 0 && x < n) || x != floor(x)) return 0;
    *out = (int)x;
    return 1;
}

static int hull_block(const double *d, int64_t left, int64_t *size)
{   /* size of the block at d, or 0 when the header is not a hull's (a height field's: hfield.c) */
    if (left >= 1 && d[0] < 0) return mb_hfield_block(d, left, size);
    if (left < 4) return 0;
    double nv = d[0], nf = d[1], ne = d[2], ni = d[3];
    if (!(nv >= 4 && nv <= HULL_MAX_VERTS && nf >= 4 && nf <= 2 * HULL_MAX_VERTS && ne >= 6 &&
          ne <= 3 * HULL_MAX_VERTS && ni == 2 * ne) || nv != floor(nv) || nf != floor(nf) || ne != floor(ne)) return 0;
    *size = 4 + 3 * (int64_t)nv + 4 * (int64_t)nf + (int64_t)nf + 1 + (int64_t)ni + 4 * (int64_t)ne;
    return *size <= left;
}

static const char *hull_parse(const double *d, mb_hull *h)
{
    h->nv = (int)d[0]; h->nf = (int)d[1]; h->ne = (int)d[2];
    int ni = (int)d[3];
    h->v = d + 4; h->plane = h->v + 3 * h->nv;
    const double *fs = h->plane + 4 * h->nf, *fi = fs + h->nf + 1, *ed = fi + ni;
    int *own = malloc(sizeof(int) * ((size_t)h->nf + 1 + (size_t)ni + 4 * (size_t)h->ne));
    if (!own) return "out of memory";
    int *fidx = own + h->nf + 1, *edge = fidx + ni;
    h->own = own; h->fstart = own; h->fidx = fidx; h->edge = edge;
    for (int i = 0; i < 3 * h->nv; i++) if (!isfinite(h->v[i])) return "a vertex is not finite";
    for (int f = 0; f < h->nf; f++) {
        const double *p = h->plane + 4 * f;
        if (!isfinite(p[3]) || !(fabs(mb_dot3(p, p) - 1) < 1e-6)) return "a face plane is not a unit normal and offset";
    }
    for (int f = 0; f <= h->nf; f++) if (!as_index(fs[f], ni + 1, own + f)) return "a face start is out of range";
    if (own[0] != 0 || own[h->nf] != ni) return "the face starts do not cover the face indices";
    for (int f = 0; f < h->nf; f++) if (own[f + 1] - own[f] < 3) return "a face has fewer than 3 vertices";
    for (int i = 0; i < ni; i++) if (!as_index(fi[i], h->nv, fidx + i)) return "a face vertex index is out of range";
    for (int e = 0; e < h->ne; e++) {
        int *E = edge + 4 * e;
        if (!as_index(ed[4 * e], h->nv, E) || !as_index(ed[4 * e + 1], h->nv, E + 1) ||
            !as_index(ed[4 * e + 2], h->nf, E + 2) || !as_index(ed[4 * e + 3], h->nf, E + 3) || E[0] == E[1] || E[2] == E[3])
            return "an edge has an index out of range";
    }
    h->centre[0] = h->centre[1] = h->centre[2] = 0;
    for (int i = 0; i < h->nv; i++) mb_add3(h->centre, h->v + 3 * i, h->centre);
    mb_scale3(h->centre, 1.0 / h->nv, h->centre);
    for (int k = 0; k < 3; k++) {
        double lo = h->v[k], hi = h->v[k];
        for (int i = 1; i < h->nv; i++) { const double x = h->v[3 * i + k]; lo = x < lo ? x : lo; hi = x > hi ? x : hi; }
        h->box_mid[k] = 0.5 * (lo + hi), h->box_half[k] = 0.5 * (hi - lo);
    }
    h->cols = malloc(sizeof(double) * 3 * (size_t)h->nv);
    if (!h->cols) return "out of memory";
    for (int i = 0; i < h->nv; i++) for (int k = 0; k < 3; k++) h->cols[(size_t)k * h->nv + i] = h->v[3 * i + k];
    return NULL;
}

int mb_hulls_load(mb_world *W, const double *data, int64_t n, char *msg, size_t len)
{
    W->hulls = NULL; W->nhulls = 0;
    int count = 0;
    for (int64_t o = 0, size = 0; o < n; o += size, count++)
        if (!hull_block(data + o, n - o, &size)) { snprintf(msg, len, "hull %d: the block at %lld is not a hull", count, (long long)o); return 1; }
    W->hulls = calloc((size_t)count + 1, sizeof(mb_hull));
    if (!W->hulls) { snprintf(msg, len, "out of memory"); return -1; }
    int64_t o = 0, size = 0;
    for (int k = 0; k < count; k++, o += size) {
        hull_block(data + o, n - o, &size);
        const char *why = data[o] < 0 ? mb_hfield_parse(data + o, W->hulls + k) : hull_parse(data + o, W->hulls + k);
        W->nhulls = k + 1;
        if (why) { snprintf(msg, len, "hull %d: %s", k, why); return 1; }
    }
    return 0;
}

void mb_hulls_free(mb_world *W)
{
    for (int k = 0; k < W->nhulls; k++) { free(W->hulls[k].own); free(W->hulls[k].cols); }
    free(W->hulls);
    W->hulls = NULL; W->nhulls = 0;
}

/* ---- a box as a hull (the layout shapes.Convex builds from a box's 8 corners) ----------------- */
static const int BOX_FSTART[7] = {0, 4, 8, 12, 16, 20, 24};
static const int BOX_FIDX[24] = {0, 4, 6, 2, 0, 2, 3, 1, 2, 6, 7, 3, 0, 1, 5, 4, 4, 5, 7, 6, 1, 3, 7, 5};
static const int BOX_EDGE[48] = {0, 4, 0, 3, 4, 6, 0, 4, 0, 2, 1, 0, 2, 3, 1, 2, 2, 6, 2, 0, 6, 7, 2, 4,
                                 0, 1, 3, 1, 1, 5, 3, 5, 4, 5, 4, 3, 5, 7, 4, 5, 1, 3, 5, 1, 3, 7, 5, 2};
static const double BOX_N[6][3] = {{0, 0, -1}, {0, -1, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

static void box_hull(const double *size, double *v, double *plane, mb_hull *h)
{   /* corner i = (+-x by bit 1, +-y by bit 2, +-z by bit 0) */
    double e[3] = {0.5 * size[0], 0.5 * size[1], 0.5 * size[2]};
    for (int i = 0; i < 8; i++) { v[3 * i] = i & 2 ? e[0] : -e[0]; v[3 * i + 1] = i & 4 ? e[1] : -e[1]; v[3 * i + 2] = i & 1 ? e[2] : -e[2]; }
    for (int f = 0; f < 6; f++) {
        mb_copy3(BOX_N[f], plane + 4 * f);
        plane[4 * f + 3] = fabs(BOX_N[f][0]) * e[0] + fabs(BOX_N[f][1]) * e[1] + fabs(BOX_N[f][2]) * e[2];
    }
    h->nv = 8; h->nf = 6; h->ne = 12; h->v = v; h->plane = plane;
    h->fstart = BOX_FSTART; h->fidx = BOX_FIDX; h->edge = BOX_EDGE; h->own = NULL; h->cols = NULL;
    h->centre[0] = h->centre[1] = h->centre[2] = 0;
    for (int k = 0; k < 3; k++) h->box_mid[k] = 0, h->box_half[k] = e[k];
}

/* h moved by x -> R x + p into the buffers v, plane */
static void move_hull(const mb_hull *src, const double *R, const double *p, double *v, double *plane, mb_hull *h)
{
    *h = *src;
    for (int i = 0; i < src->nv; i++) { mb_mv3(R, src->v + 3 * i, v + 3 * i); mb_add3(v + 3 * i, p, v + 3 * i); }
    for (int f = 0; f < src->nf; f++) {
        mb_mv3(R, src->plane + 4 * f, plane + 4 * f);
        plane[4 * f + 3] = src->plane[4 * f + 3] + mb_dot3(plane + 4 * f, p);
    }
    mb_mv3(R, src->centre, h->centre); mb_add3(h->centre, p, h->centre);
    h->v = v; h->plane = plane; h->own = NULL; h->cols = NULL;   /* (src's columns are not these vertices) */
}

/* ---- separating axes -------------------------------------------------------------------------- */
/* largest separation of b from the face planes of a (> 0: separated by that face) */
static double face_query(const mb_hull *a, const mb_hull *b, int *best)
{
    double sep = -INFINITY;
    *best = 0;
    for (int f = 0; f < a->nf; f++) {
        const double *n = a->plane + 4 * f;
        double m = INFINITY;
        for (int i = 0; i < b->nv; i++) { double t = mb_dot3(n, b->v + 3 * i); if (t < m) m = t; }
        double s = m - n[3];
        if (s > sep) { sep = s; *best = f; if (s > 0) return s; }
    }
    return sep;
}

/* Edge pairs whose Gauss-map arcs cross: a-b (the normals around an edge of A) and c-d (around an
 * edge of B, negated, as the Minkowski difference A - B has them).  The arcs cross when c and d
 * lie on either side of a-b's plane, a and b on either side of c-d's, and on one hemisphere. */
static double edge_query(const mb_hull *a, const mb_hull *b, int *ea, int *eb, double *axis)
{
    /* A's arc normals b x a and face normals a, b as rows (x, y, z), so that the three tests run
     * over all of A's edges as one vectorizable loop per edge of B; the few pairs that pass go on */
    enum { NE = 3 * HULL_MAX_VERTS };
    double ax[NE], ay[NE], az[NE], nax[NE], nay[NE], naz[NE], nbx[NE], nby[NE], nbz[NE];  /* 55 kB */
    int pass[NE];
    for (int i = 0; i < a->ne; i++) {
        const int *E = a->edge + 4 * i;
        const double *na = a->plane + 4 * E[2], *nb = a->plane + 4 * E[3];
        double t[3]; mb_cross3(nb, na, t);
        ax[i] = t[0]; ay[i] = t[1]; az[i] = t[2];
        nax[i] = na[0]; nay[i] = na[1]; naz[i] = na[2]; nbx[i] = nb[0]; nby[i] = nb[1]; nbz[i] = nb[2];
    }
    double sep = -INFINITY;
    *ea = *eb = -1;
    for (int j = 0; j < b->ne; j++) {
        const int *F = b->edge + 4 * j;
        const double *P2 = b->v + 3 * F[0];
        double c[3], d[3], g[3], u2[3];
        mb_scale3(b->plane + 4 * F[2], -1, c); mb_scale3(b->plane + 4 * F[3], -1, d);
        mb_cross3(d, c, g); mb_sub3(b->v + 3 * F[1], P2, u2);
        for (int i = 0; i < a->ne; i++) {
            double cba = c[0] * ax[i] + c[1] * ay[i] + c[2] * az[i], dba = d[0] * ax[i] + d[1] * ay[i] + d[2] * az[i];
            double adc = nax[i] * g[0] + nay[i] * g[1] + naz[i] * g[2], bdc = nbx[i] * g[0] + nby[i] * g[1] + nbz[i] * g[2];
            pass[i] = (cba * dba < 0) & (adc * bdc < 0) & (cba * bdc > 0);
        }
        double l2 = mb_norm3(u2);
        for (int i = 0; i < a->ne; i++) {
            if (!pass[i]) continue;
            const int *E = a->edge + 4 * i;
            const double *P1 = a->v + 3 * E[0];
            double L[3], r[3], w[3];
            mb_sub3(a->v + 3 * E[1], P1, w);
            mb_cross3(w, u2, L);
            double len = mb_norm3(L);
            if (len < 1e-7 * mb_norm3(w) * l2) continue;     /* parallel edges: the faces cover them */
            mb_scale3(L, 1.0 / len, L);
            mb_sub3(P1, a->centre, r);
            if (mb_dot3(L, r) < 0) mb_scale3(L, -1, L);
            mb_sub3(P2, P1, r);
            double s = mb_dot3(L, r);
            if (s > sep) { sep = s; *ea = i; *eb = j; mb_copy3(L, axis); if (s > 0) return s; }
        }
    }
    return sep;
}

/* ---- manifolds -------------------------------------------------------------------------------- */
static double tri_area(const double *p, const double *q, const double *r, const double *n)
{   /* twice the signed area of p q r seen along n */
    double u[3], v[3], w[3]; mb_sub3(q, p, u); mb_sub3(r, p, v); mb_cross3(u, v, w);
    return mb_dot3(w, n);
}

/* At most 4 of the m points (pos, depth): the deepest, the farthest from it, the one making the
 * largest triangle with those, and the one adding the most area to that triangle. */
static int reduce4(double (*pos)[3], const double *depth, int m, const double *n, int *keep)
{
    if (m <= 4) { for (int i = 0; i < m; i++) keep[i] = i; return m; }
    int i0 = 0, i1 = -1, i2 = -1, i3 = -1;
    for (int i = 1; i < m; i++) if (depth[i] > depth[i0]) i0 = i;
    double best = -1;
    for (int i = 0; i < m; i++) { double d[3]; mb_sub3(pos[i], pos[i0], d); double t = mb_dot3(d, d); if (t > best) { best = t; i1 = i; } }
    best = -1;
    double sgn = 1;
    for (int i = 0; i < m; i++) {
        double t = tri_area(pos[i0], pos[i1], pos[i], n);
        if (fabs(t) > best) { best = fabs(t); i2 = i; sgn = t >= 0 ? 1 : -1; }
    }
    best = 0;
    for (int i = 0; i < m; i++) {   /* area a point outside the triangle adds across its nearest edge */
        double g = -sgn * tri_area(pos[i0], pos[i1], pos[i], n), h = -sgn * tri_area(pos[i1], pos[i2], pos[i], n),
               k = -sgn * tri_area(pos[i2], pos[i0], pos[i], n);
        double gain = g > h ? (g > k ? g : k) : (h > k ? h : k);
        if (gain > best) { best = gain; i3 = i; }
    }
    keep[0] = i0; keep[1] = i1; keep[2] = i2;
    if (i3 < 0) return 3;
    keep[3] = i3;
    return 4;
}

/* ids: each point's vertex of the hull (its feature: mb_contact_point.feature), or NULL (none: −1) */
static int emit_points(double (*pos)[3], const double *depth, const int *ids, int m, const double *normal,
                       mb_contact_point *out, int max)
{
    int keep[4], k = reduce4(pos, depth, m, normal, keep), n = 0;
    for (int i = 0; i < k && n < max; i++, n++) {
        mb_copy3(pos[keep[i]], out[n].pos); mb_copy3(normal, out[n].normal); out[n].depth = depth[keep[i]];
        out[n].feature = ids ? ids[keep[i]] : -1;
    }
    return n;
}

/* reference face f of ref against the incident face of inc; normal of the contacts from b into a */
static int face_contact(const mb_hull *ref, int f, const mb_hull *inc, int ref_is_a, mb_contact_point *out, int max)
{
    const double *n = ref->plane + 4 * f;
    /* incident face: the most anti-parallel among the faces around inc's deepest vertex (the
     * most anti-parallel of all may lie elsewhere on a hull and miss that vertex) */
    int deep = 0, fi = 0; double low = INFINITY, most = INFINITY;
    for (int i = 0; i < inc->nv; i++) { double t = mb_dot3(n, inc->v + 3 * i); if (t < low) { low = t; deep = i; } }
    for (int i = 0; i < inc->nf; i++) {
        double t = mb_dot3(inc->plane + 4 * i, n);
        if (t >= most) continue;
        for (int k = inc->fstart[i]; k < inc->fstart[i + 1]; k++) if (inc->fidx[k] == deep) { most = t; fi = i; break; }
    }
    double bufa[MAX_POLY][3], bufb[MAX_POLY][3];                  /* 25 kB of stack */
    double (*poly)[3] = bufa, (*tmp)[3] = bufb;
    int m = 0;
    for (int k = inc->fstart[fi]; k < inc->fstart[fi + 1]; k++) mb_copy3(inc->v + 3 * inc->fidx[k], poly[m++]);
    int s0 = ref->fstart[f], s1 = ref->fstart[f + 1];
    for (int k = s0; k < s1 && m > 0; k++) {
        const double *P = ref->v + 3 * ref->fidx[k], *Q = ref->v + 3 * ref->fidx[k + 1 < s1 ? k + 1 : s0];
        double e[3], side[3]; mb_sub3(Q, P, e); mb_cross3(e, n, side);
        m = mb_geom_clip(poly, m, side, mb_dot3(side, P), tmp, MAX_POLY);
        double (*t)[3] = poly; poly = tmp; tmp = t;
    }
    double normal[3], depth[MAX_POLY];
    if (ref_is_a) mb_scale3(n, -1, normal); else mb_copy3(n, normal);
    int kept = 0;
    for (int i = 0; i < m; i++) {
        double d = n[3] - mb_dot3(n, poly[i]);
        if (d < 0) continue;
        for (int k = 0; k < 3; k++) tmp[kept][k] = poly[i][k] + 0.5 * d * n[k];
        depth[kept++] = d;
    }
    if (!kept) {     /* rounding clipped everything: the incident hull's deepest vertex */
        double dn[3], x[3]; mb_scale3(n, -1, dn); mb_geom_hull_support(inc, dn, x);
        double d = n[3] - mb_dot3(n, x);
        if (d < 0) return 0;
        for (int k = 0; k < 3; k++) tmp[0][k] = x[k] + 0.5 * d * n[k];
        depth[0] = d; kept = 1;
    }
    return emit_points(tmp, depth, NULL, kept, normal, out, max);
}

/* two hulls in one frame; contact normals from b into a */
static int hull_hull(const mb_hull *a, const mb_hull *b, mb_contact_point *out, int max)
{
    int fa, fb, ea, eb;
    double axis[3];
    double sa = face_query(a, b, &fa);
    if (sa > 0) return 0;
    double sb = face_query(b, a, &fb);
    if (sb > 0) return 0;
    double se = edge_query(a, b, &ea, &eb, axis);
    if (se > 0) return 0;
    double sf = sa > sb ? sa : sb;
    if (ea >= 0 && se > EDGE_BIAS * sf + 1e-9) {
        const int *E = a->edge + 4 * ea, *F = b->edge + 4 * eb;
        double c1[3], c2[3];
        mb_geom_closest_segments(a->v + 3 * E[0], a->v + 3 * E[1], b->v + 3 * F[0], b->v + 3 * F[1], c1, c2);
        mb_contact_point *c = out;
        for (int k = 0; k < 3; k++) { c->pos[k] = 0.5 * (c1[k] + c2[k]); c->normal[k] = -axis[k]; }
        c->depth = -se;
        return 1;
    }
    if (sb > sa + 1e-9 * fabs(sa)) return face_contact(b, fb, a, 0, out, max);
    return face_contact(a, fa, b, 1, out, max);
}

/* ---- points and segments with a radius (spheres, capsules) ------------------------------------ */
static int inside_face(const mb_hull *h, int f, const double *x)
{
    const double *n = h->plane + 4 * f;
    int s0 = h->fstart[f], s1 = h->fstart[f + 1];
    for (int k = s0; k < s1; k++) {
        const double *P = h->v + 3 * h->fidx[k], *Q = h->v + 3 * h->fidx[k + 1 < s1 ? k + 1 : s0];
        double e[3], side[3], r[3]; mb_sub3(Q, P, e); mb_cross3(e, n, side); mb_sub3(x, P, r);
        if (mb_dot3(side, r) > 1e-12 * mb_dot3(e, e)) return 0;
    }
    return 1;
}

/* the segment e0-e1 (radius r) facing face f: the segment clipped by the face's side planes */
static int face_segment(const mb_hull *h, int f, const double *e0, const double *e1, double r, mb_contact_point *out, int max)
{
    const double *n = h->plane + 4 * f;
    double t0 = 0, t1 = 1, u[3]; mb_sub3(e1, e0, u);
    int s0 = h->fstart[f], s1 = h->fstart[f + 1];
    for (int k = s0; k < s1 && t0 <= t1; k++) {
        const double *P = h->v + 3 * h->fidx[k], *Q = h->v + 3 * h->fidx[k + 1 < s1 ? k + 1 : s0];
        double e[3], side[3], rr[3]; mb_sub3(Q, P, e); mb_cross3(e, n, side); mb_sub3(e0, P, rr);
        double a = mb_dot3(side, rr), b = mb_dot3(side, u);           /* side . (x(t) - P) = a + b t <= 0 */
        if (fabs(b) < 1e-300) { if (a > 0) return 0; continue; }
        double t = -a / b;
        if (b > 0) { if (t < t1) t1 = t; } else { if (t > t0) t0 = t; }
    }
    if (t0 > t1) return 0;
    int npts = mb_dot3(u, u) > 0 && t1 > t0 ? 2 : 1, m = 0;
    for (int i = 0; i < npts && m < max; i++) {
        double t = i ? t1 : t0, x[3];
        for (int k = 0; k < 3; k++) x[k] = e0[k] + t * u[k];
        double s = mb_dot3(n, x) - n[3], depth = r - s;
        if (depth < 0) continue;
        for (int k = 0; k < 3; k++) { out[m].pos[k] = x[k] - 0.5 * (s + r) * n[k]; out[m].normal[k] = n[k]; }
        out[m].depth = depth; m++;
    }
    return m;
}

/* hull against the segment e0-e1 with radius r (e0 = e1: a sphere), all in the hull's frame;
 * contact normals point out of the hull */
static int hull_segment(const mb_hull *h, const double *e0, const double *e1, double r, mb_contact_point *out, int max)
{
    double u[3]; mb_sub3(e1, e0, u);
    double t0 = 0, t1 = 1;
    int cuts = 1;
    for (int f = 0; f < h->nf && cuts; f++) {                 /* does the segment cut the hull? */
        const double *n = h->plane + 4 * f;
        double a = mb_dot3(n, e0) - n[3], b = mb_dot3(n, e1) - n[3];
        if (a > 0 && b > 0) cuts = 0;
        else if (a > 0) { double t = a / (a - b); if (t > t0) t0 = t; }
        else if (b > 0) { double t = a / (a - b); if (t < t1) t1 = t; }
        if (t0 > t1) cuts = 0;
    }
    if (cuts) {                                                /* separating axes of the core */
        double best = -INFINITY, L[3] = {0, 0, 1}, eb = -INFINITY, EL[3] = {0, 0, 1};
        int bf = 0, be = -1;
        for (int f = 0; f < h->nf; f++) {
            const double *n = h->plane + 4 * f;
            double a = mb_dot3(n, e0) - n[3], b = mb_dot3(n, e1) - n[3], s = a < b ? a : b;
            if (s > best) { best = s; bf = f; }
        }
        double lu = mb_norm3(u);
        for (int e = 0; e < h->ne && lu > 0; e++) {
            const int *E = h->edge + 4 * e;
            const double *na = h->plane + 4 * E[2], *nb = h->plane + 4 * E[3], *P = h->v + 3 * E[0];
            if (mb_dot3(na, u) * mb_dot3(nb, u) >= 0) continue;      /* the arc does not cross u's circle */
            double w[3], rr[3]; mb_sub3(h->v + 3 * E[1], P, w); mb_cross3(w, u, L);
            double len = mb_norm3(L);
            if (len < 1e-7 * lu * mb_norm3(w)) continue;
            mb_scale3(L, 1.0 / len, L);
            mb_sub3(P, h->centre, rr);
            if (mb_dot3(L, rr) < 0) mb_scale3(L, -1, L);
            double s = (mb_dot3(L, e0) < mb_dot3(L, e1) ? mb_dot3(L, e0) : mb_dot3(L, e1)) - mb_dot3(L, P);
            if (s > eb) { eb = s; be = e; mb_copy3(L, EL); }
        }
        if (be >= 0 && eb > EDGE_BIAS * best + 1e-9) {
            const int *E = h->edge + 4 * be;
            double c1[3], c2[3];
            mb_geom_closest_segments(e0, e1, h->v + 3 * E[0], h->v + 3 * E[1], c1, c2);
            double depth = r - eb;
            for (int k = 0; k < 3; k++) { out[0].pos[k] = c1[k] - (r - 0.5 * depth) * EL[k]; out[0].normal[k] = EL[k]; }
            out[0].depth = depth;
            return 1;
        }
        int m = face_segment(h, bf, e0, e1, r, out, max);
        if (m) return m;
        const double *n = h->plane + 4 * bf;                   /* rounding: the deeper end alone */
        const double *x = mb_dot3(n, e0) < mb_dot3(n, e1) ? e0 : e1;
        double s = mb_dot3(n, x) - n[3];
        for (int k = 0; k < 3; k++) { out[0].pos[k] = x[k] - 0.5 * (s + r) * n[k]; out[0].normal[k] = n[k]; }
        out[0].depth = r - s;
        return 1;
    }
    /* the core is outside: exact closest points (segment ends on faces, segment against edges) */
    double best = INFINITY, cs[3] = {0, 0, 0}, ch[3] = {0, 0, 0};
    for (int f = 0; f < h->nf; f++) {
        const double *n = h->plane + 4 * f;
        for (int i = 0; i < 2; i++) {
            const double *x = i ? e1 : e0;
            double s = mb_dot3(n, x) - n[3];
            if (s <= 0 || s * s >= best) continue;
            double foot[3]; for (int k = 0; k < 3; k++) foot[k] = x[k] - s * n[k];
            if (inside_face(h, f, foot)) { best = s * s; mb_copy3(x, cs); mb_copy3(foot, ch); }
        }
    }
    for (int e = 0; e < h->ne; e++) {
        const int *E = h->edge + 4 * e;
        double c1[3], c2[3], d[3];
        mb_geom_closest_segments(e0, e1, h->v + 3 * E[0], h->v + 3 * E[1], c1, c2);
        mb_sub3(c1, c2, d);
        double t = mb_dot3(d, d);
        if (t < best) { best = t; mb_copy3(c1, cs); mb_copy3(c2, ch); }
    }
    double dist = sqrt(best);
    if (!(dist <= r) || dist <= 0) return 0;
    double nrm[3]; mb_sub3(cs, ch, nrm); mb_scale3(nrm, 1.0 / dist, nrm);
    for (int f = 0; f < h->nf; f++)                            /* lying on a face: two points */
        if (mb_dot3(h->plane + 4 * f, nrm) > 1 - 1e-9) { int m = face_segment(h, f, e0, e1, r, out, max); if (m) return m; break; }
    double depth = r - dist;
    for (int k = 0; k < 3; k++) { out[0].pos[k] = cs[k] - (r - 0.5 * depth) * nrm[k]; out[0].normal[k] = nrm[k]; }
    out[0].depth = depth;
    return 1;
}

/* ---- one pair --------------------------------------------------------------------------------- */
static int hull_plane(const mb_hull *h, const double *R, const double *p, const double *pn, double pd, mb_contact_point *out, int max)
{   /* in the hull's frame: n . x = d; points midway between vertex and plane, normal pn */
    double n[3], pos[HULL_MAX_VERTS][3], depth[HULL_MAX_VERTS];
    int vertex[HULL_MAX_VERTS];   /* each point's vertex: its feature, which keeps its state slot as others come and go */
    mb_mtv3(R, pn, n);
    double d = pd - mb_dot3(pn, p);
    int m = 0;
    if (h->cols) {   /* every depth first, from the coordinate columns: a loop the compiler vectorises, the same
                      * products and sums as mb_dot3 (a foot of solo12 on the floor: 256 vertices, 4 beyond) */
        const double *X = h->cols, *Y = X + h->nv, *Z = Y + h->nv;
        for (int i = 0; i < h->nv; i++) depth[i] = d - (n[0] * X[i] + n[1] * Y[i] + n[2] * Z[i]);
    } else
        for (int i = 0; i < h->nv; i++) depth[i] = d - mb_dot3(n, h->v + 3 * i);
    for (int i = 0; i < h->nv; i++) {
        const double dep = depth[i], *x = h->v + 3 * i;
        if (dep < 0) continue;
        for (int k = 0; k < 3; k++) pos[m][k] = x[k] + 0.5 * dep * n[k];
        vertex[m] = i;
        depth[m++] = dep;   /* (m <= i: a slot already read) */
    }
    return m ? emit_points(pos, depth, vertex, m, n, out, max) : 0;
}

/* The pair colliders of the table (collide.c): either of a, b is the hull.  Each works in the
 * hull's frame and hands its contacts back in world coordinates, normals from b into a. */
static int hull_first(const mb_geom_pose **a, const mb_geom_pose **b)
{   /* the hull as a; 1 when that swapped them */
    if ((*a)->type == G_CONVEX) return 0;
    const mb_geom_pose *t = *a; *a = *b; *b = t;
    return 1;
}

static int to_world(const mb_geom_pose *a, mb_contact_point *out, int n, int flip)
{
    for (int i = 0; i < n; i++) {
        double x[3]; mb_mv3(a->R, out[i].pos, x); mb_add3(x, a->p, out[i].pos);
        mb_mv3(a->R, out[i].normal, x);
        if (flip) mb_scale3(x, -1, x);
        mb_copy3(x, out[i].normal);
    }
    return n;
}

int mb_convex_plane(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{
    int flip = hull_first(&a, &b);
    int n = hull_plane(a->hull, a->R, a->p, b->plane, b->plane[3], out, max);
    return to_world(a, out, n, flip);
}

int mb_convex_core(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{   /* b a sphere or capsule: its core (a point or a segment) in the hull's frame */
    int flip = hull_first(&a, &b);
    double e[2][3], d[3];
    for (int i = 0; i < 2; i++) {
        double hl = b->type == G_CAPSULE ? (i ? 0.5 : -0.5) * b->size[1] : 0.0, w[3];
        for (int k = 0; k < 3; k++) w[k] = b->p[k] + hl * b->R[3 * k + 2];
        mb_sub3(w, a->p, d); mb_mtv3(a->R, d, e[i]);
    }
    int n = hull_segment(a->hull, e[0], e[1], b->size[0], out, max);
    return to_world(a, out, n, !flip);                         /* normals point from a into b */
}

int mb_convex_hull(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{   /* b a box or a hull, moved into a's frame */
    int flip = hull_first(&a, &b);
    double v[3 * HULL_MAX_VERTS], pl[8 * HULL_MAX_VERTS];
    double R[9], p[3], d[3], bv[24], bp[24];
    for (int r = 0; r < 3; r++) for (int c = 0; c < 3; c++)    /* b's frame in a's: Ra^T Rb */
        R[3 * r + c] = a->R[r] * b->R[c] + a->R[3 + r] * b->R[3 + c] + a->R[6 + r] * b->R[6 + c];
    mb_sub3(b->p, a->p, d); mb_mtv3(a->R, d, p);
    mb_hull hb, moved;
    if (b->type == G_BOX) box_hull(b->size, bv, bp, &hb); else hb = *b->hull;
    move_hull(&hb, R, p, v, pl, &moved);
    int n = hull_hull(a->hull, &moved, out, max);
    return to_world(a, out, n, flip);
}

/* ---- a hull against one triangle of a static mesh (trimesh.c's mb_trimesh_convex) ----------------
 * Terrain rule, as trimesh.c gives boxes and cylinders: the triangle pushes the hull along its own
 * face normal n, never along an edge or a hull face.  The separating-axis test (n, the hull's faces,
 * hull edge x triangle edge) only decides whether they touch.  A hull lying across the shared edge
 * of two coplanar triangles then meets one plane, however the edge cuts its face: an axis chosen
 * by minimum depth on the triangle it barely overlaps would be a side face or an edge, whose
 * sideways normal stops a sliding box at every edge (the mesh carries no neighbour table to say
 * which edges are inner).  The points, each with its depth along n:
 *  - hull vertices below the triangle's plane over the triangle,
 *  - triangle corners inside the hull and the points where its edges enter and leave the hull,
 *    with the depth of the hull under them along -n.
 * Each triangle gives at most 4 of them; trimesh.c merges those of all the pair's triangles and
 * mb_mesh_manifold cuts them to one manifold of at most 4 (reduce4), so a hull resting across many
 * triangles gets the corners it gets from a plane. */
#define TRI_POINTS (HULL_MAX_VERTS + 9)

static int tri_separated(const mb_hull *h, const double t[3][3])
{
    for (int f = 0; f < h->nf; f++) {                          /* the hull's faces */
        const double *n = h->plane + 4 * f;
        double m = mb_dot3(n, t[0]);
        for (int i = 1; i < 3; i++) if (mb_dot3(n, t[i]) < m) m = mb_dot3(n, t[i]);
        if (m > n[3]) return 1;
    }
    for (int i = 0; i < 3; i++) {                              /* hull edges x triangle edges */
        double e[3]; mb_sub3(t[(i + 1) % 3], t[i], e);
        for (int k = 0; k < h->ne; k++) {
            const int *E = h->edge + 4 * k;
            const double *na = h->plane + 4 * E[2], *nb = h->plane + 4 * E[3], *P = h->v + 3 * E[0];
            if (mb_dot3(na, e) * mb_dot3(nb, e) >= 0) continue;       /* no hull support on this edge along e x w */
            double w[3], L[3], r[3]; mb_sub3(h->v + 3 * E[1], P, w); mb_cross3(w, e, L);
            double len = mb_norm3(L);
            if (len < 1e-9 * mb_norm3(w) * mb_norm3(e)) continue;
            mb_scale3(L, 1.0 / len, L);
            mb_sub3(P, h->centre, r);
            if (mb_dot3(L, r) < 0) mb_scale3(L, -1, L);               /* out of the hull at that edge */
            double m = mb_dot3(L, t[0]);
            for (int j = 1; j < 3; j++) if (mb_dot3(L, t[j]) < m) m = mb_dot3(L, t[j]);
            if (m > mb_dot3(L, P)) return 1;
        }
    }
    return 0;
}

/* depth of the hull under x (inside it) along -n: where the ray x - s n leaves the hull */
static double depth_under(const mb_hull *h, const double *x, const double *n)
{
    double s = INFINITY;
    for (int f = 0; f < h->nf; f++) {
        const double *p = h->plane + 4 * f;
        double k = -mb_dot3(p, n);
        if (k > 1e-12) { double t = (p[3] - mb_dot3(p, x)) / k; if (t < s) s = t; }
    }
    return s > 0 && isfinite(s) ? s : 0;
}

/* At most 4 (and max) of the m points (pos, depth, normal nrm), written to out: reduce4's choice,
 * whose first point is the deepest.  In a tie (a face resting flat, where rounding alone would
 * choose) that is the one farthest out from the hull's centre across the normal, a corner of that
 * face, so that the 4 points span the face as hull_plane's do. */
static int first_point(const mb_geom_pose *g, double (*pos)[3], const double *depth, double (*nrm)[3], int m, double tol)
{
    double mid[3], top = -INFINITY, far = -1;
    mb_mv3(g->R, g->hull->centre, mid); mb_add3(mid, g->p, mid);
    for (int i = 0; i < m; i++) if (depth[i] > top) top = depth[i];
    int i0 = 0;
    for (int i = 0; i < m; i++) {
        if (depth[i] < top - tol) continue;
        double u[3], a; mb_sub3(pos[i], mid, u);
        a = mb_dot3(u, u) - mb_dot3(u, nrm[i]) * mb_dot3(u, nrm[i]);
        if (a > far) { far = a; i0 = i; }
    }
    return i0;
}

static int spread4(const mb_geom_pose *g, double (*pos)[3], const double *depth, double (*nrm)[3], int m, double tol,
                   mb_contact_point *out, int max)
{
    if (m <= 0 || max <= 0) return 0;
    double top = -INFINITY;
    for (int i = 0; i < m; i++) if (depth[i] > top) top = depth[i];
    int i0 = first_point(g, pos, depth, nrm, m, tol);
    double *sel = malloc(sizeof(double) * (size_t)m);           /* depths with i0 made the deepest */
    if (!sel) return 0;
    for (int i = 0; i < m; i++) sel[i] = depth[i];
    sel[i0] = top + 1;
    int keep[4], k = reduce4(pos, sel, m, nrm[i0], keep), c = 0;
    free(sel);
    mb_contact_point kept[4] = {{0}};
    for (int i = 0; i < k && c < max; i++, c++) {
        mb_copy3(pos[keep[i]], kept[c].pos); mb_copy3(nrm[keep[i]], kept[c].normal); kept[c].depth = depth[keep[i]];
    }
    for (int i = 0; i < c; i++) out[i] = kept[i];
    return c;
}

int mb_convex_triangle(const mb_geom_pose *g, const double tw[3][3], const double *nw, mb_contact_point *out, int n0, int max)
{
    const mb_hull *h = g->hull;
    if (!h || g->type != G_CONVEX) return n0;
    double t[3][3], n[3], r[3];                                /* the triangle in the hull's frame */
    for (int i = 0; i < 3; i++) { mb_sub3(tw[i], g->p, r); mb_mtv3(g->R, r, t[i]); }
    mb_mtv3(g->R, nw, n);
    double d = mb_dot3(n, t[0]);
    if (mb_dot3(n, h->centre) < d) return n0;                     /* behind the triangle: not pushed through */
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < h->nv; i++) { double s = mb_dot3(n, h->v + 3 * i); if (s < lo) lo = s; if (s > hi) hi = s; }
    if (lo > d) return n0;
    if (tri_separated(h, t)) return n0;
    double tol = 1e-9 * (hi - lo > 1e-3 ? hi - lo : 1e-3);
    double pos[TRI_POINTS][3], depth[TRI_POINTS], nrm[TRI_POINTS][3];
    int m = 0;
    for (int i = 0; i < h->nv; i++) {                          /* hull vertices below the triangle */
        const double *x = h->v + 3 * i;
        double dep = d - mb_dot3(n, x);
        if (dep < 0 || !mb_geom_in_triangle(x, t, n, tol)) continue;
        for (int k = 0; k < 3; k++) pos[m][k] = x[k] + 0.5 * dep * n[k];
        depth[m++] = dep;
    }
    for (int i = 0; i < 3; i++) {
        const double *p0 = t[i], *p1 = t[(i + 1) % 3];
        double e[3]; mb_sub3(p1, p0, e);
        double tin = 0, tout = 1;                              /* the edge clipped by the hull's planes */
        int ok = 1;
        for (int f = 0; f < h->nf && ok; f++) {
            const double *p = h->plane + 4 * f;
            double a = mb_dot3(p, p0) - p[3], b = mb_dot3(p, e);     /* a + b s <= 0 inside */
            if (fabs(b) < 1e-300) { if (a > 0) ok = 0; continue; }
            double s = -a / b;
            if (b > 0) { if (s < tout) tout = s; } else { if (s > tin) tin = s; }
            if (tin > tout) ok = 0;
        }
        if (!ok) continue;
        double ends[2] = {tin, tout};
        for (int s = 0; s < 2; s++) {
            if (s == 1 && tout - tin < 1e-12) break;           /* touching at one point */
            if (ends[s] >= 1) continue;                        /* the next edge's start: counted there */
            double x[3]; for (int k = 0; k < 3; k++) x[k] = p0[k] + ends[s] * e[k];
            double dep = depth_under(h, x, n);
            for (int k = 0; k < 3; k++) pos[m][k] = x[k] - 0.5 * dep * n[k];
            depth[m++] = dep;
        }
    }
    if (!m) return n0;
    for (int i = 0; i < m; i++) {                              /* to world, normal from the mesh into g */
        double x[3]; mb_mv3(g->R, pos[i], x); mb_add3(x, g->p, pos[i]);
        mb_copy3(nw, nrm[i]);
    }
    return n0 + spread4(g, pos, depth, nrm, m, tol, out + n0, max - n0);
}

/* contacts c[0..n) as the arrays spread4 reads (one block: free pos), and the tie tolerance */
static double (*as_arrays(const mb_geom_pose *g, const mb_contact_point *c, int n, double **depth, double (**nrm)[3], double *tol))[3]
{
    double (*pos)[3] = malloc(sizeof(double) * 7 * (size_t)n);
    if (!pos) return NULL;
    *depth = (double *)(pos + n); *nrm = (double (*)[3])(*depth + n);
    for (int i = 0; i < n; i++) { mb_copy3(c[i].pos, pos[i]); mb_copy3(c[i].normal, (*nrm)[i]); (*depth)[i] = c[i].depth; }
    double size = g->hi[0] - g->lo[0];
    for (int k = 1; k < 3; k++) if (g->hi[k] - g->lo[k] > size) size = g->hi[k] - g->lo[k];
    *tol = 1e-9 * (size > 1e-3 ? size : 1e-3);
    return pos;
}

/* The pair's contacts against the whole mesh (each triangle's, merged by trimesh.c) cut to at most
 * 4 in place, as spread4 chooses them. */
int mb_mesh_manifold(const mb_geom_pose *g, mb_contact_point *c, int n, int max)
{
    if (n <= 0 || max <= 0) return 0;
    double *depth, (*nrm)[3], tol, (*pos)[3] = as_arrays(g, c, n, &depth, &nrm, &tol);
    if (!pos) { int k = n < max ? n : max; return k < 4 ? k : 4; }
    int k = spread4(g, pos, depth, nrm, n, tol, c, max);
    free(pos);
    return k;
}

typedef struct { double x, y; int i; } Flat;
static int cmp_flat(const void *a, const void *b)
{
    const Flat *p = a, *q = b;
    return p->x != q->x ? (p->x > q->x) - (p->x < q->x) : (p->y > q->y) - (p->y < q->y);
}
static double turn(const Flat *o, const Flat *a, const Flat *b)
{
    return (a->x - o->x) * (b->y - o->y) - (a->y - o->y) * (b->x - o->x);
}

/* Of the contacts c[0..n) keep, in place and in order, the one spread4 takes first and the corners
 * of the points' outline seen along its normal: all that reduce4 can choose (the farthest point,
 * the largest triangle and the largest gain are corners of the outline), so trimesh.c may thin its
 * buffer with this as it fills, in any order of triangles, and get the manifold of all points. */
int mb_mesh_outline(const mb_geom_pose *g, mb_contact_point *c, int n)
{
    if (n <= 4) return n;
    double *depth, (*nrm)[3], tol, (*pos)[3] = as_arrays(g, c, n, &depth, &nrm, &tol);
    Flat *f = malloc(sizeof(Flat) * 3 * (size_t)n);            /* the points, then the chain */
    char *on = calloc((size_t)n, 1);
    if (!pos || !f || !on) { free(pos); free(f); free(on); return n; }
    int i0 = first_point(g, pos, depth, nrm, n, tol);
    double u[3], v[3]; plane_space(nrm[i0], u, v);
    for (int i = 0; i < n; i++) { f[i].x = mb_dot3(pos[i], u); f[i].y = mb_dot3(pos[i], v); f[i].i = i; }
    qsort(f, (size_t)n, sizeof(Flat), cmp_flat);
    Flat *h = f + n;                                           /* Andrew's monotone chain */
    int k = 0;
    for (int i = 0; i < n; i++) { while (k >= 2 && turn(h + k - 2, h + k - 1, f + i) <= 0) k--; h[k++] = f[i]; }
    for (int i = n - 2, lower = k + 1; i >= 0; i--) { while (k >= lower && turn(h + k - 2, h + k - 1, f + i) <= 0) k--; h[k++] = f[i]; }
    for (int i = 0; i < k; i++) on[h[i].i] = 1;
    on[i0] = 1;
    int m = 0;
    for (int i = 0; i < n; i++) if (on[i]) c[m++] = c[i];
    free(pos); free(f); free(on);
    return m;
}
