/* scene_contact.c — the contacts of a model's own collision geometry at q, and the compliant law
 * on them (scene_contact.h says the conventions).
 *
 * Narrow phase: the engine's collision table (engine/collide.c, over engine/geometry.c), compiled
 * into the core as well (setup.py), so that the reduced-coordinate loop and the maximal-coordinate
 * engine meet shapes through one library.  Each geom is posed as the engine poses its own
 * (mb_geom_pose: world rotation and position, bounding box), here from the core's forward kinematics
 * (mb_body_states) rather than from free bodies.
 *
 * Margins: the engine's colliders report penetrations only.  A pair with a margin is collided with
 * one geom grown by it — a plane moved out along its normal, or a sphere's or capsule's radius —
 * which is exact (the grown shape is the Minkowski sum of the shape and a ball), and the result
 * moved back: depth − margin, the midpoint half a margin back towards the grown geom.  A pair with
 * neither a plane, a sphere nor a capsule keeps depth ≥ 0 only (the loader warns, naming it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "sim/scene_contact.h"

int mb_scene_load_hulls(mb_scene *s, const double *block, int64_t n, char *msg, size_t len)
{   /* convex.c keeps hulls on an engine world: borrow one as their container */
    mb_world W;
    memset(&W, 0, sizeof W);
    s->hulls = NULL, s->nhulls = 0;
    if (n == 0)
        return 0;
    int st = mb_hulls_load(&W, block, n, msg, len);
    if (st) {
        mb_hulls_free(&W);
        return st;
    }
    s->hulls = W.hulls, s->nhulls = W.nhulls;
    return 0;
}

void mb_scene_free_hulls(mb_scene *s)
{
    mb_world W;
    memset(&W, 0, sizeof W);
    W.hulls = s->hulls, W.nhulls = s->nhulls;
    mb_hulls_free(&W);
    s->hulls = NULL, s->nhulls = 0;
}

int mb_scene_check(const mb_model *m, const mb_scene *s, char *msg, size_t len)
{
    for (int g = 0; g < s->ng; g++) {
        const int64_t *gi = s->gint + (size_t)g * MB_SG_INTS;
        const double *gd = s->gdat + (size_t)g * MB_SG_SIZE;
        const int64_t t = gi[MB_SG_TYPE], b = gi[MB_SG_BODY], h = gi[MB_SG_HULL];
        if (t < 0 || t >= G_COUNT || t == G_TRIMESH) {
            snprintf(msg, len, "geom %d: shape code %lld is not a shape the scene collides (codes 0..%d, not the "
                     "static triangle mesh %d)", g, (long long)t, G_COUNT - 1, G_TRIMESH);
            return 1;
        }
        if (b < -1 || b >= m->nb) {
            snprintf(msg, len, "geom %d: body %lld; expected -1 (static) or 0..%d", g, (long long)b, m->nb - 1);
            return 1;
        }
        if (geom_shapes[t].static_only && b != -1) {
            snprintf(msg, len, "geom %d: a %s must be static (body -1), not on body %lld", g, mb_geom_name((int)t), (long long)b);
            return 1;
        }
        if (t == G_CONVEX || t == G_HFIELD ? (h < 0 || h >= s->nhulls || /* a height field's block has no vertices */
                                               (((const mb_hull *)s->hulls)[h].nv == 0) != (t == G_HFIELD)) : h != -1) {
            snprintf(msg, len, "geom %d: hull index %lld; expected %s", g, (long long)h,
                     t == G_CONVEX ? "one of the scene's hulls" : t == G_HFIELD ? "one of the scene's height fields" : "-1 (not a convex mesh)");
            return 1;
        }
        for (int k = 0; k < MB_SG_SIZE; k++)
            if (!isfinite(gd[k])) {
                snprintf(msg, len, "geom %d: its placement or size is not finite", g);
                return 1;
            }
        for (int k = 0; k < 3; k++)
            if (t != G_PLANE && t != G_CONVEX && k < (t == G_SPHERE ? 1 : t == G_CAPSULE || t == G_CYLINDER ? 2 : 3) &&
                !(gd[MB_SG_SIZE3 + k] > 0)) {
                snprintf(msg, len, "geom %d (%s): size %d is %g; expected > 0", g, mb_geom_name((int)t), k,
                         gd[MB_SG_SIZE3 + k]);
                return 1;
            }
    }
    for (int p = 0; p < s->npair; p++) {
        const int64_t a = s->pairs[2 * p], b = s->pairs[2 * p + 1];
        const double *pd = s->pdat + (size_t)p * MB_SP_SIZE;
        if (a < 0 || a >= s->ng || b < 0 || b >= s->ng || a == b) {
            snprintf(msg, len, "pair %d: geoms %lld, %lld; expected two different geoms of 0..%d", p, (long long)a,
                     (long long)b, s->ng - 1);
            return 1;
        }
        int ta = (int)s->gint[a * MB_SG_INTS + MB_SG_TYPE], tb = (int)s->gint[b * MB_SG_INTS + MB_SG_TYPE], flip;
        if (s->gint[a * MB_SG_INTS + MB_SG_BODY] < 0 && s->gint[b * MB_SG_INTS + MB_SG_BODY] < 0) {
            snprintf(msg, len, "pair %d: geoms %lld and %lld are both static; they never meet", p, (long long)a,
                     (long long)b);
            return 1;
        }
        if (!mb_collide_find(ta, tb, &flip)) {
            snprintf(msg, len, "pair %d: the engine has no collider for a %s-%s pair", p, mb_geom_name(ta), mb_geom_name(tb));
            return 1;
        }
        for (int k = 0; k < MB_SP_SIZE; k++)
            if (!isfinite(pd[k]) || pd[k] < 0) {
                snprintf(msg, len, "pair %d: margin, friction and condim must be finite and >= 0", p);
                return 1;
            }
    }
    return 0;
}

