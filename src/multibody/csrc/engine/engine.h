/* The maximal-coordinate engine (OpenDE style, the OpenDE report ch. 3, 5 and 6): shared layout.
 *
 * Every array is owned by Python (NumPy, C-contiguous float64/int64) and read here through
 * pointers kept by the Sim object (_engine.c); the field offsets below are the only place the
 * layout is written down.  Python reads them back from the module constants (BS_POS, JD_AXIS1 …).
 */
#ifndef MB_ENGINE_H
#define MB_ENGINE_H

#include <math.h>
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#include <stdint.h>
#include <string.h>

#include "common/vec.h"

/* ---- body state (nb x BS_SIZE): centre of mass, scalar-first quaternion, velocities (world) -- */
#define BS_POS 0
#define BS_QUAT 3
#define BS_VEL 7
#define BS_OMEGA 10
#define BS_SIZE 13
/* ---- body load (nb x 6): applied force and torque (world), cleared after every step --------- */
#define BL_FORCE 0
#define BL_TORQUE 3
#define BL_SIZE 6
/* ---- body properties (nb x BP_SIZE): mass, inertia about the CoM in body axes, inverses ------ */
#define BP_MASS 0
#define BP_INVMASS 1
#define BP_I 2
#define BP_INVI 11
#define BP_SIZE 20

/* ---- joints: jint (nj x 3) = type, body1, body2 (-1 = the static world) --------------------- */
enum { J_BALL = 0, J_HINGE = 1, J_SLIDER = 2, J_FIXED = 3, J_UNIVERSAL = 4, J_HINGE2 = 5 };
#define JI_TYPE 0
#define JI_B1 1
#define JI_B2 2
#define JI_SIZE 3
/* jdat (nj x JD_SIZE) */
#define JD_ANCHOR1 0    /* anchor in body1 axes (world if body1 = -1)                             */
#define JD_ANCHOR2 3    /* anchor in body2 axes (world if body2 = -1)                             */
#define JD_AXIS1 6      /* axis 1 in body1 axes                                                   */
#define JD_AXIS1_B2 9   /* axis 1 in body2 axes at attach time (hinge alignment, slider axis)    */
#define JD_AXIS2 12     /* axis 2 in body2 axes (universal, hinge2)                               */
#define JD_QREL 15      /* reference relative orientation conj(q2) q1 at attach time              */
#define JD_DOT0 19      /* axis1 . axis2 at attach time (universal, hinge2)                       */
#define JD_OFFSET 20    /* slider: p1 - p2 at attach time in body2 axes (world if body2 = -1)     */
#define JD_AXES 24      /* per joint axis k (0, 1): JD_AXES + JA_SIZE k + field                   */
#define JA_MOTOR_VEL 0
#define JA_MOTOR_FMAX 1
#define JA_LO 2
#define JA_HI 3
#define JA_BOUNCE 4
#define JA_STOP_ERP 5
#define JA_STOP_CFM 6
#define JA_DAMPING 7     /* viscous damping c (N·m·s/rad or N·s/m): a row J v = -lambda / c, implicit */
#define JA_SIZE 8
#define JD_ERP 40       /* NaN: the world's                                                       */
#define JD_CFM 41
#define JD_SUSP_ERP 42  /* hinge2 suspension along axis 1                                         */
#define JD_SUSP_CFM 43
#define JD_SIZE 80      /* 44..79: the AMotor's (JD_AM_* below)                                  */

/* ---- geometries: gint (ng x 2) = type (G_*, geometry.h), body (-1 = static, placed in world) - */
#define GI_TYPE 0
#define GI_BODY 1
#define GI_SIZE 2
#define GD_POS 0        /* offset from the body's CoM in body axes (world pose if static)          */
#define GD_QUAT 3
#define GD_SIZE3 7      /* box: lx ly lz; sphere: r; capsule, cylinder: r, length (along z); plane: normal */
#define GD_MU 10
#define GD_BOUNCE 11
#define GD_PLANE_D 12   /* plane n . x = d                                                          */
#define GD_SIZE 16

