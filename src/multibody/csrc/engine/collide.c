/* Narrow phase: contact points, normals and depths for every pair of primitives (report §6.2,
 * ODE's dCollide).  The normal of every contact points from geom b into geom a (moving a along
 * +normal separates the pair); depth > 0 means penetration.
 *
 * Closed forms for the pairs that need several points to rest without rocking (box-box by the
 * separating-axis test and face clipping, box/capsule/cylinder on a plane, capsule-capsule) and
 * for every pair with a sphere; Minkowski portal refinement (MPR, Snethen's XenoCollide) on the
 * support functions for the remaining convex pairs (box-cylinder, capsule-cylinder,
 * cylinder-cylinder, and box-capsule when a capsule's segment cuts deeper than its ends), one
 * point per call.  Convex hulls (convex.c) and static triangle meshes (trimesh.c) bring their own
 * pair colliders; the shapes' bounding boxes and support functions live in geometry.c.
 *
 * Dispatch: one table of pair colliders indexed by the two shape codes (at the end of this file),
 * as MuJoCo's engine_collision_driver.c has one (mjCOLLISIONFUNC); a pair the table has no entry
 * for is refused (mb_collide_check, when the world is built) and an error if met in a step, never
 * collided as some other pair (an if-chain here once sent every shape it did not know to the
 * cylinder's colliders).
 *
 * Why not coal or python-fcl: both are installed and serve these pairs, but only through Python,
 * once per pair per step.  Measured (python -m multibody.bench.engine, same pairs): coal called
 * from Python costs 3.5 us per box-box pair and 6.1 us per box-cylinder pair (python-fcl ~10 us),
 * this file 0.4 and 0.6 us including the broad phase, with no Python in the step at all.  The
 * tests check every pair against coal on shallow contacts (depth within 0.5 mm, closed forms to
 * rounding).
 */
#include <limits.h>
#include <stdio.h>
#include "engine/engine.h"

#define EPS 1e-12

/* a point of the pair's fixed feature (mb_contact_point.feature; −1: none) */
static int emit_feature(mb_contact_point *out, int n, int max, const double *pos, const double *normal, double depth,
                        int feature)
{
    if (n >= max) {                         /* keep the deepest points */
        int worst = 0;
        for (int i = 1; i < n; i++) if (out[i].depth < out[worst].depth) worst = i;
        if (out[worst].depth >= depth) return n;
        n = worst;
        mb_copy3(pos, out[n].pos); mb_copy3(normal, out[n].normal); out[n].depth = depth, out[n].feature = feature;
        return max;
    }
    mb_copy3(pos, out[n].pos); mb_copy3(normal, out[n].normal); out[n].depth = depth, out[n].feature = feature;
    return n + 1;
}

int mb_collide_emit(mb_contact_point *out, int n, int max, const double *pos, const double *normal, double depth)
{
    return emit_feature(out, n, max, pos, normal, depth, -1);
}

/* ---- spheres -------------------------------------------------------------------------------- */
static int sphere_sphere(const double *pa, double ra, const double *pb, double rb, mb_contact_point *out, int n, int max)
{
    double d[3]; mb_sub3(pa, pb, d);
    double dist = mb_norm3(d), depth = ra + rb - dist;
    if (depth < 0) return n;
    double nrm[3];
    if (dist > EPS) mb_scale3(d, 1.0 / dist, nrm); else { nrm[0] = 0; nrm[1] = 0; nrm[2] = 1; }
    double pos[3]; mb_scale3(nrm, rb - 0.5 * depth, pos); mb_add3(pos, pb, pos);
    return mb_collide_emit(out, n, max, pos, nrm, depth);
}

