/* passive.c — the model's passive forces, one function per law, in one place (MuJoCo's
 * engine_passive.c plays this part there).  The compiled loop's right-hand side (rollout.c's rhs)
 * calls mb_passive_forces for the joint-space laws and mb_passive_gravcomp for the one that acts as
 * f_ext; the tables come from the Plan's Passive record (simulation/rollout.py, filled by
 * py_rollout.c).  Each law's Python statement is the tests' reference (tests/test_passive.py compares
 * them on random states):
 *
 *   effort         τ = clip(τ, −e, e), the controller's τ first (URDF <limit effort>: simulate's
 *                  effort_limits=True)                               simulation/system.py System._loads
 *   damping        τ −= c ⊙ q̇                                       simulation/system.py System._loads
 *   friction       τ −= f ⊙ tanh(q̇ / v_s)                           simulation/limits.py smoothed_friction
 *   springs        τ_v −= k (q_q − q_spring)                          simulation/limits.py spring_forces
 *   tendons        τ += Σ_tendons c f,  f = −k (dead-band excess of L = c·q) − d c·q̇
 *                                                                    model/tendons.py FixedTendon.forces
 *   actuators      τ_j += gear c_j f,  f = clip(gain clip(ctrl) + b0 + b1 l + b2 l̇),  l = gear Σ c_j q_j
 *                  (a joint's one term c = 1, a fixed tendon's), then τ clipped to each variable's
 *                  actuatorfrcrange; on a variable whose joint has actuatorgravcomp, the clip takes
 *                  the sum with the gravity compensation g_j = Σ_i (J_i(c_i)ᵀ lift_i)_j, which gravcomp
 *                  applies as f_ext, so τ_j += clip(τ_j + g_j) − g_j (MuJoCo's qfrc_actuator clamp)
 *                                                                    model/actuators.py Actuators.forces
 *   soft stops     τ_j += sign_j f_j, f ≥ 0 MuJoCo's soft constraint forces on the limits passed, solved
 *                  together (A + R) f = a_ref − a₀ + w, f ⊥ w ≥ 0    simulation/limits.py JointLimits.soft_forces
 *   gravcomp       body i lifted by gravcomp_i m_i (−g) at its centre of mass, as f_ext
 *                                                                    dynamics/gravcomp.py
 *
 * The joint-space laws add to τ in that order, each the same operations as its Python statement, so
 * the compiled and the Python loops agree bit for bit.  A new law: a field in the Passive record,
 * a function here called from mb_passive_forces (or beside gravcomp for one acting as f_ext), and
 * its Python statement as the test's reference (ARCHITECTURE.md, "Where each kind of change goes").
 */
#include <math.h>
#include <string.h>

#include "common/core.h"
#include "common/lanes.h"
#include "engine/engine.h"

/* τ_all = τ − damping ⊙ v (viscous joint damping; tau_all may be tau).  Written in `real`: aba_lanes.c
 * compiles this law once more on lanes (mb_passive_damping_lanes) for the lanes' RK4 step
 * (rollout_lanes.h), so the law has one statement and every lane gets its run's bits. */
MB_LANES_STATIC void MB_NAME(mb_passive_damping)(int nv, const double *damping, const real *v, const real *tau,
                                                 real *tau_all)
{
    for (int k = 0; k < nv; k++)
        tau_all[k] = tau[k] - MB_SPLAT(damping[k]) * v[k];
}

#ifndef MB_LANE_BUILD  /* the other laws: the scalar build's only (the lanes' step carries damping alone) */

/* τ_all += −f ⊙ tanh(v / v_s) (Coulomb friction smoothed over the velocity scale v_s). */
void mb_passive_friction(int nv, const double *restrict friction, const double *restrict velocity,
                         const double *restrict v, double *restrict tau_all)
{
    for (int k = 0; k < nv; k++)
        tau_all[k] = tau_all[k] + -friction[k] * tanh(v[k] / velocity[k]);
}