/* ---- world parameters (WP_SIZE) ---------------------------------------------------------------- */
#define WP_GRAVITY 0
#define WP_ERP 3
#define WP_CFM 4
#define WP_DT 5
#define WP_SOLVER 6          /* 0 Dantzig pivoting, 1 projected Gauss-Seidel quick step, 2 auto   */
#define WP_ITERATIONS 7
#define WP_SOR 8
#define WP_FRICTION 9        /* 0 mu is a force limit, 1 pyramid (mu ratio), 2 cone                */
#define WP_BOUNCE_VEL 10
#define WP_CONTACT_ERP 11
#define WP_CONTACT_CFM 12
#define WP_SURFACE_LAYER 13
#define WP_MAX_CORRECTING_VEL 14
#define WP_MAX_SPEED 15
#define WP_CONTACTS 16       /* 0: no collision detection                                          */
#define WP_BROADPHASE 17     /* 0 sweep and prune, 1 all pairs (for tests of the broad phase)      */
#define WP_TREE 18           /* 1: joint trees without bounded rows use the linear-time factorization */
#define WP_EXACT_ROWS 19     /* auto: steps with at most this many rows pivot, larger ones quick-step */
#define WP_MAX_PIVOTS 20     /* pivots one step may spend (all friction passes) before the quick step */
#define WP_TOLERANCE 21      /* quick step: stop once a sweep changes no lambda by more than this x max|lambda| */
#define WP_JOINTS_VERSION 22 /* counts World's changes to joint stops, motors and ERP/CFM: the step's cached
                              * joint flags (jflags) are found again when it moves */
#define WP_SIZE 24

enum { FRICTION_FORCE = 0, FRICTION_PYRAMID = 1, FRICTION_CONE = 2 };
enum { SOLVER_DANTZIG = 0, SOLVER_PGS = 1, SOLVER_AUTO = 2 };

/* A contact point from the narrow phase: normal points from geom 2 into geom 1.  feature: which fixed point of
 * the pair it is (a box's corner 0…7, a capsule's end 0, 1, a cylinder's rim point 0…7, a hull's vertex on a
 * plane), the same whichever of them touch, or −1 where the collider has no fixed points (its k-th point is
 * then the k-th). */
typedef struct {
    int g1, g2, b1, b2;
    double pos[3], normal[3], depth;
    int feature;
} mb_contact_point;

/* One constraint row: J v = rhs - cfm lambda, lo <= lambda <= hi (findex: friction row bound by
 * mu |lambda[findex]|).  J has a 6-vector [linear; angular] per body. */
typedef struct {
    int b1, b2;
    double J1[6], J2[6];
    double rhs, cfm, lo, hi, mu;
    int findex;      /* -1 or the normal row this friction row is bounded by                     */
    int source;      /* joint index, or -(1 + contact index)                                      */
    int cone_pair;   /* for the cone: index of the other friction row of the same contact, or -1 */
} mb_row;

/* ---- small vector helpers: 3-vectors, 3×3 products and quaternions (mb_dot3, mb_cross3, mb_mv3,
 * mb_quat_mul, …) are common/vec.h's, shared with the core; the engine's own below ------------- */
/* Zeroing six doubles by hand: GCC's generic tuning turns a zeroing loop or memset of a small
 * fixed size into `rep stos`, whose start-up costs more than the stores. */
static inline void zero6(double *x) { x[0] = 0; x[1] = 0; x[2] = 0; x[3] = 0; x[4] = 0; x[5] = 0; }
static inline double dot6(const double *a, const double *b)
{   /* pairwise, so the six products do not wait on one another */
    return (a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3]) + (a[4] * b[4] + a[5] * b[5]);
}
/* x86-64 with GCC: a function compiled twice, with AVX2 (three-operand encoding, broadcasts from
 * memory, four lanes where the compiler finds them) beside the portable build, one picked at load
 * time by the processor.  The same sums in the same order and no FMA, so both builds give the same
 * bits: the target is avx2 alone, not x86-64-v3, whose FMA GCC 12 uses for an add-subtract pair
 * (vfmaddsub) even under -ffp-contract=off. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__) && !defined(__AVX2__)
#define ENGINE_CLONES_AVX2 __attribute__((target_clones("avx2", "default")))
#else
#define ENGINE_CLONES_AVX2
#endif
/* whether the processor has AVX2, so that the clone running is the AVX2 one: kernels written in
 * four lanes for it keep a two-lane form for the portable build (where four lanes would be split
 * into pairs and spilled) */
