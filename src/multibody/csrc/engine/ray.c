/* Rays (ODE's dCreateRay and dCollide(ray, geom)): the first point of each shape on the ray
 * x(t) = o + t d, |d| = 1, 0 <= t <= tmax, in closed form per shape.
 *
 * A solid shape meets the ray in one interval [t_in, t_out] (all our shapes are convex): the
 * ray hits t_in with the outward normal there when t_in >= 0; a ray starting inside (t_in < 0 <=
 * t_out) hits the exit t_out with the normal negated, so that it faces back along the ray — the
 * choice of ODE's ray colliders (dCollideRaySphere/Box/Capsule/Cylinder/Convex).  Planes and
 * triangles are surfaces, hit from either side with the normal facing the ray (dCollideRayPlane,
 * ray against a trimesh).  Touching counts: intervals are closed, so a ray grazing a box's face
 * within the face hits it.
 *
 * A world with thousands of geoms: each geom's axis-aligned box is tested first (a slab test,
 * a few flops), and only boxes the ray crosses before the nearest hit so far get the exact test.
 */
#include <stdlib.h>
#include "engine/engine.h"

#define EPS 1e-12

/* The hit from the interval [tin, tout] with outward normals nin, nout (local frame). */
static int interval_hit(double tin, const double *nin, double tout, const double *nout, double tmax, double *t, double *n)
{
    if (!(tin <= tout) || tout < 0 || tin > tmax) return 0;
    if (tin >= 0) { *t = tin; mb_copy3(nin, n); return 1; }
    if (tout > tmax) return 0;
    *t = tout; mb_scale3(nout, -1.0, n);
    return 1;
}

/* [tin, tout] of the ray in the ball |x - c| <= r; 0 if it misses */
static int ball_interval(const double *o, const double *d, const double *c, double r, double *tin, double *tout)
{
    double q[3]; mb_sub3(o, c, q);
    double B = mb_dot3(q, d), C = mb_dot3(q, q) - r * r, k = B * B - C;
    if (k < 0) return 0;
    k = sqrt(k);
    *tin = -B - k; *tout = -B + k;
    return 1;
}

/* [tin, tout] in the infinite solid cylinder x^2 + y^2 <= r^2 (local frame, axis z) */
static int tube_interval(const double *o, const double *d, double r, double *tin, double *tout)
{
    double a = d[0] * d[0] + d[1] * d[1], b = o[0] * d[0] + o[1] * d[1], c = o[0] * o[0] + o[1] * o[1] - r * r;
    if (a < EPS) {                                      /* along the axis: inside for all t, or never */
        if (c > 0) return 0;
        *tin = -INFINITY; *tout = INFINITY; return 1;
    }
    double k = b * b - a * c;
    if (k < 0) return 0;
    k = sqrt(k);
    *tin = (-b - k) / a; *tout = (-b + k) / a;
    return 1;
}

static int ray_sphere(const double *o, const double *d, double r, double tmax, double *t, double *n)
{
    double tin, tout, zero[3] = {0, 0, 0};
    if (!ball_interval(o, d, zero, r, &tin, &tout)) return 0;
    double pin[3], pout[3];
    for (int k = 0; k < 3; k++) { pin[k] = (o[k] + tin * d[k]) / r; pout[k] = (o[k] + tout * d[k]) / r; }
    return interval_hit(tin, pin, tout, pout, tmax, t, n);
}

static int ray_box(const double *o, const double *d, const double *size, double tmax, double *t, double *n)
{
    double tin = -INFINITY, tout = INFINITY, nin[3] = {0, 0, 0}, nout[3] = {0, 0, 0};
    int kin = -1, kout = -1; double sin_ = 0, sout = 0;
    for (int k = 0; k < 3; k++) {
        double h = 0.5 * size[k];
        if (fabs(d[k]) < EPS) {                           /* parallel to the slab: inside it or a miss */
            if (o[k] < -h || o[k] > h) return 0;
            continue;
        }
        double a = (-h - o[k]) / d[k], b = (h - o[k]) / d[k], sa = -1, sb = 1;
        if (a > b) { double x = a; a = b; b = x; sa = 1; sb = -1; }
        if (a > tin) { tin = a; kin = k; sin_ = sa; }
        if (b < tout) { tout = b; kout = k; sout = sb; }
    }
    if (kin < 0 || kout < 0) return 0;                   /* a zero direction */
    nin[kin] = sin_; nout[kout] = sout;
    return interval_hit(tin, nin, tout, nout, tmax, t, n);
}

