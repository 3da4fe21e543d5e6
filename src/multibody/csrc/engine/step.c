/* One step of the world, as OpenDE's dWorldStep does it (report §5.2-5.4, ch. 6):
 *
 *   1. world inertias I = R I_body R^T (eq. 5.50), applied forces with gravity and the
 *      gyroscopic torque -w x I w (the force accumulator of §5.2.3);
 *   2. collision detection: sweep-and-prune broad phase, narrow phase per pair (collide.c);
 *   3. constraint rows of joints (joints.c) and contacts (bounce, friction, soft ERP/CFM);
 *   4. the LCP  (J W J^T + CFM/h) lambda = rhs/h - J (v/h + W f)  (eqs. 3.5, 5.34, 5.38), by
 *      Dantzig pivoting (lcp.c) with the quick step as fallback, or the quick step alone;
 *   5. semi-implicit Euler: v += h W (f + J^T lambda), then x += h v and q += h/2 [0, w] q
 *      with the quaternion normalised (§5.4);
 *   6. a state that is not finite or moves faster than max_speed stops the step, restored,
 *      with a message naming the body and the step.
 */
#include <stdlib.h>
#include <stdio.h>
#include "engine/engine.h"

#define MAX_PER_PAIR 8

static void lcp_terms(mb_world *W, double ih, int rhs);

/* the rows of joints 0 .. n-1, free hinges kept as terms (5 rows each) */
static void write_hinge_rows(mb_world *W, int n)
{
    for (int j = 0; j < n; j++) mb_hinge_write_rows(W, j, W->hterms + HT_SIZE * (size_t)j, W->rows + 5 * (size_t)j);
    if (n == W->nj) W->rows_stale = 0;
}

static void *grow(void *p, size_t n) { return realloc(p, n ? n : 1); }

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int mb_world_init(mb_world *W)
{
    int nb = W->nb, nj = W->nj, ng = W->ng;
    W->R = calloc((size_t)nb * 9 + 1, sizeof(double));
    W->invIw = calloc((size_t)nb * 9 + 1, sizeof(double));
    W->fext = calloc((size_t)nb * 6 + 1, sizeof(double));
    W->vfree = calloc((size_t)nb * 6 + 1, sizeof(double));
    W->fc = calloc((size_t)(nb + 1) * 6, sizeof(double));   /* + the static world's slot (mb_quick_step) */
    W->save = calloc((size_t)nb * BS_SIZE + 1, sizeof(double));
    W->jlast = calloc((size_t)nj * 2 + 1, sizeof(double));
    W->jturns = calloc((size_t)nj * 2 + 1, sizeof(double));
    W->pairs = calloc((size_t)nj + 1, sizeof(int64_t));
    W->gp = calloc((size_t)ng + 1, sizeof(mb_geom_pose));
    W->planes = calloc((size_t)ng * 4 + 1, sizeof(double));
    W->order = calloc((size_t)ng + 1, sizeof(int));
    W->bdiag = calloc((size_t)nb + 1, sizeof(int));
    W->jflags = calloc((size_t)nj + 1, 1);
    if (!W->bdiag || !W->jflags || !W->invIw || !W->fext || !W->vfree || !W->fc || !W->save || !W->jlast || !W->jturns ||
        !W->pairs || !W->gp || !W->planes || !W->order) return -1;
    W->npairs = 0;
    for (int j = 0; j < nj; j++) {
        int64_t a = W->jint[(size_t)j * JI_SIZE + JI_B1], b = W->jint[(size_t)j * JI_SIZE + JI_B2];
        if (a < 0 || b < 0) continue;
        int64_t lo = a < b ? a : b, hi = a < b ? b : a;
        W->pairs[W->npairs++] = lo * (int64_t)(nb + 1) + hi;
    }
    qsort(W->pairs, (size_t)W->npairs, sizeof(int64_t), cmp_i64);
    for (int b = 0; b < nb; b++) {                 /* body inertia (and inverse) diagonal in body axes */
        const double *I = W->bprop + (size_t)b * BP_SIZE + BP_I, *Ii = W->bprop + (size_t)b * BP_SIZE + BP_INVI;
        W->bdiag[b] = 1;
        for (int k = 0; k < 9; k++) if (k % 4 && (I[k] != 0 || Ii[k] != 0)) W->bdiag[b] = 0;
    }
    W->norder = 0;
    for (int g = 0; g < ng; g++) if (W->gint[(size_t)g * GI_SIZE + GI_TYPE] != G_PLANE) W->order[W->norder++] = g;
    /* joint angles start unwrapped at their attach-time values */
    for (int b = 0; b < nb; b++) mb_quat_to_R(W->state + (size_t)b * BS_SIZE + BS_QUAT, W->R + (size_t)b * 9);
    mb_world_joint_coords(W, NULL, NULL, 1);
    mb_joint_flags(W);
    return mb_tree_init(W);
}

void mb_world_free(mb_world *W)
{
    void *ps[] = {W->bdiag, W->R, W->invIw, W->fext, W->vfree, W->fc, W->save, W->jlast, W->jturns, W->pairs, W->gp, W->planes,
                  W->order, W->contacts, W->rows, W->lambda, W->b, W->lo, W->hi, W->mu, W->cfmh, W->A,
                  W->iMJ, W->Ad, W->work, W->w, W->flo, W->fhi, W->findex, W->cone, W->iwork};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) free(ps[i]);
    free(W->jflags);
    free(W->wprev); free(W->wforce); free(W->wkey); free(W->wperm); free(W->jlam); free(W->jrow_start); free(W->jrow_count); free(W->qrows);
    mb_quick_free(W);
    mb_tree_contacts_free(W);
    mb_tree_free(W);
    memset(W, 0, sizeof *W);
}

static int reserve_rows(mb_world *W, int m)
{
    if (m <= W->cap_rows) return 0;
    int cap = m * 2 + 16;
    mb_row *r = grow(W->rows, (size_t)cap * sizeof(mb_row));
    if (!r) return -1;
    W->rows = r; W->cap_rows = cap;
    return 0;
}

static int reserve_m(mb_world *W, int m, int dense)
{
    if (m > W->cap_m) {
        int cap = m * 2 + 16;
        double **ds[] = {&W->lambda, &W->b, &W->lo, &W->hi, &W->mu, &W->cfmh, &W->Ad, &W->w, &W->flo, &W->fhi};
        for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) { double *p = grow(*ds[i], (size_t)cap * sizeof(double)); if (!p) return -1; *ds[i] = p; }
        double *p = grow(W->iMJ, (size_t)cap * 12 * sizeof(double)); if (!p) return -1; W->iMJ = p;
        int *f = grow(W->findex, (size_t)cap * sizeof(int)); if (!f) return -1; W->findex = f;
        int *cp = grow(W->cone, (size_t)cap * sizeof(int)); if (!cp) return -1; W->cone = cp;
        int *iw = grow(W->iwork, (size_t)cap * 3 * sizeof(int)); if (!iw) return -1; W->iwork = iw;
        W->cap_m = cap;
    }
    if (dense && (size_t)m * m > (size_t)W->cap_A) {
        size_t cap = (size_t)m * m;
        double *A = grow(W->A, cap * sizeof(double)); if (!A) return -1;
        double *wk = grow(W->work, (cap + 8 * (size_t)m + 8) * sizeof(double)); if (!wk) return -1;
        W->A = A; W->work = wk; W->cap_A = (int)cap;
    }
    return 0;
}