#if defined(__AVX2__)
#define ENGINE_FOUR_LANES() 1
#elif defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#define ENGINE_FOUR_LANES() __builtin_cpu_supports("avx2")
#else
#define ENGINE_FOUR_LANES() 0
#endif
/* Two-lane vectors (the GCC/Clang vector extension: SSE2 on x86-64, pairs of scalars where there
 * is no such unit).  The blocks of J W J^T are many short dot products; taken two at a time, with
 * one horizontal sum for both, they cost about half the instructions of scalar sums. */
typedef double v2d __attribute__((vector_size(16)));
static inline v2d ld2(const double *p) { v2d v; memcpy(&v, p, sizeof v); return v; }
static inline void st2(double *p, v2d v) { memcpy(p, &v, sizeof v); }
static inline v2d hsum2(v2d p, v2d q) { v2d lo = {p[0], q[0]}, hi = {p[1], q[1]}; return lo + hi; }
/* (a.b, a.c) for 6-vectors */
static inline v2d dot6x2(const double *a, const double *b, const double *c)
{
    v2d a0 = ld2(a), a1 = ld2(a + 2), a2 = ld2(a + 4);
    return hsum2(a0 * ld2(b) + a1 * ld2(b + 2) + a2 * ld2(b + 4), a0 * ld2(c) + a1 * ld2(c + 2) + a2 * ld2(c + 4));
}
/* g . [a1 a2] and g . [b1 b2] for a 12-vector g and two rows given as halves */
static inline v2d dot12_two(const double *g, const double *a1, const double *a2, const double *b1, const double *b2)
{
    v2d g0 = ld2(g), pa = g0 * ld2(a1), pb = g0 * ld2(b1), g6 = ld2(g + 6), qa = g6 * ld2(a2), qb = g6 * ld2(b2);
    for (int i = 2; i < 6; i += 2) {
        v2d x = ld2(g + i), y = ld2(g + 6 + i);
        pa += x * ld2(a1 + i); pb += x * ld2(b1 + i); qa += y * ld2(a2 + i); qb += y * ld2(b2 + i);
    }
    return hsum2(pa + qa, pb + qb);
}
static inline double dot12_one(const double *a1, const double *a2, const double *b)
{
    v2d p = ld2(a1) * ld2(b) + ld2(a1 + 2) * ld2(b + 2) + ld2(a1 + 4) * ld2(b + 4);
    v2d q = ld2(a2) * ld2(b + 6) + ld2(a2 + 2) * ld2(b + 8) + ld2(a2 + 4) * ld2(b + 10);
    p += q;
    return p[0] + p[1];
}
/* c = R a (R row-major 3x3) and c = R^T a */
/* c = S a for an exactly symmetric S (row-major 3x3): its rows are its columns, so the first two
 * entries are one pair of lanes, S[0:2] a0 + S[3:5] a1 + S[6:8] a2, with the sums in mb_mv3's order */
static inline void smv3(const double *S, const double *a, double *c) {
    v2d c01 = ld2(S) * a[0] + ld2(S + 3) * a[1] + ld2(S + 6) * a[2];
    double z = S[2]*a[0] + S[5]*a[1] + S[8]*a[2];
    memcpy(c, &c01, sizeof c01); c[2] = z;
}
/* Two unit vectors p, q completing the unit n to a right-handed basis (ODE's dPlaneSpace). */
static inline void plane_space(const double *n, double *p, double *q) {
    if (fabs(n[2]) > 0.7071067811865476) {
        double a = n[1]*n[1] + n[2]*n[2], k = 1.0 / sqrt(a);
        p[0] = 0; p[1] = -n[2]*k; p[2] = n[1]*k;
        q[0] = a*k; q[1] = -n[0]*p[2]; q[2] = n[0]*p[1];
    } else {
        double a = n[0]*n[0] + n[1]*n[1], k = 1.0 / sqrt(a);
        p[0] = -n[1]*k; p[1] = n[0]*k; p[2] = 0;
        q[0] = -n[2]*p[1]; q[1] = n[2]*p[0]; q[2] = a*k;
    }
}