static void capsule_normal(const double *p, double hl, double *n)
{
    double z = p[2] < -hl ? -hl : (p[2] > hl ? hl : p[2]);
    n[0] = p[0]; n[1] = p[1]; n[2] = p[2] - z;
    mb_normalize3(n);
}

static int ray_capsule(const double *o, const double *d, double r, double len, double tmax, double *t, double *n)
{   /* the union of the finite tube and the two end balls is convex: its interval is the hull of theirs */
    double hl = 0.5 * len, tin = INFINITY, tout = -INFINITY, a, b;
    if (tube_interval(o, d, r, &a, &b)) {
        double za, zb;                                     /* clip the tube to |z| <= hl */
        if (fabs(d[2]) < EPS) { if (fabs(o[2]) > hl) a = INFINITY, b = -INFINITY; }
        else {
            za = (-hl - o[2]) / d[2]; zb = (hl - o[2]) / d[2];
            if (za > zb) { double x = za; za = zb; zb = x; }
            if (za > a) a = za;
            if (zb < b) b = zb;
        }
        if (a <= b) { tin = a; tout = b; }
    }
    for (int s = -1; s <= 1; s += 2) {
        double c[3] = {0, 0, s * hl};
        if (ball_interval(o, d, c, r, &a, &b)) { if (a < tin) tin = a; if (b > tout) tout = b; }
    }
    if (!(tin <= tout)) return 0;
    double pin[3], pout[3], nin[3], nout[3];
    for (int k = 0; k < 3; k++) { pin[k] = o[k] + tin * d[k]; pout[k] = o[k] + tout * d[k]; }
    capsule_normal(pin, hl, nin); capsule_normal(pout, hl, nout);
    return interval_hit(tin, nin, tout, nout, tmax, t, n);
}

static int ray_cylinder(const double *o, const double *d, double r, double len, double tmax, double *t, double *n)
{   /* the tube's interval cut by the slab |z| <= hl; the normal from whichever bound is active */
    double hl = 0.5 * len, tin, tout;
    if (!tube_interval(o, d, r, &tin, &tout)) return 0;
    double nin[3], nout[3], p[3];
    for (int k = 0; k < 3; k++) p[k] = o[k] + tin * d[k];
    nin[0] = p[0] / r; nin[1] = p[1] / r; nin[2] = 0;
    for (int k = 0; k < 3; k++) p[k] = o[k] + tout * d[k];
    nout[0] = p[0] / r; nout[1] = p[1] / r; nout[2] = 0;
    if (fabs(d[2]) < EPS) { if (fabs(o[2]) > hl) return 0; }
    else {
        double za = (-hl - o[2]) / d[2], zb = (hl - o[2]) / d[2], sa = -1, sb = 1;
        if (za > zb) { double x = za; za = zb; zb = x; sa = 1; sb = -1; }
        if (za > tin) { tin = za; nin[0] = 0; nin[1] = 0; nin[2] = sa; }
        if (zb < tout) { tout = zb; nout[0] = 0; nout[1] = 0; nout[2] = sb; }
    }
    return interval_hit(tin, nin, tout, nout, tmax, t, n);
}

int mb_ray_convex_planes(const double *planes, int nf, const double *o, const double *d, double tmax, double *t, double *normal)
{
    double tin = -INFINITY, tout = INFINITY;
    const double *nin = NULL, *nout = NULL;
    for (int f = 0; f < nf; f++) {
        const double *pl = planes + 4 * f;
        double den = mb_dot3(pl, d), dist = pl[3] - mb_dot3(pl, o);    /* dist >= 0: o on the inner side */
        if (fabs(den) < EPS) { if (dist < 0) return 0; continue; }
        double s = dist / den;
        if (den < 0) { if (s > tin) { tin = s; nin = pl; } }     /* entering this half-space */
        else if (s < tout) { tout = s; nout = pl; }              /* leaving it */
        if (tin > tout) return 0;
    }
    if (!nin || !nout) return 0;                                 /* unbounded: not a polytope */
    return interval_hit(tin, nin, tout, nout, tmax, t, normal);
}