/* geom g posed from its body's world pose (R0, p0 of the core; static geoms: their own pose) */
static void pose(const mb_scene *s, const double *R0, const double *p0, int g, double *size, double *plane,
                 mb_geom_pose *G)
{
    const int64_t *gi = s->gint + (size_t)g * MB_SG_INTS;
    const double *gd = s->gdat + (size_t)g * MB_SG_SIZE;
    const int b = (int)gi[MB_SG_BODY];
    memset(G, 0, sizeof *G);
    G->type = (int)gi[MB_SG_TYPE], G->body = b;
    if (b < 0) {
        memcpy(G->R, gd + MB_SG_R, sizeof G->R);
        mb_copy3(gd + MB_SG_P, G->p);
    } else {
        const double *R = R0 + 9 * b;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                G->R[3 * i + j] = R[3 * i] * gd[MB_SG_R + j] + R[3 * i + 1] * gd[MB_SG_R + 3 + j] +
                                  R[3 * i + 2] * gd[MB_SG_R + 6 + j];
        mb_mv3(R, gd + MB_SG_P, G->p);
        mb_add3(G->p, p0 + 3 * b, G->p);
    }
    memcpy(size, gd + MB_SG_SIZE3, 3 * sizeof(double));
    G->size = size;
    if (G->type == G_PLANE) {   /* the plane z = 0 of its frame: n . x = d */
        mb_geom_axis(G, 2, plane);
        plane[3] = mb_dot3(plane, G->p);
        G->plane = plane;
    }
    if (G->type == G_CONVEX || G->type == G_HFIELD)
        G->hull = (const mb_hull *)s->hulls + gi[MB_SG_HULL];
}

/* grow geom G by margin (a plane, sphere or capsule; returns 0 for any other shape) */
static int grow(mb_geom_pose *G, double *size, double *plane, double margin)
{
    if (G->type == G_PLANE)
        plane[3] += margin;
    else if (G->type == G_SPHERE || G->type == G_CAPSULE)
        size[0] += margin;
    else
        return 0;
    return 1;
}

static int boxes_apart(const mb_geom_pose *a, const mb_geom_pose *b, double margin)
{
    for (int k = 0; k < 3; k++)
        if (a->lo[k] > b->hi[k] + margin || b->lo[k] > a->hi[k] + margin)
            return 1;
    return 0;
}

