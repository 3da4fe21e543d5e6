/* Shapes of the engine and the geometry their colliders share (geometry.c): the shape codes, one
 * row per shape (name, whether it is static only, bounding box, support function), and the small
 * pieces several narrow-phase files used to keep copies of (closest points of segments, polygon
 * clipping, point-in-triangle, ray against a box).
 *
 * Included by engine.h only (it needs mb_contact_point, mb_hull and the vector helpers defined there).
 *
 * Adding a shape: its code below (before G_COUNT), its row in geom_shapes (geometry.c: name,
 * bounds, support), its rows in the collision table (collide.c), and its Python class with that
 * code (shapes.py).  Rays (ray.c) are optional: a shape mb_ray_geom does not know is never hit.
 */
#ifndef MB_ENGINE_H
#error "geometry.h is included by engine.h"
#endif
#ifndef MB_GEOMETRY_H
#define MB_GEOMETRY_H

/* Shape codes: gint's GI_TYPE, shapes.py's Shape.code, the index of geom_shapes and of the
 * collision table.  Planes, triangle meshes and height fields are static (their rows say so). */
enum { G_SPHERE = 0, G_BOX = 1, G_CAPSULE = 2, G_CYLINDER = 3, G_PLANE = 4, G_CONVEX = 5, G_TRIMESH = 6, G_ELLIPSOID = 7,
       G_HFIELD = 8, G_COUNT = 9 };

/* A geometry posed for this step (step.c's geom_poses fills it) */
typedef struct {
    int type, body;
    double R[9], p[3];      /* world pose, updated every step */
    const double *size;
    const double *plane;    /* G_PLANE: n (unit), d with n . x = d (4 doubles in the world's planes) */
    double lo[3], hi[3];    /* axis-aligned bounding box */
    const struct mb_trimesh *mesh;   /* G_TRIMESH: its triangles (trimesh.c) */
    const mb_hull *hull;       /* G_CONVEX: its hull; G_HFIELD: its height field (hfield.c) */
    int group;              /* GD_GROUP */
} mb_geom_pose;

/* One row per shape code. */
typedef struct {
    const char *name;       /* in messages ("sphere", "box", ...) */
    int static_only;        /* only on the static world (body -1): planes and triangle meshes */
    /* g->lo, g->hi from g's pose (planes: unbounded) */
    void (*bounds)(mb_geom_pose *g);
    /* the point of g farthest along l, both in g's frame, added to s (which the caller zeroes);
     * NULL for shapes that are not convex solids (planes, meshes): no portal refinement for them */
    void (*support)(const mb_geom_pose *g, const double *l, double *s);
} mb_geom_shape;
extern const mb_geom_shape geom_shapes[G_COUNT];

/* the shape's name, or NULL for a code with no row */
const char *mb_geom_name(int type);
/* the point lp of g's frame in world coordinates, and g's k-th axis */
static inline void mb_geom_point(const mb_geom_pose *g, const double *lp, double *out) { mb_mv3(g->R, lp, out); mb_add3(out, g->p, out); }
/* support functions of the rows (g's frame; s zeroed by the caller) */
void mb_geom_hull_support(const mb_hull *h, const double *dir, double *out);
static inline void mb_geom_sphere_support(const mb_geom_pose *g, const double *l, double *s)
{
    double n = mb_norm3(l);
    if (n > 1e-12) mb_scale3(l, g->size[0] / n, s);
}
static inline void mb_geom_box_support(const mb_geom_pose *g, const double *l, double *s)
{
    for (int k = 0; k < 3; k++) s[k] = l[k] >= 0 ? 0.5 * g->size[k] : -0.5 * g->size[k];
}
static inline void mb_geom_capsule_support(const mb_geom_pose *g, const double *l, double *s)
{   /* the sphere's, moved to the end of the segment along l */
    double n = mb_norm3(l);
    if (n > 1e-12) mb_scale3(l, g->size[0] / n, s);
    s[2] += l[2] >= 0 ? 0.5 * g->size[1] : -0.5 * g->size[1];
}
static inline void mb_geom_cylinder_support(const mb_geom_pose *g, const double *l, double *s)
{   /* the rim of the cap along l */
    double r = sqrt(l[0] * l[0] + l[1] * l[1]);
    if (r > 1e-12) { s[0] = g->size[0] * l[0] / r; s[1] = g->size[0] * l[1] / r; }
    s[2] = l[2] >= 0 ? 0.5 * g->size[1] : -0.5 * g->size[1];
}
static inline void mb_geom_convex_support(const mb_geom_pose *g, const double *l, double *s) { mb_geom_hull_support(g->hull, l, s); }
/* an ellipsoid of semi-axes r = size[0..2]: the point x with x_k = r_k^2 l_k / |r l| (the gradient of
 * x^T diag(r)^-2 x is parallel to l there) */