static int ray_plane(const double *pl, const double *o, const double *d, double tmax, double *t, double *n)
{   /* dCollideRayPlane: the surface n . x = offset from either side */
    double dist = pl[3] - mb_dot3(pl, o), den = mb_dot3(pl, d);
    if (fabs(den) < EPS) return 0;
    double s = dist / den;
    if (s < 0 || s > tmax) return 0;
    *t = s;
    mb_scale3(pl, den > 0 ? -1.0 : 1.0, n);
    return 1;
}

int mb_ray_geom(const mb_geom_pose *g, const double *plane, const double *o, const double *d, double tmax, double *t, double *normal)
{
    if (g->type == G_PLANE) return ray_plane(plane, o, d, tmax, t, normal);
    if (g->type == G_TRIMESH) return g->mesh ? mb_trimesh_ray(g->mesh, o, d, tmax, t, normal) : 0;
    double ol[3], dl[3], nl[3], r[3];
    mb_sub3(o, g->p, r); mb_mtv3(g->R, r, ol); mb_mtv3(g->R, d, dl);   /* into the shape's frame */
    int hit = 0;
    switch (g->type) {
    case G_SPHERE: hit = ray_sphere(ol, dl, g->size[0], tmax, t, nl); break;
    case G_BOX: hit = ray_box(ol, dl, g->size, tmax, t, nl); break;
    case G_CAPSULE: hit = ray_capsule(ol, dl, g->size[0], g->size[1], tmax, t, nl); break;
    case G_CYLINDER: hit = ray_cylinder(ol, dl, g->size[0], g->size[1], tmax, t, nl); break;
    default: return 0;                 /* convex meshes: mb_ray_convex_planes, called by their owner */
    }
    if (hit) mb_mv3(g->R, nl, normal);
    return hit;
}

/* ---- many rays: a hierarchy over the geoms' bounding boxes ------------------------------------ */
/* Built once per batch of rays (median splits as the triangle meshes', at most LEAF geoms a leaf),
 * so each ray visits O(log n) boxes instead of all n; planes, unbounded, stay outside it. */
#define LEAF 4
typedef struct { double c, lo[3], hi[3]; int g; } GItem;
static int cmp_gitem(const void *a, const void *b)
{
    double x = ((const GItem *)a)->c, y = ((const GItem *)b)->c;
    return (x > y) - (x < y);
}

static int tree_node(mb_ray_tree *T, GItem *it, int first, int count)
{
    int id = T->nnodes++;
    mb_bvh_node *nd = T->nodes + id;
    mb_copy3(it[first].lo, nd->lo); mb_copy3(it[first].hi, nd->hi);
    for (int i = 1; i < count; i++) for (int k = 0; k < 3; k++) {
        if (it[first + i].lo[k] < nd->lo[k]) nd->lo[k] = it[first + i].lo[k];
        if (it[first + i].hi[k] > nd->hi[k]) nd->hi[k] = it[first + i].hi[k];
    }
    if (count <= LEAF) { nd->left = first; nd->count = count; return id; }
    int ax = 0;
    for (int k = 1; k < 3; k++) if (nd->hi[k] - nd->lo[k] > nd->hi[ax] - nd->lo[ax]) ax = k;
    for (int i = 0; i < count; i++) it[first + i].c = it[first + i].lo[ax] + it[first + i].hi[ax];
    qsort(it + first, (size_t)count, sizeof(GItem), cmp_gitem);
    nd->count = 0;
    tree_node(T, it, first, count / 2);                     /* left child: id + 1 */
    int right = tree_node(T, it, first + count / 2, count - count / 2);
    T->nodes[id].left = right;
    return id;
}

