/* Height fields: MuJoCo's hfield (engine_collision_convex.c, mjc_ConvexHField) as a shape of the
 * collision table.
 *
 * A height field is a grid of nrow x ncol samples h in [0, 1] over the rectangle |x| <= sx,
 * |y| <= sy of its frame; the surface is z = h * ez, and the solid reaches down to z = -base
 * (size = sx, sy, ez, base: MuJoCo's hfield_size).  Sample (r, c) sits at x = -sx + c dx,
 * y = -sy + r dy with dx = 2 sx / (ncol - 1), dy = 2 sy / (nrow - 1).
 *
 * Method (MuJoCo's): the field is a union of triangular prisms, two per grid cell, each the
 * triangle of three samples over the base.  A convex shape is moved into the field's frame, its
 * bounding box picks the cells under it, and each prism whose top reaches the box's bottom is
 * collided with the shape as a convex hull (the table's convex row: spheres and capsules exactly
 * against the hull, boxes and hulls by the separating-axis test, cylinders and ellipsoids by the
 * portal), so the contacts are those of a convex-against-prism test, as MuJoCo's, and the
 * deepest max of them are kept.  The cell's diagonal runs from sample (r, c) to (r + 1, c + 1),
 * MuJoCo's triangulation, so the same samples give the same surface.
 *
 * The field's data travels in the scene's hull list (convex.c's mb_hulls_load): a block
 * [-1, nrow, ncol, sx, sy, ez, base, h (nrow x ncol, row-major)], parsed here into an mb_hull with
 * nv = 0 (model/geometry.py's Geoms.packed writes it).
 */
#include <string.h>
#include "engine/engine.h"

#define HFIELD_MARK (-1.0)
#define HFIELD_MAX_SAMPLES (1 << 26)

int mb_hfield_block(const double *d, int64_t left, int64_t *size)
{
    if (left < 7 || d[0] != HFIELD_MARK) return 0;
    double nr = d[1], nc = d[2];
    if (!(nr >= 2 && nc >= 2 && nr * nc <= HFIELD_MAX_SAMPLES) || nr != floor(nr) || nc != floor(nc)) return 0;
    *size = 7 + (int64_t)nr * (int64_t)nc;
    return *size <= left;
}

const char *mb_hfield_parse(const double *d, mb_hull *h)
{
    h->nv = h->nf = h->ne = 0;
    h->nrow = (int)d[1]; h->ncol = (int)d[2]; h->hsize = d + 3; h->hdata = d + 7;
    for (int k = 0; k < 4; k++)
        if (!(isfinite(h->hsize[k]) && h->hsize[k] > 0))
            return "a height field's size (x and y half extents, elevation, base) is not > 0";
    h->hmax = 0;
    for (int64_t i = 0; i < (int64_t)h->nrow * h->ncol; i++) {
        double v = h->hdata[i];
        if (!(v >= 0 && v <= 1)) return "a height field sample is not in [0, 1]";
        if (v > h->hmax) h->hmax = v;
    }
    return NULL;
}

void mb_hfield_bounds(mb_geom_pose *g)
{   /* the box sx, sy, from -base to the highest sample, rotated (box_bounds's rule about its centre) */
    const mb_hull *f = g->hull;
    if (!f || !f->hsize) { mb_copy3(g->p, g->lo); mb_copy3(g->p, g->hi); return; }
    double lo = -f->hsize[3], hi = f->hmax * f->hsize[2];
    double e[3] = {f->hsize[0], f->hsize[1], 0.5 * (hi - lo)}, c[3] = {0, 0, 0.5 * (hi + lo)}, cw[3];
    mb_geom_point(g, c, cw);
    for (int k = 0; k < 3; k++) {
        const double *Rk = g->R + 3 * k;
        double ek = fabs(Rk[0]) * e[0] + fabs(Rk[1]) * e[1] + fabs(Rk[2]) * e[2];
        g->lo[k] = cw[k] - ek; g->hi[k] = cw[k] + ek;
    }
}

/* ---- one prism as a hull: top triangle 0 1 2 (counter-clockwise seen from above), bottom 3 4 5
 * below them.  Faces: 0 top, 1 bottom, 2 + i the side under edge i -> i + 1; each face's vertices
 * counter-clockwise seen from outside, each edge with the face that runs v0 -> v1 on its left
 * (convex.c's layout, as its box hull). */
static const int PRISM_FSTART[6] = {0, 3, 6, 10, 14, 18};
static const int PRISM_FIDX[18] = {0, 1, 2,  3, 5, 4,  3, 4, 1, 0,  4, 5, 2, 1,  5, 3, 0, 2};
static const int PRISM_EDGE[36] = {0, 1, 0, 2,  1, 2, 0, 3,  2, 0, 0, 4,     /* top edges */
                                   4, 3, 1, 2,  5, 4, 1, 3,  3, 5, 1, 4,     /* bottom edges */
                                   0, 3, 2, 4,  1, 4, 3, 2,  2, 5, 4, 3};    /* vertical edges */