/* τ_all += the joint springs, −k (q − q_spring) on each row's variable (limits.py spring_forces). */
void mb_passive_springs(int n, const double *rows, const double *q, double *tau_all)
{
    for (int s = 0; s < n; s++) {
        const double *r = rows + 4 * s;
        const int vi = (int)r[1];
        tau_all[vi] = tau_all[vi] + -r[2] * (q[(int)r[0]] - r[3]);
    }
}

/* τ_all = clip(τ, −effort, effort) (the controller's torque within the joints' effort limits). */
void mb_passive_effort(int nv, const double *effort, const double *tau, double *tau_all)
{
    for (int k = 0; k < nv; k++)
        tau_all[k] = fmin(fmax(tau[k], -effort[k]), effort[k]);
}

static double clip(double x, double lo, double hi)
{
    return fmin(fmax(x, lo), hi);
}

/* g_j = Σ_i (J_i(c_i)ᵀ lift_i)_j: the generalized force of gravcomp's lifts (mb_passive_gravcomp's f_ext)
 * on every variable, through each lifted body's linear Jacobian at its centre of mass — the point as
 * mb_jacobian places it and the rows summed in dynamics/gravcomp.py gravity_compensation_torques' order,
 * so the two agree bit for bit.  Poses into d; J3: 3 nv scratch. */
static void gravcomp_torques(const mb_model *m, mb_data *d, const mb_passive *p, const double *q, double *J3,
                             double *g)
{
    const int nv = m->nv;
    mb_tree_poses(m, q, d->R, d->p);
    mb_world_poses(m, d->R, d->p, d->R0, d->p0);
    memset(g, 0, sizeof(double) * nv);
    for (int i = 0; i < m->nb; i++) {
        const double *f = p->gc_lift + 3 * i, *com = p->gc_com + 3 * i;
        if (f[0] == 0.0 && f[1] == 0.0 && f[2] == 0.0)
            continue;
        const double *R = d->R0 + 9 * i, *pb = d->p0 + 3 * i;
        double P[3];
        for (int r = 0; r < 3; r++)
            P[r] = pb[r] + R[3 * r] * com[0] + R[3 * r + 1] * com[1] + R[3 * r + 2] * com[2];
        memset(J3, 0, sizeof(double) * 3 * nv);
        mb_point_jacobian_add(m, d->R0, d->p0, i, P, 1.0, J3);
        for (int k = 0; k < nv; k++)
            g[k] = g[k] + J3[k] * f[0] + J3[nv + k] * f[1] + J3[2 * nv + k] * f[2];
    }
}

/* τ_all += the actuators' forces under the constant ctrl (model/actuators.py Actuators.forces: each
 * actuator's length l = gear Σ c_j q_j over its transmission's terms, its force f, (gear c_j) f into
 * sum, sum clipped per variable, then added).  On the variables of p->actuator_gc (joints with
 * actuatorgravcomp and an actuatorfrcrange) MuJoCo clips the sum together with the joint's gravity
 * compensation; gravcomp already applies g as f_ext, so those add clip(sum + g) − g.  Poses into d
 * where actuator_gc is given.  scratch: 5 nv (sum, g, a 3 × nv Jacobian). */
void mb_passive_actuators(const mb_model *m, mb_data *d, const mb_passive *p, const double *q, const double *v,
                          double *scratch, double *tau_all)
{
    const int nv = m->nv;
    double *sum = scratch;
    memset(sum, 0, sizeof(double) * nv);
    for (int a = 0; a < p->n_actuators; a++) {
        const double *r = p->actuators + 11 * a;
        const double *t0 = p->actuator_terms + 3 * (long)r[0], *t1 = t0 + 3 * (long)r[1];
        double L = 0.0, Ld = 0.0;
        for (const double *t = t0; t < t1; t += 3)
            L = L + t[2] * q[(int)t[0]], Ld = Ld + t[2] * v[(int)t[1]];
        const double g = r[2], c = clip(p->actuator_ctrl[a], r[7], r[8]);
        const double f = clip(r[3] * c + (r[4] + r[5] * (g * L) + r[6] * (g * Ld)), r[9], r[10]);
        for (const double *t = t0; t < t1; t += 3)
            sum[(int)t[1]] = sum[(int)t[1]] + (g * t[2]) * f;
    }
    const double *range = p->actuator_dof_range, *gc = NULL;
    if (p->n_actuator_gc) {  /* (py_rollout.c: with gc_lift, indices increasing) */
        gravcomp_torques(m, d, p, q, scratch + 2 * nv, scratch + nv);
        gc = scratch + nv;
    }
    for (int k = 0, s = 0; k < nv; k++) {
        if (gc && s < p->n_actuator_gc && (int)p->actuator_gc[s] == k) {
            tau_all[k] = tau_all[k] + (clip(sum[k] + gc[k], range[2 * k], range[2 * k + 1]) - gc[k]);
            s++;
        } else
            tau_all[k] = tau_all[k] + clip(sum[k], range[2 * k], range[2 * k + 1]);
    }
}

