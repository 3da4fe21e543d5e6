/* rollout.c — a whole fixed-step simulation run in C (mb.simulate's compiled loop).
 *
 * The equations are those of multibody.simulation: q̇ = v (on the configuration manifold),
 * v̇ = q̈ = FDab(q, v, τ_all, f_ext) (RBDA table 7.1, spatial_v2 FDab: mb_aba) with τ from a
 * built-in controller and the model's passive forces (simulation/limits.py, the same laws):
 *
 *   τ_all = τ − damping ⊙ v − f ⊙ tanh(v / v_s) + τ_soft(q, v)
 *   f_ext = the constant forces + gravcomp_i m_i (−g) at each body's centre of mass
 *   τ_soft,j = sign · max(0, H_jj (p / T² + 2 ṗ / T)),  p = sign (pos − q_j) > 0 beyond a bound.
 *
 * The steppers, on y = [q, v] and the tangent K = [v, q̈]:
 *
 *   euler          y₁ = y₀ ⊕ h·f(t₀, y₀)                            (OpenDE report eq. 5.15)
 *   semi_implicit  v₁ = v₀ + h·q̈(y₀),  q₁ = q₀ ⊕ h·v₁             (symplectic Euler)
 *   rk4            classical Runge–Kutta (report §5, eq. 5.17) when every joint has q̇ = v;
 *                  with quaternion or planar joints the commutator-free 4th-order Lie-group
 *                  method "CF4" of Celledoni, Marthinsen & Owren (2003), which is classical RK4
 *                  on vector spaces and keeps order 4 on SO(3)/SE(3).
 *
 * q ⊕ v·h is mb_integrate (kinematics.c): exact exponential maps, so quaternion norms stay 1.
 * The controllers (multibody.simulation.controllers.PD, also as a torque table with kp = kd = 0):
 *   τ(t, q, v) = kp ⊙ (q_ref(t) − q) + kd ⊙ (q̇_ref(t) − v) + τ_ff(t) [+ g(q) = RNEA(q, 0, 0)],
 * the references linear in t between the rows of a time table, held beyond its ends (the same
 * arithmetic as numpy.interp), either continuous (every stage) or sampled with a zero-order hold
 * at t = 0, T, 2T, … (spatial_v2's Simulink example 2).  The step grid, the splitting of steps at
 * sample instants, what is recorded and when a run stops are those of simulation/core.py's
 * _run_fixed, operation for operation, so the compiled and the Python loops agree to rounding.
 *
 * A continuous PD with gravity compensation cancels the model's gravity: M q̈ = τ_pd + g(q) − C − g(q)
 * (− …) is FDab with the gravity switched off and τ_pd, so the stages run ABA on a copy of the
 * model without gravity and no RNEA; g(q) is evaluated once per step, for the recorded τ only.
 *
 * Hard stops (MB_STOPS_HARD) are events with impact resets, handled by the Python loop: after
 * each step the stops' guards g = sign (q_j − pos) are evaluated and, where one goes from > 0 to
 * ≤ 0 (the event's direction −1), the step is discarded and the run handed back at its start
 * (handed_back, t_from, y_end); the Python loop takes that step, fires the impact, and resumes
 * here once no joint rests on a stop.  Steps that cross no stop never leave C.
 *
 * A run whose state (or q̈) turns non-finite stops at the last finite state and reports the
 * step (with hard stops: hands that step back, so the Python loop reports it); a singular model
 * or a non-finite controller output is an error (status.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* Outcome of one right-hand-side evaluation: 0, STAGE_NON_FINITE, or a status code (> 0). */
enum { STAGE_NON_FINITE = -1 };

typedef struct {
    double *y, *y1, *ys, *y2;          /* states (nq + nv)                         */
    double *k1, *k2, *k3, *k4, *K;     /* tangents (2 nv)                          */
    double *tau, *tau_all, *held;      /* first-stage τ, τ − damping ⊙ v, held τ (nv) */
    double *tau_stage;                 /* τ of the later stages, not kept (nv)     */
    double *zero, *gq, *H, *fext;      /* zeros, g(q) (nv), CRBA (nv × nv), f_ext (nb × 6) */
    double *block;
} workspace;

static int finite_all(const double *x, long n)
{
    for (long k = 0; k < n; k++)
        if (!isfinite(x[k]))
            return 0;
    return 1;
}