static int add_contacts(mb_world *W, int n)
{
    if (W->nc + n <= W->cap_c) return 0;
    int cap = (W->nc + n) * 2 + 16;
    mb_contact_point *c = grow(W->contacts, (size_t)cap * sizeof(mb_contact_point));
    if (!c) return -1;
    W->contacts = c; W->cap_c = cap;
    return 0;
}


/* ---- collision detection ------------------------------------------------------------------------ */
static void geom_poses(mb_world *W)
{
    for (int g = 0; g < W->ng; g++) {
        mb_geom_pose *G = W->gp + g;
        const double *gd = W->gdat + (size_t)g * GD_SIZE;
        G->type = (int)W->gint[(size_t)g * GI_SIZE + GI_TYPE];
        G->body = (int)W->gint[(size_t)g * GI_SIZE + GI_BODY];
        G->size = gd + GD_SIZE3;
        G->mesh = W->meshes ? W->meshes[g] : NULL;
        G->group = (int)gd[GD_GROUP];
        G->plane = W->planes + 4 * g;
        if (G->type < 0 || G->type >= G_COUNT) {              /* Sim's init refused it; a changed gint: */
            for (int k = 0; k < 3; k++) { G->lo[k] = -INFINITY; G->hi[k] = INFINITY; }   /* meets all, narrow refuses */
            continue;
        }
        if (G->type == G_PLANE) {
            mb_copy3(gd + GD_SIZE3, W->planes + 4 * g); W->planes[4 * g + 3] = gd[GD_PLANE_D];
            geom_shapes[G_PLANE].bounds(G);
            continue;
        }
        double Rl[9]; mb_quat_to_R(gd + GD_QUAT, Rl);
        if (G->body >= 0) {
            const double *Rb = W->R + (size_t)G->body * 9, *pb = W->state + (size_t)G->body * BS_SIZE + BS_POS;
            for (int r = 0; r < 3; r++) for (int c = 0; c < 3; c++)
                G->R[3 * r + c] = Rb[3 * r] * Rl[c] + Rb[3 * r + 1] * Rl[3 + c] + Rb[3 * r + 2] * Rl[6 + c];
            mb_mv3(Rb, gd + GD_POS, G->p); mb_add3(G->p, pb, G->p);
        } else {
            memcpy(G->R, Rl, sizeof Rl); mb_copy3(gd + GD_POS, G->p);
        }
        if (G->type == G_CONVEX || G->type == G_HFIELD) G->hull = W->hulls + (int)G->size[0];   /* hfield.c: its block */
        geom_shapes[G->type].bounds(G);                       /* geometry.c */
    }
}

void mb_world_geom_poses(mb_world *W)
{
    for (int b = 0; b < W->nb; b++) mb_quat_to_R(W->state + (size_t)b * BS_SIZE + BS_QUAT, W->R + (size_t)b * 9);
    geom_poses(W);
}

static int joined(const mb_world *W, int a, int b)
{
    if (a < 0 || b < 0 || !W->npairs) return 0;
    int64_t lo = a < b ? a : b, hi = a < b ? b : a, key = lo * (int64_t)(W->nb + 1) + hi;
    return bsearch(&key, W->pairs, (size_t)W->npairs, sizeof(int64_t), cmp_i64) != NULL;
}

static int narrow(mb_world *W, int ga, int gb)
{
    /* geom 1 is the lower index, unless it is a plane: contacts with planes carry its normal */
    if (W->gp[ga].type == G_PLANE || (W->gp[gb].type != G_PLANE && ga > gb)) { int t = ga; ga = gb; gb = t; }
    const mb_geom_pose *A = W->gp + ga, *B = W->gp + gb;
    if (A->body == B->body) return 0;
    if (A->body < 0 && B->body < 0) return 0;
    if (joined(W, A->body, B->body)) return 0;                /* dAreConnectedExcluding, report §6.2 */
    if (A->group && A->group == B->group) return 0;           /* one collision group (from_model) */
    if (add_contacts(W, MAX_PER_PAIR)) return -1;
    mb_contact_point *c = W->contacts + W->nc;
    int n = mb_collide_pair(A, B, c, MAX_PER_PAIR);
    if (n < 0) {                                              /* a hole in the table: never another pair's collider */
        const char *na = mb_geom_name(A->type), *nb = mb_geom_name(B->type);
        char ca[32], cb[32];
        if (!na) { snprintf(ca, sizeof ca, "shape code %d", A->type); na = ca; }
        if (!nb) { snprintf(cb, sizeof cb, "shape code %d", B->type); nb = cb; }
        snprintf(W->message, sizeof W->message, "geometries %d and %d: the engine has no collider for a %s-%s pair", ga, gb, na, nb);
        W->bad_body = A->body >= 0 ? A->body : B->body;
        return 1;
    }
    for (int i = 0; i < n; i++) { c[i].g1 = ga; c[i].g2 = gb; c[i].b1 = A->body; c[i].b2 = B->body; }
    W->nc += n;
    return 0;
}

/* Sweep and prune along x: the order is kept between steps, so insertion sort is near linear.
 * 0, -1 out of memory, 1 a pair without a collider (W->message). */