/* NumPy's maximum(x, 0) and minimum(x, 0) (NaN and −0 as they are), for the Python statement's bits. */
static double max0(double x)
{
    return x >= 0.0 || x != x ? x : 0.0;
}

static double min0(double x)
{
    return x <= 0.0 || x != x ? x : 0.0;
}

/* τ_all += the fixed tendons' springs and dampers (model/tendons.py FixedTendon.forces, summed as
 * simulation/limits.py tendon_forces does: each tendon's forces on zeros, then tendon by tendon).
 * p->tendons: (k, d, L_lo, L_hi) per tendon; p->tendon_terms: (tendon, q index, v index, c) rows
 * grouped by tendon in order.  sum, one: nv scratch each. */
void mb_passive_tendons(int nv, const mb_passive *p, const double *q, const double *v, double *sum, double *one,
                        double *tau_all)
{
    memset(sum, 0, sizeof(double) * nv);
    const double *term = p->tendon_terms, *end = term + 4L * p->n_tendon_terms;
    for (int i = 0; i < p->n_tendons; i++) {
        const double k = p->tendons[4 * i], d = p->tendons[4 * i + 1], lo = p->tendons[4 * i + 2],
                     hi = p->tendons[4 * i + 3];
        const double *first = term;
        double L = 0.0, Ld = 0.0;
        for (; term < end && (int)term[0] == i; term += 4)
            L = L + term[3] * q[(int)term[1]], Ld = Ld + term[3] * v[(int)term[2]];
        const double f = -k * (max0(L - hi) + min0(L - lo)) - d * Ld;
        memset(one, 0, sizeof(double) * nv);
        for (const double *t = first; t < term; t += 4)
            one[(int)t[2]] = one[(int)t[2]] + f * t[3];
        for (int j = 0; j < nv; j++)
            sum[j] = sum[j] + one[j];
    }
    for (int j = 0; j < nv; j++)
        tau_all[j] = tau_all[j] + sum[j];
}

/* MuJoCo's impedance d(x) of a violation x ≥ 0 (solimp: dmin, dmax, width, midpoint, power): dmin at 0, dmax from
 * the width on, between them the two polynomial halves a x^p, 1 − b (1 − x)^p of x / width meeting at the
 * midpoint; each of dmin, dmax kept in [1e-4, 0.9999] as MuJoCo keeps them (limits.py impedance). */
static double impedance(const double *solimp, double x)
{
    const double lo = fmin(fmax(solimp[0], 1e-4), 0.9999), hi = fmin(fmax(solimp[1], 1e-4), 0.9999);
    const double width = solimp[2], mid = solimp[3], power = solimp[4];
    if (lo == hi || width <= 1e-15)
        return 0.5 * (lo + hi);
    const double u = fabs(x) / width;
    if (u >= 1.0)
        return hi;
    if (u <= 0.0)
        return lo;
    double y = u;
    if (power == 2.0)  /* (MuJoCo's default: squares, not pow, which was 2 % of a lying humanoid's step) */
        y = u <= mid ? u * u / mid : 1.0 - (1.0 - u) * (1.0 - u) / (1.0 - mid);
    else if (power != 1.0)
        y = u <= mid ? pow(u, power) / pow(mid, power - 1.0)
                     : 1.0 - pow(1.0 - u, power) / pow(1.0 - mid, power - 1.0);
    return lo + y * (hi - lo);
}