void mb_geom_ellipsoid_support(const mb_geom_pose *g, const double *l, double *s);
/* support point of g along the world direction dir, in world coordinates.  Portal refinement
 * calls it a few dozen times a pair: the built-in shapes' functions are inlined here (a call
 * through the row costs box-cylinder pairs 20 %, measured), any other shape goes through its row. */
static inline void mb_geom_support(const mb_geom_pose *g, const double *dir, double *out)
{
    double l[3], s[3] = {0, 0, 0}; mb_mtv3(g->R, dir, l);
    switch (g->type) {
    case G_SPHERE: mb_geom_sphere_support(g, l, s); break;
    case G_BOX: mb_geom_box_support(g, l, s); break;
    case G_CAPSULE: mb_geom_capsule_support(g, l, s); break;
    case G_CYLINDER: mb_geom_cylinder_support(g, l, s); break;
    case G_CONVEX: mb_geom_convex_support(g, l, s); break;
    default: geom_shapes[g->type].support(g, l, s);
    }
    mb_geom_point(g, s, out);
}
static inline void mb_geom_axis(const mb_geom_pose *g, int k, double *a) { a[0] = g->R[k]; a[1] = g->R[3 + k]; a[2] = g->R[6 + k]; }
/* The broad phase's plane test: the lowest value of n·x over the box [lo, hi] (plane = n, d).  A box whose
 * low is above d (plus a pair's margin) lies wholly outside the plane's half-space n·x <= d, where its
 * colliders report no contact: a plane's own box is unbounded, so the box test alone passes every pair. */
static inline double mb_geom_box_low(const double *plane, const double *lo, const double *hi)
{
    double low = 0;
    for (int k = 0; k < 3; k++) low += plane[k] * (plane[k] >= 0 ? lo[k] : hi[k]);
    return low;
}
/* a capsule's (or cylinder's) segment: the ends of its axis, e0 at -z */
void mb_geom_segment(const mb_geom_pose *g, double *e0, double *e1);

/* hulls (convex.c keeps the rest of them): the box around the hull moved by x -> R x + p (the
 * vertex farthest along dir: mb_geom_hull_support, above) */
void mb_geom_hull_extent(const mb_hull *h, const double *R, const double *p, double *lo, double *hi);

/* closest point to p on the segment a-b */
void mb_geom_closest_on_segment(const double *p, const double *a, const double *b, double *out);
/* closest points c1 on p1-q1 and c2 on p2-q2 (Ericson, Real-Time Collision Detection 5.1.9) */
void mb_geom_closest_segments(const double *p1, const double *q1, const double *p2, const double *q2, double *c1, double *c2);
/* the part of the convex polygon in[0..nin) with side . x <= off (Sutherland-Hodgman) into out;
 * it stops adding once out holds cap - 1 points; returns the count */
int mb_geom_clip(double (*in)[3], int nin, const double *side, double off, double (*out)[3], int cap);
/* is p (near the plane of triangle t, unit normal n) inside it, its edges widened by tol? */
int mb_geom_in_triangle(const double *p, const double t[3][3], const double *n, double tol);
/* does the ray o + t d, t in [0, reach] (inv = 1 / d per axis) cross the box lo-hi? (slab test) */
int mb_geom_ray_box(const double *lo, const double *hi, const double *o, const double *inv, double reach);

#endif