static int broad_phase(mb_world *W)
{
    int *o = W->order, n = W->norder, e;
    const mb_geom_pose *G = W->gp;
    if (W->wpar[WP_BROADPHASE] != 0) {                        /* all pairs, to test the sweep against */
        for (int i = 0; i < n; i++) for (int j = i + 1; j < n; j++) {
            int a = o[i], b = o[j], hit = 1;
            for (int k = 0; k < 3; k++) if (G[a].hi[k] < G[b].lo[k] || G[b].hi[k] < G[a].lo[k]) hit = 0;
            if (hit && (e = narrow(W, a, b))) return e;
        }
    } else {
        for (int i = 1; i < n; i++) {
            int g = o[i], j = i - 1;
            while (j >= 0 && G[o[j]].lo[0] > G[g].lo[0]) { o[j + 1] = o[j]; j--; }
            o[j + 1] = g;
        }
        for (int i = 0; i < n; i++) {
            int a = o[i];
            for (int j = i + 1; j < n && G[o[j]].lo[0] <= G[a].hi[0]; j++) {
                int b = o[j];
                if (G[a].hi[1] < G[b].lo[1] || G[b].hi[1] < G[a].lo[1] ||
                    G[a].hi[2] < G[b].lo[2] || G[b].hi[2] < G[a].lo[2]) continue;
                if ((e = narrow(W, a, b))) return e;
            }
        }
    }
    for (int p = 0; p < W->ng; p++) {                          /* planes against every box in reach */
        if (G[p].type != G_PLANE) continue;
        const double *pn = W->planes + 4 * p;
        for (int i = 0; i < n; i++) {
            int a = o[i];
            if (G[a].body < 0) continue;
            if (mb_geom_box_low(pn, G[a].lo, G[a].hi) > pn[3]) continue;
            if ((e = narrow(W, a, p))) return e;
        }
    }
    return 0;
}

int mb_world_collide_only(mb_world *W)
{
    for (int b = 0; b < W->nb; b++) mb_quat_to_R(W->state + (size_t)b * BS_SIZE + BS_QUAT, W->R + (size_t)b * 9);
    W->nc = 0;
    geom_poses(W);
    int e = broad_phase(W);
    return e < 0 ? -1 : (e ? -2 : W->nc);
}

/* ---- joint coordinates, unwrapped across +-pi -------------------------------------------------- */
/* Whole turns of axis a of joint j at this reading, the reading remembered when `update`.
 * A hinge is tracked by its half-angle vector h = (cos, sin of half its angle; cos >= 0), kept
 * in jlast: its angle 2 atan2(h) wrapped past +-pi exactly when the half angle moved by more
 * than pi/2, i.e. when h and the last h are more than a right angle apart, so the step never
 * needs the angle itself (an atan2 per hinge and step) unless a stop asks for it. */
static double next_turns(mb_world *W, int j, int a, int type, const mb_axis_info *ax, int update)
{
    double turns = W->jturns[2 * j + a], *last = W->jlast + 2 * j;
    if (type == J_HINGE) {
        double c = ax->half[0], sn = ax->half[1];
        if (c * last[0] + sn * last[1] < 0) turns += sn * last[0] - c * last[1] > 0 ? -1 : 1;
        if (update) { last[0] = c; last[1] = sn; }
    } else {
        if (type != J_SLIDER) {
            double diff = ax->pos[a] - last[a];
            if (diff > M_PI) turns -= 1; else if (diff < -M_PI) turns += 1;
        }
        if (update) last[a] = ax->pos[a];
    }
    if (update) W->jturns[2 * j + a] = turns;
    return turns;
}

void mb_world_joint_coords(mb_world *W, double *pos, double *rate, int update)
{
    for (int j = 0; j < W->nj; j++) {
        mb_axis_info ax; mb_joint_axes(W, j, &ax, (pos != NULL ? AX_ANGLES : 0) | AX_RATES);
        int type = (int)W->jint[(size_t)j * JI_SIZE + JI_TYPE];
        for (int a = 0; a < 2; a++) {
            double p = 0.0, turns = W->jturns[2 * j + a];
            if (a < ax.naxes) { turns = next_turns(W, j, a, type, &ax, update); p = ax.pos[a]; }
            if (pos) pos[2 * j + a] = p + 2 * M_PI * turns;
            if (rate) rate[2 * j + a] = a < ax.naxes ? ax.rate[a] : 0.0;
        }
    }
}

/* ---- contact rows ---------------------------------------------------------------------------- */
static double combine_mu(double a, double b) { return isinf(a) ? b : (isinf(b) ? a : sqrt(a * b)); }

static void point_velocity(const mb_world *W, int b, const double *r, double h, double *u)
{   /* velocity of the body point at lever r after a free step (no constraint forces) */
    if (b < 0) { u[0] = u[1] = u[2] = 0; return; }
    const double *s = W->state + (size_t)b * BS_SIZE, *f = W->fext + 6 * (size_t)b;
    double im = W->bprop[(size_t)b * BP_SIZE + BP_INVMASS], al[3], w[3], wr[3];
    smv3(W->invIw + 9 * (size_t)b, f + 3, al);
    for (int k = 0; k < 3; k++) { u[k] = s[BS_VEL + k] + h * im * f[k]; w[k] = s[BS_OMEGA + k] + h * al[k]; }
    mb_cross3(w, r, wr); mb_add3(u, wr, u);
}