/* sphere (centre c, radius r) against box b */
static int sphere_box(const double *c, double r, const mb_geom_pose *b, mb_contact_point *out, int n, int max)
{
    double d[3], l[3], h[3] = {0.5 * b->size[0], 0.5 * b->size[1], 0.5 * b->size[2]};
    mb_sub3(c, b->p, d); mb_mtv3(b->R, d, l);
    double q[3]; int inside = 1;
    for (int k = 0; k < 3; k++) {
        q[k] = l[k];
        if (q[k] > h[k]) { q[k] = h[k]; inside = 0; }
        if (q[k] < -h[k]) { q[k] = -h[k]; inside = 0; }
    }
    double nrm[3], pos[3], depth;
    if (!inside) {
        double diff[3]; mb_sub3(l, q, diff);
        double dist = mb_norm3(diff);
        depth = r - dist;
        if (depth < 0) return n;
        mb_scale3(diff, 1.0 / dist, diff); mb_mv3(b->R, diff, nrm);
        mb_geom_point(b, q, pos);
        return mb_collide_emit(out, n, max, pos, nrm, depth);
    }
    int best = 0; double gap = INFINITY;                   /* centre inside: leave by the nearest face */
    for (int k = 0; k < 3; k++) { double g = h[k] - fabs(l[k]); if (g < gap) { gap = g; best = k; } }
    double ln[3] = {0, 0, 0}; ln[best] = l[best] >= 0 ? 1 : -1;
    mb_mv3(b->R, ln, nrm);
    depth = r + gap;
    q[best] = ln[best] * h[best];
    mb_geom_point(b, q, pos);
    return mb_collide_emit(out, n, max, pos, nrm, depth);
}

/* sphere against a solid cylinder (axis z, radius R, half length hl) */
static int sphere_cylinder(const double *c, double r, const mb_geom_pose *b, mb_contact_point *out, int n, int max)
{
    double d[3], l[3], R = b->size[0], hl = 0.5 * b->size[1];
    mb_sub3(c, b->p, d); mb_mtv3(b->R, d, l);
    double rho = sqrt(l[0] * l[0] + l[1] * l[1]);
    double q[3] = {l[0], l[1], l[2]};
    int inside = 1;
    if (rho > R) { q[0] = l[0] * R / rho; q[1] = l[1] * R / rho; inside = 0; }
    if (q[2] > hl) { q[2] = hl; inside = 0; }
    if (q[2] < -hl) { q[2] = -hl; inside = 0; }
    double nrm[3], pos[3], ln[3];
    if (!inside) {
        double diff[3]; mb_sub3(l, q, diff);
        double dist = mb_norm3(diff), depth = r - dist;
        if (depth < 0) return n;
        mb_scale3(diff, 1.0 / dist, ln); mb_mv3(b->R, ln, nrm); mb_geom_point(b, q, pos);
        return mb_collide_emit(out, n, max, pos, nrm, depth);
    }
    double side = R - rho, cap = hl - fabs(l[2]), depth;
    if (side < cap && rho > EPS) {
        ln[0] = l[0] / rho; ln[1] = l[1] / rho; ln[2] = 0; depth = r + side;
        q[0] = ln[0] * R; q[1] = ln[1] * R;
    } else {
        ln[0] = 0; ln[1] = 0; ln[2] = l[2] >= 0 ? 1 : -1; depth = r + cap; q[2] = ln[2] * hl;
    }
    mb_mv3(b->R, ln, nrm); mb_geom_point(b, q, pos);
    return mb_collide_emit(out, n, max, pos, nrm, depth);
}

static int sphere_plane(const double *c, double r, const double *pn, double pd, double sign, int feature,
                        mb_contact_point *out, int n, int max)
{
    double dist = mb_dot3(pn, c) - pd, depth = r - dist;
    if (depth < 0) return n;
    double pos[3], nrm[3];
    mb_scale3(pn, sign, nrm);
    for (int k = 0; k < 3; k++) pos[k] = c[k] - pn[k] * (r - 0.5 * depth);
    return emit_feature(out, n, max, pos, nrm, depth, feature);
}

/* ---- planes ---------------------------------------------------------------------------------- */
static int box_plane(const mb_geom_pose *a, const double *pn, double pd, mb_contact_point *out, int n, int max)
{
    double h[3] = {0.5 * a->size[0], 0.5 * a->size[1], 0.5 * a->size[2]};
    for (int s = 0; s < 8; s++) {
        double lp[3] = {(s & 1) ? h[0] : -h[0], (s & 2) ? h[1] : -h[1], (s & 4) ? h[2] : -h[2]}, v[3];
        mb_geom_point(a, lp, v);
        double depth = pd - mb_dot3(pn, v);
        if (depth >= 0) {
            double pos[3]; for (int k = 0; k < 3; k++) pos[k] = v[k] + 0.5 * depth * pn[k];
            n = emit_feature(out, n, max, pos, pn, depth, s);     /* the corner: its own state slot */
        }
    }
    return n;
}