/* ---- convex hulls (convex.c): shape kind G_CONVEX, its GD_SIZE3 holds the hull's index ---------- */
#define GD_GROUP 13             /* geometries with the same non-zero group do not collide (one robot) */
#define HULL_MAX_VERTS 256      /* shapes.HULL_MAX_VERTICES: the narrow phase keeps a hull on its stack */
typedef struct {
    int nv, nf, ne;
    const double *v, *plane;    /* nv x 3 vertices; nf x 4 outward unit normal n, offset d (n.x <= d) */
    const int *fstart, *fidx;   /* face f: vertices fidx[fstart[f] .. fstart[f+1]), counter-clockwise */
    const int *edge;            /* ne x 4: v0, v1, face on the left of v0 -> v1, face on the right */
    double centre[3];           /* mean of the vertices: inside the hull */
    double box_mid[3], box_half[3]; /* the vertices' box in the hull's frame: mid ± half (scene_contact.c's coarse box) */
    int *own;                   /* the index arrays, allocated by mb_hulls_load */
    double *cols;               /* the vertices by coordinate (nv x's, nv y's, nv z's) for mb_geom_hull_extent's
                                 * two-lane scan: mb_hulls_load's hulls own one, NULL elsewhere (moved, boxes) */
    /* a height field's block (hfield.c) in the same list: nv = 0, MuJoCo's hfield_size (x and y
     * half extents, top elevation, base depth) and its nrow x ncol samples in [0, 1] (row r at y,
     * column c at x: MuJoCo's hfield_data order), read in place; hmax the largest sample */
    int nrow, ncol;
    const double *hsize, *hdata;
    double hmax;
} mb_hull;
struct mb_world_s;
int mb_hulls_load(struct mb_world_s *W, const double *data, int64_t n, char *msg, size_t len);
void mb_hulls_free(struct mb_world_s *W);

/* ---- shapes and their shared geometry (geometry.h, geometry.c) --------------------------------- */
#include "engine/geometry.h"

/* ---- collision (collide.c): one table of pair colliders ---------------------------------------- */
/* A pair collider: up to max contacts of a against b (a's shape code <= b's), normals from b into
 * a; returns the count. */
typedef int (*CollideFn)(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max);
/* the collider of a pair of shape codes in either order (NULL: none); *flip = 1 when it takes
 * them the other way round (its normals are then negated) */
CollideFn mb_collide_find(int ta, int tb, int *flip);
/* Narrow phase for one pair: writes up to max contacts, returns the count, or -1 when the table
 * has no collider for the two shapes (never another shape's). */
int mb_collide_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max);
/* the most contacts the collider of a pair of shape codes ever reports (a sphere's or an ellipsoid's pairs 1, a
 * capsule on a plane 2, …), or 0 where it reports as many as its caller takes (a box's faces, hulls, meshes);
 * −1: no collider */
int mb_collide_max_points(int ta, int tb);
/* whether geometries of the world's shapes can meet in a pair the table has no collider for
 * (two static ones never meet): 0 when none, else 1 with a message naming both shapes */
int mb_collide_check(const int64_t *gint, int ng, char *msg, size_t len);

/* pair colliders of convex.c (a hull against a plane, a sphere or capsule, a box or hull; either
 * of a, b the hull) and of trimesh.c (a shape against a static mesh b) */
int mb_convex_plane(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max);
int mb_convex_core(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max);
int mb_convex_hull(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max);
int mb_trimesh_sphere(const mb_geom_pose *a, const mb_geom_pose *mesh, mb_contact_point *out, int max);
int mb_trimesh_capsule(const mb_geom_pose *a, const mb_geom_pose *mesh, mb_contact_point *out, int max);
int mb_trimesh_box(const mb_geom_pose *a, const mb_geom_pose *mesh, mb_contact_point *out, int max);
int mb_trimesh_cylinder(const mb_geom_pose *a, const mb_geom_pose *mesh, mb_contact_point *out, int max);
int mb_trimesh_convex(const mb_geom_pose *a, const mb_geom_pose *mesh, mb_contact_point *out, int max);
/* hfield.c: a convex shape a against the height field b (its prisms, MuJoCo's mjc_ConvexHField);
 * the field's bounding box; its block in the hull list (size of the block at d, 0 when it is not
 * a height field's; parse: NULL or why the block is bad) */
