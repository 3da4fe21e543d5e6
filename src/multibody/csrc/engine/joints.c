/* Joints as constraints (OpenDE report §5.3: J, c and the feedback term of eq. 5.38).
 *
 * Each joint writes rows  J v = rhs - CFM lambda  with J = [J1 | J2], one 6-vector
 * [linear; angular] per body, and rhs = (ERP/h) times the position error, which is the report's
 * feedback term -k_s C written for a velocity step (§3.4: ERP and CFM).  Body 1 moves relative to
 * body 2 (body 2 = -1 is the static world); angles and rates are those of body 1 relative to
 * body 2 about the joint axes, zero at attach time.
 *
 *   ball       3 rows  anchor points coincide
 *   hinge      5 rows  ball + the hinge axes of both bodies stay aligned
 *   slider     5 rows  orientations locked + body 1 stays on the axis line fixed in body 2
 *   fixed      6 rows  ball at body 1's centre of mass + orientations locked
 *   universal  4 rows  ball + axis 1 (in body 1) keeps its angle to axis 2 (in body 2)
 *   hinge2     4 rows  universal rows, the anchor row along axis 1 softened as a suspension
 * plus, per axis, a motor row (target rate, force limit), a damping row (viscous, implicit) and a
 * stop row when a limit is reached.
 */
#include "engine/engine.h"

/* A body's pose and velocity read in place (the static world: identity and zeros). */
typedef struct { const double *R, *p, *v, *w, *q; } BodyFrame;
static const double IDENTITY_R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, ZERO3[3] = {0, 0, 0}, IDENTITY_Q[4] = {1, 0, 0, 0};

static void frame_of(const mb_world *W, int b, BodyFrame *f)
{
    if (b < 0) { f->R = IDENTITY_R; f->p = f->v = f->w = ZERO3; f->q = IDENTITY_Q; return; }
    const double *s = W->state + (size_t)b * BS_SIZE;
    f->R = W->R + (size_t)b * 9; f->p = s + BS_POS; f->v = s + BS_VEL; f->w = s + BS_OMEGA; f->q = s + BS_QUAT;
}

/* Rotation of body 1 relative to body 2 since attach time, in body-2 axes: conj(q2) q1 conj(qrel0). */
static void relative_rotation(const BodyFrame *f1, const BodyFrame *f2, const double *qrel0, double *d)
{
    double c2[4], qr[4], c0[4];
    mb_quat_conj(f2->q, c2); mb_quat_mul(c2, f1->q, qr); mb_quat_conj(qrel0, c0); mb_quat_mul(qr, c0, d);
    if (d[0] < 0) { d[0] = -d[0]; d[1] = -d[1]; d[2] = -d[2]; d[3] = -d[3]; }
}

static double signed_angle(const double *from, const double *to, const double *axis)
{   /* angle rotating `from` into `to` about `axis`, both projected onto the plane normal to it */
    double a[3], b[3], c[3];
    for (int k = 0; k < 3; k++) { a[k] = from[k] - mb_dot3(from, axis) * axis[k]; b[k] = to[k] - mb_dot3(to, axis) * axis[k]; }
    mb_cross3(a, b, c);
    return atan2(mb_dot3(axis, c), mb_dot3(a, b));
}