int mb_soft_stop_terms(const double *row, const double *q, const double *v, double *aref, double *R)
{
    const double sign = row[3], dist = sign * (q[(int)row[0]] - row[2]) - row[11];
    if (!mb_soft_stop_passed(row, q))
        return 0;
    const double imp = impedance(row + 6, dist);
    *R = fmax(1e-15, (1.0 - imp) / imp * row[12]);
    *aref = -row[4] * sign * v[(int)row[1]] - row[5] * imp * dist;
    return 1;
}

/* τ_all += the soft stops' forces (limits.py JointLimits.soft_forces): MuJoCo's soft constraints on the joint
 * limits a joint has passed (by dist = sign (q − pos) < margin), solved together as MuJoCo solves them,
 *
 *     (A + R) f = a_ref − a₀ + w,   f ≥ 0 ⊥ w ≥ 0,     A = J M⁻¹ Jᵀ,  J's rows sign·e_j,
 *     a_ref = −B J q̇ − K d (dist − margin),   R = (1 − d)/d · Â,   a₀ = J M⁻¹ (τ_all − C(q, q̇, f_ext)),
 *
 * d the impedance of the violation, B, K from the row's solref (Passive's rows), Â the row's (M⁻¹)_jj at the
 * model's default configuration (MuJoCo's dof_invweight0); a₀ the acceleration without the stops (τ_all: the
 * laws before them).  So a stop holds a load as MuJoCo's does, yielding only its (1 − d) share, and a stop
 * left alone rings down with B and K.  The small LCP is the engine's (engine/lcp.c).  M = CRBA(ma, q) and its
 * factors (mb_ltdl, into d->L) are made here, as only the stages without contact rows call it; ma: the model
 * whose gravity τ_all's forward dynamics meets (the run's, or its gravity-free copy under a PD that cancels g). */
int mb_passive_soft_stops(const mb_model *ma, mb_data *d, const mb_passive *p, const double *q, const double *v,
                          const double *fext, double *scratch, double *tau_all)
{
    const int nv = ma->nv, *lam = ma->dof_parent;
    int S = 0;
    int *act = (int *)(scratch + mb_passive_soft_scratch(nv, p->n_soft) - p->n_soft);
    double aref, R;
    for (int s = 0; s < p->n_soft; s++)
        if (mb_soft_stop_passed(p->soft + MB_SOFT_ROW * s, q))
            act[S++] = s;
    if (!S)
        return MB_OK;
    double *H = scratch, *a0 = H + (long)nv * nv, *cols = a0 + nv, *A = cols + (long)S * nv, *b = A + (long)S * S;
    double *lo = b + S, *hi = lo + S, *mu = hi + S, *f = mu + S, *work = f + S;
    int *findex = (int *)(work + (long)S * S + 8L * S), *iwork = findex + S;
    mb_crba(ma, d, q, H);
    memcpy(d->L, H, sizeof(double) * (size_t)nv * nv);
    if (mb_ltdl(nv, lam, d->L) >= 0)  /* M not positive definite: the forward dynamics names the body */
        return MB_OK;
    memset(a0, 0, sizeof(double) * nv);
    mb_rnea(ma, d, q, v, a0, fext, cols);  /* C(q, q̇, f_ext), then a₀ = M⁻¹ (τ_all − C) */
    for (int k = 0; k < nv; k++)
        a0[k] = tau_all[k] - cols[k];
    mb_ltdl_solve(nv, lam, d->L, a0);
    for (int i = 0; i < S; i++) {  /* M⁻¹'s columns of the stops' variables */
        double *c = cols + (long)i * nv;
        memset(c, 0, sizeof(double) * nv);
        c[(int)p->soft[MB_SOFT_ROW * act[i] + 1]] = 1.0;
        mb_ltdl_solve(nv, lam, d->L, c);
    }
    for (int i = 0; i < S; i++) {
        const double *row = p->soft + MB_SOFT_ROW * act[i];
        const int vi = (int)row[1];
        const double sign = row[3];
        mb_soft_stop_terms(row, q, v, &aref, &R);
        for (int j = 0; j < S; j++) {
            const double *rj = p->soft + MB_SOFT_ROW * act[j];
            A[(long)i * S + j] = sign * rj[3] * cols[(long)j * nv + vi];
        }
        A[(long)i * S + i] += R;
        b[i] = aref - sign * a0[vi];
        lo[i] = 0.0, hi[i] = INFINITY, mu[i] = 0.0, findex[i] = -1;
    }
    int pivots = 0;
    if (mb_lcp_dantzig(S, A, b, lo, hi, findex, mu, 0, f, work, iwork, &pivots, 1000 + 100 * S) != 0)
        return MB_SOFT_LIMITS;  /* (A + R is positive definite: the pivoting fails only on numbers not finite) */
    for (int i = 0; i < S; i++) {
        const double *row = p->soft + MB_SOFT_ROW * act[i];
        tau_all[(int)row[1]] += row[3] * f[i];
    }
    return MB_OK;
}