int mb_hfield_collide(const mb_geom_pose *a, const mb_geom_pose *field, mb_contact_point *out, int max);
void mb_hfield_bounds(mb_geom_pose *g);
int mb_hfield_block(const double *d, int64_t left, int64_t *size);
const char *mb_hfield_parse(const double *d, mb_hull *h);
/* collide.c: add a contact to out[0..n) (max of them: the deepest are kept); returns the count */
int mb_collide_emit(mb_contact_point *out, int n, int max, const double *pos, const double *normal, double depth);

/* ---- LCP (lcp.c) ------------------------------------------------------------------------------ */
/* A (n x n, row-major) lambda = b + w, boxed complementarity; returns 0 on success, nonzero on a
 * pivoting failure (the caller falls back to the iterative solver).  work: >= n^2 + 8 n doubles,
 * iwork: >= 2 n ints (mb_lcp_friction: 3 n).  *pivots is added to; past max_pivots the solve stops
 * with 5. */
enum { LCP_SINGULAR = 1, LCP_UNBOUNDED = 2, LCP_CYCLING = 3, LCP_NOT_FINITE = 4, LCP_PIVOT_LIMIT = 5 };
/* a row's state in a solution: free between its bounds (w = 0), or held at its lower or upper bound */
enum { MB_LCP_FREE = 1, MB_LCP_AT_LO = 2, MB_LCP_AT_HI = 3 };
int mb_lcp_dantzig(int n, const double *A, const double *b, const double *lo_in, const double *hi_in,
                const int *findex, const double *mu, int friction_mode, double *x,
                double *work, int *iwork, int *pivots, int max_pivots);
/* the same with friction rows bounded by mu |x[findex]|, solved to the true pyramid (or cone) by
 * fixed-point passes on the bounds, ended by solving their fixed point directly once a pass has
 * fixed the rows' states (pyramid only); lo, hi in: the rows' bounds, out: the bounds used.
 * bpp_work (n^2 + 7 n doubles), bpp_iwork (4 n ints): where given, the first pass's states are corrected
 * by block principal pivoting (mb_lcp_friction_warm) before more passes; NULL: the passes alone (the
 * engine's, whose steps follow ODE's).  seed (n MB_LCP_* states, or NULL): a guess of the solution's free rows
 * (the last step's, where mb_lcp_friction_warm failed), which the first pivoting starts from where they lie
 * inside their bounds (lcp.c: seed_free_rows) */
int mb_lcp_friction(int n, const double *A, const double *b, double *lo, double *hi, int *findex,
                 const double *mu, const int *cone_pair, double *x, double *flo, double *fhi,
                 double *work, int *iwork, int *pivots, int max_pivots, double *bpp_work, int *bpp_iwork,
                 const int *seed);
/* mb_lcp_friction's pyramid LCP from guessed row states (MB_LCP_*: the last step's), one linear solve, the
 * guess corrected from the rows that break complementarity and solved again up to MB_LCP_WARM_TRIES solves;
 * 1 with x the solution and guess its rows' states, else 0 (then solve cold).  lo, hi, findex as
 * mb_lcp_friction takes them (not changed); work: n^2 + 6 n doubles, iwork: 3 n ints. */
#define MB_LCP_WARM_TRIES 3
int mb_lcp_friction_warm(int n, const double *A, const double *b, const double *lo, const double *hi,
                         const int *findex, const double *mu, int *guess, double *x, double *work, int *iwork);