static int capsule_plane(const mb_geom_pose *a, const double *pn, double pd, mb_contact_point *out, int n, int max)
{
    double e0[3], e1[3]; mb_geom_segment(a, e0, e1);
    n = sphere_plane(e0, a->size[0], pn, pd, 1.0, 0, out, n, max);   /* each end its own feature: the second end */
    return sphere_plane(e1, a->size[0], pn, pd, 1.0, 1, out, n, max);  /* touching down leaves the first's alone */
}

/* Rim points of both caps: the lowest one and the ones a quarter turn either side of it, so a
 * cylinder standing on its cap gets a tripod and one lying on its side gets a line. */
static int cylinder_plane(const mb_geom_pose *a, const double *pn, double pd, mb_contact_point *out, int n, int max)
{
    double R = a->size[0], hl = 0.5 * a->size[1], ax[3], u[3], v[3];
    mb_geom_axis(a, 2, ax);
    double t = mb_dot3(pn, ax);
    for (int k = 0; k < 3; k++) u[k] = -(pn[k] - t * ax[k]);      /* down the plane, across the axis */
    if (!mb_normalize3(u)) { double w[3]; plane_space(ax, u, w); }
    mb_cross3(ax, u, v);
    for (int cap = -1; cap <= 1; cap += 2) {
        for (int s = 0; s < 4; s++) {
            double cs = s == 0 ? 1 : (s == 2 ? -1 : 0), sn = s == 1 ? 1 : (s == 3 ? -1 : 0), x[3];
            for (int k = 0; k < 3; k++) x[k] = a->p[k] + cap * hl * ax[k] + R * (cs * u[k] + sn * v[k]);
            double depth = pd - mb_dot3(pn, x);
            if (depth >= 0) {
                double pos[3]; for (int k = 0; k < 3; k++) pos[k] = x[k] + 0.5 * depth * pn[k];
                n = emit_feature(out, n, max, pos, pn, depth, (cap > 0) * 4 + s);
            }
        }
    }
    return n;
}

/* ---- capsule-capsule: closest points of the two segments ----------------------------------- */
static int capsule_capsule(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int n, int max)
{
    double a0[3], a1[3], b0[3], b1[3], c1[3], c2[3], ua[3], ub[3];
    mb_geom_segment(a, a0, a1); mb_geom_segment(b, b0, b1);
    mb_geom_axis(a, 2, ua); mb_geom_axis(b, 2, ub);
    if (fabs(mb_dot3(ua, ub)) > 0.999) {          /* parallel: each end against the other segment */
        int n0 = n;
        const double *ends[4] = {a0, a1, b0, b1};
        for (int i = 0; i < 4; i++) {
            if (i < 2) { mb_geom_closest_on_segment(ends[i], b0, b1, c2); n = sphere_sphere(ends[i], a->size[0], c2, b->size[0], out, n, max); }
            else { mb_geom_closest_on_segment(ends[i], a0, a1, c1); n = sphere_sphere(c1, a->size[0], ends[i], b->size[0], out, n, max); }
        }
        if (n > n0) return n;
    }
    mb_geom_closest_segments(a0, a1, b0, b1, c1, c2);
    return sphere_sphere(c1, a->size[0], c2, b->size[0], out, n, max);
}