/* one geom posed with its bounding box, and the numbers its pose points at (size, plane) */
typedef struct posed {
    mb_geom_pose G;
    double size[3], plane[4];
} posed;

/* a plane and a geom whose box lies beyond it (by more than the pair's margin: the plane grown by it) never
 * meet; a plane's box is unbounded, so without this test every plane pair went to its collider (dm_control's
 * quadruped: its floor and four walls against 19 geoms, 95 collider calls a step for 4 contacts) */
static int plane_apart(const posed *plane, const posed *other, double margin)
{
    return plane->G.type == G_PLANE && other->G.type != G_PLANE &&
           mb_geom_box_low(plane->plane, other->G.lo, other->G.hi) > plane->plane[3] + margin;
}

size_t mb_scene_pose_scratch(const mb_scene *s)
{
    return sizeof(posed) * (size_t)(s->ng ? s->ng : 1);
}

int mb_scene_contacts(const mb_model *m, mb_data *d, const double *q, const mb_scene *s, mb_scene_contact *out,
                      int cap, void *scratch)
{
    posed *P = scratch;
    if (!P && !(P = malloc(mb_scene_pose_scratch(s))))
        return -2;
    mb_body_states(m, d, q, NULL, NULL, d->R0, d->p0, NULL, NULL);
    /* every geom posed once per call, not once per pair it is in (a toe meets dozens of candidates); the
     * boxes then decide most pairs in six comparisons */
    for (int g = 0; g < s->ng; g++) {
        pose(s, d->R0, d->p0, g, P[g].size, P[g].plane, &P[g].G);
        geom_shapes[P[g].G.type].bounds(&P[g].G);
    }
    int n = 0;
    for (int p = 0; p < s->npair; p++) {
        const int ga = (int)s->pairs[2 * p], gb = (int)s->pairs[2 * p + 1];
        const double margin = s->pdat[(size_t)p * MB_SP_SIZE + MB_SP_MARGIN];
        if (boxes_apart(&P[ga].G, &P[gb].G, margin) || plane_apart(&P[ga], &P[gb], margin) ||
            plane_apart(&P[gb], &P[ga], margin))
            continue;
        /* copies: a margin grows the pair's own (size, plane), never the step's poses */
        double sa[3], sb[3], pla[4], plb[4];
        mb_geom_pose A = P[ga].G, B = P[gb].G;
        memcpy(sa, P[ga].size, sizeof sa), memcpy(pla, P[ga].plane, sizeof pla);
        memcpy(sb, P[gb].size, sizeof sb), memcpy(plb, P[gb].plane, sizeof plb);
        A.size = sa, B.size = sb;
        if (A.plane)
            A.plane = pla;
        if (B.plane)
            B.plane = plb;
        /* a grown geom (+1 a, −1 b, 0 none): the midpoint moves half a margin from it */
        int grown = 0;
        if (margin > 0)
            grown = grow(&A, sa, pla, margin) ? 1 : grow(&B, sb, plb, margin) ? -1 : 0;
        mb_contact_point c[MB_SCENE_PAIR_MAX];
        const int k = mb_collide_pair(&A, &B, c, MB_SCENE_PAIR_MAX);
        if (k < 0) {
            n = -1;
            break;
        }
        for (int i = 0; i < k; i++, n++) {
            if (n >= cap)
                continue;
            mb_scene_contact *o = out + n;
            o->pair = p;
            mb_scale3(c[i].normal, -1.0, o->normal);    /* the engine's points from b into a */
            o->depth = c[i].depth - (grown ? margin : 0.0);
            for (int j = 0; j < 3; j++)
                o->pos[j] = c[i].pos[j] - 0.5 * margin * grown * o->normal[j];
        }
    }
    if (P != scratch)
        free(P);
    return n;
}