/* MuJoCo's gravcomp as f_ext (dynamics/gravcomp.py): body i lifted by gc_lift_i at its world CoM c_i,
 * the spatial force [c_i × f_i; f_i] in base coordinates, added to `base` (the other forces, or NULL). */
void mb_passive_gravcomp(const mb_model *m, mb_data *d, const mb_passive *p, const double *q, const double *base,
                         double *fext)
{
    mb_tree_poses(m, q, d->R, d->p);
    mb_world_poses(m, d->R, d->p, d->R0, d->p0);
    for (int i = 0; i < m->nb; i++) {
        const double *R = d->R0 + 9 * i, *pp = d->p0 + 3 * i, *com = p->gc_com + 3 * i, *f = p->gc_lift + 3 * i;
        double c[3];
        for (int a = 0; a < 3; a++)
            c[a] = pp[a] + (R[3 * a] * com[0] + R[3 * a + 1] * com[1] + R[3 * a + 2] * com[2]);
        double *o = fext + 6 * i;
        o[0] = c[1] * f[2] - c[2] * f[1];
        o[1] = c[2] * f[0] - c[0] * f[2];
        o[2] = c[0] * f[1] - c[1] * f[0];
        o[3] = f[0], o[4] = f[1], o[5] = f[2];
        if (base)
            for (int k = 0; k < 6; k++)
                o[k] = base[6 * i + k] + o[k];
    }
}

/* τ_all = τ (clipped to the effort limits first, where the plan has them) + the joint-space passive
 * forces (damping, friction, springs, tendons, actuators, soft stops, in that order); ma: the model the soft
 * stops take the free acceleration on (NULL: m; a PD that cancels gravity: m without it), fext the run's f_ext
 * (or NULL); scratch: mb_passive_scratch_size.
 * MB_OK, or MB_SOFT_LIMITS where the soft stops' LCP failed (τ_all then lacks them). */
int mb_passive_forces(const mb_model *m, mb_data *d, const mb_passive *p, const double *q, const double *v,
                       const double *tau, const mb_model *ma, const double *fext, double *scratch,
                       double *tau_all)
{
    const int nv = m->nv;
    if (p->effort) {
        mb_passive_effort(nv, p->effort, tau, tau_all);
        tau = tau_all;
    }
    if (p->damping)
        mb_passive_damping(nv, p->damping, v, tau, tau_all);
    else if (tau_all != tau)
        memcpy(tau_all, tau, sizeof(double) * nv);
    if (p->friction)
        mb_passive_friction(nv, p->friction, p->friction_velocity, v, tau_all);
    if (p->n_springs)
        mb_passive_springs(p->n_springs, p->springs, q, tau_all);
    if (p->n_tendons)
        mb_passive_tendons(nv, p, q, v, scratch, scratch + nv, tau_all);
    if (p->n_actuators)
        mb_passive_actuators(m, d, p, q, v, scratch, tau_all);
    return p->n_soft ? mb_passive_soft_stops(ma ? ma : m, d, p, q, v, fext, scratch, tau_all) : MB_OK;
}
#endif /* MB_LANE_BUILD */