static int contact_rows(mb_world *W, double h, int first)
{
    const double *wp = W->wpar;
    int mode = (int)wp[WP_FRICTION], m = first;
    for (int c = 0; c < W->nc; c++) {
        mb_contact_point *C = W->contacts + c;
        const double *g1 = W->gdat + (size_t)C->g1 * GD_SIZE, *g2 = W->gdat + (size_t)C->g2 * GD_SIZE;
        double mu = combine_mu(g1[GD_MU], g2[GD_MU]);
        double bounce = g1[GD_BOUNCE] > g2[GD_BOUNCE] ? g1[GD_BOUNCE] : g2[GD_BOUNCE];
        if (reserve_rows(W, m + 3)) return -1;
        double r1[3] = {0, 0, 0}, r2[3] = {0, 0, 0}, *n = C->normal;
        if (C->b1 >= 0) mb_sub3(C->pos, W->state + (size_t)C->b1 * BS_SIZE + BS_POS, r1);
        if (C->b2 >= 0) mb_sub3(C->pos, W->state + (size_t)C->b2 * BS_SIZE + BS_POS, r2);
        mb_row *r = W->rows + m;
        r->rhs = r->cfm = r->lo = r->hi = r->mu = 0.0;     /* no memset: see zero6 */
        r->b1 = C->b1; r->b2 = C->b2; r->source = -(1 + c); r->findex = -1; r->cone_pair = -1;
        mb_copy3(n, r->J1); mb_cross3(r1, n, r->J1 + 3);
        mb_scale3(n, -1, r->J2); mb_cross3(r2, n, r->J2 + 3); mb_scale3(r->J2 + 3, -1, r->J2 + 3);
        /* rhs: push out what lies deeper than the surface layer, or bounce */
        double vn = 0;
        for (int k = 0; k < 6; k++) {
            if (C->b1 >= 0) vn += r->J1[k] * W->state[(size_t)C->b1 * BS_SIZE + BS_VEL + k];
            if (C->b2 >= 0) vn += r->J2[k] * W->state[(size_t)C->b2 * BS_SIZE + BS_VEL + k];
        }
        double depth = C->depth - wp[WP_SURFACE_LAYER], rhs = 0;
        if (depth > 0) { rhs = wp[WP_CONTACT_ERP] / h * depth; if (rhs > wp[WP_MAX_CORRECTING_VEL]) rhs = wp[WP_MAX_CORRECTING_VEL]; }
        double u1[3], u2[3], u[3];                       /* relative velocity after a free step */
        point_velocity(W, C->b1, r1, h, u1); point_velocity(W, C->b2, r2, h, u2); mb_sub3(u1, u2, u);
        if (bounce > 0 && -vn > wp[WP_BOUNCE_VEL]) {
            /* Restitution at the surface, not at the depth where the step found the contact:
             * with the free normal acceleration a_n < 0 the approach speed at the surface is
             * sqrt(vn^2 + 2 a_n d); leaving it at bounce times that and climbing back through d
             * gives u^2 = e^2 vn^2 - 2 a_n d (1 - e^2).  (e = 1: ODE's -e vn exactly.) */
            double an = (mb_dot3(u, n) - vn) / h, d = C->depth > 0 ? C->depth : 0, out2 = bounce * bounce * vn * vn;
            if (an < 0) out2 -= 2 * an * d * (1 - bounce * bounce);
            double out = sqrt(out2);
            if (out > rhs) rhs = out;
        }
        r->rhs = rhs; r->cfm = wp[WP_CONTACT_CFM]; r->lo = 0; r->hi = INFINITY;
        int normal_row = m++;
        if (!(mu > 0)) continue;
        /* friction directions: the first along the slip the free step would make */
        double t1[3], t2[3];
        double un = mb_dot3(u, n);
        for (int k = 0; k < 3; k++) t1[k] = u[k] - un * n[k];
        if (mb_norm3(t1) > 1e-9) { mb_normalize3(t1); mb_cross3(n, t1, t2); } else plane_space(n, t1, t2);
        const double *ts[2] = {t1, t2};
        for (int i = 0; i < 2; i++) {
            mb_row *f = W->rows + m;
            f->rhs = f->cfm = f->lo = f->hi = f->mu = 0.0;
            f->b1 = C->b1; f->b2 = C->b2; f->source = -(1 + c); f->cone_pair = -1;
            mb_copy3(ts[i], f->J1); mb_cross3(r1, ts[i], f->J1 + 3);
            mb_scale3(ts[i], -1, f->J2); mb_cross3(r2, ts[i], f->J2 + 3); mb_scale3(f->J2 + 3, -1, f->J2 + 3);
            f->cfm = wp[WP_CFM]; f->rhs = 0;
            if (mode == FRICTION_FORCE || isinf(mu)) { f->findex = -1; f->lo = -mu; f->hi = mu; }
            else { f->findex = normal_row; f->mu = mu; f->lo = -INFINITY; f->hi = INFINITY; }
            if (mode == FRICTION_CONE && !isinf(mu)) f->cone_pair = i == 0 ? m + 1 : m - 1;
            m++;
        }
    }
    return m;
}

/* ---- solvers -------------------------------------------------------------------------------------- */
static inline void apply_minv(const mb_world *W, int b, const double *J, double *out)
{   /* out = W J^T for one body: [J_lin / m; I^-1 J_ang] */
    double im = W->bprop[(size_t)b * BP_SIZE + BP_INVMASS];
    for (int k = 0; k < 3; k++) out[k] = im * J[k];
    smv3(W->invIw + 9 * (size_t)b, J + 3, out + 3);
}

static double row_dot_fc(const mb_world *W, const mb_row *r, const double *fc)
{
    /* pairwise sums (dot6): the quick step runs row after row on this, so its latency counts */
    double s1 = r->b1 >= 0 ? dot6(r->J1, fc + 6 * r->b1) : 0.0, s2 = r->b2 >= 0 ? dot6(r->J2, fc + 6 * r->b2) : 0.0;
    return s1 + s2;
}
static void fc_add(const mb_world *W, const mb_row *r, const double *iMJ, double s, double *fc)
{
    if (r->b1 >= 0) for (int k = 0; k < 6; k++) fc[6 * r->b1 + k] += s * iMJ[k];
    if (r->b2 >= 0) for (int k = 0; k < 6; k++) fc[6 * r->b2 + k] += s * iMJ[6 + k];
}

static int dantzig(mb_world *W)
{
    int m = W->m;
    if (reserve_m(W, m, 1)) return -1;
    double *A = W->A;
    for (int i = 0; i < m; i++) {
        const mb_row *ri = W->rows + i;
        for (int j = 0; j <= i; j++) {
            const mb_row *rj = W->rows + j;
            const double *iMJ = W->iMJ + 12 * (size_t)j;
            double s = 0;
            if (ri->b1 >= 0) {
                if (ri->b1 == rj->b1) for (int k = 0; k < 6; k++) s += ri->J1[k] * iMJ[k];
                if (ri->b1 == rj->b2) for (int k = 0; k < 6; k++) s += ri->J1[k] * iMJ[6 + k];
            }
            if (ri->b2 >= 0) {
                if (ri->b2 == rj->b1) for (int k = 0; k < 6; k++) s += ri->J2[k] * iMJ[k];
                if (ri->b2 == rj->b2) for (int k = 0; k < 6; k++) s += ri->J2[k] * iMJ[6 + k];
            }
            A[(size_t)i * m + j] = A[(size_t)j * m + i] = s;
        }
        A[(size_t)i * m + i] += W->cfmh[i];
    }
    /* ODE's approximation, then the fixed-point passes to the true pyramid or cone (lcp.c) */
    for (int i = 0; i < m; i++) {
        const mb_row *r = W->rows + i;
        W->findex[i] = r->findex; W->mu[i] = r->mu; W->lo[i] = r->lo; W->hi[i] = r->hi; W->cone[i] = r->cone_pair;
    }
    return mb_lcp_friction(m, A, W->b, W->lo, W->hi, W->findex, W->mu, W->cone, W->lambda, W->flo, W->fhi, W->work, W->iwork,
                        &W->pivots, (int)W->wpar[WP_MAX_PIVOTS], NULL, NULL, NULL);
}