void mb_scene_tangents(const double *n, double *t1, double *t2)
{
    double e[3] = {1.0, 0.0, 0.0};
    if (fabs(n[0]) > 0.9)
        e[0] = 0.0, e[1] = 1.0;
    const double en = mb_dot3(e, n);
    for (int k = 0; k < 3; k++)
        t1[k] = e[k] - en * n[k];
    mb_scale3(t1, 1.0 / mb_norm3(t1), t1);
    mb_cross3(n, t1, t2);
}

/* world velocity of the point x moving with body k (0 for the static world) */
static void point_velocity(const mb_data *d, int k, const double *x, double *out)
{
    if (k < 0) {
        out[0] = out[1] = out[2] = 0.0;
        return;
    }
    const double *R = d->R0 + 9 * k, *p0 = d->p0 + 3 * k, *V = d->v + 6 * k;
    double w[3], r[3], vb[3];
    mb_sub3(x, p0, w);
    mb_mtv3(R, w, r);  /* the point in body coordinates */
    vb[0] = V[3] + (V[1] * r[2] - V[2] * r[1]);
    vb[1] = V[4] + (V[2] * r[0] - V[0] * r[2]);
    vb[2] = V[5] + (V[0] * r[1] - V[1] * r[0]);
    mb_mv3(R, vb, out);
}

static void add_force(double *fext, int k, const double *x, const double *f, double sign)
{   /* Fpt: [x × f; f] about the base origin */
    if (k < 0)
        return;
    double *fb = fext + 6 * k;
    fb[0] += sign * (x[1] * f[2] - x[2] * f[1]);
    fb[1] += sign * (x[2] * f[0] - x[0] * f[2]);
    fb[2] += sign * (x[0] * f[1] - x[1] * f[0]);
    fb[3] += sign * f[0], fb[4] += sign * f[1], fb[5] += sign * f[2];
}

void mb_scene_contact_forces(const mb_model *m, mb_data *d, const double *q, const double *qd, const mb_scene *s,
                             const mb_scene_contact *c, int nc, double K, double D, const double *u, double *fext,
                             double *udot, double *F, unsigned char *state)
{
    mb_body_states(m, d, q, qd, NULL, d->R0, d->p0, d->v, NULL);
    memset(fext, 0, sizeof(double) * 6 * m->nb);
    for (int i = 0; i < nc; i++) {
        const int p = c[i].pair;
        const int ba = (int)s->gint[s->pairs[2 * p] * MB_SG_INTS + MB_SG_BODY];
        const int bb = (int)s->gint[s->pairs[2 * p + 1] * MB_SG_INTS + MB_SG_BODY];
        const double *pd = s->pdat + (size_t)p * MB_SP_SIZE;
        const double mu = pd[MB_SP_CONDIM] >= 3 ? pd[MB_SP_FRICTION] : 0.0;
        const double *n = c[i].normal, *x = c[i].pos, *ui = u + 2 * i;
        double va[3], vb[3], v[3], t[2][3], *f = F + 3 * i, *ud = udot + 2 * i;
        point_velocity(d, ba, x, va);
        point_velocity(d, bb, x, vb);
        mb_sub3(vb, va, v);
        mb_scene_tangents(n, t[0], t[1]);
        const double depth = c[i].depth, vn = mb_dot3(n, v);
        const double zr = sqrt(fmax(0.0, depth));
        const double fn = zr * (K * depth - D * vn);
        double ft[2] = {0.0, 0.0};
        int sliding = 0;
        state[i] = 0;
        ud[0] = ud[1] = 0.0;
        if (mu > 0.0) {
            const double vt[2] = {mb_dot3(t[0], v), mb_dot3(t[1], v)};
            if (!(fn > 0.0)) {
                for (int j = 0; j < 2; j++)
                    ud[j] = (-K / D) * ui[j];
            } else {
                double sum = 0.0;
                for (int j = 0; j < 2; j++) {
                    ft[j] = -zr * K * ui[j] - zr * D * vt[j];  /* sticking law first */
                    ud[j] = vt[j];
                    sum += ft[j] * ft[j];
                }
                const double fcone = sqrt(sum) / (mu * fn);
                if (fcone > 1.0) {  /* sliding: back onto the friction cone */
                    sliding = 1;
                    for (int j = 0; j < 2; j++) {
                        ft[j] /= fcone;
                        ud[j] = -(ft[j] + zr * K * ui[j]) / (zr * D);
                    }
                }
            }
        }
        if (!(fn > 0.0)) {
            f[0] = f[1] = f[2] = 0.0;
            continue;
        }
        state[i] = sliding ? 2 : 1;
        for (int j = 0; j < 3; j++)
            f[j] = fn * n[j] + ft[0] * t[0][j] + ft[1] * t[1][j];
        add_force(fext, bb, x, f, 1.0);
        add_force(fext, ba, x, f, -1.0);
    }
}

