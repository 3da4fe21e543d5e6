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

void mb_scene_free(mb_scene *s)
{
    if (s->owner)  /* (its hulls and slots are its owner's) */
        return;
    mb_world W;
    memset(&W, 0, sizeof W);
    W.hulls = s->hulls, W.nhulls = s->nhulls;
    mb_hulls_free(&W);
    s->hulls = NULL, s->nhulls = 0;
    free(s->slot0), free(s->slot_pair);
    s->slot0 = s->slot_pair = NULL, s->nslot = 0;
}

/* A pair has a slot for each point its collider can report, not MB_SCENE_PAIR_MAX for every pair: dm_control's
 * dog, 6 277 pairs mostly of capsules and ellipsoids, has 11.6 k slots instead of 50 k, and each slot is two
 * states of z and a recorded force. */
int mb_scene_pair_slots(int ta, int tb)
{
    const int k = mb_collide_max_points(ta, tb);
    return k > 0 && k < MB_SCENE_PAIR_MAX ? k : MB_SCENE_PAIR_MAX;
}

int mb_scene_index_slots(mb_scene *s)
{
    free(s->slot0), free(s->slot_pair);
    s->slot_pair = NULL, s->nslot = 0;
    if (!(s->slot0 = malloc(sizeof(int) * ((size_t)s->npair + 1))))
        return -1;
    int n = 0, memo[G_COUNT][G_COUNT];   /* each pair of shapes looked up once (a run's calls each index anew) */
    memset(memo, 0, sizeof memo);
    for (int p = 0; p < s->npair; p++) {
        const int ta = (int)s->gint[s->pairs[2 * p] * MB_SG_INTS + MB_SG_TYPE];
        const int tb = (int)s->gint[s->pairs[2 * p + 1] * MB_SG_INTS + MB_SG_TYPE];
        if (!memo[ta][tb])   /* (mb_scene_check ran: both codes are shapes of the table) */
            memo[ta][tb] = mb_scene_pair_slots(ta, tb);
        s->slot0[p] = n;
        n += memo[ta][tb];
    }
    s->slot0[s->npair] = n;
    if (!(s->slot_pair = malloc(sizeof(int) * ((size_t)n + 1)))) {
        free(s->slot0), s->slot0 = NULL;
        return -1;
    }
    for (int p = 0; p < s->npair; p++)
        for (int k = s->slot0[p]; k < s->slot0[p + 1]; k++)
            s->slot_pair[k] = p;
    s->nslot = n;
    return 0;
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

/* one geom posed with its bounding box, and the numbers its pose points at (size, plane); coarse: the box
 * is still coarse_bounds's */
typedef struct posed {
    mb_geom_pose G;
    double size[3], plane[4];
    int coarse;
} posed;

/* A loaded hull's exact box costs a scan of its vertices (mb_geom_hull_extent: 17 hulls of 256 vertices were
 * ~17 % of a hard-contact step of solo12 on its meshes), and most of a robot's hulls are far from everything.
 * So a hull gets first the world box of its vertices' box in its own frame (as box_bounds bounds a box:
 * R mid + p ± |R| half), widened by far more than the rounding of the exact box's products so that it holds
 * that box; the exact box is computed only for a pair the coarse one does not part, and decides as before.
 * (A bounding sphere's box let the base and lower legs of a standing solo12 through to the exact scan; this
 * one parts them.)  A hull against a plane goes from the coarse box straight to its collider, which finds
 * no vertex beyond the plane where the exact box would have parted them. */
static int coarse_bounds(mb_geom_pose *G)
{
    const mb_hull *h = G->hull;
    if (G->type != G_CONVEX || !h || h->nv <= 0 || !h->cols)
        return 0;
    double c[3];
    mb_mv3(G->R, h->box_mid, c);
    const double reach = mb_norm3(h->box_mid) + mb_norm3(h->box_half);
    for (int k = 0; k < 3; k++) {
        const double *Rk = G->R + 3 * k;
        const double e = fabs(Rk[0]) * h->box_half[0] + fabs(Rk[1]) * h->box_half[1] + fabs(Rk[2]) * h->box_half[2];
        const double slack = e + 1e-9 * (reach + fabs(G->p[k]));
        G->lo[k] = c[k] + G->p[k] - slack;
        G->hi[k] = c[k] + G->p[k] + slack;
    }
    return 1;
}

/* a plane and a geom whose box lies beyond it (by more than the pair's margin: the plane grown by it) never
 * meet; a plane's box is unbounded, so without this test every plane pair went to its collider (dm_control's
 * quadruped: its floor and four walls against 19 geoms, 95 collider calls a step for 4 contacts) */
static int plane_apart(const posed *plane, const posed *other, double margin)
{
    return plane->G.type == G_PLANE && other->G.type != G_PLANE &&
           mb_geom_box_low(plane->plane, other->G.lo, other->G.hi) > plane->plane[3] + margin;
}

static int pair_apart(const posed *P, int ga, int gb, double margin)
{
    return boxes_apart(&P[ga].G, &P[gb].G, margin) || plane_apart(&P[ga], &P[gb], margin) ||
           plane_apart(&P[gb], &P[ga], margin);
}

size_t mb_scene_pose_scratch(const mb_scene *s)
{
    return sizeof(posed) * (size_t)(s->ng ? s->ng : 1);
}

/* The state slots of a pair's k points among its n (mb_scene_contact.slot = slot0[pair] + slot[i]): a point
 * with a feature (a fixed point of its shape: a box's corner, a capsule's end, a hull's vertex) takes
 * feature mod n, so it keeps its state whichever others touch or which is deepest; where a point of a lower
 * feature holds that one (a hull's vertices, up to 256, share the 8), the next free one.  Points without a
 * feature take their order. */
static void pair_slots(const mb_contact_point *c, int k, int n, int *slot)
{
    unsigned used = 0;   /* (k <= n: the collider was asked for n at most, so a free one is always left) */
    for (int i = 0; i < k; i++) {
        slot[i] = c[i].feature >= 0 ? -1 : i;
        if (slot[i] >= 0)
            used |= 1u << i;
    }
    for (int done = 0; done < k; done++) {
        int low = -1;   /* the lowest feature not placed yet */
        for (int i = 0; i < k; i++)
            if (slot[i] < 0 && (low < 0 || c[i].feature < c[low].feature))
                low = i;
        if (low < 0)
            break;
        int j = c[low].feature % n;
        while (used >> j & 1u)
            j = (j + 1) % n;
        slot[low] = j, used |= 1u << j;
    }
}

/* mb_scene_contacts on the body poses d->R0, d->p0 already computed at q */
static int contacts_posed(mb_data *d, const mb_scene *s, mb_scene_contact *out, int cap, void *scratch)
{
    posed *P = scratch;
    if (!P && !(P = malloc(mb_scene_pose_scratch(s))))
        return -2;
    /* every geom posed once per call, not once per pair it is in (a toe meets dozens of candidates); the
     * boxes then decide most pairs in six comparisons */
    for (int g = 0; g < s->ng; g++) {
        pose(s, d->R0, d->p0, g, P[g].size, P[g].plane, &P[g].G);
        P[g].coarse = coarse_bounds(&P[g].G);
        if (!P[g].coarse)
            geom_shapes[P[g].G.type].bounds(&P[g].G);
    }
    int n = 0;
    for (int p = 0; p < s->npair; p++) {
        const int ga = (int)s->pairs[2 * p], gb = (int)s->pairs[2 * p + 1];
        const double margin = s->pdat[(size_t)p * MB_SP_SIZE + MB_SP_MARGIN];
        if (pair_apart(P, ga, gb, margin))
            continue;
        /* the exact boxes decide, but not against a plane: the hull's collider (hull_plane) scans its vertices
         * against the plane anyway, so the exact box's scan would only repeat it */
        if ((P[ga].coarse || P[gb].coarse) && P[ga].G.type != G_PLANE && P[gb].G.type != G_PLANE) {
            for (int k = 0; k < 2; k++) {
                posed *Q = P + (k ? gb : ga);
                if (Q->coarse)
                    geom_shapes[Q->G.type].bounds(&Q->G), Q->coarse = 0;
            }
            if (pair_apart(P, ga, gb, margin))
                continue;
        }
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
        const int slots = s->slot0[p + 1] - s->slot0[p];
        const int k = mb_collide_pair(&A, &B, c, slots);
        if (k < 0) {
            n = -1;
            break;
        }
        int slot[MB_SCENE_PAIR_MAX];
        pair_slots(c, k, slots, slot);
        for (int i = 0; i < k; i++, n++) {
            if (n >= cap)
                continue;
            mb_scene_contact *o = out + n;
            o->pair = p, o->slot = s->slot0[p] + slot[i];
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

int mb_scene_contacts(const mb_model *m, mb_data *d, const double *q, const mb_scene *s, mb_scene_contact *out,
                      int cap, void *scratch)
{
    mb_body_states(m, d, q, NULL, NULL, d->R0, d->p0, NULL, NULL);
    return contacts_posed(d, s, out, cap, scratch);
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

/* mb_scene_contact_forces on the body poses and velocities d->R0, d->p0, d->v already computed at (q, q̇) */
/* (tn: each contact's tangents t1, t2 kept, 6 numbers, for the implicit step; or NULL) */
static void forces_posed(const mb_model *m, mb_data *d, const mb_scene *s, const mb_scene_contact *c, int nc,
                         double K, double D, const double *u, double *fext, double *udot, double *F,
                         unsigned char *state, double *tn)
{
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
        if (tn)
            mb_copy3(t[0], tn + 6 * (size_t)i), mb_copy3(t[1], tn + 6 * (size_t)i + 3);
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

void mb_scene_contact_forces(const mb_model *m, mb_data *d, const double *q, const double *qd, const mb_scene *s,
                             const mb_scene_contact *c, int nc, double K, double D, const double *u, double *fext,
                             double *udot, double *F, unsigned char *state)
{
    mb_body_states(m, d, q, qd, NULL, d->R0, d->p0, d->v, NULL);
    forces_posed(m, d, s, c, nc, K, D, u, fext, udot, F, state, NULL);
}

/* the stage's scratch: its memory of the last call (64 bytes), contacts, u, u̇, F, tangents (doubles), slots, the live
 * slots, states, the live marks, then the poses (aligned) */
typedef struct stage_memo {
    const double *F_last;  /* the F of the last call (NULL: none yet), and the slots it wrote there:     */
    int n_last;            /*   slot[0 .. n_last) (F is zero elsewhere; 3 × slots doubles is ~50 kB)     */
    int live_ok;           /* 1: live[0 .. n_live) holds every slot whose z may not be zero (0: not yet)  */
    const double *z_last;  /* the z of the last call (mb_scene_contact_implicit resets the slots apart)  */
    const double *zdot_last;  /* the ż the last call wrote: zero outside the live slots                */
    int n_live;
} stage_memo;

/* the stage's arrays in its scratch (cap = the scene's slots) */
typedef struct stage_view {
    mb_scene_contact *c;
    double *u, *ud, *Fc, *tn;  /* (tn: each contact's tangents t1, t2, mb_scene_tangents's, 6 numbers) */
    int *slot, *live;
    unsigned char *state, *inlive;
} stage_view;

static stage_view stage_arrays(const mb_scene *s, void *scratch)
{
    const size_t cap = (size_t)s->nslot;
    stage_view v;
    v.c = (mb_scene_contact *)((char *)scratch + 64);
    v.u = (double *)(v.c + cap), v.ud = v.u + 2 * cap, v.Fc = v.ud + 2 * cap;
    v.tn = v.Fc + 3 * cap, v.slot = (int *)(v.tn + 6 * cap), v.live = v.slot + cap;
    v.state = (unsigned char *)(v.live + cap), v.inlive = v.state + cap;
    return v;
}

static size_t stage_poses_at(const mb_scene *s)
{
    const size_t cap = (size_t)s->nslot;
    return (64 + cap * (sizeof(mb_scene_contact) + sizeof(double) * 13 + 2 + 2 * sizeof(int)) + 64) / 64 * 64;
}

size_t mb_scene_stage_scratch(const mb_scene *s)
{
    return stage_poses_at(s) + mb_scene_pose_scratch(s);
}

/* The live slots: a list that holds every slot whose deformation z may not be zero, so that a call visits those
 * and its contacts' alone, not every slot (dm_control's humanoid: 477 slots, ~10 in contact; the visits of all
 * were ~15 % of its step).  A run's first call (the scratch zeroed) finds them in z; each call adds its contacts'
 * slots (their ż may move z), and mb_scene_contact_implicit drops the slots whose z and ż are then both zero: a
 * semi_implicit run calls the stage at the states it steps from alone, each the last one's z + h ż, so such a
 * slot's z stays zero until a contact adds it again.  (The explicit steppers call the stage at states between,
 * from which a later stage starts over: there the list only grows, which is exact too.) */
static void live_add(stage_memo *memo, stage_view *v, int k)
{
    if (!v->inlive[k])
        v->inlive[k] = 1, v->live[memo->n_live++] = k;
}

int mb_scene_live_slots(const mb_scene *s, void *scratch, const int **live)
{
    const stage_memo *memo = scratch;
    *live = stage_arrays(s, scratch).live;
    return memo->live_ok ? memo->n_live : -1;
}

int mb_scene_contact_stage(const mb_model *m, mb_data *d, const double *q, const double *qd, const mb_scene *s,
                           double K, double D, double zscale, const double *z, double *fext, double *zdot, double *F,
                           void *scratch)
{
    const int cap = s->nslot;
    stage_memo *memo = scratch;
    stage_view V = stage_arrays(s, scratch);
    mb_scene_contact *c = V.c;
    double *u = V.u, *ud = V.ud, *Fc = V.Fc;
    int *slot = V.slot;
    unsigned char *state = V.state;
    if (F == memo->F_last)  /* zero but for the slots the last call wrote (their list is still in slot) */
        for (int i = 0; i < memo->n_last; i++)
            memset(F + 3 * (size_t)slot[i], 0, sizeof(double) * 3);
    else
        memset(F, 0, sizeof(double) * 3 * cap);
    memo->F_last = NULL, memo->n_last = 0;
    if (!memo->live_ok) {  /* the run's first call: the slots deformed at its start */
        for (int k = 0; k < cap; k++)
            if (z[2 * (size_t)k] != 0.0 || z[2 * (size_t)k + 1] != 0.0)
                live_add(memo, &V, k);
        memo->live_ok = 1;
    }
    /* the bodies' poses and velocities once, for the narrow phase and the law */
    mb_body_states(m, d, q, qd, NULL, d->R0, d->p0, d->v, NULL);
    const int nc = contacts_posed(d, s, c, cap, (char *)scratch + stage_poses_at(s));
    if (nc < 0)
        return -1;
    for (int i = 0; i < nc; i++) {
        slot[i] = c[i].slot;
        u[2 * i] = z[2 * slot[i]], u[2 * i + 1] = z[2 * slot[i] + 1];
        live_add(memo, &V, slot[i]);
    }
    forces_posed(m, d, s, c, nc, K, D, u, fext, ud, Fc, state, V.tn);
    /* every slot apart first: u̇ = −(K/D) u, zero where u is (every slot off the live list); a ż the last call
     * wrote is zero off the list already */
    if (zdot != memo->zdot_last)
        memset(zdot, 0, sizeof(double) * 2 * (size_t)cap);
    for (int j = 0; j < memo->n_live; j++) {
        const int p = s->slot_pair[V.live[j]];
        const double *pd = s->pdat + (size_t)p * MB_SP_SIZE;
        const double rate = pd[MB_SP_CONDIM] >= 3 && pd[MB_SP_FRICTION] > 0.0 ? -K / D : 0.0;
        for (int k = 2 * V.live[j]; k < 2 * V.live[j] + 2; k++)
            zdot[k] = rate * z[k] * zscale;
    }
    for (int i = 0; i < nc; i++) {
        zdot[2 * slot[i]] = ud[2 * i] * zscale, zdot[2 * slot[i] + 1] = ud[2 * i + 1] * zscale;
        mb_copy3(Fc + 3 * i, F + 3 * slot[i]);
    }
    memo->F_last = F, memo->n_last = nc < cap ? nc : cap, memo->z_last = z, memo->zdot_last = zdot;
    return 0;
}

/* ---- the law implicit in the step (semi_implicit) --------------------------------------------------------
 * A per-contact linearisation in the contact's own velocity, solved on the Delassus operator of the
 * active contacts (as Drake's TAMSI, Castro et al. 2019, linearises its compliant contact in the
 * velocity; MuJoCo's implicitfast does it for a damper).  Each row r (a contact's normal, and t1, t2
 * where it has friction) has the law's force f_r(d, u, v_r):
 *   normal   ∂f/∂v = −√d D,  ∂f/∂d = 1.5 K √d,  d₁ = d − h v_n⁺
 *   sticking ∂f/∂v = −√d D,  ∂f/∂u = −√d K,     u₁ = u + h v_t⁺  (the new velocity moves u, as it moves q)
 * so over the step f_r⁺ = f_r − D_r (v_r⁺ − v_r) − h K_r v_r⁺ with v⁺ = v_free + h W Δf (W = J M⁻¹ Jᵀ on
 * the step's M, v_free the explicit step's), i.e.
 *   (G⁻¹ + h W) Δf = b/G,  b_r = −(D_r h a_r + h K_r v_free,r),  G = diag(D_r + h K_r),  a_r = J_r q̈_explicit,
 * symmetric positive definite.  Any step then damps a contact's relative velocity towards rest instead of
 * reversing it.  A contact sliding at the step's start has the same tangent rows: its sticking law's force,
 * −√d (K u + D v_t), lies beyond the cone, and b takes the difference from the force applied (on the cone),
 * so that it sticks within the step where the solve slows its slip enough.  A tangential force the solve
 * puts past the cone is fixed on it (μ f_n⁺ along the solve's direction, then sliding) and the rest solved
 * again; then a normal the solve would make pull is released (force 0, its rows fixed at Δf = −f) and the
 * rest solved again, until no row changes.  A contact in the floor the law judged apart at the step's start
 * (its damping pulling harder than its depth pushes) but still in it at the step's end at its speed is a
 * candidate with the same rows, from u = 0 and none applied: the step's end decides whether it pushes.  Every
 * slot apart at the step's end forgets its deformation (reset_apart).  (Before, a sliding contact's friction
 * was explicit, f_t f_n⁺ / f_n: at 5 ms dm_control's humanoid then stick-slipped its feet and head, which threw it out of the pose
 * MuJoCo's lies in.)
 *
 * The solve is the Delassus form's joint-space twin (Woodbury's identity): with x = M⁻¹ Jᵀ Δf, the change
 * of q̈, the free rows F read Δf_F = b_F − h G_F J_F x, so that, the fixed rows X carrying their Δf_X,
 *   (M + h J_Fᵀ G_F J_F) x = J_Fᵀ b_F + J_Xᵀ Δf_X,
 * nv × nv however many rows are active (dm_control's humanoid lying on its floor: 11 contacts, 33 rows on
 * 27 dofs, where the rows' own Cholesky and W's assembly were 35 % of its run).  A contact with the static
 * world, or between a body and one of its ancestors, has its rows on one chain of the tree, so its JᵀJ falls
 * inside M's branch-induced sparsity and the sum factors by LTDL as M does (RBDA §6.5, sparse.c); rows
 * across two branches would fill in between them, so they are a low-rank update of that sum instead, solved by
 * Woodbury's identity with the sliding contacts' (implicit_solve), or the step factors the whole sum dense
 * (Cholesky) where that is cheap or safer: below 64 dofs, for many such rows, or stiff ones.
 * SceneContact.implicit_step states the Delassus form in NumPy: the tests hold the two forms to each other. */
struct mb_scene_implicit {
    int nv, cap;                  /* rows the buffers hold */
    double *H, *S, *L, *A;        /* nv² each: M (md's: mb_scene_implicit_inertia), the dense factor, M's LTDL
                                   * factors, M + h Jᵀ G J (factored in place) */
    double *tau, *x, *C, *diag, *J3;  /* nv each (C: the solve's right-hand side without the rows), 3 nv */
    double *Hheld, *qdd0;         /* n_held × nv, nv: the held joints' rows of M and the q̈ on entry (held_force) */
    double *ax;                   /* 6 nv: the dofs' world axes at the step's poses (mb_dof_world_axes) */
    double *Jr;                   /* rows × nv */
    double *b, *g, *df, *dfs, *dir, *tdir;  /* rows each (dir 3 per row; dfs: the Δf the last solve's q̈ is for,
                                             * tdir: a sliding contact's unit friction direction, on its tangent
                                             * rows) */
    double *f0d, *mu, *dfc;       /* rows each: the step's applied force along the row, its contact's μ; a
                                   * sliding row's Δf but for its normal's share (below) */
    double *Z, *Sk;               /* rows × nv, rows²: A⁻¹ U and I + Vᵀ A⁻¹ U's LU of the sliding contacts */
    int *fixed;                   /* per row: 0 free, 1 fixed at df, 2 sliding (on the cone, with its normal) */
    int *slid, *piv, nslid;       /* the sliding contacts (their first row), the LU's pivots; how many */
    int *act, *row0, *nrow;       /* per active contact: its index in the stage's list, first row, rows */
    int *nz, *nnz;                /* rows × nv, rows: each row's columns, ascending: its bodies' dofs and their
                                   * ancestors' (the row is zero elsewhere, and is not written there) */
    int *chain;                   /* 2 nv (mb_contact_columns) */
    int *nrun, *runs;             /* rows, rows × 2 nv: each row's columns as runs of consecutive dofs, (lo, hi)
                                   * pairs ascending (column_runs) */
    int *cross;                   /* per active contact: its rows cross two branches of the tree */
    int dense;                    /* this factorisation's: M + h Jᵀ G J dense (Cholesky into S), else LTDL in A */
    int na;                       /* active contacts */
    int ncr;                      /* the active contacts' rows; the soft stops' rows follow them */
    int posed;                    /* mb_scene_implicit_inertia's: d held the poses at q (the RNEA reads them) */
};

mb_scene_implicit *mb_scene_implicit_new(const mb_model *m)
{
    mb_scene_implicit *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    const size_t nv = (size_t)m->nv;
    w->nv = m->nv;
    w->H = malloc(sizeof(double) * (5 * nv * nv + 14 * nv + 1));
    w->chain = malloc(sizeof(int) * (2 * nv + 1));
    if (!w->H || !w->chain) {
        free(w->H), free(w->chain);
        free(w);
        return NULL;
    }
    w->S = w->H + nv * nv, w->L = w->S + nv * nv, w->A = w->L + nv * nv;
    w->tau = w->A + nv * nv, w->x = w->tau + nv, w->C = w->x + nv, w->diag = w->C + nv, w->J3 = w->diag + nv;
    w->ax = w->J3 + 3 * nv, w->Hheld = w->ax + 6 * nv, w->qdd0 = w->Hheld + nv * nv;
    return w;
}

void mb_scene_implicit_free(mb_scene_implicit *w)
{
    if (!w)
        return;
    free(w->H), free(w->chain), free(w->Jr), free(w->fixed);
    free(w);
}

static int implicit_reserve(mb_scene_implicit *w, int rows)
{
    if (rows <= w->cap)
        return 0;
    free(w->Jr), free(w->fixed);
    const size_t N = (size_t)rows, nv = (size_t)w->nv;
    w->Jr = malloc(sizeof(double) * (2 * N * nv + N * N + 11 * N));
    w->fixed = malloc(sizeof(int) * (9 * N + 3 * N * nv));
    if (!w->Jr || !w->fixed) {
        free(w->Jr), free(w->fixed);
        w->Jr = NULL, w->fixed = NULL, w->cap = 0;
        return 1;
    }
    w->b = w->Jr + N * nv, w->g = w->b + N, w->df = w->g + N, w->dfs = w->df + N, w->dir = w->dfs + N;
    w->tdir = w->dir + 3 * N, w->f0d = w->tdir + N, w->mu = w->f0d + N, w->dfc = w->mu + N, w->Z = w->dfc + N;
    w->Sk = w->Z + N * nv;
    w->act = w->fixed + N, w->row0 = w->act + N, w->nrow = w->row0 + N, w->nnz = w->nrow + N, w->nz = w->nnz + N;
    w->slid = w->nz + N * nv, w->piv = w->slid + N, w->nrun = w->piv + N, w->runs = w->nrun + N;
    w->cross = w->runs + 2 * N * nv;
    w->cap = rows;
    return 0;
}

/* A (holding a copy of an SPD matrix of the tree, nv × nv) factored: in place by LTDL (RBDA table 6.3, the
 * tree's branch-induced sparsity: mb_ltdl), or dense into S by Cholesky (lower triangles read alone).  MB_OK,
 * else a pivot not above round-off of its diagonal (fd_sparse's test; diag: nv scratch) makes the tree
 * singular at the body whose dof it is (as ABA's D_i would), or MB_OVERFLOW where the numbers are not finite */
static int factor_tree(const mb_model *m, double *A, int dense, double *S, double *diag)
{
    const int nv = m->nv;
    if (dense)
        return mb_cholesky_factor(nv, A, S, 1e-13) ? MB_OK : mb_pivot_status(A, nv * nv);
    for (int k = 0; k < nv; k++)
        diag[k] = A[(size_t)nv * k + k];
    int bad = mb_ltdl(nv, m->dof_parent, A);
    for (int k = nv - 1; bad < 0 && k >= 0; k--)
        if (!(A[(size_t)nv * k + k] > 1e-13 * diag[k]))
            bad = k;
    if (bad < 0)
        return MB_OK;
    if (mb_pivot_status(diag, nv) != MB_SINGULAR || mb_pivot_status(A, nv * nv) != MB_SINGULAR)
        return MB_OVERFLOW;
    for (int i = m->nb - 1; i >= 0; i--)
        if (m->v_start[i] <= bad)
            return mb_singular_at(m, i);
    return MB_SINGULAR;
}

/* M = Lᵀ D L into w->L (mb_ltdl on a copy of w->H); MB_OK or factor_tree's status */
static int factor_inertia(const mb_model *m, mb_scene_implicit *w)
{
    memcpy(w->L, w->H, sizeof(double) * (size_t)w->nv * w->nv);
    return factor_tree(m, w->L, 0, NULL, w->diag);
}

/* A = M + h Jᵀ G J found singular (st, factor_tree's): M's own status where M is singular too (its body named),
 * else MB_CONTACT_STIFF — the contact terms did it (an impact far too fast for the step: dm_control's humanoid
 * dropped 100 m at 5 ms, its A's diagonal 4e20 times M's), not a massless body */
static int singular_step(const mb_model *m, mb_scene_implicit *w, int st)
{
    if (st != MB_SINGULAR)
        return st;
    (void)mb_singular_take();  /* (A's pivot's body: not the cause if M factors) */
    st = factor_inertia(m, w);
    return st == MB_OK ? MB_CONTACT_STIFF : st;
}

/* x = A⁻¹ x with A's factors (implicit_solve's) */
static void apply_inverse(const mb_model *m, const mb_scene_implicit *w, double *x)
{
    if (w->dense)
        mb_cholesky_apply_inverse(w->nv, w->S, x);
    else
        mb_ltdl_solve(w->nv, m->dof_parent, w->A, x);
}

/* x ← S⁻¹ x with S (k × k) LU-factored in place with partial pivoting (factor: do it first); 0 if singular */
static int small_lu(int k, double *S, int *piv, double *x, int factor)
{
    for (int c = 0; factor && c < k; c++) {
        int p = c;
        for (int r = c + 1; r < k; r++)
            if (fabs(S[r * k + c]) > fabs(S[p * k + c]))
                p = r;
        if (!(fabs(S[p * k + c]) > 0.0))
            return 0;
        piv[c] = p;
        if (p != c)
            for (int j = 0; j < k; j++) {
                const double t = S[c * k + j];
                S[c * k + j] = S[p * k + j], S[p * k + j] = t;
            }
        for (int r = c + 1; r < k; r++) {
            S[r * k + c] /= S[c * k + c];
            for (int j = c + 1; j < k; j++)
                S[r * k + j] -= S[r * k + c] * S[c * k + j];
        }
    }
    for (int c = 0; c < k; c++)  /* P x, every interchange first: the rows of L moved with the later ones too */
        if (piv[c] != c) {
            const double t = x[c];
            x[c] = x[piv[c]], x[piv[c]] = t;
        }
    for (int c = 0; c < k; c++)
        for (int r = c + 1; r < k; r++)
            x[r] -= S[r * k + c] * x[c];
    for (int c = k - 1; c >= 0; c--) {
        for (int j = c + 1; j < k; j++)
            x[c] -= S[c * k + j] * x[j];
        x[c] /= S[c * k + c];
    }
    return 1;
}

/* A row's columns (ascending) as runs of consecutive dofs into runs, (lo, hi) pairs; returns how many.  A
 * contact's columns are its bodies' chains of ancestors, whose dofs are mostly consecutive (dm_control's
 * humanoid: one or two runs a contact), so that the loops over them below run over contiguous memory, without
 * an index per element, and the element-wise ones two numbers an instruction, each number's operations as
 * before. */
static int column_runs(const int *cols, int n, int *runs)
{
    int nr = 0;
    for (int p = 0; p < n; p++)
        if (p > 0 && cols[p] == cols[p - 1] + 1)
            runs[2 * nr - 1] = cols[p];
        else
            runs[2 * nr] = runs[2 * nr + 1] = cols[p], nr++;
    return nr;
}

/* J_r · x on the row's columns, ascending */
static double row_dot(const mb_scene_implicit *w, int r, const double *x)
{
    const double *jr = w->Jr + (size_t)r * w->nv;
    const int *run = w->runs + (size_t)r * 2 * w->nv;
    double s = 0.0;
    for (int t = 0; t < w->nrun[r]; t++)
        for (int j = run[2 * t]; j <= run[2 * t + 1]; j++)
            s += jr[j] * x[j];
    return s;
}

/* y[lo .. hi] += c0 x0 + c1 x1 + c2 x2 (a sticking contact's three rows into A; one row: vec.h's mb_add_scaled_run):
 * two elements an instruction, each element's operations unchanged, pairs written out as there */
static inline void add_rows3(double *y, const double *x0, const double *x1, const double *x2, double c0, double c1,
                             double c2, int lo, int hi)
{
    const mb_pair a0 = {c0, c0}, a1 = {c1, c1}, a2 = {c2, c2};
    int j = lo;
    for (; j + 1 <= hi; j += 2) {
        mb_pair v0, v1, v2, yv;
        memcpy(&v0, x0 + j, sizeof v0), memcpy(&v1, x1 + j, sizeof v1), memcpy(&v2, x2 + j, sizeof v2);
        memcpy(&yv, y + j, sizeof yv);
        yv += a0 * v0 + a1 * v1 + a2 * v2;
        memcpy(y + j, &yv, sizeof yv);
    }
    if (j == hi)
        y[j] += c0 * x0[j] + c1 * x1[j] + c2 * x2[j];
}

/* The step's q̈ = (M + h J_Fᵀ G_F J_F + U Vᵀ)⁻¹ (C + J_Fᵀ b_F + J_Xᵀ Δf_X + J_Sᵀ Δf_S⁰) (C: M q̈₀, or τ − C(q, v,
 * f_ext)), then the free rows' Δf_F = b_F − h G_F J_F q̈.  The sliding contacts' tangent rows S carry their
 * friction on the cone, μ (f_n + Δf_n) along tdir, exactly: with Δf_n = b_n − h g_n J_n q̈ their share is the
 * constant Δf_S⁰ = μ tdir (f_n + b_n) − f_t (dfc) and the rank-one − h g_n μ (tdir·J_t)ᵀ J_n q̈ per contact,
 * moved to the left as U Vᵀ (u = h g_n μ (tdir·J_t)ᵀ, v = J_nᵀ: not symmetric) and solved by Woodbury's
 * identity on A = M + h J_Fᵀ G_F J_F's factors: q̈ = y − Z (I + Vᵀ Z)⁻¹ Vᵀ y, y = A⁻¹ rhs, Z = A⁻¹ U.
 * factor = 0: the free and sliding sets are the last call's, only the fixed rows' values moved: A's factors,
 * Z and the small LU are reused.  crossing: some contact's rows cross two branches (w->cross), whose
 * J_rᵀ h g_r J_r would fill A in between them: their free rows join U Vᵀ instead (u = h g_r J_rᵀ, v = J_rᵀ), A
 * keeping the tree's sparsity, unless they are so many (2 k > nv) or the tree so small (nv < 64) that A factored
 * dense costs little (dm_control's fruit fly: 3 such contacts on 108 dofs, where its dense Cholesky was half the
 * run).  MB_OK, MB_CONTACT_STIFF (A or the small system singular, M not) or M's factor_tree status */
MB_CLONES_AVX2
static int implicit_solve(const mb_model *m, mb_scene_implicit *w, int n, double h, int factor, int crossing,
                          double *qdd)
{
    const int nv = w->nv;
    for (int force_dense = 0; factor; force_dense = 1) {
        int k_cross = 0;  /* the crossing contacts' free rows */
        for (int c = 0; crossing && c < w->na; c++)
            for (int r = w->row0[c]; w->cross[c] && r < w->row0[c] + w->nrow[c]; r++)
                k_cross += !w->fixed[r];
        /* (below 64 dofs the dense factor is cheap; without crossing rows A keeps the tree's sparsity) */
        w->dense = force_dense || (k_cross > 0 && (2 * k_cross > nv || nv < 64));
        const int lift = crossing && !w->dense;  /* the crossing rows into U Vᵀ */
        memcpy(w->A, w->H, sizeof(double) * (size_t)nv * nv);
        for (int c = 0; c < w->na; c++) {  /* (a, b) with b ≤ a: both on the contact's columns (runs) */
            const int r0 = w->row0[c], *run = w->runs + (size_t)r0 * 2 * nv, nr = w->nrun[r0];
            if (lift && w->cross[c])
                continue;
            if (w->nrow[c] == 3 && !w->fixed[r0] && !w->fixed[r0 + 1]) {  /* a sticking contact's three rows at once */
                const double *j0 = w->Jr + (size_t)r0 * nv, *j1 = j0 + nv, *j2 = j1 + nv;
                const double h0 = h * w->g[r0], h1 = h * w->g[r0 + 1], h2 = h * w->g[r0 + 2];
                for (int t = 0; t < nr; t++)
                    for (int a = run[2 * t]; a <= run[2 * t + 1]; a++) {
                        const double c0 = h0 * j0[a], c1 = h1 * j1[a], c2 = h2 * j2[a];
                        double *Aa = w->A + (size_t)a * nv;
                        for (int u = 0; u < t; u++)
                            add_rows3(Aa, j0, j1, j2, c0, c1, c2, run[2 * u], run[2 * u + 1]);
                        add_rows3(Aa, j0, j1, j2, c0, c1, c2, run[2 * t], a);
                    }
                continue;
            }
            for (int r = r0; r < r0 + w->nrow[c]; r++) {
                if (w->fixed[r])
                    continue;
                const double *jr = w->Jr + (size_t)r * nv, hg = h * w->g[r];
                for (int t = 0; t < nr; t++)
                    for (int a = run[2 * t]; a <= run[2 * t + 1]; a++) {
                        const double ca = hg * jr[a];
                        double *Aa = w->A + (size_t)a * nv;
                        for (int u = 0; u < t; u++)
                            mb_add_scaled_run(Aa, jr, ca, run[2 * u], run[2 * u + 1]);
                        mb_add_scaled_run(Aa, jr, ca, run[2 * t], a);
                    }
            }
        }
        for (int r = w->ncr; r < n; r++)  /* a soft stop's row sign·e_j: h g on A's diagonal at j */
            if (!w->fixed[r])
                w->A[(size_t)w->nz[(size_t)r * nv] * (nv + 1)] += h * w->g[r];
        const int st = factor_tree(m, w->A, w->dense, w->S, w->diag);
        if (st != MB_OK)
            return singular_step(m, w, st);
        w->nslid = 0;  /* the crossing rows and the sliding contacts: Z = A⁻¹ U, and I + Vᵀ Z factored */
        for (int c = 0; lift && c < w->na; c++) {
            if (!w->cross[c])
                continue;
            const int *nz = w->nz + (size_t)w->row0[c] * nv, nnz = w->nnz[w->row0[c]];
            for (int r = w->row0[c]; r < w->row0[c] + w->nrow[c]; r++) {
                if (w->fixed[r])
                    continue;
                double *z = w->Z + (size_t)w->nslid * nv;
                const double *jr = w->Jr + (size_t)r * nv, hg = h * w->g[r];
                memset(z, 0, sizeof(double) * (size_t)nv);
                for (int k = 0; k < nnz; k++)
                    z[nz[k]] = hg * jr[nz[k]];
                apply_inverse(m, w, z);
                w->slid[w->nslid++] = r;
            }
        }
        const int n_lift = w->nslid;
        for (int c = 0; c < w->na; c++) {
            const int r0 = w->row0[c];
            if (w->nrow[c] != 3 || w->fixed[r0 + 1] != 2)
                continue;
            double *z = w->Z + (size_t)w->nslid * nv;
            const int *nz = w->nz + (size_t)r0 * nv;
            const double *j1 = w->Jr + (size_t)(r0 + 1) * nv, *j2 = j1 + nv;
            const double coef = h * w->g[r0] * w->mu[r0 + 1];
            memset(z, 0, sizeof(double) * (size_t)nv);
            for (int k = 0; k < w->nnz[r0]; k++)
                z[nz[k]] = coef * (w->tdir[r0 + 1] * j1[nz[k]] + w->tdir[r0 + 2] * j2[nz[k]]);
            apply_inverse(m, w, z);
            w->slid[w->nslid++] = r0;
        }
        const int k = w->nslid;
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++)
                w->Sk[i * k + j] = (i == j ? 1.0 : 0.0) + row_dot(w, w->slid[i], w->Z + (size_t)j * nv);
        /* a crossing row whose h g J A⁻¹ Jᵀ is large makes y and Z (I + Vᵀ Z)⁻¹ Vᵀ y cancel to that many digits
         * (two 1 g balls on a 1e15 N/m^1.5 contact: all of them, the step read q̈ = 0): factor it dense instead,
         * which solves it or says it cannot */
        int stiff = 0;
        for (int i = 0; i < n_lift; i++)  /* (the crossing rows' pairs come first) */
            stiff |= !(w->Sk[i * k + i] <= 1e6);
        if (!stiff)
            break;
    }
    memcpy(qdd, w->C, sizeof(double) * (size_t)nv);
    for (int r = 0; r < n; r++) {
        const double *jr = w->Jr + (size_t)r * nv;
        const double f = w->fixed[r] == 2 ? w->dfc[r] : w->fixed[r] ? w->df[r] : w->b[r];
        const int *run = w->runs + (size_t)r * 2 * nv;
        for (int t = 0; t < w->nrun[r]; t++)
            mb_add_scaled_run(qdd, jr, f, run[2 * t], run[2 * t + 1]);
    }
    apply_inverse(m, w, qdd);
    if (w->nslid) {  /* q̈ = y − Z (I + Vᵀ Z)⁻¹ Vᵀ y */
        double t[w->nslid];
        for (int i = 0; i < w->nslid; i++)
            t[i] = row_dot(w, w->slid[i], qdd);
        if (!small_lu(w->nslid, w->Sk, w->piv, t, factor))
            return MB_CONTACT_STIFF;  /* (A factored: M is not singular) */
        for (int j = 0; j < w->nslid; j++)
            for (int k = 0; k < nv; k++)
                qdd[k] -= w->Z[(size_t)j * nv + k] * t[j];
    }
    for (int r = 0; r < n; r++)
        if (!w->fixed[r])
            w->df[r] = w->b[r] - h * w->g[r] * row_dot(w, r, qdd);
    for (int r = 0; r < n; r++) {  /* a sliding row's friction follows its normal's solved force (r − 1 or r − 2) */
        if (w->fixed[r] == 2) {
            const int rn = w->fixed[r - 1] == 2 ? r - 2 : r - 1;
            w->df[r] = w->mu[r] * w->tdir[r] * (w->f0d[rn] + w->df[rn]) - w->f0d[r];
        }
        w->dfs[r] = w->df[r];
    }
    return MB_OK;
}

/* out += J3ᵀ f: the generalised force of the world force f on candidate pair p's geom b at pos (−f on its geom a),
 * J3 the point's Jacobian on the dofs' world axes w->ax */
static void add_point_force(const mb_model *m, mb_scene_implicit *w, const mb_data *d, const mb_scene *s, int p,
                            const double *pos, const double *f, double *out)
{
    const int nv = m->nv;
    const int ba = (int)s->gint[s->pairs[2 * p] * MB_SG_INTS + MB_SG_BODY];
    const int bb = (int)s->gint[s->pairs[2 * p + 1] * MB_SG_INTS + MB_SG_BODY];
    memset(w->J3, 0, sizeof(double) * 3 * (size_t)nv);
    if (bb >= 0)
        mb_point_jacobian_axes_add(m, w->ax, d->p0, bb, pos, 1.0, w->J3);
    if (ba >= 0)
        mb_point_jacobian_axes_add(m, w->ax, d->p0, ba, pos, -1.0, w->J3);
    for (int j = 0; j < nv; j++)
        out[j] += f[0] * w->J3[j] + f[1] * w->J3[nv + j] + f[2] * w->J3[2 * nv + j];
}

/* Do bodies a and b (≥ 0) lie on one chain of the tree (one an ancestor of the other, or the same)? */
static int one_chain(const mb_model *m, int a, int b)
{
    int lo = a < b ? a : b, hi = a < b ? b : a;
    while (hi > lo)
        hi = m->parent[hi];
    return hi == lo;
}

void mb_scene_implicit_inertia(mb_scene_implicit *w, const mb_model *m, const mb_model *md, mb_data *d,
                               const double *q, int posed)
{   /* md differs from m in its armature alone (semi_implicit's damping), which CRBA adds on the diagonal */
    const int nv = m->nv;
    if (posed)
        mb_crba_posed(m, d, w->H);
    else
        mb_crba(m, d, q, w->H);
    w->posed = posed;
    if (md->armature != m->armature)
        for (int k = 0; k < nv; k++)
            w->H[(size_t)nv * k + k] += md->armature[k] - m->armature[k];
}

/* Every slot apart at the step's end (its force F zero: apart at the start and not a candidate, or released by
 * the solve) forgets its tangential deformation: ż = −z/h, so z = 0 after the step (z₁ = z + h ż).  The law's
 * own release, u̇ = −(K/D) u (D → D + h K here), left u/(1 + h K/D) of it, which a contact entering again in
 * a later step read as a sticking force with no work stored behind it: dm_control's humanoid at 5 ms with the
 * candidates above gained 23 J after landing from it.  Every slot whose z is not zero is visited: the live list
 * (mb_scene_contact_stage) holds them all.  (Visiting only this call's contacts and the last call's missed
 * slots in the partial steps that locate an event: those linearise over the run's dt, so a reset there leaves
 * z (1 − h'/dt) behind, in a slot neither call's contacts name.)  Then the slots whose z and ż are both zero
 * leave the list: this call's state is the one the step starts from, and its z + h ż the next call's. */
static void reset_apart(stage_memo *memo, stage_view *v, double *zdot, const double *F, double h)
{
    const double *z = memo->z_last;
    if (!z)
        return;
    int kept = 0;
    for (int j = 0; j < memo->n_live; j++) {
        const int k = v->live[j];
        const double *f = F + 3 * (size_t)k, *zk = z + 2 * (size_t)k;
        double *zd = zdot + 2 * (size_t)k;
        if ((zk[0] != 0.0 || zk[1] != 0.0) && f[0] == 0.0 && f[1] == 0.0 && f[2] == 0.0)
            zd[0] = -zk[0] / h, zd[1] = -zk[1] / h;
        if (zk[0] != 0.0 || zk[1] != 0.0 || zd[0] != 0.0 || zd[1] != 0.0)
            v->live[kept++] = k;
        else
            v->inlive[k] = 0, zd[0] = zd[1] = 0.0;  /* (a −0.0 left from the stage's −(K/D)·0 made +0) */
    }
    memo->n_live = kept;
}

MB_CLONES_AVX2
int mb_scene_contact_implicit(const mb_model *m, const mb_model *md, mb_data *d, const double *q, const double *v,
                              const double *tau_all, const double *fext, double *qdd, double *zdot, double h,
                              const mb_scene *s, double K, double D, const int *held, int n_held,
                              double *held_force, int n_soft, const double *soft, double *F, void *scratch,
                              mb_scene_implicit *w)
{
    const int nv = m->nv, *lam = m->dof_parent;
    stage_memo *memo = scratch;
    stage_view V = stage_arrays(s, scratch);
    const mb_scene_contact *c = V.c;
    const double *u = V.u, *Fc = V.Fc;
    const int *slot = V.slot;
    const unsigned char *state = V.state;
    const int nc = memo->n_last;
    /* the deformations' relaxation (apart u̇ = −(K/D) u, sliding u̇ = −(f_t/√d + K u)/D) implicit in u too:
     * u₁ = u + h u̇(u₁), i.e. D → D + h K, so no step overshoots the decay (explicit: h K/D < 2); the stage
     * scaled its ż by D/(D + h K) (its zscale) */
    const double Dh = D + h * K;
    /* the candidates: the contacts the law pushes at the step's start, and those in the floor it judged apart
     * (their damping pulled harder than their depth pushed, √d (K d − D v) < 0) but that stay in it over the
     * step at their speed (d − h v_n > 0, below): the step's end decides.  Left out, an overdamped contact
     * leaving at a crawl let go for a whole step, fell back in faster and the alternation grew (bench part 7's
     * quadruped at 64× the default damping and 5 ms was thrown 14 m up, 131 m with friction).  A candidate
     * enters with its tangential deformation zeroed, sticking (its friction rows as a sticking contact's, from
     * u = 0).  With its normal row alone (no friction over the step) and without the d − h v_n test, dm_control's
     * humanoid at 5 ms gained 38 J in a step at 2.25 s (its feet, candidates step after step, slid and slapped
     * the floor 3 mm deep) */
    int na = 0, n = 0, ns = 0;
    double aref, R;
    for (int i = 0; i < nc; i++)
        if (state[i] || c[i].depth > 0.0)
            na++, n += 3;
    for (int k = 0; k < n_soft; k++)
        ns += mb_soft_stop_passed(soft + MB_SOFT_ROW * k, q);
    if (!na && !tau_all && !ns) {
        reset_apart(memo, &V, zdot, F, h);
        return MB_OK;
    }
    if (implicit_reserve(w, n + ns > 0 ? n + ns : 1))
        return MB_NO_MEMORY;
    /* the forward dynamics' part of the right-hand side first, τ − C(q, v, f_ext) (RNEA): with f_ext it poses the
     * bodies in d->R0, d->p0 at q, which the rows then read */
    if (tau_all) {
        memset(w->x, 0, sizeof(double) * (size_t)nv);
        if (w->posed)  /* (the stage's poses at q: tree and world) */
            mb_rnea_posed(md, d, v, w->x, fext, w->C);
        else
            mb_rnea(md, d, q, v, w->x, fext, w->C);
        for (int k = 0; k < nv; k++)
            w->C[k] = tau_all[k] - w->C[k];
    }
    /* the rows: per active contact its normal, then t1, t2 while it sticks (state 1 with μ > 0) */
    if (na && !(tau_all && fext))
        mb_body_states(m, d, q, NULL, NULL, d->R0, d->p0, NULL, NULL);
    if (na)  /* the dofs' world axes once, for every contact's point Jacobian */
        mb_dof_world_axes(m, d->R0, w->ax);
    int crossing = 0, a = 0, r = 0;  /* crossing: rows across two branches of the tree (implicit_solve) */
    for (int i = 0; i < nc; i++) {
        if (!state[i] && !(c[i].depth > 0.0))
            continue;
        const int p = c[i].pair, rows = s->pdat[(size_t)p * MB_SP_SIZE + MB_SP_CONDIM] >= 3 &&
                                        s->pdat[(size_t)p * MB_SP_SIZE + MB_SP_FRICTION] > 0.0 ? 3 : 1;
        const int ba = (int)s->gint[s->pairs[2 * p] * MB_SG_INTS + MB_SG_BODY];
        const int bb = (int)s->gint[s->pairs[2 * p + 1] * MB_SG_INTS + MB_SG_BODY];
        const double zr = sqrt(fmax(0.0, c[i].depth));
        w->cross[a] = ba >= 0 && bb >= 0 && !one_chain(m, ba, bb);
        crossing |= w->cross[a];
        w->act[a] = i, w->row0[a] = r, w->nrow[a] = rows, a++;
        /* the contact's columns, ascending: its bodies' dofs and their ancestors' (J3 is zero elsewhere) */
        int *cols = w->nz + (size_t)r * nv, ncol = 0;
        const int pp = a > 1 ? c[w->act[a - 2]].pair : -1;  /* the last contact's pair: the same bodies, the */
        if (pp >= 0 && (pp == p ||                          /* same columns (a pair's points come together) */
                        ((int)s->gint[s->pairs[2 * pp] * MB_SG_INTS + MB_SG_BODY] == ba &&
                         (int)s->gint[s->pairs[2 * pp + 1] * MB_SG_INTS + MB_SG_BODY] == bb))) {
            ncol = w->nnz[w->row0[a - 2]];
            memcpy(cols, w->nz + (size_t)w->row0[a - 2] * nv, sizeof(int) * (size_t)ncol);
        } else
            ncol = mb_contact_columns(m, ba, bb, w->chain, cols);
        for (int p = 0; p < ncol; p++)  /* (J3 off the columns is not read) */
            w->J3[cols[p]] = w->J3[nv + cols[p]] = w->J3[2 * nv + cols[p]] = 0.0;
        if (bb >= 0)
            mb_point_jacobian_axes_add(m, w->ax, d->p0, bb, c[i].pos, 1.0, w->J3);
        if (ba >= 0)
            mb_point_jacobian_axes_add(m, w->ax, d->p0, ba, c[i].pos, -1.0, w->J3);
        double *dn = w->dir + 3 * (size_t)r;
        mb_copy3(c[i].normal, dn);
        if (rows == 3)  /* (the law's tangents, mb_scene_tangents's: the stage kept them) */
            mb_copy3(V.tn + 6 * (size_t)i, dn + 3), mb_copy3(V.tn + 6 * (size_t)i + 3, dn + 6);
        int k = 0;
        for (; k < rows; k++, r++) {
            const double *t = w->dir + 3 * (size_t)r;
            double *jr = w->Jr + (size_t)r * nv, jv = 0.0;
            int *nz = w->nz + (size_t)r * nv;
            int *run = w->runs + (size_t)r * 2 * nv;
            if (k > 0) {
                memcpy(nz, cols, sizeof(int) * (size_t)ncol);
                w->nrun[r] = w->nrun[r - 1];
                memcpy(run, run - 2 * nv, sizeof(int) * 2 * (size_t)w->nrun[r]);
            } else
                w->nrun[r] = column_runs(cols, ncol, run);
            w->nnz[r] = ncol;
            for (int p = 0; p < ncol; p++) {
                const int j = cols[p];
                jr[j] = t[0] * w->J3[j] + t[1] * w->J3[nv + j] + t[2] * w->J3[2 * nv + j];
                jv += jr[j] * v[j];
            }
            const double Dr = zr * D, Kr = (k == 0 ? 1.5 : 1.0) * zr * K;
            w->g[r] = Dr + h * Kr;
            w->b[r] = -h * Kr * jv;
            w->f0d[r] = mb_dot3(Fc + 3 * (size_t)i, t);
            w->mu[r] = s->pdat[(size_t)p * MB_SP_SIZE + MB_SP_FRICTION];
            /* a sliding contact's tangent rows linearise its sticking law, −√d (K u + D v_t), beyond the cone,
             * from which the force applied at the step's start (on the cone) is off by the difference */
            if (k > 0 && state[i] == 2)
                w->b[r] += -zr * (K * u[2 * (size_t)i + k - 1] + D * jv) - mb_dot3(Fc + 3 * (size_t)i, t);
            else if (k > 0 && !state[i])  /* a candidate: sticking from u = 0, −√d D v_t, none applied */
                w->b[r] += -zr * D * jv;
            else if (!state[i]) {  /* a candidate: the law's normal force unclamped (it pulls), none applied —
                                    * unless it leaves the floor within the step at its speed (d − h v_n ≤ 0) */
                if (!(c[i].depth - h * jv > 0.0))
                    break;
                w->b[r] += zr * (K * c[i].depth - D * jv);
            }
        }
        if (k < rows) {  /* (a candidate leaving the floor within the step: not one after all) */
            a--, r = w->row0[a];
            continue;
        }
    }
    na = a;
    n = 0;
    for (int a = 0; a < na; a++)
        n += w->nrow[a];
    w->na = na, w->ncr = n;
    /* the soft stops the joints have passed, MuJoCo's soft constraints (passive.c): each a row sign·e_j whose force
     * at the step's q̈ is f = (a_ref − sign q̈_j)/R, i.e. h g = 1/R and b = a_ref/R — solved with the contacts, as
     * MuJoCo solves its limits and contacts together (taken explicitly, its stop cancelling the (1 − d)-blended
     * load of the step's start, dm_control's humanoid at 5 ms gained 125 J in a step); once the contacts have
     * settled in the passes below, let go where f < 0 and taken back where it pushes.  (Where the passes run
     * out, the last correction below is on M alone, without the stops' rows.) */
    for (int k = 0; k < n_soft; k++) {
        const double *row = soft + MB_SOFT_ROW * k;
        if (!mb_soft_stop_terms(row, q, v, &aref, &R))
            continue;
        const int j = (int)row[1];
        memset(w->Jr + (size_t)n * nv, 0, sizeof(double) * (size_t)nv);
        w->Jr[(size_t)n * nv + j] = row[3];
        w->nz[(size_t)n * nv] = j, w->nnz[n] = 1, w->nrun[n] = 1;
        w->runs[(size_t)n * 2 * nv] = w->runs[(size_t)n * 2 * nv + 1] = j;
        w->g[n] = 1.0 / (R * h), w->b[n] = aref / R, w->f0d[n] = 0.0, w->mu[n] = 0.0;
        n++;
    }
    /* M on the step's configuration (md: semi_implicit's damping in its armature; mb_scene_implicit_inertia's
     * where the forward dynamics is this function's) and the solve's right-hand side without the rows, M q̈₀:
     * τ − C(q, v, f_ext) here, M times the caller's q̈₀ else.  Joints resting on stops are held (q̈_j = 0, their
     * stops take up any change; never with tau_all): their rows and columns of M become the identity's and
     * their columns of J zero, so the correction moves only the free joints — the solve on the free block (the
     * tree's sparsity kept: entries only vanish), whose rows j keep q̈_j = q̈₀_j = 0 */
    if (!tau_all) {
        mb_crba(md, d, q, w->H);
        if (held_force)  /* the held joints' rows of M and q̈₀, for their stops' share of the correction (below) */
            for (int k = 0; k < n_held; k++)
                memcpy(w->Hheld + (size_t)k * nv, w->H + (size_t)held[k] * nv, sizeof(double) * (size_t)nv);
        if (held_force && n_held)
            memcpy(w->qdd0, qdd, sizeof(double) * (size_t)nv);
        for (int k = 0; k < n_held; k++) {
            const int j = held[k];
            for (int i = 0; i < nv; i++)
                w->H[(size_t)i * nv + j] = w->H[(size_t)j * nv + i] = 0.0;
            w->H[(size_t)j * nv + j] = 1.0;
            for (int r = 0; r < n; r++)
                w->Jr[(size_t)r * nv + j] = 0.0;
        }
        mb_sparse_mpy(MB_MPY_H, nv, lam, w->H, qdd, w->C);
    }
    /* the solve; a normal it would make pull is released (its rows fixed at Δf = −f) and the rest solved again;
     * a contact whose tangential force the solve puts past its cone slides: its tangent rows carry μ f_n⁺ along
     * the solve's direction, f_n⁺ its normal's solved force (implicit_solve: exactly, not by passes that chase
     * it), and the rest solved again (so that the normals and the other contacts meet the friction that is
     * applied, not the unbounded one), until no row changes */
    for (int r = 0; r < n; r++)
        w->fixed[r] = 0;
    for (int pass = 0, grown = 1; pass <= 2 * (na + n - w->ncr) + 8; pass++) {  /* grown: the fixed set changed */
        const int st = implicit_solve(m, w, n, h, grown, crossing, qdd);
        if (st != MB_OK)
            return st;
        int changed = 0;
        grown = 0;
        for (int a = 0; a < na; a++) {  /* sticks, or slides from now on along the solve's direction */
            const int r = w->row0[a];
            if (w->nrow[a] != 3 || w->fixed[r] || w->fixed[r + 1])
                continue;
            const double fn = w->f0d[r] + w->df[r];
            const double ft[2] = {w->f0d[r + 1] + w->df[r + 1], w->f0d[r + 2] + w->df[r + 2]};
            const double norm = sqrt(ft[0] * ft[0] + ft[1] * ft[1]), lim = w->mu[r] * fmax(fn, 0.0);
            if (norm <= lim * (1.0 + 1e-12))
                continue;
            w->tdir[r + 1] = ft[0] / norm, w->tdir[r + 2] = ft[1] / norm;
            for (int k = 1; k < 3; k++) {
                w->fixed[r + k] = 2;
                w->dfc[r + k] = w->mu[r + k] * w->tdir[r + k] * (w->f0d[r] + w->b[r]) - w->f0d[r + k];
            }
            changed = grown = 1;
        }
        if (changed)   /* the cone first: a normal is judged under the friction that is applied */
            continue;
        for (int a = 0; a < na; a++) {
            const int r = w->row0[a], i = w->act[a];
            if (w->fixed[r] || mb_dot3(Fc + 3 * (size_t)i, c[i].normal) + w->df[r] >= 0.0)
                continue;
            for (int k = 0; k < w->nrow[a]; k++) {
                w->fixed[r + k] = 1;
                w->df[r + k] = -mb_dot3(Fc + 3 * (size_t)i, w->dir + 3 * (size_t)(r + k));
            }
            changed = grown = 1;
        }
        for (int r = w->ncr; !changed && r < n; r++) {  /* the contacts settled: each soft stop pushes or is let go */
            if (!w->fixed[r] && w->df[r] < 0.0)   /* (one let go while they moved comes back where it pushes: */
                w->fixed[r] = 1, w->df[r] = 0.0, changed = grown = 1;   /* a humanoid's ankles let go that */
            else if (w->fixed[r] && w->b[r] - h * w->g[r] * row_dot(w, r, qdd) > 0.0)   /* way at 5 ms were */
                w->fixed[r] = 0, changed = grown = 1;   /* crushed 0.2 rad, the feet thrown up with 29 J) */
        }
        if (!changed)
            break;
    }
    /* each contact's force over the step, f⁺ (its normal clipped at 0, its friction onto the cone), u̇ from f⁺.
     * q̈ is the last solve's, for the rows' Δf then (dfs); where f⁺ − f differs from them by more than the
     * loop's own tolerance (its passes ran out before the rows settled: the fixed rows moved after that solve),
     * that difference δ moves q̈ too: q̈ += M⁻¹ Jᵀ δ */
    memset(w->tau, 0, sizeof(double) * (size_t)nv);
    int moved = 0;
    for (int a = 0; a < na; a++) {
        const int i = w->act[a], r = w->row0[a], p = c[i].pair;
        const double *n3 = c[i].normal, *f0 = Fc + 3 * (size_t)i;
        const double mu = s->pdat[(size_t)p * MB_SP_SIZE + MB_SP_CONDIM] >= 3
                              ? s->pdat[(size_t)p * MB_SP_SIZE + MB_SP_FRICTION] : 0.0;
        const double zr = sqrt(fmax(0.0, c[i].depth)), fn0 = mb_dot3(f0, n3);
        const double fn = fmax(0.0, fn0 + w->df[r]);
        double t[2][3], ft[2], f[3], *ud = zdot + 2 * (size_t)slot[i];
        if (w->nrow[a] == 3)  /* (the rows' own, mb_scene_tangents's) */
            mb_copy3(w->dir + 3 * (size_t)(r + 1), t[0]), mb_copy3(w->dir + 3 * (size_t)(r + 2), t[1]);
        else
            mb_copy3(V.tn + 6 * (size_t)i, t[0]), mb_copy3(V.tn + 6 * (size_t)i + 3, t[1]);
        /* a candidate's deformation is zeroed (its sticking law starts from u = 0: u̇ carries −u/h, below) */
        const double zero2[2] = {0.0, 0.0}, *ui = state[i] ? u + 2 * (size_t)i : zero2;
        if (fn <= 0.0) {  /* released: apart (its u zeroed: reset_apart) */
            ft[0] = ft[1] = 0.0;
            ud[0] = -u[2 * (size_t)i] / h, ud[1] = -u[2 * (size_t)i + 1] / h;
        } else if (w->nrow[a] == 3) {  /* sticking: its rows' forces, onto the cone if past it */
            ft[0] = mb_dot3(f0, t[0]) + w->df[r + 1], ft[1] = mb_dot3(f0, t[1]) + w->df[r + 2];
            const double cone = sqrt(ft[0] * ft[0] + ft[1] * ft[1]) / (mu * fn);
            for (int j = 0; j < 2; j++)
                if (cone > 1.0)
                    ft[j] /= cone;
            /* u̇ = v_t⁺ (sticking; v_t⁺ after q̈ is known: below) or the law's sliding rate at f_t⁺ */
            const int slides = cone > 1.0 || w->fixed[r + 1];
            for (int j = 0; j < 2; j++)
                ud[j] = slides ? -(ft[j] + zr * K * ui[j]) / (zr * Dh) - (state[i] ? 0.0 : u[2 * (size_t)i + j] / h)
                               : NAN;
        } else {  /* frictionless (one row): the friction, if any, follows the normal */
            const double scale = fn0 > 0.0 ? fn / fn0 : 0.0;
            for (int j = 0; j < 2; j++)
                ft[j] = scale * mb_dot3(f0, t[j]);
            if (mu > 0.0 && zr > 0.0)
                for (int j = 0; j < 2; j++)
                    ud[j] = -(ft[j] + zr * K * ui[j]) / (zr * Dh);
        }
        for (int j = 0; j < 3; j++)
            f[j] = fn * n3[j] + ft[0] * t[0][j] + ft[1] * t[1][j];
        mb_copy3(f, F + 3 * (size_t)slot[i]);
        /* δ = f⁺ − (f + Σ_rows Δf_r d_r), in the rows' directions (n; t1, t2 where it has them), against the
         * contact's forces' size */
        double dl[3], sized = 0.0;
        for (int k = 0; k < 3; k++) {
            const double fr = k == 0 ? fn0 + w->dfs[r] : w->nrow[a] == 3 ? mb_dot3(f0, t[k - 1]) + w->dfs[r + k]
                                                                         : mb_dot3(f0, t[k - 1]);
            dl[k] = (k == 0 ? fn : ft[k - 1]) - fr;
            sized += fabs(f0[k]) + fabs(f[k]);
        }
        if (!(fabs(dl[0]) + fabs(dl[1]) + fabs(dl[2]) > 1e-10 * sized))
            continue;
        moved = 1;
        double d3[3];
        for (int j = 0; j < 3; j++)
            d3[j] = dl[0] * n3[j] + dl[1] * t[0][j] + dl[2] * t[1][j];
        add_point_force(m, w, d, s, p, c[i].pos, d3, w->tau);
    }
    if (moved) {  /* q̈ += M⁻¹ τ = L⁻¹ D⁻¹ L⁻ᵀ τ (a held joint's share of τ goes to its stop) */
        const int st = factor_inertia(m, w);
        if (st != MB_OK)
            return st;
        for (int k = 0; k < n_held; k++)
            w->tau[held[k]] = 0.0;
        mb_ltdl_solve(nv, lam, w->L, w->tau);
        for (int j = 0; j < nv; j++)
            qdd[j] += w->tau[j];
    }
    /* a sticking contact's u̇ = v_t⁺ = J_t (v + h q̈⁺) */
    for (int a = 0; a < na; a++) {
        const int i = w->act[a], r = w->row0[a];
        double *ud = zdot + 2 * (size_t)slot[i];
        if (w->nrow[a] != 3)
            continue;
        for (int k = 0; k < 2; k++) {
            if (!isnan(ud[k]))
                continue;
            const double *jk = w->Jr + (size_t)(r + 1 + k) * nv;
            const int *nz = w->nz + (size_t)(r + 1 + k) * nv;
            double vt = 0.0;
            for (int p = 0; p < w->nnz[r + 1 + k]; p++)
                vt += jk[nz[p]] * (v[nz[p]] + h * qdd[nz[p]]);
            ud[k] = state[i] ? vt : vt - u[2 * (size_t)i + k] / h;
        }
    }
    if (held_force && n_held) {  /* the stops of the held joints take up the correction's load on them */
        memset(w->x, 0, sizeof(double) * (size_t)nv);
        for (int a = 0; a < na; a++) {
            const int i = w->act[a];
            double df[3];
            for (int j = 0; j < 3; j++)
                df[j] = F[3 * (size_t)slot[i] + j] - Fc[3 * (size_t)i + j];
            add_point_force(m, w, d, s, c[i].pair, c[i].pos, df, w->x);
        }
        for (int k = 0; k < n_held; k++) {  /* λ_j += (M Δq̈)_j − (Jᵀ Δf)_j: row j of M q̈ = τ − C + Jᵀ f + λ_j */
            const double *row = w->Hheld + (size_t)k * nv;
            double share = -w->x[held[k]];
            for (int i = 0; i < nv; i++)
                share += row[i] * (qdd[i] - w->qdd0[i]);
            held_force[k] += share;
        }
    }
    reset_apart(memo, &V, zdot, F, h);
    return MB_OK;
}