/* natural-map residual  max |lambda - proj(lambda - w)|  with w = A lambda - b */
double mb_world_residual(mb_world *W)
{
    int m = W->m;
    double *fc = W->fc, worst = 0;
    if (W->rows_stale) write_hinge_rows(W, W->nj);              /* a tree of free hinges wrote no rows */
    if (W->imj_stale) { lcp_terms(W, 0.0, 0); W->imj_stale = 0; }   /* the tree's step formed no W J^T */
    memset(fc, 0, sizeof(double) * 6 * (size_t)W->nb);
    for (int i = 0; i < m; i++) fc_add(W, W->rows + i, W->iMJ + 12 * (size_t)i, W->lambda[i], fc);
    for (int i = 0; i < m; i++) W->w[i] = row_dot_fc(W, W->rows + i, fc) + W->cfmh[i] * W->lambda[i] - W->b[i];
    for (int i = 0; i < m; i++) {
        const mb_row *r = W->rows + i;
        double x = W->lambda[i], y = x - W->w[i], e;
        if (r->cone_pair >= 0) {
            if (r->cone_pair < i) continue;
            int j = r->cone_pair;
            double rad = r->mu * fabs(W->lambda[r->findex]), yj = W->lambda[j] - W->w[j], t = sqrt(y * y + yj * yj);
            if (t > rad) { y *= rad / t; yj *= rad / t; }
            e = fabs(x - y); if (fabs(W->lambda[j] - yj) > e) e = fabs(W->lambda[j] - yj);
        } else {
            double lo = r->lo, hi = r->hi;
            if (r->findex >= 0 && W->solver_used == SOLVER_PGS) { hi = r->mu * fabs(W->lambda[r->findex]); lo = -hi; }
            if (y < lo) y = lo; else if (y > hi) y = hi;
            e = fabs(x - y);
        }
        if (e > worst) worst = e;
    }
    return worst;
}

/* ---- which solver: the exact one while it is cheap, the quick step beyond -------------------------- */
static const char WHY_ASKED_DANTZIG[] = "dantzig: asked for (solver='dantzig')";
static const char WHY_ASKED_PGS[] = "pgs: asked for (solver='pgs')";
static const char WHY_SMALL[] = "dantzig: auto, rows <= exact_rows";
static const char WHY_LARGE[] = "pgs: auto, rows > exact_rows";
static const char WHY_SMALL_EQ[] = "dantzig: auto, equality rows only and rows <= 2 exact_rows";
static const char WHY_LARGE_EQ[] = "pgs: auto, equality rows only but rows > 2 exact_rows";
static const char WHY_TREE[] = "dantzig: joint tree with equality rows only, linear-time factorization";
static const char WHY_TREE_ROWS[] = "dantzig: auto, joint tree factorized, other rows <= exact_rows pivoted on the Schur complement";
static const char WHY_ASKED_TREE_ROWS[] = "dantzig: asked for (solver='dantzig'), joint tree factorized, other rows pivoted on the Schur complement";
static const char WHY_NOTHING[] = "no constraint rows";
static const char *const why_fallback[] = {
    "pgs: pivoting failed",
    "pgs: pivoting failed, A_CC singular",
    "pgs: pivoting failed, a pivot step without limit",
    "pgs: pivoting failed, a row cycling",
    "pgs: pivoting failed, a result not finite",
    "pgs: pivoting stopped at max_pivots",
};

/* solver='auto' pivots while the rows are few and quick-steps a large system.  Pivoting refactors
 * A_CC at every pivot, about one pivot per bounded row and friction pass, so with contacts its
 * cost grows like m^4 where the quick step's grows like m: on the box piles of
 * `python -m multibody.bench.engine --solvers` a pivoting step takes 0.02 ms at 12 rows, 0.07 ms
 * at 24, 0.19 ms at 36, 0.54 ms at 48 and 2.5 ms at 69 (1.8x, 3.8x, 7x, 15x, 38x the quick
 * step), hence exact_rows = 48: under 1 ms, real time at dt = 1 ms.  Rows that are all
 * equalities (joints without stops or motors) cost one factorization and no pivot, m^3/6: on
 * dense chains 0.2 ms at 100 rows and 1.2 ms at 200 (0.8x to 1.8x the quick step up to 100), so
 * they pivot up to 2 exact_rows.  A joint tree's equality rows are solved exactly in linear time
 * at any size; a joint tree with other rows (rest >= 0 of them: contacts, stops, motors) pivots
 * only those, on their Schur complement (tree_contacts.c), so the same rule counts them alone.
 * Returns whether the Schur complement path solves this step. */
static int choose_solver(mb_world *W, int tree, int bounded, int rest)
{
    int asked = (int)W->wpar[WP_SOLVER];
    if (W->m == 0) { W->solver_used = asked == SOLVER_PGS ? SOLVER_PGS : SOLVER_DANTZIG; W->why = WHY_NOTHING; return 0; }
    if (asked == SOLVER_DANTZIG && rest >= 0) { W->solver_used = SOLVER_DANTZIG; W->why = WHY_ASKED_TREE_ROWS; return 1; }
    if (asked != SOLVER_AUTO) { W->solver_used = asked; W->why = asked == SOLVER_PGS ? WHY_ASKED_PGS : WHY_ASKED_DANTZIG; return 0; }
    if (rest >= 0 && rest <= W->wpar[WP_EXACT_ROWS]) { W->solver_used = SOLVER_DANTZIG; W->why = WHY_TREE_ROWS; return 1; }
    double most = W->wpar[WP_EXACT_ROWS] * (bounded ? 1 : 2);
    int small = W->m <= most || tree;
    W->solver_used = small ? SOLVER_DANTZIG : SOLVER_PGS;
    W->why = tree ? WHY_TREE : bounded ? (small ? WHY_SMALL : WHY_LARGE) : (small ? WHY_SMALL_EQ : WHY_LARGE_EQ);
    return 0;
}

/* W J^T (iMJ) of every row and, with `rhs`, b = rhs/h - J (v/h + W f) and CFM/h.  Rows come in
 * runs on the same two bodies (a joint's, a contact's): each run reads its bodies' inverse mass,
 * inverse world inertia and free velocity once, into locals the stores to iMJ cannot alias. */
static void lcp_terms(mb_world *W, double ih, int rhs)
{
    const int m = W->m;
    for (int i = 0; i < m;) {
        const int b1 = W->rows[i].b1, b2 = W->rows[i].b2;
        double im1 = 0, im2 = 0, I1[9], I2[9], vf[12];
        for (int k = 0; k < 12; k++) vf[k] = 0.0;
        if (b1 >= 0) {
            im1 = W->bprop[(size_t)b1 * BP_SIZE + BP_INVMASS];
            memcpy(I1, W->invIw + 9 * (size_t)b1, sizeof I1); memcpy(vf, W->vfree + 6 * (size_t)b1, 6 * sizeof(double));
        }
        if (b2 >= 0) {
            im2 = W->bprop[(size_t)b2 * BP_SIZE + BP_INVMASS];
            memcpy(I2, W->invIw + 9 * (size_t)b2, sizeof I2); memcpy(vf + 6, W->vfree + 6 * (size_t)b2, 6 * sizeof(double));
        }
        for (; i < m && W->rows[i].b1 == b1 && W->rows[i].b2 == b2; i++) {
            const mb_row *r = W->rows + i;
            double *restrict M = W->iMJ + 12 * (size_t)i;        /* W J^T */
            if (b1 >= 0) { for (int k = 0; k < 3; k++) M[k] = im1 * r->J1[k]; smv3(I1, r->J1 + 3, M + 3); } else zero6(M);
            if (b2 >= 0) { for (int k = 0; k < 3; k++) M[6 + k] = im2 * r->J2[k]; smv3(I2, r->J2 + 3, M + 9); } else zero6(M + 6);
            if (rhs) {
                W->b[i] = r->rhs * ih - dot12_one(r->J1, r->J2, vf);   /* vf is zero on the static world's side */
                W->cfmh[i] = r->cfm * ih;
            }
        }
    }
}