/* ---- the world (step.c): pointers into the Python-owned arrays plus per-step scratch --------- */
typedef struct mb_world_s {
    int nb, nj, ng;
    double *state, *load;                 /* nb x BS_SIZE, nb x BL_SIZE */
    const double *bprop;                  /* nb x BP_SIZE, fixed while the Sim lives */
    int *bdiag;                           /* per body: inertia diagonal in body axes */
    const int64_t *jint; const double *jdat;
    const int64_t *gint; const double *gdat;
    const double *wpar;
    double *R, *invIw, *fext, *vfree, *save; /* nb*9, nb*9, nb*6, nb*6, nb*BS_SIZE */
    double *jlast, *jturns;               /* nj*2: last wrapped joint angle, whole turns added */
    int64_t *pairs; int npairs;           /* sorted body pairs joined by a joint (no contact) */
    mb_geom_pose *gp; double *planes; int *order, norder;
    mb_contact_point *contacts; int nc, cap_c;
    mb_row *rows; int m, cap_rows;
    double *lambda, *b, *lo, *hi, *mu, *cfmh, *A, *iMJ, *Ad, *fc, *work, *w, *flo, *fhi;
    int *findex, *cone, *iwork; int cap_m, cap_A;
    /* tree.c: block-sparse factorization for joint trees (equality rows only) */
    int tree_ok, tree_m;
    int *torder, *tpos, *trows, *tstart, *nbr_start, *nbr_list;
    double *tdiag, *nbr_block, *nbr_L, *tvec;   /* 6 x 6 padded blocks, 6 per joint in tvec */
    int used_tree;
    /* tree.c, ball-based joints only (ball, hinge, universal, fixed): blocks from angular parts */
    int tree_ball, imj_stale;             /* imj_stale: this step formed no W J^T (mb_world_residual forms it) */
    int *nbr_side; double *nbr_imb, *tang, *tG;
    double *tim;                          /* per joint: its two bodies' inverse masses summed */
    /* a tree of free hinges (no motor, no stops) keeps what its rows are made of (hterms, nj x
     * HT_SIZE) and writes the rows themselves only when asked for (rows_stale: mb_world_residual) */
    int tree_hinges, rows_stale; double *hterms;
    /* per joint JF_* (mb_joint_flags), found at WP_JOINTS_VERSION = jversion */
    unsigned char *jflags; double jversion;
    /* warm start of the quick step: last step's contacts and joint multipliers */
    mb_contact_point *wprev; double *wforce; int64_t *wkey; int *wperm, nwprev, cap_wprev;
    double *jlam; int *jrow_start, *jrow_count, njlam, cap_jlam;
    mb_hull *hulls; int nhulls;              /* convex.c: the hulls of the G_CONVEX geometries */
    struct TreeContacts *tcon;            /* tree_contacts.c: a joint tree's other rows on the Schur complement */
    struct QRow *qrows; int cap_qrows;    /* quickstep.c: the quick step's rows, packed for its sweeps */
    struct QCache *qcache;                /* quickstep.c: its orders, kept while the rows join the same bodies */
    long steps;
    int solver_used, fallback, pivots, iterations, bad_body;
    const char *why;                      /* which solver ran this step and why (a static string) */
    struct mb_trimesh **meshes;              /* ng pointers (NULL but for G_TRIMESH), owned by the Sim */
    double residual;
    char message[256];
} mb_world;

int mb_world_init(mb_world *W);
void mb_world_free(mb_world *W);
int mb_world_step(mb_world *W, double h);   /* 0 ok, 1 exploded (message), -1 out of memory */
void mb_world_joint_coords(mb_world *W, double *pos, double *rate, int update);
double mb_world_residual(mb_world *W);
/* broad + narrow phase: the number of contacts, -1 out of memory, -2 a pair without a collider (message) */
int mb_world_collide_only(mb_world *W);
/* quickstep.c: the quick step on the rows step.c built (0 ok, -1 out of memory), and the forces
 * kept after a solve for the next step's warm start */
int mb_quick_step(mb_world *W, double ih, int iters, double sor, double tol);
int mb_quick_remember(mb_world *W);
void mb_quick_free(mb_world *W);

/* joints.c */
typedef struct {
    int naxes;
    double pos[2], rate[2];               /* wrapped angle (or slider displacement) and rate */
    double J1[2][6], J2[2][6];            /* rows with J v = rate */
    double d[4];                          /* body 1's rotation relative to body 2 since attach time */
    double half[2];                       /* hinge: cos and sin of half its angle (cos >= 0)    */
} mb_axis_info;
/* what: AX_ANGLES for a hinge's pos (else NaN: its half-angle vector is enough to count turns),
 * AX_RATES for a hinge's rate and rate rows (else NaN and unset) */
