/* rollout_lanes.h — one classical RK4 step of a group of runs in lanes (the compiled loop's fast path).
 *
 * rollout.c advances a batch's runs in groups, stage by stage, and hands each stage's forward
 * dynamics to the lanes (aba_group).  Everything around it — the stage states y + c·K, the PD law,
 * damping, the finiteness checks, the RK4 sum — it does run by run, and for a robot under a PD
 * those scalar loops and the gathers and scatters of every call cost about as much as the lanes'
 * ABA itself.  Where a run needs nothing else (mb_group_step: q̇ = v on every joint, a PD with
 * constant references or no controller, damping, g(q) cancelled against gravity), the whole step
 * runs here instead, on the group's states held in lanes from its start to its end: one gather of
 * y, one scatter of y₁, k₁ and τ.
 *
 * Every operation is rollout.c's (control, rhs, stage_state, step; the damping law is passive.c's own
 * mb_passive_damping, compiled on lanes by aba_lanes.c), in the same order on the same
 * numbers, so every lane ends with its run's own bits; so do its checks, lane by lane: a state
 * turning non-finite (−1, rollout.c's STAGE_NON_FINITE), a non-finite τ (MB_BAD_CONTROL).  A lane
 * that failed is dead for the rest of the step: before each ABA its inputs repeat a live lane's,
 * so it cannot fail the others.  Included by aba_lanes.c (real: a vector of MB_LANES doubles).
 */
#ifndef MULTIBODY_ROLLOUT_LANES_H
#define MULTIBODY_ROLLOUT_LANES_H

enum { LANE_NON_FINITE = -1 };

/* Lanes whose n numbers are all finite: Σ x·0 is 0 exactly then (vec.h's mb_all_finite, lane-wise). */
static real_mask finite_lanes(const real *x, int n)
{
    real acc = MB_SPLAT(0.0);
    for (int k = 0; k < n; k++)
        acc += x[k] * 0.0;
    return acc == 0.0;
}

/* Lanes alive (ok) that fail `good` get status `code` and die. */
static void fail_lanes(real_mask *ok, real_mask good, int code, int *st)
{
    if (mb_every(good | ~*ok))
        return;
    for (int l = 0; l < MB_LANES; l++)
        if ((*ok)[l] && !good[l])
            st[l] = code, (*ok)[l] = 0;
}

/* x[k] of every dead lane = x[k] of live lane `live`, k < n. */
static void repeat_live(real *x, int n, real_mask ok, int live)
{
    for (int k = 0; k < n; k++)
        for (int l = 0; l < MB_LANES; l++)
            if (!ok[l])
                x[k][l] = x[k][live];
}

static int first_live(real_mask ok)
{
    for (int l = 0; l < MB_LANES; l++)
        if (ok[l])
            return l;
    return -1;
}

/* K = [v, q̈] at the stage state ys = [q, v] and its τ (rollout.c's rhs for one stage); `first`: the
 * step's first stage (ys is the accepted state, not checked; τ gets g(q)).  Without a PD, τ is 0:
 * the caller zeroes it once a step (every stage may then share it).  MB_OK, or the ABA's status
 * when some live lane failed it.  Inlined: four calls a step, a few of their instructions each. */
static inline __attribute__((always_inline)) int stage_lanes(const mb_model *m, mb_data_lanes *d,
                                                             const mb_group_step *s, real *ys, real *K, real *tau,
                                                             real *tau_all, int first, real_mask *ok, int *st)
{
    const int nv = m->nv;
    real *q = ys, *v = ys + nv;
    if (!first)
        fail_lanes(ok, finite_lanes(ys, 2 * nv), LANE_NON_FINITE, st);
    if (s->kp) {  /* the PD with constant references */
        for (int k = 0; k < nv; k++) {
            const real e = MB_SPLAT(s->q_ref[k]) - q[k];
            tau[k] = MB_SPLAT(s->kp[k]) * e + MB_SPLAT(s->kd[k]) * (MB_SPLAT(s->qd_ref[k]) - v[k]) + MB_SPLAT(s->tau_ff[k]);
        }
        fail_lanes(ok, finite_lanes(tau, nv), MB_BAD_CONTROL, st);
    }
    const real *ta = tau;
    if (s->damping) {  /* passive.c's law, compiled on lanes (the one law these steps carry) */
        mb_passive_damping_lanes(nv, s->damping, v, tau, tau_all);
        ta = tau_all;
    }
    for (int k = 0; k < nv; k++)
        K[k] = v[k];
    if (!mb_every((real_mask)*ok)) {  /* dead lanes repeat a live one's inputs (its tau_all: a copy) */
        const int live = first_live(*ok);
        if (live < 0)
            return MB_OK;
        repeat_live(ys, 2 * nv, *ok, live);
        if (ta == tau) {
            for (int k = 0; k < nv; k++)
                tau_all[k] = tau[k];
            ta = tau_all;
        }
        repeat_live(tau_all, nv, *ok, live);
    }
    const int status = s->model->planar ? mb_aba_planar_lanes(s->model, d, q, v, ta, K + nv)  /* mb_aba's choice */
                                        : mb_aba_lanes(s->model, d, q, v, ta, NULL, K + nv);
    if (status != MB_OK)
        return status;
    fail_lanes(ok, finite_lanes(K + nv, nv), LANE_NON_FINITE, st);
    if (first && s->gravity) {  /* the recorded τ is the PD's + g(q) (ABA left the poses of q in d, but for
                                 * planar trees, which keep other numbers there) */
        real *g = tau_all;
        mb_gravity_torques_lanes(m, d, q, !m->planar, g);
        for (int k = 0; k < nv; k++)
            tau[k] += g[k];
        fail_lanes(ok, finite_lanes(tau, nv), MB_BAD_CONTROL, st);
    }
    return MB_OK;
}