/* 1. world inverse inertias, applied forces with gravity and the gyroscopic torque, and the free
 * step's velocity over h, body by body; each body's numbers in locals, and R and I^-1 written
 * through restrict pointers (not staged in locals and copied: GCC packed those into vectors and
 * moved them through general registers), so that no store to the world's arrays is taken to
 * alias what is read after it.  Compiled twice (ENGINE_CLONES_AVX2): the three-operand AVX
 * encoding spares the register copies the lane pairs need in SSE2, with the same bits. */
ENGINE_CLONES_AVX2 static void bodies_forces(mb_world *W, double ih)
{
    const double *wp = W->wpar;
    const int nb = W->nb;
    for (int b = 0; b < nb; b++) {
        double *s = W->state + (size_t)b * BS_SIZE, q[4], w[3];
        double *restrict R = W->R + 9 * (size_t)b, *restrict Iinv = W->invIw + 9 * (size_t)b;   /* written here only */
        const double *bp = W->bprop + (size_t)b * BP_SIZE, *ld = W->load + (size_t)b * BL_SIZE;
        v2d q01 = ld2(s + BS_QUAT), q23 = ld2(s + BS_QUAT + 2), s01 = q01 * q01, s23 = q23 * q23;
        double iqn = 1.0 / sqrt(((s01[0] + s01[1]) + s23[0]) + s23[1]);
        q01 *= iqn; q23 *= iqn;
        st2(s + BS_QUAT, q01); st2(s + BS_QUAT + 2, q23);
        q[0] = q01[0]; q[1] = q01[1]; q[2] = q23[0]; q[3] = q23[1];
        mb_copy3(s + BS_OMEGA, w);
        mb_quat_to_R(q, R);
        /* I^-1 in world axes, R I_body^-1 R^T (eq. 5.50), exactly symmetric (smv3 relies on it);
         * the gyroscopic torque -w x I w with I w = R (I_body (R^T w)), so the world inertia
         * itself is never formed.  Bodies whose inertia is diagonal in body axes (every
         * primitive shape; bdiag, from mb_world_init) skip the zero products, which changes no bit. */
        double T[9], Iwb[3], Iw[3], gyro[3];
        const double *Ib = bp + BP_INVI;
        /* R^T w in lane pairs (mb_mtv3's sums: R's rows are R^T's columns); R's first two rows by
         * columns, c01[k] = (R_0k, R_1k), serve R Iwb and the inverse inertia below */
        v2d c01[3], wb01 = ld2(R) * w[0] + ld2(R + 3) * w[1] + ld2(R + 6) * w[2];
        double wb2 = R[2] * w[0] + R[5] * w[1] + R[8] * w[2];
        for (int k = 0; k < 3; k++) c01[k] = (v2d){R[k], R[3 + k]};
        if (W->bdiag[b]) {
            v2d ib01 = {Ib[0], Ib[4]};
            for (int r = 0; r < 3; r++) { st2(T + 3 * r, ld2(R + 3 * r) * ib01); T[3 * r + 2] = R[3 * r + 2] * Ib[8]; }
            Iwb[0] = bp[BP_I] * wb01[0]; Iwb[1] = bp[BP_I + 4] * wb01[1]; Iwb[2] = bp[BP_I + 8] * wb2;
        } else {
            for (int r = 0; r < 3; r++) for (int c = 0; c < 3; c++)
                T[3 * r + c] = R[3 * r] * Ib[c] + R[3 * r + 1] * Ib[3 + c] + R[3 * r + 2] * Ib[6 + c];
            double wb[3] = {wb01[0], wb01[1], wb2};
            mb_mv3(bp + BP_I, wb, Iwb);
        }
        /* its lower triangle, entry (r, c) = T_r . R_c summed in k order, two entries a lane pair:
         * (1,0)(1,1) and (2,0)(2,1) from c01, (0,0)(2,2) beside */
        {
            v2d t02[3], r02[3];
            for (int k = 0; k < 3; k++) { t02[k] = (v2d){T[k], T[6 + k]}; r02[k] = (v2d){R[k], R[6 + k]}; }
            v2d l1 = T[3] * c01[0] + T[4] * c01[1] + T[5] * c01[2];
            v2d l2 = T[6] * c01[0] + T[7] * c01[1] + T[8] * c01[2];
            v2d dg = t02[0] * r02[0] + t02[1] * r02[1] + t02[2] * r02[2];
            Iinv[0] = dg[0]; Iinv[1] = Iinv[3] = l1[0]; Iinv[4] = l1[1];
            Iinv[2] = Iinv[6] = l2[0]; Iinv[5] = Iinv[7] = l2[1]; Iinv[8] = dg[1];
        }
        v2d Iw01 = c01[0] * Iwb[0] + c01[1] * Iwb[1] + c01[2] * Iwb[2];          /* R Iwb, mb_mv3's sums */
        Iw[0] = Iw01[0]; Iw[1] = Iw01[1]; Iw[2] = R[6] * Iwb[0] + R[7] * Iwb[1] + R[8] * Iwb[2];
        mb_cross3(w, Iw, gyro);
        /* the force f, the torque t, and v/h + W f, the free step's velocity over h, in lane pairs */
        const double mass = bp[BP_MASS], im = bp[BP_INVMASS];
        double *fe = W->fext + 6 * (size_t)b, *vf = W->vfree + 6 * (size_t)b;
        v2d f01 = ld2(ld + BL_FORCE) + mass * ld2(wp + WP_GRAVITY), t12 = ld2(ld + BL_TORQUE + 1) - ld2(gyro + 1);
        double f2 = ld[BL_FORCE + 2] + mass * wp[WP_GRAVITY + 2], t0 = ld[BL_TORQUE] - gyro[0];
        v2d a01 = ld2(Iinv) * t0 + ld2(Iinv + 3) * t12[0] + ld2(Iinv + 6) * t12[1];
        double a2 = Iinv[2] * t0 + Iinv[5] * t12[0] + Iinv[8] * t12[1];
        v2d u01 = im * f01 + ld2(s + BS_VEL) * ih, u45 = (v2d){a01[1], a2} + ld2(s + BS_OMEGA + 1) * ih;
        double u2 = im * f2 + s[BS_VEL + 2] * ih, u3 = a01[0] + s[BS_OMEGA] * ih;
        st2(fe, f01); fe[2] = f2; fe[3] = t0; st2(fe + 4, t12);
        st2(vf, u01); vf[2] = u2; vf[3] = u3; st2(vf + 4, u45);
    }
}