void mb_joint_axes(const mb_world *W, int j, mb_axis_info *ax, int what)
{
    const int64_t *ji = W->jint + (size_t)j * JI_SIZE;
    const double *jd = W->jdat + (size_t)j * JD_SIZE;
    int type = (int)ji[JI_TYPE], angles = what & AX_ANGLES;
    /* a hinge's rate and rate rows are left out unless asked for (a step needs them for motors
     * and stops only); the other types are cheap enough to fill always */
    int rates = (what & AX_RATES) || type != J_HINGE;
    BodyFrame f1, f2; frame_of(W, (int)ji[JI_B1], &f1); frame_of(W, (int)ji[JI_B2], &f2);
    ax->naxes = 0;
    if (rates) for (int a = 0; a < 2; a++) { zero6(ax->J1[a]); zero6(ax->J2[a]); }
    double *d = ax->d; relative_rotation(&f1, &f2, jd + JD_QREL, d);
    if (type == J_HINGE) {
        ax->naxes = 1;
        ax->half[0] = d[0]; ax->half[1] = mb_dot3(d + 1, jd + JD_AXIS1_B2);
        ax->pos[0] = angles ? 2 * atan2(ax->half[1], ax->half[0]) : NAN;
        if (rates) {
            double u[3], wr[3]; mb_mv3(f1.R, jd + JD_AXIS1, u);
            mb_sub3(f1.w, f2.w, wr); ax->rate[0] = mb_dot3(wr, u);
            mb_copy3(u, ax->J1[0] + 3); mb_scale3(u, -1, ax->J2[0] + 3);
        } else ax->rate[0] = NAN;
    } else if (type == J_SLIDER) {
        double u[3], dd[3], o[3], e[3], t[3], dxu[3];
        mb_mv3(f2.R, jd + JD_AXIS1_B2, u);
        mb_sub3(f1.p, f2.p, dd); mb_mv3(f2.R, jd + JD_OFFSET, o); mb_sub3(dd, o, e);
        ax->naxes = 1;
        ax->pos[0] = mb_dot3(e, u);
        mb_cross3(f2.w, dd, t);
        ax->rate[0] = mb_dot3(f1.v, u) - mb_dot3(f2.v, u) - mb_dot3(t, u);
        mb_cross3(dd, u, dxu);
        mb_copy3(u, ax->J1[0]); mb_scale3(u, -1, ax->J2[0]); mb_scale3(dxu, -1, ax->J2[0] + 3);
    } else if (type == J_UNIVERSAL || type == J_HINGE2) {
        /* body 1 in body 2: Rot(a2, th2) Rot(a1ref, th1), a1ref = axis 1 at attach time in body-2 axes */
        double Rd[9], Rq0[9], a1r[3], b[3], c[3], a1w[3], a2w[3];
        const double *a2 = jd + JD_AXIS2;
        mb_quat_to_R(d, Rd); mb_quat_to_R(jd + JD_QREL, Rq0); mb_mv3(Rq0, jd + JD_AXIS1, a1r);
        mb_mv3(Rd, a1r, b); mb_mtv3(Rd, a2, c);
        ax->naxes = 2;
        ax->pos[1] = signed_angle(a1r, b, a2);
        ax->pos[0] = -signed_angle(a2, c, a1r);
        mb_mv3(f1.R, jd + JD_AXIS1, a1w); mb_mv3(f2.R, a2, a2w);
        double g = mb_dot3(a1w, a2w), den = 1 - g * g;
        if (den < 1e-12) den = 1e-12;
        double r1[3], r2[3], wr[3];
        for (int k = 0; k < 3; k++) { r1[k] = (a1w[k] - g * a2w[k]) / den; r2[k] = (a2w[k] - g * a1w[k]) / den; }
        mb_sub3(f1.w, f2.w, wr);
        ax->rate[0] = mb_dot3(r1, wr); ax->rate[1] = mb_dot3(r2, wr);
        mb_copy3(r1, ax->J1[0] + 3); mb_scale3(r1, -1, ax->J2[0] + 3);
        mb_copy3(r2, ax->J1[1] + 3); mb_scale3(r2, -1, ax->J2[1] + 3);
    }
}

static mb_row *row_init(mb_row *r, int b1, int b2, int src, double cfm)
{
    /* field by field: a memset of the whole row compiles to a slow string instruction */
    zero6(r->J1); zero6(r->J2);
    r->b1 = b1; r->b2 = b2; r->source = src; r->cfm = cfm; r->rhs = 0.0; r->mu = 0.0;
    r->lo = -INFINITY; r->hi = INFINITY; r->findex = -1; r->cone_pair = -1;
    return r;
}