/* ---- box-box: separating axes, then the incident face clipped by the reference face ---------- */
static int box_box(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int n, int max)
{
    double A[3][3], B[3][3], ha[3], hb[3], d[3];
    for (int k = 0; k < 3; k++) { mb_geom_axis(a, k, A[k]); mb_geom_axis(b, k, B[k]); ha[k] = 0.5 * a->size[k]; hb[k] = 0.5 * b->size[k]; }
    mb_sub3(b->p, a->p, d);
    /* the 15 axes in a's frame: R = A B^T (R[i][j] = A_i . B_j), d in both frames; an edge axis
     * A_i x B_j has |L . A_m|, |L . B_m| and L . d from R's entries (Gottschalk's OBB test), its
     * length from the two entries of R's column j off row i, so no axis is formed or normalized
     * until the best one is known */
    double R[3][3], Q[3][3], da[3], db[3];
    for (int i = 0; i < 3; i++) {
        da[i] = mb_dot3(A[i], d); db[i] = mb_dot3(B[i], d);
        for (int j = 0; j < 3; j++) { R[i][j] = mb_dot3(A[i], B[j]); Q[i][j] = fabs(R[i][j]); }
    }
    double best = INFINITY; int bestk = -1;
    for (int k = 0; k < 15; k++) {
        double overlap;
        if (k < 3) overlap = ha[k] + (hb[0] * Q[k][0] + hb[1] * Q[k][1] + hb[2] * Q[k][2]) - fabs(da[k]);
        else if (k < 6) { int j = k - 3; overlap = (ha[0] * Q[0][j] + ha[1] * Q[1][j] + ha[2] * Q[2][j]) + hb[j] - fabs(db[j]); }
        else {
            int i = (k - 6) / 3, j = (k - 6) % 3, i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            double len = sqrt(R[i1][j] * R[i1][j] + R[i2][j] * R[i2][j]);
            if (len < 1e-6) continue;                      /* parallel edges: the face axes cover them */
            double ra = ha[i1] * Q[i2][j] + ha[i2] * Q[i1][j], rb = hb[j1] * Q[i][j2] + hb[j2] * Q[i][j1];
            overlap = (ra + rb - fabs(da[i2] * R[i1][j] - da[i1] * R[i2][j])) / len;
        }
        if (overlap < 0) return n;
        /* prefer faces over edges unless the edge is clearly shallower (stable manifolds) */
        if (k < 6 ? overlap < best : overlap < 0.95 * best - 1e-9) { best = overlap; bestk = k; }
    }
    double bestL[3];
    if (bestk < 3) mb_copy3(A[bestk], bestL);
    else if (bestk < 6) mb_copy3(B[bestk - 3], bestL);
    else { mb_cross3(A[(bestk - 6) / 3], B[(bestk - 6) % 3], bestL); mb_normalize3(bestL); }
    double nrm[3];                                         /* from b into a */
    if (mb_dot3(bestL, d) > 0) mb_scale3(bestL, -1, nrm); else mb_copy3(bestL, nrm);
    if (bestk >= 6) {                                      /* edge against edge: one point */
        int i = (bestk - 6) / 3, j = (bestk - 6) % 3;
        double pa[3], pb[3], ea[3], eb[3];
        mb_copy3(a->p, pa); mb_copy3(b->p, pb);
        for (int k = 0; k < 3; k++) {
            if (k != i) { double s = mb_dot3(A[k], nrm) < 0 ? ha[k] : -ha[k]; for (int c = 0; c < 3; c++) pa[c] += s * A[k][c]; }
            if (k != j) { double s = mb_dot3(B[k], nrm) > 0 ? hb[k] : -hb[k]; for (int c = 0; c < 3; c++) pb[c] += s * B[k][c]; }
        }
        for (int c = 0; c < 3; c++) { ea[c] = pa[c] + ha[i] * A[i][c]; eb[c] = pb[c] + hb[j] * B[j][c]; pa[c] -= ha[i] * A[i][c]; pb[c] -= hb[j] * B[j][c]; }
        double c1[3], c2[3], pos[3];
        mb_geom_closest_segments(pa, ea, pb, eb, c1, c2);
        for (int c = 0; c < 3; c++) pos[c] = 0.5 * (c1[c] + c2[c]);
        return mb_collide_emit(out, n, max, pos, nrm, best);
    }
    /* reference face on the box owning the axis, incident face on the other */
    int ref_is_a = bestk < 3;
    const double (*Rf)[3] = ref_is_a ? (const double (*)[3])A : (const double (*)[3])B;
    const double (*In)[3] = ref_is_a ? (const double (*)[3])B : (const double (*)[3])A;
    const double *hr = ref_is_a ? ha : hb, *hi = ref_is_a ? hb : ha;
    const double *cr = ref_is_a ? a->p : b->p, *ci = ref_is_a ? b->p : a->p;
    int kr = ref_is_a ? bestk : bestk - 3;
    double nf[3];                                          /* outward normal of the reference face */
    if (ref_is_a) mb_scale3(nrm, -1, nf); else mb_copy3(nrm, nf);
    double sr = mb_dot3(nf, Rf[kr]) > 0 ? 1 : -1;
    int ki = 0; double bestdot = -1;
    for (int k = 0; k < 3; k++) { double t = fabs(mb_dot3(nf, In[k])); if (t > bestdot) { bestdot = t; ki = k; } }
    double si = mb_dot3(nf, In[ki]) > 0 ? -1 : 1;             /* incident face looks back at the reference */
    int u = (ki + 1) % 3, v = (ki + 2) % 3;
    double poly[8][3], tmp[8][3];
    for (int s = 0; s < 4; s++) {
        double cu = (s == 0 || s == 3) ? 1 : -1, cv = (s < 2) ? 1 : -1;
        for (int c = 0; c < 3; c++) poly[s][c] = ci[c] + si * hi[ki] * In[ki][c] + cu * hi[u] * In[u][c] + cv * hi[v] * In[v][c];
    }
    int m = 4;
    for (int k = 0; k < 3 && m > 0; k++) {
        if (k == kr) continue;
        double ax[3], off = mb_dot3(Rf[k], cr);
        mb_copy3(Rf[k], ax); m = mb_geom_clip(poly, m, ax, off + hr[k], tmp, INT_MAX);
        mb_scale3(Rf[k], -1, ax); m = mb_geom_clip(tmp, m, ax, -off + hr[k], poly, INT_MAX);
    }
    double face = mb_dot3(nf, cr) + sr * hr[kr] * mb_dot3(nf, Rf[kr]);
    for (int s = 0; s < m; s++) {
        double depth = face - mb_dot3(nf, poly[s]);
        if (depth < 0) continue;
        double pos[3]; for (int c = 0; c < 3; c++) pos[c] = poly[s][c] + 0.5 * depth * nf[c];
        n = mb_collide_emit(out, n, max, pos, nrm, depth);
    }
    return n;
}