/* Lanes whose step from y to y1 takes a hard stop's guard g = sign (q − pos) from > 0 to ≤ 0
 * (rollout.c's crosses_stop, the same arithmetic). */
static real_mask crossing_lanes(const mb_group_step *s, const real *y, const real *y1)
{
    real_mask hit = MB_SPLAT(0.0) != 0.0;
    for (int k = 0; k < s->n_stops; k++) {
        const double *row = s->stops + 4 * k;
        const int qi = (int)row[0];
        const real g0 = row[3] * (y[qi] - row[2]), g1 = row[3] * (y1[qi] - row[2]);
        hit |= ((g0 > 0.0) & (g1 <= 0.0)) | ((g0 == 0.0) & (g1 < 0.0));   /* (crosses_stop's rule) */
    }
    return hit;
}

/* ys = y + c·K */
static void stage_state_lanes(const real *y, const real *K, double c, int n, real *ys)
{
    for (int k = 0; k < n; k++)
        ys[k] = y[k] + c * K[k];
}

static int rk4_group(const mb_model *m, void *workspace, const mb_group_step *s, const double *const *y,
                     double *const *y1, double *const *k1, double *const *tau, int *st, int *crossed)
{
    mb_data_lanes *d = workspace;
    const int nv = m->nv, n = 2 * nv;
    const double h = s->h;
    real Y[n], YS[n], K1[n], K[n], S[n], TAU[nv], TS[nv], TA[nv];
    real_mask ok = MB_SPLAT(0.0) == 0.0;
    for (int l = 0; l < MB_LANES; l++)
        st[l] = MB_OK;
    real *ts = TS;  /* the later stages' τ: their own under a PD, else the first's zeros */
    if (!s->kp) {
        for (int k = 0; k < nv; k++)
            TAU[k] = MB_SPLAT(0.0);
        ts = TAU;
    }
    gather_blocks(y, n, Y);
    for (int k = 0; k < n; k++)
        YS[k] = Y[k];
    int status = stage_lanes(m, d, s, YS, K1, TAU, TA, 1, &ok, st);
    if (status != MB_OK)
        return status;
    stage_state_lanes(Y, K1, 0.5 * h, n, YS);
    if ((status = stage_lanes(m, d, s, YS, K, ts, TA, 0, &ok, st)) != MB_OK)
        return status;
    for (int k = 0; k < n; k++)  /* k₁ + 2k₂ */
        S[k] = K1[k] + 2.0 * K[k];
    stage_state_lanes(Y, K, 0.5 * h, n, YS);
    if ((status = stage_lanes(m, d, s, YS, K, ts, TA, 0, &ok, st)) != MB_OK)
        return status;
    for (int k = 0; k < n; k++)
        S[k] = S[k] + 2.0 * K[k];
    stage_state_lanes(Y, K, h, n, YS);
    if ((status = stage_lanes(m, d, s, YS, K, ts, TA, 0, &ok, st)) != MB_OK)
        return status;
    for (int k = 0; k < n; k++)  /* y + (h/6)(k₁ + 2k₂ + 2k₃ + k₄), summed left to right as rollout.c's */
        YS[k] = Y[k] + (h / 6.0) * (S[k] + K[k]);
    fail_lanes(&ok, finite_lanes(YS, n), LANE_NON_FINITE, st);
    if (s->stops) {
        const real_mask hit = crossing_lanes(s, Y, YS);
        for (int l = 0; l < MB_LANES; l++)
            crossed[l] = hit[l] != 0;
    }
    scatter(YS, n, y1);
    scatter(K1, n, k1);
    scatter(TAU, nv, tau);
    return MB_OK;
}

#endif