/* the three rows making the anchor points coincide along the world axes: with d a unit axis the
 * products of anchor_rows are picks and sign flips (r x e_x = (0, r_z, -r_y) ...), written out */
static int anchor_rows_xyz(mb_row *rows, int b1, int b2, int src, const double *r1, const double *r2, const double *e,
                           double k, double cfm)
{
    for (int i = 0; i < 3; i++) {
        mb_row *r = rows + i;
        int i1 = (i + 1) % 3, i2 = (i + 2) % 3;         /* r x e_i: +r[i2] at i1, -r[i1] at i2 */
        r->b1 = b1; r->b2 = b2; r->source = src; r->cfm = cfm; r->mu = 0.0;
        r->lo = -INFINITY; r->hi = INFINITY; r->findex = -1; r->cone_pair = -1;
        zero6(r->J1); zero6(r->J2);
        r->J1[i] = 1; r->J1[3 + i1] = r1[i2]; r->J1[3 + i2] = -r1[i1];
        r->J2[i] = -1; r->J2[3 + i1] = -r2[i2]; r->J2[3 + i2] = r2[i1];
        r->rhs = k * e[i];
    }
    return 3;
}

/* three (or fewer) rows making the anchor points coincide along the given unit directions */
static int anchor_rows(mb_row *rows, int b1, int b2, int src, const double *r1, const double *r2, const double *e,
                       const double (*dirs)[3], int ndirs, double k, double cfm)
{
    for (int i = 0; i < ndirs; i++) {
        mb_row *r = row_init(rows + i, b1, b2, src, cfm);
        const double *d = dirs[i];
        mb_copy3(d, r->J1); mb_cross3(r1, d, r->J1 + 3);
        mb_scale3(d, -1, r->J2); mb_cross3(r2, d, r->J2 + 3); mb_scale3(r->J2 + 3, -1, r->J2 + 3);
        r->rhs = k * mb_dot3(e, d);
    }
    return ndirs;
}

/* anchors in world: a1 = p1 + R1 anchor1, a2 = p2 + R2 anchor2; the levers r1, r2 from the
 * centres of mass and the error e = a2 - a1 */
static inline __attribute__((always_inline)) void anchor_levers(const BodyFrame *f1, const BodyFrame *f2, const double *jd, int b2, double *r1, double *r2, double *e)
{
    double a1[3], a2[3];
    mb_mv3(f1->R, jd + JD_ANCHOR1, r1); mb_add3(f1->p, r1, a1);
    if (b2 >= 0) { mb_mv3(f2->R, jd + JD_ANCHOR2, r2); mb_add3(f2->p, r2, a2); } else { mb_copy3(jd + JD_ANCHOR2, a2); mb_sub3(a2, f2->p, r2); }
    mb_sub3(a2, a1, e);
}

/* the hinge's two rows keeping the axis of body 1 along the axis of body 2 */
static int hinge_axis_rows(mb_row *rows, const BodyFrame *f1, const BodyFrame *f2, const double *jd, int b1, int b2, int j,
                           double k, double cfm)
{
    double u1[3], u2[3], p[3], q[3], c[3];
    mb_mv3(f1->R, jd + JD_AXIS1, u1); mb_mv3(f2->R, jd + JD_AXIS1_B2, u2);
    plane_space(u1, p, q); mb_cross3(u1, u2, c);
    const double *pq[2] = {p, q};
    for (int i = 0; i < 2; i++) {
        mb_row *r = row_init(rows + i, b1, b2, j, cfm);
        mb_copy3(pq[i], r->J1 + 3); mb_scale3(pq[i], -1, r->J2 + 3);
        r->rhs = k * mb_dot3(c, pq[i]);
    }
    return 2;
}