/* ---- Minkowski portal refinement for the other convex pairs ----------------------------------- */
/* support of the Minkowski difference a - b */
static void support_md(const mb_geom_pose *a, const mb_geom_pose *b, const double *dir, double *out)
{
    double nd[3] = {-dir[0], -dir[1], -dir[2]}, sa[3], sb[3];
    mb_geom_support(a, dir, sa); mb_geom_support(b, nd, sb); mb_sub3(sa, sb, out);
}
static void tri_normal(const double *v0, const double *v1, const double *v2, double *n)
{
    double e1[3], e2[3]; mb_sub3(v1, v0, e1); mb_sub3(v2, v0, e2); mb_cross3(e1, e2, n);
}

static int mpr(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int n, int max)
{
    const double tol = 1e-9;
    double v0[3], v1[3], v2[3], v3[3], v4[3], dir[3], t[3];
    mb_sub3(a->p, b->p, v0);
    if (mb_norm3(v0) < EPS) v0[0] = 1e-9;
    mb_scale3(v0, -1, dir); mb_normalize3(dir);
    support_md(a, b, dir, v1);
    if (mb_dot3(v1, dir) <= 0) return n;
    mb_cross3(v0, v1, dir);
    if (mb_dot3(dir, dir) < EPS * EPS) {                      /* origin on the segment v0-v1 */
        double nl = mb_norm3(v1); if (nl < EPS) return n;
        double nrm[3]; mb_scale3(v1, -1.0 / nl, nrm);
        double sa[3], sb[3], pos[3], m[3]; mb_scale3(nrm, -1, m);
        mb_geom_support(a, m, sa); mb_geom_support(b, nrm, sb);
        for (int k = 0; k < 3; k++) pos[k] = 0.5 * (sa[k] + sb[k]);
        return mb_collide_emit(out, n, max, pos, nrm, nl);
    }
    mb_normalize3(dir);
    support_md(a, b, dir, v2);
    if (mb_dot3(v2, dir) <= 0) return n;
    tri_normal(v0, v1, v2, dir); mb_normalize3(dir);
    if (mb_dot3(dir, v0) > 0) { mb_copy3(v1, t); mb_copy3(v2, v1); mb_copy3(t, v2); mb_scale3(dir, -1, dir); }
    int found = 0;
    for (int it = 0; it < 100 && !found; it++) {          /* discover a portal the origin ray passes */
        support_md(a, b, dir, v3);
        if (mb_dot3(v3, dir) <= 0) return n;
        mb_cross3(v1, v3, t);
        if (mb_dot3(t, v0) < -EPS) { mb_copy3(v3, v2); tri_normal(v0, v1, v3, dir); mb_normalize3(dir); continue; }
        mb_cross3(v3, v2, t);
        if (mb_dot3(t, v0) < -EPS) { mb_copy3(v3, v1); tri_normal(v0, v3, v2, dir); mb_normalize3(dir); continue; }
        found = 1;
    }
    if (!found) return n;
    for (int it = 0; it < 100; it++) {                     /* is the origin inside? refine the portal */
        tri_normal(v1, v2, v3, dir); if (!mb_normalize3(dir)) return n;
        if (mb_dot3(dir, v1) >= 0) break;
        support_md(a, b, dir, v4);
        double d4 = mb_dot3(v4, dir);
        if (d4 < 0 || d4 - mb_dot3(v1, dir) < tol) return n;  /* separated */
        double x[3]; mb_cross3(v4, v0, x);
        if (mb_dot3(v1, x) > 0) { if (mb_dot3(v2, x) > 0) mb_copy3(v4, v1); else mb_copy3(v4, v3); }
        else { if (mb_dot3(v3, x) > 0) mb_copy3(v4, v2); else mb_copy3(v4, v1); }
        if (it == 99) return n;
    }
    for (int it = 0; it < 100; it++) {                     /* penetration: push the portal out */
        tri_normal(v1, v2, v3, dir); if (!mb_normalize3(dir)) break;
        support_md(a, b, dir, v4);
        double d4 = mb_dot3(v4, dir);
        double m1 = d4 - mb_dot3(v1, dir), m2 = d4 - mb_dot3(v2, dir), m3 = d4 - mb_dot3(v3, dir);
        double mm = m1 < m2 ? (m1 < m3 ? m1 : m3) : (m2 < m3 ? m2 : m3);
        if (mm < tol) break;
        double x[3]; mb_cross3(v4, v0, x);
        if (mb_dot3(v1, x) > 0) { if (mb_dot3(v2, x) > 0) mb_copy3(v4, v1); else mb_copy3(v4, v3); }
        else { if (mb_dot3(v3, x) > 0) mb_copy3(v4, v2); else mb_copy3(v4, v1); }
    }
    double depth = mb_dot3(dir, v1);                          /* distance of the origin to the portal plane */
    if (depth < 0) return n;
    double nrm[3], m[3], sa[3], sb[3], pos[3];
    mb_scale3(dir, -1, nrm);                                  /* a moves along -dir to separate... */
    mb_copy3(dir, m); mb_scale3(m, -1, m);
    /* ... so the contact normal (from b into a) is -dir */
    mb_geom_support(a, dir, sa);
    mb_geom_support(b, m, sb);
    for (int k = 0; k < 3; k++) pos[k] = 0.5 * (sa[k] + sb[k]);
    return mb_collide_emit(out, n, max, pos, nrm, depth);
}