/* the stage's scratch: its memory of the last call (64 bytes), contacts, u, u̇, F (doubles), slots, states, then
 * the poses (aligned) */
typedef struct stage_memo {
    const double *F_last;  /* the F of the last call (NULL: none yet), and the slots it wrote there:     */
    int n_last;            /*   slot[0 .. n_last) (F is zero elsewhere; 3 × slots doubles is ~50 kB)     */
} stage_memo;

static size_t stage_poses_at(const mb_scene *s)
{
    const size_t cap = (size_t)s->npair * MB_SCENE_PAIR_MAX;
    return (64 + cap * (sizeof(mb_scene_contact) + sizeof(double) * 7 + 1 + sizeof(int)) + 64) / 64 * 64;
}

size_t mb_scene_stage_scratch(const mb_scene *s)
{
    return stage_poses_at(s) + mb_scene_pose_scratch(s);
}

int mb_scene_contact_stage(const mb_model *m, mb_data *d, const double *q, const double *qd, const mb_scene *s,
                           double K, double D, const double *z, double *fext, double *zdot, double *F, void *scratch)
{
    const int cap = s->npair * MB_SCENE_PAIR_MAX;
    stage_memo *memo = scratch;
    mb_scene_contact *c = (mb_scene_contact *)((char *)scratch + 64);
    double *u = (double *)(c + cap), *ud = u + 2 * cap, *Fc = ud + 2 * cap;
    int *slot = (int *)(Fc + 3 * cap);
    unsigned char *state = (unsigned char *)(slot + cap);
    if (F == memo->F_last)  /* zero but for the slots the last call wrote (their list is still in slot) */
        for (int i = 0; i < memo->n_last; i++)
            memset(F + 3 * (size_t)slot[i], 0, sizeof(double) * 3);
    else
        memset(F, 0, sizeof(double) * 3 * cap);
    memo->F_last = NULL, memo->n_last = 0;
    const int nc = mb_scene_contacts(m, d, q, s, c, cap, (char *)scratch + stage_poses_at(s));
    if (nc < 0)
        return -1;
    for (int i = 0, k = 0; i < nc; i++) {  /* contacts come pair by pair: k counts the pair's points */
        k = i > 0 && c[i].pair == c[i - 1].pair ? k + 1 : 0;
        slot[i] = c[i].pair * MB_SCENE_PAIR_MAX + k;
        u[2 * i] = z[2 * slot[i]], u[2 * i + 1] = z[2 * slot[i] + 1];
    }
    mb_scene_contact_forces(m, d, q, qd, s, c, nc, K, D, u, fext, ud, Fc, state);
    for (int p = 0; p < s->npair; p++) {  /* every slot apart first */
        const double *pd = s->pdat + (size_t)p * MB_SP_SIZE;
        const double rate = pd[MB_SP_CONDIM] >= 3 && pd[MB_SP_FRICTION] > 0.0 ? -K / D : 0.0;
        for (int k = 2 * p * MB_SCENE_PAIR_MAX; k < 2 * (p + 1) * MB_SCENE_PAIR_MAX; k++)
            zdot[k] = rate * z[k];
    }
    for (int i = 0; i < nc; i++) {
        zdot[2 * slot[i]] = ud[2 * i], zdot[2 * slot[i] + 1] = ud[2 * i + 1];
        mb_copy3(Fc + 3 * i, F + 3 * slot[i]);
    }
    memo->F_last = F, memo->n_last = nc < cap ? nc : cap;
    return 0;
}