/* c = R a and d = R b in the two lanes, each sum in mb_mv3's order */
static inline void mv3_pair(const double *R, const double *a, const double *b, double *c, double *d)
{
    v2d x0 = {a[0], b[0]}, x1 = {a[1], b[1]}, x2 = {a[2], b[2]};
    v2d y0 = R[0] * x0 + R[1] * x1 + R[2] * x2, y1 = R[3] * x0 + R[4] * x1 + R[5] * x2, y2 = R[6] * x0 + R[7] * x1 + R[8] * x2;
    c[0] = y0[0]; c[1] = y1[0]; c[2] = y2[0]; d[0] = y0[1]; d[1] = y1[1]; d[2] = y2[1];
}

/* A hinge without motor or stops, the common case, in one pass: its half-angle vector (for the
 * turn count, as mb_joint_axes gives it) and what its five rows are made of (HT_*). */
static inline __attribute__((always_inline)) void hinge_terms_one(const mb_world *W, int j, double k, double cfm,
                                                                   double *half, double *t)
{
    const int64_t *ji = W->jint + (size_t)j * JI_SIZE;
    const double *jd = W->jdat + (size_t)j * JD_SIZE;
    int b2 = (int)ji[JI_B2];
    double d[4], e[3], u1[3], u2[3], c[3];
    BodyFrame f1, f2; frame_of(W, (int)ji[JI_B1], &f1); frame_of(W, b2, &f2);
    /* the two parts of d = conj(q2) q1 conj(q0) that count turns, d_0 and d_v . u (u: the axis
     * in body 2), from qr = conj(q2) q1 without forming d:  d_0 = qr . q0 and
     * d_v . u = q0_0 (qr_v . u) - qr_0 (q0_v . u) - qr_v . (q0_v x u) */
    double c2[4], qr[4], vxu[3];
    const double *q0 = jd + JD_QREL, *u = jd + JD_AXIS1_B2;
    mb_quat_conj(f2.q, c2); mb_quat_mul(c2, f1.q, qr);
    mb_cross3(q0 + 1, u, vxu);
    d[0] = qr[0] * q0[0] + qr[1] * q0[1] + qr[2] * q0[2] + qr[3] * q0[3];
    d[1] = q0[0] * mb_dot3(qr + 1, u) - qr[0] * mb_dot3(q0 + 1, u) - mb_dot3(qr + 1, vxu);
    double sg = d[0] < 0 ? -1.0 : 1.0;                   /* d and -d: the same rotation, d_0 >= 0 */
    half[0] = sg * d[0]; half[1] = sg * d[1];
    /* anchor_levers, with each body's lever and axis turned into the world in one pass */
    double a1[3], a2[3];
    mv3_pair(f1.R, jd + JD_ANCHOR1, jd + JD_AXIS1, t + HT_R1, u1); mb_add3(f1.p, t + HT_R1, a1);
    if (b2 >= 0) { mv3_pair(f2.R, jd + JD_ANCHOR2, jd + JD_AXIS1_B2, t + HT_R2, u2); mb_add3(f2.p, t + HT_R2, a2); }
    else { mb_copy3(jd + JD_ANCHOR2, a2); mb_sub3(a2, f2.p, t + HT_R2); mb_mv3(f2.R, jd + JD_AXIS1_B2, u2); }
    mb_sub3(a2, a1, e);
    plane_space(u1, t + HT_P, t + HT_Q); mb_cross3(u1, u2, c);
    for (int i = 0; i < 3; i++) t[HT_RHS + i] = k * e[i];
    t[HT_RHS + 3] = k * mb_dot3(c, t + HT_P); t[HT_RHS + 4] = k * mb_dot3(c, t + HT_Q);
    t[HT_CFM] = cfm;
}

/* the ERP / h and the CFM of joint j (its own, or the world's) */
static inline void joint_params(const mb_world *W, int j, double h, double *k, double *cfm)
{
    const double *jd = W->jdat + (size_t)j * JD_SIZE;
    *k = (isfinite(jd[JD_ERP]) ? jd[JD_ERP] : W->wpar[WP_ERP]) / h;
    *cfm = isfinite(jd[JD_CFM]) ? jd[JD_CFM] : W->wpar[WP_CFM];
}