static void prism(const double top[3][3], double base, double *v, double *pl, mb_hull *h)
{
    for (int i = 0; i < 3; i++) {
        mb_copy3(top[i], v + 3 * i);
        v[3 * (i + 3)] = top[i][0]; v[3 * (i + 3) + 1] = top[i][1]; v[3 * (i + 3) + 2] = -base;
    }
    double e1[3], e2[3], n[3];
    mb_sub3(top[1], top[0], e1); mb_sub3(top[2], top[0], e2); mb_cross3(e1, e2, n); mb_normalize3(n);
    mb_copy3(n, pl); pl[3] = mb_dot3(n, top[0]);
    pl[4] = 0; pl[5] = 0; pl[6] = -1; pl[7] = base;
    for (int i = 0; i < 3; i++) {           /* outward: the edge direction turned clockwise */
        const double *a = top[i], *b = top[(i + 1) % 3];
        double s[3] = {b[1] - a[1], a[0] - b[0], 0}; mb_normalize3(s);
        double *p = pl + 4 * (2 + i);
        mb_copy3(s, p); p[3] = s[0] * a[0] + s[1] * a[1];
    }
    memset(h, 0, sizeof *h);
    h->nv = 6; h->nf = 5; h->ne = 9; h->v = v; h->plane = pl;
    h->fstart = PRISM_FSTART; h->fidx = PRISM_FIDX; h->edge = PRISM_EDGE;
    for (int i = 0; i < 6; i++) mb_add3(h->centre, v + 3 * i, h->centre);
    mb_scale3(h->centre, 1.0 / 6, h->centre);
}

/* a (a convex shape) against the field b: normals from b into a, world coordinates */
int mb_hfield_collide(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{
    const mb_hull *f = b->hull;
    if (!f || !f->hsize || max <= 0) return 0;
    const double *sz = f->hsize, *h = f->hdata;
    const int nrow = f->nrow, ncol = f->ncol;
    mb_geom_pose A = *a;                    /* a in the field's frame: R = Rb^T Ra, p = Rb^T (pa - pb) */
    double d[3]; mb_sub3(a->p, b->p, d); mb_mtv3(b->R, d, A.p);
    for (int r = 0; r < 3; r++) for (int c = 0; c < 3; c++)
        A.R[3 * r + c] = b->R[r] * a->R[c] + b->R[3 + r] * a->R[3 + c] + b->R[6 + r] * a->R[6 + c];
    geom_shapes[A.type].bounds(&A);
    if (!(A.lo[0] <= sz[0] && A.hi[0] >= -sz[0] && A.lo[1] <= sz[1] && A.hi[1] >= -sz[1] &&
          A.lo[2] <= f->hmax * sz[2] && A.hi[2] >= -sz[3])) return 0;     /* apart (or not finite) */
    const double dx = 2 * sz[0] / (ncol - 1), dy = 2 * sz[1] / (nrow - 1);
    /* the cells under the box, clamped to the grid before any conversion to int */
    const double c0 = fmax(0, floor((A.lo[0] + sz[0]) / dx)), c1 = fmin(ncol - 1, ceil((A.hi[0] + sz[0]) / dx));
    const double r0 = fmax(0, floor((A.lo[1] + sz[1]) / dy)), r1 = fmin(nrow - 1, ceil((A.hi[1] + sz[1]) / dy));
    const int cmin = (int)c0, cmax = (int)c1, rmin = (int)r0, rmax = (int)r1;

    double v[18], pl[20];
    mb_hull P;
    mb_geom_pose G;                         /* the prism, a hull at the field's origin */
    memset(&G, 0, sizeof G);
    G.type = G_CONVEX; G.body = b->body; G.hull = &P; G.group = b->group;
    G.R[0] = G.R[4] = G.R[8] = 1;
    int n = 0;
    for (int r = rmin; r < rmax; r++) {
        for (int c = cmin; c < cmax; c++) {
            /* the samples' corners: 0 (c, r), 1 (c + 1, r), 2 (c + 1, r + 1), 3 (c, r + 1) */
            double x0 = -sz[0] + c * dx, x1 = x0 + dx, y0 = -sz[1] + r * dy, y1 = y0 + dy;
            double k[4][3] = {{x0, y0, h[r * ncol + c] * sz[2]}, {x1, y0, h[r * ncol + c + 1] * sz[2]},
                              {x1, y1, h[(r + 1) * ncol + c + 1] * sz[2]}, {x0, y1, h[(r + 1) * ncol + c] * sz[2]}};
            for (int t = 0; t < 2; t++) {   /* triangles 0 1 2 and 0 2 3: the diagonal (c, r)-(c + 1, r + 1) */
                const double top[3][3] = {{k[0][0], k[0][1], k[0][2]}, {k[t + 1][0], k[t + 1][1], k[t + 1][2]},
                                          {k[t + 2][0], k[t + 2][1], k[t + 2][2]}};
                if (top[0][2] < A.lo[2] && top[1][2] < A.lo[2] && top[2][2] < A.lo[2]) continue;
                prism(top, sz[3], v, pl, &P);
                mb_contact_point tmp[8];
                int m = mb_collide_pair(&A, &G, tmp, 8);
                for (int i = 0; i < m; i++) {   /* back to the world */
                    double pos[3], nrm[3];
                    mb_geom_point(b, tmp[i].pos, pos); mb_mv3(b->R, tmp[i].normal, nrm);
                    n = mb_collide_emit(out, n, max, pos, nrm, tmp[i].depth);
                }
            }
        }
    }
    return n;
}