static int box_capsule(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int n, int max)
{   /* a is the box; the capsule's end spheres give a line contact when it lies on a face */
    double e0[3], e1[3]; mb_geom_segment(b, e0, e1);
    int n0 = n;
    n = sphere_box(e0, b->size[0], a, out, n, max);
    n = sphere_box(e1, b->size[0], a, out, n, max);
    /* sphere_box normals point from the box into the sphere: from a into b */
    for (int i = n0; i < n; i++) mb_scale3(out[i].normal, -1, out[i].normal);
    /* the segment may cut deeper than its ends (across an edge): add the portal's point then */
    double deepest = 0;
    for (int i = n0; i < n; i++) if (out[i].depth > deepest) deepest = out[i].depth;
    mb_contact_point extra[1];
    if (mpr(a, b, extra, 0, 1) && (n == n0 || extra[0].depth > deepest * (1 + 1e-6) + 1e-9))
        n = mb_collide_emit(out, n, max, extra[0].pos, extra[0].normal, extra[0].depth);
    return n;
}

/* ---- the table ------------------------------------------------------------------------------- *
 * Pair colliders take a and b with a's shape code <= b's (contact normals from b into a);
 * mb_collide_pair swaps a pair given the other way round and negates the normals.  A hole in the
 * table is no collider: such a pair is refused when the world is built (mb_collide_check) and, were
 * it met anyway, fails the step; it is never collided as some other pair.  The holes today are
 * the pairs of static-only shapes (planes, meshes, height fields), which never meet, and
 * ellipsoid-mesh.  A height field meets every other shape through hfield.c, which cuts it into
 * triangular prisms and collides each with this table's convex row (MuJoCo's mjc_ConvexHField).
 *
 * Adding a shape (4 files): its code (geometry.h), its row in geom_shapes with a bounding box and,
 * for a convex solid, a support function (geometry.c), a row here for every shape it meets (mpr
 * serves any two shapes with support functions), and its Python class with the same code
 * (shapes.py).  Rays (ray.c) are optional. */