ENGINE_CLONES_AVX2 void mb_hinge_terms(const mb_world *W, int j, double h, double *half, double *t)
{
    double k, cfm;
    joint_params(W, j, h, &k, &cfm);
    hinge_terms_one(W, j, k, cfm, half, t);
}

void mb_joint_flags(mb_world *W)
{
    for (int j = 0; j < W->nj; j++) {
        const double *jd = W->jdat + (size_t)j * JD_SIZE;
        W->jflags[j] = (unsigned char)((joint_free_hinge(W, j) ? JF_FREE_HINGE : 0) |
                                       (isfinite(jd[JD_ERP]) || isfinite(jd[JD_CFM]) ? JF_OWN_PARAMS : 0));
    }
    W->jversion = W->wpar[WP_JOINTS_VERSION];
}

/* mb_hinge_terms of the free hinges from joint j on, at most max of them (one call for a run, not
 * one a joint): their terms into hterms, their half-angle vectors into half, two a joint;
 * returns how many.  The flags (jflags, current) tell the free hinges and the joints with the
 * world's ERP and CFM, whose ERP / h is found once. */
ENGINE_CLONES_AVX2 int mb_hinge_terms_run(const mb_world *W, int j, double h, double *half, int max)
{
    const double kw = W->wpar[WP_ERP] / h, cw = W->wpar[WP_CFM];
    const unsigned char *fl = W->jflags + j;
    int n = 0;
    if (max > W->nj - j) max = W->nj - j;
    for (; n < max && (fl[n] & JF_FREE_HINGE); n++) {
        double k = kw, cfm = cw;
        if (fl[n] & JF_OWN_PARAMS) joint_params(W, j + n, h, &k, &cfm);
        hinge_terms_one(W, j + n, k, cfm, half + 2 * n, W->hterms + HT_SIZE * (size_t)(j + n));
    }
    return n;
}

/* the five rows of a free hinge from its terms (as mb_joint_rows writes a hinge's base rows) */
void mb_hinge_write_rows(const mb_world *W, int j, const double *t, mb_row *rows)
{
    const int64_t *ji = W->jint + (size_t)j * JI_SIZE;
    int b1 = (int)ji[JI_B1], b2 = (int)ji[JI_B2];
    anchor_rows_xyz(rows, b1, b2, j, t + HT_R1, t + HT_R2, t + HT_RHS, 1.0, t[HT_CFM]);   /* 1 x rhs is rhs */
    for (int i = 0; i < 2; i++) {
        const double *pq = t + (i ? HT_Q : HT_P);
        mb_row *r = row_init(rows + 3 + i, b1, b2, j, t[HT_CFM]);
        mb_copy3(pq, r->J1 + 3); mb_scale3(pq, -1, r->J2 + 3);
        r->rhs = t[HT_RHS + 3 + i];
    }
}

int mb_hinge_rows(const mb_world *W, int j, double h, double *half, mb_row *rows)
{
    double t[HT_SIZE];
    mb_hinge_terms(W, j, h, half, t);
    mb_hinge_write_rows(W, j, t, rows);
    return 5;
}