/* 5. semi-implicit Euler from the constraint forces fc and 6. the explosion check: 0, or 1 with the
 * state restored and the message set (cloned like bodies_forces) */
ENGINE_CLONES_AVX2 static int bodies_integrate(mb_world *W, const double *fc, double h)
{
    const double *wp = W->wpar;
    const int nb = W->nb;
    const double vmax = wp[WP_MAX_SPEED];
    const double hh = 0.5 * h;
    for (int b = 0; b < nb; b++) {
        /* in lane pairs along the state row (position 0-2, quaternion 3-6, velocity 7-9, angular
         * velocity 10-12), each sum as the scalar form writes it: v += h W (f_ext + f_c) with
         * W f = [f / m; I^-1 tau] (smv3's order), x += h v, q += h/2 [0, w] q normalised */
        double *sp = W->state + (size_t)b * BS_SIZE;
        const double *fe = W->fext + 6 * (size_t)b, *fb = fc + 6 * (size_t)b, *I = W->invIw + 9 * (size_t)b;
        const double im = W->bprop[(size_t)b * BP_SIZE + BP_INVMASS];
        v2d f01 = ld2(fe) + ld2(fb), f23 = ld2(fe + 2) + ld2(fb + 2), f45 = ld2(fe + 4) + ld2(fb + 4);
        v2d al01 = ld2(I) * f23[1] + ld2(I + 3) * f45[0] + ld2(I + 6) * f45[1];
        double al2 = I[2] * f23[1] + I[5] * f45[0] + I[8] * f45[1];
        v2d v01 = ld2(sp + BS_VEL) + h * (im * f01), w01 = ld2(sp + BS_OMEGA) + h * al01;
        double v2 = sp[BS_VEL + 2] + h * (im * f23[0]), w2 = sp[BS_OMEGA + 2] + h * al2;
        v2d x01 = ld2(sp + BS_POS) + h * v01;
        double x2 = sp[BS_POS + 2] + h * v2;
        double wq[4] = {0, w01[0], w01[1], w2}, dq[4];
        mb_quat_mul(wq, sp + BS_QUAT, dq);
        v2d q01 = ld2(sp + BS_QUAT) + hh * ld2(dq), q23 = ld2(sp + BS_QUAT + 2) + hh * ld2(dq + 2);
        v2d s01 = q01 * q01, s23 = q23 * q23;
        double qn = 1.0 / sqrt(((s01[0] + s01[1]) + s23[0]) + s23[1]);
        q01 *= qn; q23 *= qn;
        st2(sp + BS_POS, x01); sp[BS_POS + 2] = x2;
        st2(sp + BS_QUAT, q01); st2(sp + BS_QUAT + 2, q23);
        st2(sp + BS_VEL, v01); sp[BS_VEL + 2] = v2;
        st2(sp + BS_OMEGA, w01); sp[BS_OMEGA + 2] = w2;
        /* 6. explosion check: x - x is 0 for every finite x and NaN otherwise, so one sum tells;
         * speeds are compared squared */
        v2d z = (x01 - x01) + (q01 - q01) + (q23 - q23) + (v01 - v01) + (w01 - w01);
        int finite = z[0] + z[1] + ((x2 - x2) + (v2 - v2) + (w2 - w2)) == 0;
        double sp2 = v01[0] * v01[0] + v01[1] * v01[1] + v2 * v2, wsp2 = w01[0] * w01[0] + w01[1] * w01[1] + w2 * w2;
        if (!finite || sp2 > vmax * vmax || wsp2 > vmax * vmax) {
            memcpy(W->state, W->save, sizeof(double) * BS_SIZE * (size_t)nb);
            W->steps--;
            W->bad_body = b;
            if (!finite) snprintf(W->message, sizeof W->message, "the state is not finite");
            else snprintf(W->message, sizeof W->message, "speed %.3g m/s or angular speed %.3g rad/s beyond max_speed %.3g",
                          sqrt(sp2), sqrt(wsp2), vmax);
            return 1;
        }
    }
    return 0;
}