static int sphere_sphere_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{ return sphere_sphere(a->p, a->size[0], b->p, b->size[0], out, 0, max); }
static int sphere_box_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{ return sphere_box(a->p, a->size[0], b, out, 0, max); }
static int sphere_capsule_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{   /* the sphere against the capsule's nearest point on its segment */
    double e0[3], e1[3], c[3]; mb_geom_segment(b, e0, e1); mb_geom_closest_on_segment(a->p, e0, e1, c);
    return sphere_sphere(a->p, a->size[0], c, b->size[0], out, 0, max);
}
static int sphere_cylinder_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{ return sphere_cylinder(a->p, a->size[0], b, out, 0, max); }
static int sphere_plane_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{ return sphere_plane(a->p, a->size[0], b->plane, b->plane[3], 1.0, 0, out, 0, max); }
static int box_box_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max) { return box_box(a, b, out, 0, max); }
static int box_capsule_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max) { return box_capsule(a, b, out, 0, max); }
static int box_plane_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{ return box_plane(a, b->plane, b->plane[3], out, 0, max); }
static int capsule_capsule_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{ return capsule_capsule(a, b, out, 0, max); }
static int capsule_plane_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{ return capsule_plane(a, b->plane, b->plane[3], out, 0, max); }
static int cylinder_plane_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{ return cylinder_plane(a, b->plane, b->plane[3], out, 0, max); }
static int mpr_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max) { return mpr(a, b, out, 0, max); }
/* a plane and an ellipsoid b: the ellipsoid's point deepest below the plane is its support point
 * along -n (exact, one point, as for a sphere); the normal from b into the plane a is -n */
static int plane_ellipsoid_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{
    const double *pn = a->plane;
    double down[3] = {-pn[0], -pn[1], -pn[2]}, x[3], pos[3], nrm[3];
    mb_geom_support(b, down, x);
    double depth = pn[3] - mb_dot3(pn, x);
    if (depth < 0) return 0;
    for (int k = 0; k < 3; k++) { pos[k] = x[k] + 0.5 * depth * pn[k]; nrm[k] = -pn[k]; }
    return mb_collide_emit(out, 0, max, pos, nrm, depth);
}

static const CollideFn COLLIDERS[G_COUNT][G_COUNT] = {
    [G_SPHERE] = {
        [G_SPHERE] = sphere_sphere_pair, [G_BOX] = sphere_box_pair, [G_CAPSULE] = sphere_capsule_pair,
        [G_CYLINDER] = sphere_cylinder_pair, [G_PLANE] = sphere_plane_pair, [G_CONVEX] = mb_convex_core,
        [G_TRIMESH] = mb_trimesh_sphere, [G_ELLIPSOID] = mpr_pair, [G_HFIELD] = mb_hfield_collide},
    [G_BOX] = {
        [G_BOX] = box_box_pair, [G_CAPSULE] = box_capsule_pair, [G_CYLINDER] = mpr_pair,
        [G_PLANE] = box_plane_pair, [G_CONVEX] = mb_convex_hull, [G_TRIMESH] = mb_trimesh_box, [G_ELLIPSOID] = mpr_pair,
        [G_HFIELD] = mb_hfield_collide},
    [G_CAPSULE] = {
        [G_CAPSULE] = capsule_capsule_pair, [G_CYLINDER] = mpr_pair, [G_PLANE] = capsule_plane_pair,
        [G_CONVEX] = mb_convex_core, [G_TRIMESH] = mb_trimesh_capsule, [G_ELLIPSOID] = mpr_pair, [G_HFIELD] = mb_hfield_collide},
    [G_CYLINDER] = {
        [G_CYLINDER] = mpr_pair, [G_PLANE] = cylinder_plane_pair, [G_CONVEX] = mpr_pair,
        [G_TRIMESH] = mb_trimesh_cylinder, [G_ELLIPSOID] = mpr_pair, [G_HFIELD] = mb_hfield_collide},
    [G_PLANE] = {[G_CONVEX] = mb_convex_plane, [G_ELLIPSOID] = plane_ellipsoid_pair},   /* plane-plane, plane-mesh: both static */
    [G_CONVEX] = {[G_CONVEX] = mb_convex_hull, [G_TRIMESH] = mb_trimesh_convex, [G_ELLIPSOID] = mpr_pair,
                  [G_HFIELD] = mb_hfield_collide},
    /* mesh-mesh: both static; mesh-ellipsoid: no collider yet (refused by mb_collide_check) */
    [G_ELLIPSOID] = {[G_ELLIPSOID] = mpr_pair, [G_HFIELD] = mb_hfield_collide},
    /* hfield-plane, hfield-mesh, hfield-hfield: static */
};