/* numpy.interp(t, times, table[:, col]) for one column (the same operations, so the same bits). */
static double interp_column(int n, const double *times, const double *table, int ncol, int col, double t)
{
    if (n == 1 || t >= times[n - 1])  /* held after the end (numpy: right value, or the last row at it) */
        return table[(long)ncol * (n - 1) + col];
    if (t < times[0])
        return table[col];
    int lo = 0, hi = n - 1;  /* times[lo] ≤ t < times[hi] */
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (times[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    const double y0 = table[(long)ncol * lo + col], y1 = table[(long)ncol * (lo + 1) + col];
    if (times[lo] == t)
        return y0;
    const double slope = (y1 - y0) / (times[lo + 1] - times[lo]);
    return slope * (t - times[lo]) + y0;
}

/* The built-in controller at (t, q, v) into tau; MB_BAD_CONTROL if its output is not finite.
 * gravity 0 leaves out the PD's g(q) (the caller cancels it against the model's gravity). */
static int control(const mb_model *m, mb_data *d, workspace *w, const mb_control *c, double t, const double *q,
                   const double *v, int gravity, double *tau)
{
    const int nv = m->nv, n = c->n_times;
    if (c->kind == MB_CONTROL_NONE) {
        memset(tau, 0, sizeof(double) * nv);
        return MB_OK;
    }
    for (int k = 0; k < nv; k++) {  /* PD on a model whose joints all have q̇ = v (nq = nv) */
        const double qr = interp_column(n, c->times, c->q_ref, m->nq, k, t);
        const double qdr = interp_column(n, c->times, c->qd_ref, nv, k, t);
        const double ff = interp_column(n, c->times, c->tau_ff, nv, k, t);
        const double e = qr - q[k];
        tau[k] = c->kp[k] * e + c->kd[k] * (qdr - v[k]) + ff;
    }
    if (gravity && c->gravity) {  /* g(q): the joint forces that hold the model still against gravity */
        mb_rnea(m, d, q, w->zero, w->zero, NULL, w->gq);
        for (int k = 0; k < nv; k++)
            tau[k] += w->gq[k];
    }
    return finite_all(tau, nv) ? MB_OK : MB_BAD_CONTROL;
}

/* MuJoCo's gravcomp as f_ext (dynamics/gravcomp.py): body i lifted by gc_lift_i at its world CoM c_i,
 * the spatial force [c_i × f_i; f_i] in base coordinates, added to the constant forces. */
static void gravity_compensation(const mb_model *m, mb_data *d, const mb_rollout *r, const double *q, double *fext)
{
    mb_tree_poses(m, q, d->R, d->p);
    mb_world_poses(m, d->R, d->p, d->R0, d->p0);
    for (int i = 0; i < m->nb; i++) {
        const double *R = d->R0 + 9 * i, *p = d->p0 + 3 * i, *com = r->gc_com + 3 * i, *f = r->gc_lift + 3 * i;
        double c[3];
        for (int a = 0; a < 3; a++)
            c[a] = p[a] + (R[3 * a] * com[0] + R[3 * a + 1] * com[1] + R[3 * a + 2] * com[2]);
        double *o = fext + 6 * i;
        o[0] = c[1] * f[2] - c[2] * f[1];
        o[1] = c[2] * f[0] - c[0] * f[2];
        o[2] = c[0] * f[1] - c[1] * f[0];
        o[3] = f[0], o[4] = f[1], o[5] = f[2];
        if (r->fext)
            for (int k = 0; k < 6; k++)
                o[k] = r->fext[6 * i + k] + o[k];
    }
}

/* τ_all += the soft stops' push (limits.py JointLimits.soft_forces); H only when a joint is beyond. */
static void soft_stops(const mb_model *m, mb_data *d, const mb_rollout *r, workspace *w, const double *q,
                       const double *v, double *tau_all)
{
    const double T = r->soft_time, T2 = T * T;
    int have_H = 0;
    for (int s = 0; s < r->n_stops; s++) {
        const double *row = r->stops + 4 * s;
        const int qi = (int)row[0], vi = (int)row[1];
        const double pos = row[2], sign = row[3];
        const double pen = sign * (pos - q[qi]);
        if (pen <= 0.0)
            continue;
        if (!have_H) {
            mb_crba(m, d, q, w->H);
            have_H = 1;
        }
        const double pdot = -sign * v[vi];
        tau_all[vi] += sign * fmax(0.0, w->H[(long)vi * m->nv + vi] * (pen / T2 + 2.0 * pdot / T));
    }
}

/* Does a step from y to y1 take a hard stop's guard g = sign (q − pos) from > 0 to ≤ 0? */
static int crosses_stop(const mb_rollout *r, const double *y, const double *y1)
{
    for (int s = 0; s < r->n_stops; s++) {
        const double *row = r->stops + 4 * s;
        const int qi = (int)row[0];
        if (row[3] * (y[qi] - row[2]) > 0.0 && row[3] * (y1[qi] - row[2]) <= 0.0)
            return 1;
    }
    return 0;
}

/* f(t, y) -> K = [v, q̈] and the controller's τ (held: the zero-order-hold value, or NULL); m_free
 * (the model without gravity, or NULL) runs a continuous gravity-compensating PD, whose τ then gets
 * its g(q) only when `full_tau` (the stage whose τ is recorded). */
static int rhs(const mb_model *m, const mb_model *m_free, mb_data *d, const mb_rollout *r, workspace *w, double t,
               const double *y, const double *held, double *K, double *tau, int full_tau)
{
    const int nq = m->nq, nv = m->nv;
    const double *q = y, *v = y + nq;
    if (!finite_all(y, nq + nv))
        return STAGE_NON_FINITE;
    const int cancel = m_free && !held;
    int st = MB_OK;
    if (held)
        memcpy(tau, held, sizeof(double) * nv);
    else
        st = control(m, d, w, &r->control, t, q, v, !cancel, tau);
    if (st != MB_OK)
        return st;
    const double *fext = r->fext;
    if (r->gc_lift) {
        gravity_compensation(m, d, r, q, w->fext);
        fext = w->fext;
    }
    const double *tau_all = tau;
    if (r->damping || r->friction || r->stop_mode == MB_STOPS_SOFT) {
        for (int k = 0; k < nv; k++)
            w->tau_all[k] = r->damping ? tau[k] - r->damping[k] * v[k] : tau[k];
        if (r->friction)
            for (int k = 0; k < nv; k++)
                w->tau_all[k] = w->tau_all[k] + -r->friction[k] * tanh(v[k] / r->friction_velocity);
        if (r->stop_mode == MB_STOPS_SOFT)
            soft_stops(m, d, r, w, q, v, w->tau_all);
        tau_all = w->tau_all;
    }
    memcpy(K, v, sizeof(double) * nv);
    st = mb_aba(cancel ? m_free : m, d, q, v, tau_all, fext, K + nv);
    if (st != MB_OK)
        return st;
    if (!finite_all(K + nv, nv))
        return STAGE_NON_FINITE;
    if (cancel && full_tau) {  /* the recorded τ is the controller's: τ_pd + g(q) */
        mb_rnea(m, d, q, w->zero, w->zero, NULL, w->gq);
        for (int k = 0; k < nv; k++)
            tau[k] += w->gq[k];
        if (!finite_all(tau, nv))
            return MB_BAD_CONTROL;
    }
    return MB_OK;
}

/* out = y ⊕ h·K: q on the manifold with velocity K[:nv], v by addition (out must not alias y). */
static void advance(const mb_model *m, int vector, const double *y, const double *K, double h, double *out)
{
    const int nq = m->nq, nv = m->nv;
    if (vector) {
        for (int k = 0; k < nq + nv; k++)
            out[k] = y[k] + h * K[k];
        return;
    }
    mb_integrate(m, y, K, h, out);
    for (int k = 0; k < nv; k++)
        out[nq + k] = y[nq + k] + h * K[nv + k];
}

/* One step from (t, y) of size h into w->y1; w->k1 and w->tau hold the first stage. */
static int step(const mb_model *m, const mb_model *mf, mb_data *d, const mb_rollout *r, workspace *w, int vector,
                double t, double h, const double *held)
{
    const int nq = m->nq, nv = m->nv, n = nq + nv, nk = 2 * nv;
    double *y = w->y, *ys = w->ys, *y2 = w->y2, *k1 = w->k1, *k2 = w->k2, *k3 = w->k3, *k4 = w->k4, *K = w->K;
    double *scratch_tau = w->tau_stage;
    int st = rhs(m, mf, d, r, w, t, y, held, k1, w->tau, 1);
    if (st != MB_OK)
        return st;
    switch (r->integrator) {
    case MB_EULER:
        advance(m, vector, y, k1, h, w->y1);
        break;
    case MB_SEMI_IMPLICIT:
        for (int k = 0; k < nv; k++) {
            K[k] = y[nq + k] + h * k1[nv + k];  /* the new velocity moves q */
            K[nv + k] = k1[nv + k];
        }
        advance(m, vector, y, K, h, w->y1);
        break;
    default:  /* MB_RK4 */
        if (vector) {
            for (int k = 0; k < n; k++)
                ys[k] = y[k] + (0.5 * h) * k1[k];
            if ((st = rhs(m, mf, d, r, w, t + 0.5 * h, ys, held, k2, scratch_tau, 0)) != MB_OK)
                return st;
            for (int k = 0; k < n; k++)
                ys[k] = y[k] + (0.5 * h) * k2[k];
            if ((st = rhs(m, mf, d, r, w, t + 0.5 * h, ys, held, k3, scratch_tau, 0)) != MB_OK)
                return st;
            for (int k = 0; k < n; k++)
                ys[k] = y[k] + h * k3[k];
            if ((st = rhs(m, mf, d, r, w, t + h, ys, held, k4, scratch_tau, 0)) != MB_OK)
                return st;
            for (int k = 0; k < n; k++)
                w->y1[k] = y[k] + (h / 6.0) * (k1[k] + 2.0 * k2[k] + 2.0 * k3[k] + k4[k]);
            break;
        }
        /* CF4, body-velocity (right) form: the exponentials compose on the right */
        advance(m, vector, y, k1, 0.5 * h, y2);
        if ((st = rhs(m, mf, d, r, w, t + 0.5 * h, y2, held, k2, scratch_tau, 0)) != MB_OK)
            return st;
        advance(m, vector, y, k2, 0.5 * h, ys);
        if ((st = rhs(m, mf, d, r, w, t + 0.5 * h, ys, held, k3, scratch_tau, 0)) != MB_OK)
            return st;
        for (int k = 0; k < nk; k++)
            K[k] = k3[k] - 0.5 * k1[k];
        advance(m, vector, y2, K, h, ys);
        if ((st = rhs(m, mf, d, r, w, t + h, ys, held, k4, scratch_tau, 0)) != MB_OK)
            return st;
        for (int k = 0; k < nk; k++)
            K[k] = 0.25 * k1[k] + (k2[k] + k3[k]) / 6.0 - k4[k] / 12.0;
        advance(m, vector, y, K, h, ys);
        for (int k = 0; k < nk; k++)
            K[k] = -k1[k] / 12.0 + (k2[k] + k3[k]) / 6.0 + 0.25 * k4[k];
        advance(m, vector, ys, K, h, w->y1);
    }
    return finite_all(w->y1, n) ? MB_OK : STAGE_NON_FINITE;
}

/* Keep sample `row` = (t, y); its q̈ and τ are filled later (the next step's first stage).
 * Energies are not computed here: a Trajectory computes them from q, q̇ on first access, in one
 * batched EnerMo call (MuJoCo's rollout computes none either; they cost ~20 % of an RK4 step). */
static void record(const mb_model *m, mb_rollout_out *o, double t, const double *y)
{
    const long row = o->count++;
    const int nq = m->nq, nv = m->nv;
    o->t[row] = t;
    memcpy(o->q + row * nq, y, sizeof(double) * nq);
    memcpy(o->qd + row * nv, y + nq, sizeof(double) * nv);
}

static void record_derived(const mb_model *m, mb_rollout_out *o, long row, const double *K, const double *tau)
{
    const int nv = m->nv;
    memcpy(o->qdd + row * nv, K + nv, sizeof(double) * nv);
    memcpy(o->tau + row * nv, tau, sizeof(double) * nv);
}

int mb_run_rollout(const mb_model *m, mb_data *d, const mb_rollout *r, const double *q0, const double *qd0,
               mb_rollout_out *o)
{
    const int nq = m->nq, nv = m->nv, n = nq + nv;
    workspace w;
    w.block = calloc((size_t)(4 * n + 16 * nv + nv * nv + 6 * m->nb + 1), sizeof(double));
    if (!w.block)
        return MB_NO_MEMORY;
    double *p = w.block;
    w.y = p, p += n, w.y1 = p, p += n, w.ys = p, p += n, w.y2 = p, p += n;
    w.k1 = p, p += 2 * nv, w.k2 = p, p += 2 * nv, w.k3 = p, p += 2 * nv, w.k4 = p, p += 2 * nv, w.K = p, p += 2 * nv;
    w.tau = p, p += nv, w.tau_all = p, p += nv, w.held = p, p += nv, w.tau_stage = p, p += nv;
    w.zero = p, p += nv, w.gq = p, p += nv, w.H = p, p += (long)nv * nv, w.fext = p;

    int vector = 1;
    for (int i = 0; i < m->nb; i++)
        if (m->jtype[i] == MB_SPHERICAL || m->jtype[i] == MB_FREE || m->jtype[i] == MB_PLANAR)
            vector = 0;
    memcpy(w.y, q0, sizeof(double) * nq);
    memcpy(w.y + nq, qd0, sizeof(double) * nv);
    o->count = 0;
    o->non_finite = 0;
    o->handed_back = 0;
    o->t_from = o->t_to = 0.0;
    const int hard = r->stop_mode == MB_STOPS_HARD;
    mb_model free_model = *m;  /* the model without gravity: a continuous PD with g(q) cancels it */
    memset(free_model.a_grav, 0, sizeof free_model.a_grav);
    memset(free_model.plnr_grav, 0, sizeof free_model.plnr_grav);
    const mb_model *mf = r->control.kind == MB_CONTROL_PD && r->control.gravity ? &free_model : NULL;

    const double dt = r->dt, t_final = r->t_final, eps = 1e-9 * dt, period = r->control.period;
    const int sampled = r->control.kind != MB_CONTROL_NONE && period > 0.0;
    const double *held = NULL;  /* the zero-order-hold τ once sampled */
    double t = r->t0, last_recorded_t = r->t0;
    long n_sample = 0;
    int pending = 1;  /* the last sample's q̈, τ wait for the step that starts from it */
    int st = MB_OK;
    record(m, o, t, w.y);
    while (t < t_final) {
        double next_sample = INFINITY;
        if (sampled) {
            if (t >= (double)n_sample * period - eps) {
                if ((st = control(m, d, &w, &r->control, t, w.y, w.y + nq, 1, w.held)) != MB_OK)
                    break;
                held = w.held;
                n_sample = (long)floor((t + eps) / period) + 1;
            }
            next_sample = (double)n_sample * period;
        }
        const long k_next = (long)floor(t / dt + 1e-9) + 1;
        double t_next = fmin((double)k_next * dt, t_final);
        if (next_sample < t_next - eps)
            t_next = next_sample;
        st = step(m, mf, d, r, &w, vector, t, t_next - t, held);
        if (st == STAGE_NON_FINITE && hard) {  /* the Python loop reports it, as it would */
            o->handed_back = 1, o->t_from = t, o->t_to = t_next;
            st = MB_OK;
            break;
        }
        if (st == STAGE_NON_FINITE) {
            o->non_finite = 1, o->t_from = t, o->t_to = t_next;
            st = MB_OK;
            break;
        }
        if (st != MB_OK) {
            o->t_from = t, o->t_to = t_next;
            break;
        }
        if (pending && o->t[o->count - 1] == t) {
            record_derived(m, o, o->count - 1, w.k1, w.tau);
            pending = 0;
        }
        if (hard && crosses_stop(r, w.y, w.y1)) {  /* an impact in this step: the Python loop's event */
            o->handed_back = 1, o->t_from = t, o->t_to = t_next;
            break;
        }
        t = t_next;
        memcpy(w.y, w.y1, sizeof(double) * n);
        const int on_grid = fabs(t - (double)k_next * dt) <= eps;
        if ((t >= t_final || (on_grid && k_next % r->record_every == 0)) && o->count < r->capacity) {
            record(m, o, t, w.y);
            last_recorded_t = t;
            pending = 1;
        }
    }
    if (st == MB_OK && o->non_finite && r->keep_last && last_recorded_t != t && o->count < r->capacity) {
        record(m, o, t, w.y);
        pending = 1;
    }
    if (st == MB_OK && !o->handed_back && pending && o->t[o->count - 1] == t) {  /* the final sample */
        const int s = rhs(m, mf, d, r, &w, t, w.y, held, w.k1, w.tau, 1);
        if (s == STAGE_NON_FINITE) {
            for (int k = 0; k < 2 * nv; k++)
                w.k1[k] = NAN;
            for (int k = 0; k < nv; k++)
                w.tau[k] = NAN;
        } else if (s != MB_OK) {
            st = s, o->t_from = o->t_to = t;
        }
        if (st == MB_OK)
            record_derived(m, o, o->count - 1, w.k1, w.tau);
    }
    if (o->y_end)
        memcpy(o->y_end, w.y, sizeof(double) * n);
    free(w.block);
    return st;
}