enum { AX_ANGLES = 1, AX_RATES = 2 };
void mb_joint_axes(const mb_world *W, int j, mb_axis_info *ax, int what);
int mb_joint_rows(const mb_world *W, int j, double h, const mb_axis_info *ax, const double *pos_unwrapped, mb_row *rows);
int mb_hinge_rows(const mb_world *W, int j, double h, double *half, mb_row *rows);
/* a free hinge's rows as terms: levers r1, r2 (anchor rows J = [+-e_k, +-(r x e_k)]), the axis
 * rows' directions p, q (J = [0, +-p]), the five rows' rhs and the CFM */
#define HT_R1 0
#define HT_R2 3
#define HT_P 6
#define HT_Q 9
#define HT_RHS 12
#define HT_CFM 17
#define HT_SIZE 18
void mb_hinge_terms(const mb_world *W, int j, double h, double *half, double *t);
/* joint flags: a free hinge (joint_free_hinge), and a joint with an ERP or CFM of its own */
enum { JF_FREE_HINGE = 1, JF_OWN_PARAMS = 2 };
void mb_joint_flags(mb_world *W);
int mb_hinge_terms_run(const mb_world *W, int j, double h, double *half, int max);
/* whether axis a (0, 1) of joint j has a stop (lo <= hi, not both infinite) or a motor (fmax > 0) */
static inline int joint_axis_stop(const mb_world *W, int j, int a)
{
    const double *pa = W->jdat + (size_t)j * JD_SIZE + JD_AXES + JA_SIZE * a;
    return pa[JA_LO] <= pa[JA_HI] && (pa[JA_LO] > -INFINITY || pa[JA_HI] < INFINITY);
}
static inline int joint_axis_motor(const mb_world *W, int j, int a)
{
    return W->jdat[(size_t)j * JD_SIZE + JD_AXES + JA_SIZE * a + JA_MOTOR_FMAX] > 0;
}
/* a hinge without stops, motors or damping: its rows are the five of mb_hinge_terms (its one axis's
 * damping is checked; axis 1's fields, which a hinge does not read, as before) */
static inline int joint_free_hinge(const mb_world *W, int j)
{
    return W->jint[(size_t)j * JI_SIZE + JI_TYPE] == J_HINGE && !joint_axis_stop(W, j, 0) && !joint_axis_stop(W, j, 1) &&
           !joint_axis_motor(W, j, 0) && !joint_axis_motor(W, j, 1) &&
           !(W->jdat[(size_t)j * JD_SIZE + JD_AXES + JA_DAMPING] > 0);
}
void mb_hinge_write_rows(const mb_world *W, int j, const double *t, mb_row *rows);
int mb_tree_solve_hinges(mb_world *W, double ih);
#define MAX_JOINT_ROWS 10
int mb_joint_base_rows(int type);
int mb_tree_init(mb_world *W);
void mb_tree_free(mb_world *W);
int mb_tree_solve(mb_world *W);
/* a tree of ball-based joints: b, CFM/h and the multipliers straight from the rows (no W J^T),
 * then J^T lambda added into fc (nb x 6) */
int mb_tree_solve_ball(mb_world *W, double ih);
void mb_tree_add_forces(const mb_world *W, double *fc);
/* another right-hand side on the last mb_tree_solve's factors: tvec in, A_jj^-1 tvec out (and in lambda) */
int mb_tree_resolve(mb_world *W);
/* tree_contacts.c: a joint tree plus other rows (contacts, stops, motors), the tree's rows
 * eliminated through its factorization and the others pivoted on their Schur complement.
 * mb_tree_contacts_rows: the number of other rows when the step's rows allow it, else -1 (-2 out
 * of memory); mb_tree_contacts_solve: then lambda (0, or an LCP_* code), after lcp_terms. */
int mb_tree_contacts_rows(mb_world *W);
int mb_tree_contacts_solve(mb_world *W);
void mb_tree_contacts_free(mb_world *W);