int mb_ray_tree_build(const mb_world *W, mb_ray_tree *T)
{
    memset(T, 0, sizeof *T);
    int n = 0;
    for (int g = 0; g < W->ng; g++) if (W->gp[g].type != G_PLANE) n++;
    T->geoms = malloc(sizeof(int) * (size_t)(n + 1));
    T->nodes = malloc(sizeof(mb_bvh_node) * (size_t)(2 * n + 1));
    GItem *it = malloc(sizeof(GItem) * (size_t)(n + 1));
    if (!T->geoms || !T->nodes || !it) { free(it); mb_ray_tree_free(T); return -1; }
    n = 0;
    for (int g = 0; g < W->ng; g++) {
        const mb_geom_pose *G = W->gp + g;
        if (G->type == G_PLANE) continue;
        mb_copy3(G->lo, it[n].lo); mb_copy3(G->hi, it[n].hi); it[n].g = g; n++;
    }
    if (n) tree_node(T, it, 0, n);
    for (int i = 0; i < n; i++) T->geoms[i] = it[i].g;
    T->n = n;
    free(it);
    return 0;
}

void mb_ray_tree_free(mb_ray_tree *T) { free(T->geoms); free(T->nodes); T->geoms = NULL; T->nodes = NULL; }

static int test_geom(const mb_world *W, int g, const double *o, const double *d, const double *inv, int all,
                     double *reach, mb_ray_hit *out, int n)
{
    const mb_geom_pose *G = W->gp + g;
    if (G->type != G_PLANE && !mb_geom_ray_box(G->lo, G->hi, o, inv, *reach)) return n;
    double t, nrm[3];
    if (!mb_ray_geom(G, W->planes + 4 * g, o, d, *reach, &t, nrm)) return n;
    mb_ray_hit *h = out + (all ? n : 0);
    h->geom = g; h->t = t; mb_copy3(nrm, h->normal);
    if (all) return n + 1;
    *reach = t;
    return 1;
}

/* Every geom the ray hits (all != 0: out has room for ng; one hit per geom, unsorted) or only
 * the nearest (out has room for one).  The poses must be current (mb_world_geom_poses); T, when
 * given, is the hierarchy over them (mb_ray_tree_build), else every geom's box is tested. */
int mb_world_ray(const mb_world *W, const mb_ray_tree *T, const double *o, const double *d, double tmax, int all, mb_ray_hit *out)
{
    double inv[3] = {1.0 / d[0], 1.0 / d[1], 1.0 / d[2]}, reach = tmax;
    int n = 0;
    if (!T) {
        for (int g = 0; g < W->ng; g++) n = test_geom(W, g, o, d, inv, all, &reach, out, n);
        return n;
    }
    for (int g = 0; g < W->ng; g++) if (W->gp[g].type == G_PLANE) n = test_geom(W, g, o, d, inv, all, &reach, out, n);
    if (!T->n) return n;
    int stack[128], sp = 0;
    stack[sp++] = 0;
    while (sp) {
        const mb_bvh_node *nd = T->nodes + stack[--sp];
        if (!mb_geom_ray_box(nd->lo, nd->hi, o, inv, reach)) continue;
        if (nd->count) {
            for (int i = 0; i < nd->count; i++) n = test_geom(W, T->geoms[nd->left + i], o, d, inv, all, &reach, out, n);
            continue;
        }
        if (sp + 2 > 128) continue;                         /* deeper than median splits make */
        int a = (int)(nd - T->nodes) + 1, b = nd->left;
        /* the child nearer the origin along the ray last, so it is popped first */
        const mb_bvh_node *na = T->nodes + a, *nb = T->nodes + b;
        double ca = 0, cb = 0;
        for (int k = 0; k < 3; k++) { ca += (na->lo[k] + na->hi[k]) * d[k]; cb += (nb->lo[k] + nb->hi[k]) * d[k]; }
        if (ca <= cb) { stack[sp++] = b; stack[sp++] = a; } else { stack[sp++] = a; stack[sp++] = b; }
    }
    return n;
}