/* The motor row and the stop row of one axis with rate rows J1, J2 (ODE's dxJointLimitMotor). */
static int axis_rows(const mb_world *W, mb_row *rows, int b1, int b2, int j, const double *pa, const double *J1,
                     const double *J2, double pos, double rate, double h, double erp, double cfm)
{
    int m = 0;
    double fmax = pa[JA_MOTOR_FMAX], lo = pa[JA_LO], hi = pa[JA_HI];
    if (fmax > 0) {
        mb_row *r = row_init(rows + m++, b1, b2, j, cfm);
        memcpy(r->J1, J1, sizeof r->J1); memcpy(r->J2, J2, sizeof r->J2);
        r->rhs = pa[JA_MOTOR_VEL]; r->lo = -fmax; r->hi = fmax;
    }
    /* viscous damping c, implicit: J v = -CFM lambda with CFM = 1/c is lambda = -c (rate after the step) */
    if (pa[JA_DAMPING] > 0) {
        mb_row *r = row_init(rows + m++, b1, b2, j, 1.0 / pa[JA_DAMPING]);
        memcpy(r->J1, J1, sizeof r->J1); memcpy(r->J2, J2, sizeof r->J2);
    }
    /* a stop holds from `layer` before its limit on (as contacts do), so a joint resting on it
     * keeps its row with rhs 0 instead of leaving and re-entering every step */
    double layer = W->wpar[WP_SURFACE_LAYER];
    if (lo <= hi && (pos <= lo + layer || pos >= hi - layer)) {
        double serp = isfinite(pa[JA_STOP_ERP]) ? pa[JA_STOP_ERP] : erp;
        double scfm = isfinite(pa[JA_STOP_CFM]) ? pa[JA_STOP_CFM] : cfm;
        mb_row *r = row_init(rows + m++, b1, b2, j, scfm);
        memcpy(r->J1, J1, sizeof r->J1); memcpy(r->J2, J2, sizeof r->J2);
        double bounce = pa[JA_BOUNCE];
        if (pos <= lo + layer) {                             /* push up: lambda >= 0 */
            r->rhs = pos < lo ? serp / h * (lo - pos) : 0.0; r->lo = 0; r->hi = INFINITY;
            if (bounce > 0 && rate < 0 && -bounce * rate > r->rhs) r->rhs = -bounce * rate;
            if (lo == hi) { r->lo = -INFINITY; }             /* locked axis */
        } else {
            r->rhs = pos > hi ? serp / h * (hi - pos) : 0.0; r->lo = -INFINITY; r->hi = 0;
            if (bounce > 0 && rate > 0 && -bounce * rate < r->rhs) r->rhs = -bounce * rate;
        }
    }
    return m;
}