CollideFn mb_collide_find(int ta, int tb, int *flip)
{
    *flip = ta > tb;
    if (*flip) { int t = ta; ta = tb; tb = t; }
    return ta >= 0 && tb < G_COUNT ? COLLIDERS[ta][tb] : NULL;
}

/* The bound of each collider's count, read off its code: one emit (a sphere's, an ellipsoid's, MPR's single
 * point), a capsule's two ends on a plane, its two ends and the portal's point on a box, a parallel capsule's
 * four ends; the rest emit per corner, rim point, vertex or triangle up to their caller's max.  A collider
 * that emits more than this row says loses its shallowest points (emit_feature keeps the deepest):
 * tests/test_engine_collision.py holds each bound on random poses. */
int mb_collide_max_points(int ta, int tb)
{
    int flip;
    CollideFn f = mb_collide_find(ta, tb, &flip);
    if (!f) return -1;
    if (f == sphere_sphere_pair || f == sphere_box_pair || f == sphere_capsule_pair || f == sphere_cylinder_pair
        || f == sphere_plane_pair || f == plane_ellipsoid_pair || f == mpr_pair) return 1;
    if (f == capsule_plane_pair) return 2;
    if (f == box_capsule_pair) return 3;
    if (f == capsule_capsule_pair) return 4;
    return 0;
}

int mb_collide_pair(const mb_geom_pose *a, const mb_geom_pose *b, mb_contact_point *out, int max)
{
    int flip;
    CollideFn f = mb_collide_find(a->type, b->type, &flip);
    if (!f) return -1;
    int n = flip ? f(b, a, out, max) : f(a, b, out, max);
    if (flip) for (int i = 0; i < n; i++) mb_scale3(out[i].normal, -1, out[i].normal);
    /* the colliders of fixed points (a primitive or a hull's vertices on a plane) name each point's feature; the
     * others' points are their order (their writers leave the field as it was) */
    const int fixed_points = f == sphere_plane_pair || f == box_plane_pair || f == capsule_plane_pair
                             || f == cylinder_plane_pair || f == mb_convex_plane;
    if (!fixed_points) for (int i = 0; i < n; i++) out[i].feature = -1;
    return n;
}

/* Two geometries meet unless both are static (step.c's narrow phase skips those pairs), so a pair
 * of shapes can meet when one of them is on a body and the world has the other, a second one of
 * it when the two shapes are the same. */
int mb_collide_check(const int64_t *gint, int ng, char *msg, size_t len)
{
    int moving[G_COUNT] = {0}, fixed[G_COUNT] = {0};
    for (int g = 0; g < ng; g++) {
        int64_t t = gint[(size_t)g * GI_SIZE + GI_TYPE];
        if (t < 0 || t >= G_COUNT) { snprintf(msg, len, "geometry %d has shape code %lld, which the engine does not know", g, (long long)t); return 1; }
        if (gint[(size_t)g * GI_SIZE + GI_BODY] >= 0) moving[t]++; else fixed[t]++;
    }
    for (int ta = 0; ta < G_COUNT; ta++) for (int tb = ta; tb < G_COUNT; tb++) {
        int meet = ta == tb ? moving[ta] >= 2 || (moving[ta] && fixed[ta])
                            : (moving[ta] && moving[tb] + fixed[tb]) || (moving[tb] && moving[ta] + fixed[ta]);
        int flip;
        if (meet && !mb_collide_find(ta, tb, &flip)) {
            snprintf(msg, len, "the engine has no collider for a %s-%s pair", mb_geom_name(ta), mb_geom_name(tb));
            return 1;
        }
    }
    return 0;
}