int mb_world_step(mb_world *W, double h)
{
    const double *wp = W->wpar;
    int nb = W->nb;
    const double ih = 1.0 / h;
    /* 1. inertias and applied forces */
    bodies_forces(W, ih);
    /* 2. collision detection */
    W->nc = 0;
    if (wp[WP_CONTACTS] != 0) { geom_poses(W); int e = broad_phase(W); if (e) return e; }
    /* 3. rows: joints, then contacts */
    double upos[2];
    int m = 0, bounded = 0;                                /* some row has a bound (tree: none may) */
    if (reserve_rows(W, W->nj * MAX_JOINT_ROWS)) return -1;
    /* a tree of free hinges keeps its rows as terms until they are asked for (mb_world_residual);
     * the first joint that is not a free hinge has the rows before it written */
    int terms = W->tree_hinges && W->nc == 0 && (int)wp[WP_SOLVER] != SOLVER_PGS && wp[WP_TREE] != 0;
    if (wp[WP_JOINTS_VERSION] != W->jversion) mb_joint_flags(W);   /* a stop, motor or ERP/CFM changed */
    W->rows_stale = 0;
    for (int j = 0; j < W->nj; j++) {
        if (terms) {                                      /* a run of free hinges in one call */
            double half[2 * 16];
            int n = mb_hinge_terms_run(W, j, h, half, 16);
            for (int i = 0; i < n; i++) {
                mb_axis_info ax; ax.half[0] = half[2 * i]; ax.half[1] = half[2 * i + 1];
                next_turns(W, j + i, 0, J_HINGE, &ax, 1);
            }
            m += 5 * n;
            if (n) { j += n - 1; continue; }
        }
        int type = (int)W->jint[(size_t)j * JI_SIZE + JI_TYPE];
        const double *ja = W->jdat + (size_t)j * JD_SIZE + JD_AXES;
        int stops = 0, motors = 0;                        /* a finite stop on some axis needs the angle, */
        for (int a = 0; a < 2; a++) {                     /* stops and motors the rate rows */
            double lo = ja[JA_SIZE * a + JA_LO], hi = ja[JA_SIZE * a + JA_HI];
            if (lo <= hi && (lo > -INFINITY || hi < INFINITY)) stops = 1;
            if (ja[JA_SIZE * a + JA_MOTOR_FMAX] > 0 || ja[JA_SIZE * a + JA_DAMPING] > 0) motors = 1;
        }
        mb_axis_info ax;
        if (type == J_HINGE && !stops && !motors) {      /* the common case in one pass */
            ax.naxes = 1;
            if (terms) { mb_hinge_terms(W, j, h, ax.half, W->hterms + HT_SIZE * (size_t)j); m += 5; }
            else m += mb_hinge_rows(W, j, h, ax.half, W->rows + m);
            next_turns(W, j, 0, type, &ax, 1);
            continue;
        }
        if (terms) { write_hinge_rows(W, j); terms = 0; }
        mb_joint_axes(W, j, &ax, (stops ? AX_ANGLES : 0) | (stops || motors ? AX_RATES : 0));
        for (int a = 0; a < ax.naxes; a++)       /* unwrap against the last step */
            upos[a] = ax.pos[a] + 2 * M_PI * next_turns(W, j, a, type, &ax, 1);
        int m0 = m;                                       /* (a free hinge's rows have no bounds) */
        m += mb_joint_rows(W, j, h, &ax, upos, W->rows + m);
        for (int i = m0; i < m; i++) bounded |= W->rows[i].lo != -INFINITY || W->rows[i].hi != INFINITY;
    }
    int mj = m;
    m = contact_rows(W, h, m);
    if (m < 0) return -1;
    for (int i = mj; i < m; i++) bounded |= W->rows[i].lo != -INFINITY || W->rows[i].hi != INFINITY;
    W->m = m;
    if (reserve_m(W, m, 0)) return -1;
    /* 4. the LCP.  A tree of ball-based joints (every chain of hinges) goes straight from its
     * rows, or a free hinge's terms, to its multipliers (tree.c) and forms no W J^T; the other
     * systems form it here (lcp_terms) */
    W->fallback = 0; W->pivots = 0; W->iterations = 0;
    W->used_tree = 0;
    W->imj_stale = 0;
    int tree = terms;                                      /* a joint tree's base rows only, no bounds */
    if (!terms && m && (int)wp[WP_SOLVER] != SOLVER_PGS && wp[WP_TREE] != 0 && W->tree_ok && W->nc == 0 && m == W->tree_m && !bounded) {
        tree = 1;
        for (int j = 0; j < W->nj && tree; j++) if (W->rows[W->tstart[j]].source != j) tree = 0;
    }
    /* a joint tree with contacts, stops or motors: its other rows on the Schur complement (tree_contacts.c) */
    int rest = tree ? -1 : mb_tree_contacts_rows(W);
    if (rest < -1) return -1;
    int schur = choose_solver(W, tree, bounded, rest);
    if (terms) {
        W->rows_stale = W->imj_stale = 1;
        if (mb_tree_solve_hinges(W, ih) == 0) { W->used_tree = 1; W->why = WHY_TREE; }
        else { write_hinge_rows(W, W->nj); lcp_terms(W, ih, 1); W->imj_stale = 0; }
    } else if (tree && W->tree_ball) {
        W->imj_stale = 1;
        if (mb_tree_solve_ball(W, ih) == 0) { W->used_tree = 1; W->why = WHY_TREE; }
        else { lcp_terms(W, ih, 1); W->imj_stale = 0; }
    } else if (W->solver_used == SOLVER_PGS && !tree) {
        W->imj_stale = 1;                                  /* the quick step forms its terms itself */
    } else {
        lcp_terms(W, ih, 1);
        if (tree && mb_tree_solve(W) == 0) { W->used_tree = 1; W->why = WHY_TREE; }
    }
    if (tree && !W->used_tree && W->solver_used == SOLVER_DANTZIG && (int)wp[WP_SOLVER] == SOLVER_AUTO) W->why = WHY_SMALL_EQ;
    if (m && W->solver_used == SOLVER_DANTZIG && !W->used_tree) {
        int err = schur ? mb_tree_contacts_solve(W) : dantzig(W);
        if (err < 0) return -1;
        if (err) { W->fallback = err; W->solver_used = SOLVER_PGS; W->why = why_fallback[err < 6 ? err : 0]; }
        else if ((int)wp[WP_FRICTION] == FRICTION_CONE) {  /* pyramid result brought into the cone */
            for (int i = 0; i < m; i++) {
                const mb_row *r = W->rows + i;
                if (r->cone_pair > i) {
                    int j = r->cone_pair;
                    double rad = r->mu * fabs(W->lambda[r->findex]), t = hypot(W->lambda[i], W->lambda[j]);
                    if (t > rad && t > 0) { W->lambda[i] *= rad / t; W->lambda[j] *= rad / t; }
                }
            }
        }
    }
    if (m && W->solver_used == SOLVER_PGS && mb_quick_step(W, ih, (int)wp[WP_ITERATIONS], wp[WP_SOR], wp[WP_TOLERANCE])) return -1;
    W->residual = -1;                                      /* computed when asked for */
    /* warm starts follow quick steps, and under 'auto' also the pivoting steps a quick step may follow */
    if (W->solver_used == SOLVER_PGS || ((int)wp[WP_SOLVER] == SOLVER_AUTO && !W->used_tree)) { if (mb_quick_remember(W)) return -1; }
    else { W->nwprev = 0; W->njlam = 0; }
    /* 5. semi-implicit Euler */
    memcpy(W->save, W->state, sizeof(double) * BS_SIZE * (size_t)nb);
    double *fc = W->fc;
    memset(fc, 0, sizeof(double) * 6 * (size_t)nb);
    if (W->used_tree && W->imj_stale) mb_tree_add_forces(W, fc);
    else for (int i = 0; i < m;) {
        /* J^T lambda summed in registers (two lanes) over each run of rows on the same two bodies
         * (a joint's rows, a contact's), then added once: no chain of stores and reloads */
        const mb_row *r = W->rows + i;
        int b1 = r->b1, b2 = r->b2;
        v2d f1[3] = {{0, 0}, {0, 0}, {0, 0}}, f2[3] = {{0, 0}, {0, 0}, {0, 0}};
        for (; i < m && W->rows[i].b1 == b1 && W->rows[i].b2 == b2; i++) {
            const mb_row *q = W->rows + i; double l = W->lambda[i];
            for (int k = 0; k < 3; k++) { f1[k] += l * ld2(q->J1 + 2 * k); f2[k] += l * ld2(q->J2 + 2 * k); }
        }
        if (b1 >= 0) for (int k = 0; k < 3; k++) st2(fc + 6 * b1 + 2 * k, ld2(fc + 6 * b1 + 2 * k) + f1[k]);
        if (b2 >= 0) for (int k = 0; k < 3; k++) st2(fc + 6 * b2 + 2 * k, ld2(fc + 6 * b2 + 2 * k) + f2[k]);
    }
    W->steps++;
    if (bodies_integrate(W, fc, h)) return 1;
    memset(W->load, 0, sizeof(double) * BL_SIZE * (size_t)nb);
    return 0;
}