int mb_joint_rows(const mb_world *W, int j, double h, const mb_axis_info *ax, const double *pos_unwrapped, mb_row *rows)
{
    const int64_t *ji = W->jint + (size_t)j * JI_SIZE;
    const double *jd = W->jdat + (size_t)j * JD_SIZE;
    int type = (int)ji[JI_TYPE], b1 = (int)ji[JI_B1], b2 = (int)ji[JI_B2], m = 0;
    if (type == J_AMOTOR) return mb_amotor_rows(W, j, h, rows);
    double erp = isfinite(jd[JD_ERP]) ? jd[JD_ERP] : W->wpar[WP_ERP];
    double cfm = isfinite(jd[JD_CFM]) ? jd[JD_CFM] : W->wpar[WP_CFM];
    double k = erp / h;
    BodyFrame f1, f2; frame_of(W, b1, &f1); frame_of(W, b2, &f2);
    const double *d = ax->d;                                 /* relative rotation, from mb_joint_axes */

    double r1[3], r2[3], e[3];
    anchor_levers(&f1, &f2, jd, b2, r1, r2, e);

    if (type == J_BALL || type == J_HINGE || type == J_UNIVERSAL || type == J_FIXED) {
        m += anchor_rows_xyz(rows + m, b1, b2, j, r1, r2, e, k, cfm);
    } else if (type == J_HINGE2) {                           /* suspension along axis 1 */
        double dirs[3][3]; mb_mv3(f1.R, jd + JD_AXIS1, dirs[0]); plane_space(dirs[0], dirs[1], dirs[2]);
        double se = isfinite(jd[JD_SUSP_ERP]) ? jd[JD_SUSP_ERP] : erp;
        double sc = isfinite(jd[JD_SUSP_CFM]) ? jd[JD_SUSP_CFM] : cfm;
        m += anchor_rows(rows + m, b1, b2, j, r1, r2, e, (const double (*)[3])dirs, 1, se / h, sc);
        m += anchor_rows(rows + m, b1, b2, j, r1, r2, e, (const double (*)[3])(dirs + 1), 2, k, cfm);
    }
    if (type == J_HINGE) m += hinge_axis_rows(rows + m, &f1, &f2, jd, b1, b2, j, k, cfm);
    if (type == J_SLIDER || type == J_FIXED) {               /* orientations locked */
        double th[3], thw[3], s = sqrt(d[1] * d[1] + d[2] * d[2] + d[3] * d[3]);
        double ang = 2 * atan2(s, d[0]), f = s > 1e-12 ? ang / s : 2.0;
        for (int i = 0; i < 3; i++) th[i] = f * d[1 + i];
        mb_mv3(f2.R, th, thw);
        for (int i = 0; i < 3; i++) {
            mb_row *r = row_init(rows + m++, b1, b2, j, cfm);
            r->J1[3 + i] = 1; r->J2[3 + i] = -1;
            r->rhs = -k * thw[i];
        }
    }
    if (type == J_SLIDER) {                                  /* body 1 stays on the line */
        double u[3], dd[3], o[3], ee[3], p[3], q[3];
        mb_mv3(f2.R, jd + JD_AXIS1_B2, u);
        mb_sub3(f1.p, f2.p, dd); mb_mv3(f2.R, jd + JD_OFFSET, o); mb_sub3(dd, o, ee);
        plane_space(u, p, q);
        const double *pq[2] = {p, q};
        for (int i = 0; i < 2; i++) {
            mb_row *r = row_init(rows + m++, b1, b2, j, cfm);
            mb_copy3(pq[i], r->J1); mb_scale3(pq[i], -1, r->J2);
            mb_cross3(dd, pq[i], r->J2 + 3); mb_scale3(r->J2 + 3, -1, r->J2 + 3);
            r->rhs = -k * mb_dot3(ee, pq[i]);
        }
    }
    if (type == J_UNIVERSAL || type == J_HINGE2) {           /* the axes keep their angle */
        double a1w[3], a2w[3], c[3];
        mb_mv3(f1.R, jd + JD_AXIS1, a1w); mb_mv3(f2.R, jd + JD_AXIS2, a2w); mb_cross3(a1w, a2w, c);
        mb_row *r = row_init(rows + m++, b1, b2, j, cfm);
        mb_copy3(c, r->J1 + 3); mb_scale3(c, -1, r->J2 + 3);
        r->rhs = -k * (mb_dot3(a1w, a2w) - jd[JD_DOT0]);
    }
    /* motors and stops on each axis */
    for (int a = 0; a < ax->naxes; a++) {
        double pos = pos_unwrapped ? pos_unwrapped[a] : ax->pos[a];
        m += axis_rows(W, rows + m, b1, b2, j, joint_axis_params(jd, a), ax->J1[a], ax->J2[a], pos, ax->rate[a], h, erp, cfm);
    }
    return m;
}

/* ---- the angular motor (ODE's dJointCreateAMotor) ------------------------------------------------
 * No base rows: up to three axes, each with a motor and stops, on the rotation of body 1
 * relative to body 2.
 *   user   each axis fixed in the world, body 1 or body 2.  ODE leaves the angles to the user
 *          (dJointSetAMotorAngle); here an axis's angle is the twist of the relative rotation
 *          about it (swing-twist decomposition), zero at attach time: exactly the angle turned
 *          when the bodies turn about that axis.
 *   euler  axis 0 fixed in body 1, axis 2 in body 2 (perpendicular at attach time), axis 1 =
 *          axis 2 x axis 0; the angles are ODE's computeEulerAngles: with axis 0 = x of body 1
 *          and axis 2 = z of the world, body 1 is at Rz(angle 2) Ry(angle 1) Rx(angle 0).
 * The rows constrain (w1 - w2) . axis, as ODE does in both modes. */