/* ==== rays, static triangle meshes and the angular motor (ray.c, trimesh.c, joints.c) ========== */
enum { J_AMOTOR = 6 };        /* ODE's angular motor: no base rows, 1-3 axes of motors and stops   */
/* AMotor data in jdat (the anchor and axis fields of the other joints are unused by it) */
#define JD_AM_MODE 44       /* 0 user, 1 euler                                                     */
#define JD_AM_NAXES 45
#define JD_AM_AXIS3 48      /* motor and stop parameters of axis 2 (JA_* fields)                   */
#define JD_AM_AXES 56       /* axis k (k = 0..2) in the frame it is anchored to: JD_AM_AXES + 3 k  */
#define JD_AM_REL 65        /* per axis: 0 world, 1 body 1, 2 body 2                               */
#define JD_AM_REF1 68       /* euler: axis 2 at attach time in body-1 axes                         */
#define JD_AM_REF2 71       /* euler: axis 0 at attach time in body-2 axes (world if none)         */
#define JD_AM_QREL 74       /* user: conj(q2) q1 at attach time (angles are zero there)            */
#define JD_AM_SIZE 80
/* the motor/stop parameters of axis a of any joint */
static inline const double *joint_axis_params(const double *jd, int a)
{ return a < 2 ? jd + JD_AXES + JA_SIZE * a : jd + JD_AM_AXIS3; }
/* world axes, angles (rad, in (-pi, pi]) and rates of an AMotor; returns its number of axes */
int mb_amotor_axes(const mb_world *W, int j, double ax[3][3], double angle[3], double rate[3]);
int mb_amotor_rows(const mb_world *W, int j, double h, mb_row *rows);

/* A triangle mesh with a bounding-volume hierarchy (trimesh.c) */
typedef struct { double lo[3], hi[3]; int left, count; } mb_bvh_node;   /* leaf: count > 0, first = left */
typedef struct mb_trimesh {
    int nv, nt, nnodes;
    double *v;               /* nv x 3, world */
    int *tri;                /* nt x 3, in the hierarchy's leaf order */
    double *normal;          /* nt x 3, unit (counter-clockwise front) */
    mb_bvh_node *nodes;
    double lo[3], hi[3];
} mb_trimesh;
mb_trimesh *mb_trimesh_build(const double *v, int nv, const int64_t *tri, int nt);   /* NULL: no memory */
void mb_trimesh_free(mb_trimesh *m);
/* One triangle (corners t, unit face normal n) against the convex geom g, writing contacts from
 * index n0 (convex.c; mb_trimesh_convex calls it for every candidate triangle). */
int mb_convex_triangle(const mb_geom_pose *g, const double t[3][3], const double *n, mb_contact_point *out, int n0, int max);
/* the contacts c[0..n) of a convex geom g against a mesh (all its triangles') cut to at most 4 and max
 * spanning the largest area, in place; returns the count (convex.c) */
int mb_mesh_manifold(const mb_geom_pose *g, mb_contact_point *c, int n, int max);
/* of c[0..n) only what mb_mesh_manifold can choose from (the deepest, the outline's corners), in place */
int mb_mesh_outline(const mb_geom_pose *g, mb_contact_point *c, int n);
/* nearest triangle the ray o + t d (|d| = 1, 0 <= t <= tmax) crosses: t, normal facing the ray */
int mb_trimesh_ray(const mb_trimesh *m, const double *o, const double *d, double tmax, double *t, double *normal);

/* Rays (ray.c).  Solid shapes: a ray from outside hits the entry; one starting inside hits the
 * exit with the normal negated (facing back along the ray), as ODE's dCollideRay*.  Planes and
 * triangles are surfaces hit from either side.  The normal always satisfies normal . d <= 0. */
int mb_ray_geom(const mb_geom_pose *g, const double *plane, const double *o, const double *d, double tmax, double *t, double *normal);
/* a convex polytope { x : n_i . x <= d_i }, planes nf x 4 (n_i unit, d_i), by slab clipping */
int mb_ray_convex_planes(const double *planes, int nf, const double *o, const double *d, double tmax, double *t, double *normal);
typedef struct { int geom; double t, normal[3]; } mb_ray_hit;
typedef struct { mb_bvh_node *nodes; int *geoms; int n, nnodes; } mb_ray_tree;   /* over the non-plane geoms */
int mb_ray_tree_build(const mb_world *W, mb_ray_tree *T);    /* -1: no memory */
void mb_ray_tree_free(mb_ray_tree *T);
int mb_world_ray(const mb_world *W, const mb_ray_tree *T, const double *o, const double *d, double tmax, int all, mb_ray_hit *out);
/* poses and bounding boxes of every geom at the current state (step.c) */
void mb_world_geom_poses(mb_world *W);
/* ==== end of rays, triangle meshes, angular motor ============================================= */

#endif