int mb_amotor_axes(const mb_world *W, int j, double ax[3][3], double angle[3], double rate[3])
{
    const int64_t *ji = W->jint + (size_t)j * JI_SIZE;
    const double *jd = W->jdat + (size_t)j * JD_SIZE;
    int b2 = (int)ji[JI_B2], naxes = (int)jd[JD_AM_NAXES];
    BodyFrame f1, f2; frame_of(W, (int)ji[JI_B1], &f1); frame_of(W, b2, &f2);
    double wr[3]; mb_sub3(f1.w, f2.w, wr);
    if (naxes < 0) naxes = 0;
    if (naxes > 3) naxes = 3;
    if (jd[JD_AM_MODE] == 1) {                                /* euler */
        naxes = 3;
        double ref1[3], ref2[3], q[3];
        mb_mv3(f1.R, jd + JD_AM_AXES, ax[0]); mb_mv3(f2.R, jd + JD_AM_AXES + 6, ax[2]);
        mb_cross3(ax[2], ax[0], ax[1]);
        if (!mb_normalize3(ax[1])) plane_space(ax[0], ax[1], q);  /* gimbal lock: any perpendicular */
        mb_mv3(f1.R, jd + JD_AM_REF1, ref1); mb_mv3(f2.R, jd + JD_AM_REF2, ref2);
        mb_cross3(ax[0], ref1, q);
        angle[0] = -atan2(mb_dot3(ax[2], q), mb_dot3(ax[2], ref1));
        mb_cross3(ax[0], ax[1], q);
        angle[1] = -atan2(mb_dot3(ax[2], ax[0]), mb_dot3(ax[2], q));
        mb_cross3(ax[1], ax[2], q);
        angle[2] = -atan2(mb_dot3(ref2, ax[1]), mb_dot3(ref2, q));
    } else {                                                  /* user */
        double d[4]; relative_rotation(&f1, &f2, jd + JD_AM_QREL, d);
        for (int k = 0; k < naxes; k++) {
            int rel = (int)jd[JD_AM_REL + k];
            const double *a = jd + JD_AM_AXES + 3 * k;
            if (rel == 1) mb_mv3(f1.R, a, ax[k]); else if (rel == 2) mb_mv3(f2.R, a, ax[k]); else mb_copy3(a, ax[k]);
            double a2[3]; mb_mtv3(f2.R, ax[k], a2);             /* the axis in body-2 axes, where d lives */
            angle[k] = 2 * atan2(mb_dot3(d + 1, a2), d[0]);
        }
    }
    for (int k = 0; k < naxes; k++) rate[k] = mb_dot3(wr, ax[k]);
    return naxes;
}

int mb_amotor_rows(const mb_world *W, int j, double h, mb_row *rows)
{
    const int64_t *ji = W->jint + (size_t)j * JI_SIZE;
    const double *jd = W->jdat + (size_t)j * JD_SIZE;
    int b1 = (int)ji[JI_B1], b2 = (int)ji[JI_B2], m = 0;
    double erp = isfinite(jd[JD_ERP]) ? jd[JD_ERP] : W->wpar[WP_ERP];
    double cfm = isfinite(jd[JD_CFM]) ? jd[JD_CFM] : W->wpar[WP_CFM];
    double ax[3][3], angle[3], rate[3];
    int naxes = mb_amotor_axes(W, j, ax, angle, rate);
    for (int a = 0; a < naxes; a++) {
        double J1[6] = {0, 0, 0, ax[a][0], ax[a][1], ax[a][2]}, J2[6] = {0, 0, 0, -ax[a][0], -ax[a][1], -ax[a][2]};
        m += axis_rows(W, rows + m, b1, b2, j, joint_axis_params(jd, a), J1, J2, angle[a], rate[a], h, erp, cfm);
    }
    return m;
}
