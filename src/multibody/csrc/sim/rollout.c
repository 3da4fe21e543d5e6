/* rollout.c — a whole fixed-step simulation run in C (mb.simulate's compiled loop).
 *
 * The equations are those of multibody.simulation: q̇ = v (on the configuration manifold),
 * v̇ = q̈ = FDab(q, v, τ_all, f_ext) (RBDA table 7.1, spatial_v2 FDab: mb_aba) with τ from a
 * built-in controller and the model's passive forces (passive.c, one function per law):
 *
 *   τ_all = τ − damping ⊙ v − f ⊙ tanh(v / v_s) + τ_tendons(q, v) + τ_soft(q, v)   (mb_passive_forces)
 *   f_ext = the constant forces + gravcomp_i m_i (−g) at each body's centre of mass (mb_passive_gravcomp)
 *
 * The run's tables come in the small structs of core.h (mb_control, mb_passive, mb_stops, mb_contact,
 * mb_callbacks, mb_record), one per record of simulation/rollout.py's Plan.
 *
 * A controller or force function written in Python (MB_CONTROL_CALL, r->call.forces) is called back at
 * every stage (py_rollout.c takes the GIL for the call): the loop stays here, the function's cost is
 * its own.  So is a constrained model's forward dynamics (r->call.dynamics: q̈ from τ_all and f_ext).  A
 * controller of a whole batch (MB_CONTROL_BATCH: simulate_batch's Python function of (t, Q, QD)) is
 * called once a stage with the states of all the runs still going: the batch is then one group of
 * any size, advanced in lockstep, its forward dynamics in lanes where they apply.
 *
 * Joints resting on hard stops (r->stops.n_resting, one run resumed by the Python loop after a plastic
 * impact) are held by TMT eq. (6): the tree's KKT system with a row q̈_j = 0 per resting joint, solved
 * by kkt.c (limits.py JointLimits.resting_accelerations, the same system), whose multipliers are
 * the stops' forces λ_j; after each step λ is evaluated at its end, and a step where a stop stops
 * pushing (sign·λ ≤ 0: its release event) is handed back like one that reaches a stop.
 *
 * With compliant ground contact (simulation/contact.py's GroundContact: contact.c, spatial_v2's
 * gcontact) the state carries the ground's tangential deformations z after v, ż comes with q̈, and
 * the contact forces join f_ext before gravcomp's (the Python loop's order of operations).  Another
 * contact law (a Python object's, r->contact.call) enters the same way: its states after v, its
 * forces and ż from one call back per stage.  Hard contact on the model's geoms (r->contact.hard,
 * hard_contact.c: a velocity-level time stepper, semi_implicit only) has no states: after the forward
 * dynamics each right-hand side adds the step's contact impulses, q̈ += M⁻¹Jᵀλ/h (g->h, the step's size),
 * so that semi_implicit's v₁ = v₀ + h q̈ is the stepper's v⁺.
 *
 * The steppers, on y = [q, v] and the tangent K = [v, q̈]:
 *
 *   euler          y₁ = y₀ ⊕ h·f(t₀, y₀)                            (OpenDE report eq. 5.15)
 *   semi_implicit  v₁ = v₀ + h·q̈(y₀),  q₁ = q₀ ⊕ h·v₁             (symplectic Euler)
 *   rk4            classical Runge–Kutta (report §5, eq. 5.17) when every joint has q̇ = v;
 *                  with quaternion or planar joints the commutator-free 4th-order Lie-group
 *                  method "CF4" of Celledoni, Marthinsen & Owren (2003), which is classical RK4
 *                  on vector spaces and keeps order 4 on SO(3)/SE(3).
 *   rk3            Crouch & Grossman's (1993) third-order method: an explicit Runge–Kutta method
 *                  (Butcher tableau) on vector spaces, and of order 3 on the joint groups too, its
 *                  stages composed exponentials y ⊕ h a₁k₁ ⊕ h a₂k₂ (tableau_step).
 *
 * The methods are the rows of one table, mb_steppers (below, core.h's mb_stepper): a row with a Butcher
 * tableau needs no code of its own (tableau_step takes its steps, Python its reference steps from the
 * same numbers, tests/reference_steppers.py); the three older rows keep their own stage code, dispatched by a
 * switch on the row's code, operation for operation as before.
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
 * model without gravity and no RNEA; g(q) is evaluated once per step, for the recorded τ only.  A single
 * run that records every step (no callbacks into Python, no sampled τ) evaluates it later, for the lanes'
 * width of recorded samples at a time (gravity_group: mb_gravity_torques bit for bit, about half the
 * instructions a sample), and adds it to their τ then; a g(q) that turns out non-finite rewinds the run to
 * that sample's step, whose outcome it was (MB_BAD_CONTROL), so records and outcomes stay the step-by-step ones.
 * A single run's classical RK4 steps on vector spaces, where its right-hand side calls nothing outside C
 * (fast_single), are rk4_single's: rhs's and step's statements for the one run, their finiteness checks summed
 * into one test at the step's end, and step() again where that test fails.
 *
 * The user's events (r->call.guards, one run) are watched the same way: their guards are called back after
 * each step, and a step where one crosses zero in its direction is handed back for the Python loop
 * to locate the event, fire it and hand the run back.
 *
 * Hard stops (MB_STOPS_HARD) are events with impact resets, handled by the Python loop: after
 * each step the stops' guards g = sign (q_j − pos) are evaluated and, where one goes from > 0 to
 * ≤ 0 (the event's direction −1), the step is discarded and the run handed back at its start
 * (handed_back, t_from, y_end); the Python loop takes that step, fires the impact, and resumes
 * here once no joint rests on a stop.  Steps that cross no stop never leave C.
 *
 * A batch advances its runs in groups, in lockstep: the runs of a group share the step grid (it
 * depends on t only), so every stage evaluates the controller and the passive forces run by run
 * and then the forward dynamics of the whole group in one aba_group call (aba_lanes.c: SIMD over
 * states, each lane mb_aba's result bit for bit), where the model and the run allow the lanes (no
 * f_ext or gravcomp forces, mb_lanes_supported).  Where the runs need no more than a PD with constant
 * references (or no controller), damping and hard stops, a whole RK4 step of the group runs in the
 * lanes (rk4_group, rollout_lanes.h: the same operations on states kept in lanes through the step).
 * A run that stops (end, hand-back, non-finite
 * state, error) leaves the group at that step with exactly its one-run outcome; the others go on.
 *
 * A run whose state (or q̈) turns non-finite stops at the last finite state and reports the
 * step (with hard stops: hands that step back, so the Python loop reports it); a singular model
 * or a non-finite controller output is an error (status.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/core.h"
#include "common/vec.h"
#include "sim/hard_contact.h"
#include "sim/scene_contact.h"

/* Crouch & Grossman (1993), "Numerical integration of ordinary differential equations on manifolds",
 * J. Nonlinear Sci. 3, 1–33 (Hairer, Lubich & Wanner, Geometric Numerical Integration, §IV.8.1): the
 * three-stage method of order 3 on Lie groups.  Chosen over a Störmer–Verlet for the table's first new
 * row: a multibody q̈ depends on q̇ (Coriolis, damping, a PD), where the explicit velocity Verlet is
 * neither symplectic nor of order 2, and one tableau for the whole state makes the sensitivities' Z
 * (riding as the loop's extra states) the exact derivative of the computed step on vector spaces
 * ("internal differentiation", as sensitivity.py says for rk4) with no code of their own. */
static const double CG3_A[] = {0.0, 0.0, 0.0, 3.0 / 4.0, 0.0, 0.0, 119.0 / 216.0, 17.0 / 108.0, 0.0};
static const double CG3_B[] = {13.0 / 51.0, -2.0 / 3.0, 24.0 / 17.0};
static const double CG3_C[] = {0.0, 3.0 / 4.0, 17.0 / 24.0};

/* The fixed-step methods (core.h's mb_stepper), indexed by the integrator code.  stable_decay: the
 * stability polynomial's real-axis bound (|R(−B)| = 1; limits.py's damping check). */
const mb_stepper mb_steppers[] = {
    {"euler", 1, 1, 2.0, 0, NULL, NULL, NULL, "OpenDE report eq. 5.15"},
    {"semi_implicit", 1, 1, 2.0, MB_STEP_IMPLICIT_DAMPING | MB_STEP_NEW_VELOCITY | MB_STEP_SYMPLECTIC, NULL, NULL, NULL,
     "symplectic Euler (Hairer, Lubich & Wanner, GNI §VI.3); damping implicit as MuJoCo's Euler"},
    {"rk4", 4, 4, 2.785, 0, NULL, NULL, NULL,
     "classical Runge–Kutta (OpenDE report eq. 5.17); CF4 of Celledoni, Marthinsen & Owren (2003) on groups"},
    {"rk3", 3, 3, 2.5127453266183286, 0, CG3_A, CG3_B, CG3_C,
     "Crouch & Grossman (1993); Hairer, Lubich & Wanner, GNI §IV.8.1"},
};
const int mb_n_steppers = (int)(sizeof mb_steppers / sizeof mb_steppers[0]);

/* Outcome of one right-hand-side evaluation: 0, STAGE_NON_FINITE, or a status code (> 0). */
enum { STAGE_NON_FINITE = -1 };
enum { MAX_GROUP = 8 };  /* runs advanced in lockstep (any number under a batch controller) */

/* The arrays of a group of runs: run l's part of each starts at l × its length (a state n = nq + nv + nz,
 * a tangent nk = 2 nv + nz, τ nv, f_ext 6 nb, contact forces 3 points); one run is a group of one. */
typedef struct {
    double *y, *y1, *ys, *y2;          /* states                                              */
    double *k1, *k2, *k3, *k4, *K;     /* tangents                                            */
    double *tau, *tau_all, *held;      /* first-stage τ, τ − damping ⊙ v, held τ              */
    double *tau_stage, *gq;            /* τ of the later stages (not kept), g(q)              */
    double *fext, *fcontact, *fuser;   /* f_ext with gravcomp; + contact forces; the user's   */
    double *force, *force_stage;       /* contact forces (points × 3) at the first / a later stage */
    double *contact_pos;               /* shared: contact point positions (points × 3)         */
    unsigned char *contact_flags;      /* shared: in contact, sticking (points each)          */
    void *scene_scratch;               /* shared: the scene's contact stage (in contact_flags' block) */
    double *spare;                     /* shared: unused lane outputs (nv) */
    double *deferred_gq;               /* shared: g(q) of the deferred samples (MAX_GROUP × nv) */
    double *spare_step;                /* shared: an unused lane's y₁, k₁, τ in a lanes step (2 n + nv) */
    double *passive;                   /* shared: mb_passive_forces' scratch (mb_passive_scratch_size) */
    double *kkt, *stop_force;          /* shared: the resting stops' KKT solve (2 nv² + 4 nv and the solve's work:
                                        * none without resting joints), their λ (≤ nv) */
    double *zeta;                      /* shared: −ad_v η of the sensitivities' Z (nz: a new-velocity step) */
    double *call_out;                  /* shared: the caller's contact law's [f_ext, ż] (6 nb + nz)   */
    double *block;
} workspace;

/* Runs advanced together: st[l] is run l's outcome in the current step (or evaluation); a stage
 * computes the runs that are active and still MB_OK. */
typedef struct {
    const mb_model *m, *mf;            /* the model; without gravity (a continuous PD with g(q)) or NULL */
    const mb_model *md;                /* the model FD runs on: m, or m with r->passive.implicit_armature       */
    mb_data *d;
    const mb_rollout *r;
    const mb_lanes_impl *lanes;        /* forward dynamics and g(q) of several runs at once, or NULL */
    void *dl;                          /* its workspace */
    int L, vector, have_held;          /* runs; every joint has q̇ = v; a sampled τ is held */
    int nz;                            /* contact states after [q, v]                         */
    workspace w;
    int *active, *st;                  /* (L each, like the arrays below: one block, `books`) */
    int *singular;                     /* run l's MB_SINGULAR body (status.h keeps only the last one per thread) */
    int *first_ok;                     /* a batch controller: run l's step got past its first stage (its k₁, τ) */
    unsigned posed;                    /* the busy runs (bit l: run l) whose poses the lanes' workspace holds from
                                        * one aba_group call, or 0 */
    mb_group_step lanes_step;          /* RK4 steps wholly in lanes (rk4_group) where the run allows, */
    int use_lanes_step;                /* else stage by stage */
    int *crossed, lanes_stepped;       /* after a lanes step: run l's step crosses a hard stop */
    int stage_lanes;                   /* the stages' aba_group and gravity_group take the model (not planar trees:
                                        * only rk4_group has their FDab in lanes) */
    const double **q, **v, **tau_all, **fext;  /* rhs: each run's arguments of the forward dynamics  */
    double **qdd, **gq;
    const double **call_q, **call_v;   /* a batch controller's call: the busy runs' q, v and τ, in order */
    double **call_tau;
    int *pending;                      /* mb_run_rollouts: the last sample's q̈, τ wait for the step from it */
    double *last_recorded_t, *t_end;   /* and each run's last sample time and end */
    void *books;                       /* the block of the per-run arrays above */
    double h;                          /* the step being taken (hard contact's impulses are per step) */
    mb_hard_work *hard;                /* hard contact's solve (r->contact.hard), or NULL */
    mb_scene_implicit *implicit;       /* the compliant scene's law implicit in a semi_implicit step, or NULL */
    mb_passive passive_no_soft;        /* the run's passive laws but the soft stops, which the implicit scene and
                                        * hard contact solve with their contacts (mb_scene_contact_implicit,
                                        * mb_hard_contact_stage) */
    int z_live;                        /* its contact states stepped, checked and copied on the scene's live slots
                                        * alone (live_advance) */
    int fast_single;                   /* one run's RK4 steps by rk4_single */
    int defer_g;                       /* the recorded τ's g(q) later, in lanes (one run: flush_gravity) */
    int n_deferred;                    /* samples whose τ waits for its g(q): rows deferred[0 … n_deferred) */
    long deferred[MAX_GROUP];
    double *stop_out;                  /* one step of one run with resting stops: their λ at its start, or NULL */
} group;

/* The group's per-run arrays for L runs, in one block (zeroed); MB_NO_MEMORY if there is no room. */
static int books_new(group *g, int L)
{
    const size_t ints = 6 * (size_t)L, pointers = 9 * (size_t)L, numbers = 2 * (size_t)L;
    char *b = calloc(1, numbers * sizeof(double) + pointers * sizeof(double *) + ints * sizeof(int));
    if (!(g->books = b))
        return MB_NO_MEMORY;
    g->last_recorded_t = (double *)b, g->t_end = (double *)b + L;  /* the widest first: their alignment */
    double **p = (double **)(b + numbers * sizeof(double));
    g->q = (const double **)p, g->v = (const double **)p + L, g->tau_all = (const double **)p + 2 * L;
    g->fext = (const double **)p + 3 * L, g->qdd = p + 4 * L, g->gq = p + 5 * L;
    g->call_q = (const double **)p + 6 * L, g->call_v = (const double **)p + 7 * L, g->call_tau = p + 8 * L;
    int *i = (int *)(p + pointers);
    g->active = i, g->st = i + L, g->singular = i + 2 * L, g->first_ok = i + 3 * L, g->crossed = i + 4 * L;
    g->pending = i + 5 * L;
    return MB_OK;
}

static double *part(double *a, int l, int len)
{
    return a + (long)l * len;
}

/* dst = src.  A few numbers (a pendulum's) one by one: memcpy would reload them in wider pieces than
 * their stores wrote them, which the CPU cannot forward from its store buffer (a stall per copy on
 * the step's critical path; the empty asm keeps GCC from turning the loop back into that call).
 * Longer arrays (a robot's, whose batch runs are many at once) by memcpy, which costs fewer instructions. */
static inline void copy_numbers(double *restrict dst, const double *restrict src, long n)
{
    if (n >= 8) {
        memcpy(dst, src, sizeof(double) * n);
        return;
    }
    for (long k = 0; k < n; k++) {
        uint64_t bits;
        memcpy(&bits, src + k, sizeof bits);
        __asm__("" : "+r"(bits));
        memcpy(dst + k, &bits, sizeof bits);
    }
}

static int busy(const group *g, int l)
{
    return g->active[l] && g->st[l] == MB_OK;
}

static unsigned busy_mask(const group *g)
{
    unsigned mask = 0;
    for (int l = 0; l < g->L; l++)
        mask |= (unsigned)busy(g, l) << l;
    return mask;
}

/* A z_live run's contact states z (2 per slot) finite?  Only the scene's live slots can be anything but zero
 * (mb_scene_live_slots), so only they are read: dm_control's humanoid has 954 states, ~20 of them live, and
 * the whole array's passes (this test twice a step, the step, the copy into y) were ~10 % of its run. */
static int live_finite(const group *g, const double *z)
{
    const int *live;
    const int n = mb_scene_live_slots(g->r->contact.scene, g->w.scene_scratch, &live);
    if (n < 0)
        return mb_all_finite(z, g->nz);
    double acc = 0.0;
    for (int j = 0; j < n; j++)
        acc += z[2 * (long)live[j]] * 0.0 + z[2 * (long)live[j] + 1] * 0.0;
    return acc == 0.0;
}

/* dst = src on a z_live run's q, v and its live slots' z (the other slots are zero in both: mb_scene_live_slots) */
static void live_copy(const group *g, double *dst, const double *src)
{
    const int nqv = g->m->nq + g->m->nv, *live;
    const int n = mb_scene_live_slots(g->r->contact.scene, g->w.scene_scratch, &live);
    if (n < 0) {
        copy_numbers(dst, src, nqv + g->nz);
        return;
    }
    copy_numbers(dst, src, nqv);
    for (int j = 0; j < n; j++) {
        const long k = nqv + 2 * (long)live[j];
        dst[k] = src[k], dst[k + 1] = src[k + 1];
    }
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
    if (c->kind == MB_CONTROL_CALL)  /* the caller's function checks what it returns */
        return c->call(c->ctx, MB_CALL_CONTROL, t, q, v, tau);
    if (c->q_index) {  /* a floating base, or other joints with several dofs: kp = 0 on those */
        for (int k = 0; k < nv; k++) {
            const int qi = c->q_index[k];
            const double qr = qi < 0 ? 0.0 : n == 1 ? c->q_ref[qi] : interp_column(n, c->times, c->q_ref, m->nq, qi, t);
            const double qdr = n == 1 ? c->qd_ref[k] : interp_column(n, c->times, c->qd_ref, nv, k, t);
            const double ff = n == 1 ? c->tau_ff[k] : interp_column(n, c->times, c->tau_ff, nv, k, t);
            const double e = qi < 0 ? 0.0 : qr - q[qi];
            tau[k] = c->kp[k] * e + c->kd[k] * (qdr - v[k]) + ff;
        }
    } else if (n == 1) {  /* constant references: interp_column's answer is the one row (no call per entry) */
        const double *restrict kp = c->kp, *restrict kd = c->kd, *restrict qr = c->q_ref, *restrict qdr = c->qd_ref;
        const double *restrict ff = c->tau_ff;
        double *restrict out = tau;  /* τ is the workspace's, apart from the tables: two entries per instruction */
        for (int k = 0; k < nv; k++) {
            const double e = qr[k] - q[k];
            out[k] = kp[k] * e + kd[k] * (qdr[k] - v[k]) + ff[k];
        }
    }
    for (int k = 0; k < nv && n > 1 && !c->q_index; k++) {  /* PD on a model whose joints all have q̇ = v (nq = nv) */
        const double qr = interp_column(n, c->times, c->q_ref, m->nq, k, t);
        const double qdr = interp_column(n, c->times, c->qd_ref, nv, k, t);
        const double ff = interp_column(n, c->times, c->tau_ff, nv, k, t);
        const double e = qr - q[k];
        tau[k] = c->kp[k] * e + c->kd[k] * (qdr - v[k]) + ff;
    }
    if (gravity && c->gravity) {  /* g(q): the joint forces that hold the model still against gravity */
        mb_gravity_torques(m, d, q, 0, w->gq);
        for (int k = 0; k < nv; k++)
            tau[k] += w->gq[k];
    }
    return mb_all_finite(tau, nv) ? MB_OK : MB_BAD_CONTROL;
}

/* Does a step from y to y1 take a hard stop's guard g = sign (q − pos) from > 0 to ≤ 0, or from exactly 0 (a
 * joint let go on its stop) to < 0 (events.py Event.crosses)? */
static int crosses_stop(const mb_rollout *r, const double *y, const double *y1)
{
    for (int s = 0; s < r->stops.n; s++) {
        const double *row = r->stops.rows + 4 * s;
        const int qi = (int)row[0];
        const double g0 = row[3] * (y[qi] - row[2]), g1 = row[3] * (y1[qi] - row[2]);
        if ((g0 > 0.0 && g1 <= 0.0) || (g0 == 0.0 && g1 < 0.0))
            return 1;
    }
    return 0;
}

/* Does a guard go from g0 to g1 across zero in its event's direction (events.py Event.crosses)? */
static int crosses_guard(const mb_rollout *r, const double *g0, const double *g1)
{
    for (int e = 0; e < r->call.n_guards; e++) {
        const int down = (g0[e] > 0.0 && g1[e] <= 0.0) || (g0[e] == 0.0 && g1[e] < 0.0),
                  up = (g0[e] < 0.0 && g1[e] >= 0.0) || (g0[e] == 0.0 && g1[e] > 0.0);
        if (r->call.directions[e] < 0 ? down : r->call.directions[e] > 0 ? up : (down || up))
            return 1;
    }
    return 0;
}

/* out[l] = kernel(q[l], qd[l], x[l]) for the busy runs l of the group, the lanes' width at a time
 * (a lane without a run repeats another's inputs into the spare output); 0 if a call failed.
 * qd may be NULL (the kernel gets NULL: gravity_group's "the poses are there"). */
typedef int (*lanes_kernel)(const mb_model *m, void *d, const double *const *q, const double *const *qd,
                            const double *const *x, double *const *out);

static int through_lanes(group *g, const mb_model *m, lanes_kernel kernel, const double *const *q,
                         const double *const *qd, const double *const *x, double *const *out)
{
    const int W = g->lanes->width;
    const double *lq[MAX_GROUP], *lqd[MAX_GROUP], *lx[MAX_GROUP];
    double *lout[MAX_GROUP];
    int l = 0;
    while (l < g->L) {
        int s = 0, first = -1;
        for (; l < g->L && s < W; l++)
            if (busy(g, l)) {
                if (first < 0)
                    first = l;
                lq[s] = q[l], lqd[s] = qd ? qd[l] : NULL, lx[s] = x[l], lout[s] = out[l];
                s++;
            }
        if (first < 0)
            break;
        for (; s < W; s++)
            lq[s] = q[first], lqd[s] = qd ? qd[first] : NULL, lx[s] = x[first], lout[s] = g->w.spare;
        if (kernel(m, g->dl, lq, qd ? lqd : NULL, lx, lout) != MB_OK)
            return 0;
    }
    return 1;
}

static int count_busy(const group *g)
{
    int c = 0;
    for (int l = 0; l < g->L; l++)
        c += busy(g, l);
    return c;
}

/* q̈ = FDab(ma, q, v, τ_all, f_ext) of every busy run: all in the lanes, or (without lanes, or when a
 * lane failed, to know which run) run by run; a failing run's status goes to st. */
/* run l's q̈ by ABA (forward_dynamics' for one run; a singular model's body located) */
static void forward_dynamics_one(group *g, const mb_model *ma, int l, const double *q, const double *v,
                                 const double *tau, const double *fext, double *qdd)
{
    g->st[l] = ma->planar && !fext ? mb_aba_planar(ma, g->d, q, v, tau, qdd)  /* mb_aba's choice */
                                   : mb_aba(ma, g->d, q, v, tau, fext, qdd);
    if (g->st[l] == MB_SINGULAR)
        g->singular[l] = mb_singular_take().body;
}

static void forward_dynamics(group *g, const mb_model *ma, const double *const *q, const double *const *v,
                             const double *const *tau_all, const double *const *fext, double *const *qdd)
{
    g->posed = 0;
    const int busy_runs = g->dl && g->stage_lanes ? count_busy(g) : 0;
    if (busy_runs > 1 && through_lanes(g, ma, g->lanes->aba_group, q, v, tau_all, qdd)) {
        if (busy_runs <= g->lanes->width && g->L <= MAX_GROUP)  /* one call: its poses stay in the workspace */
            g->posed = busy_mask(g);
        return;
    }
    for (int l = 0; l < g->L; l++)
        if (busy(g, l))
            forward_dynamics_one(g, ma, l, q[l], v[l], tau_all[l], fext[l], qdd[l]);
}

/* q̈ with the resting joints held, q̈_j = 0, by TMT eq. (6) — the KKT system of the tree with one row
 * e_jᵀ q̈ = 0 per resting joint, H and C from CRBA and RNEA (HandC), solved by kkt.c's range-space
 * method on H's tree-sparse factor (mb_kkt_solve_tree: dense, tiago_dual's 107 dofs took a third of a run
 * whose stop events take one compiled step each) — and their stops' forces λ into w->stop_force (one run:
 * L = 1).  The system of limits.py's JointLimits.resting_accelerations (hand_c, then solve_constrained), so
 * a run with resting joints agrees with that statement to rounding, its release λ = 0 included. */
__attribute__((noinline)) static void resting_dynamics(group *g, const double *const *q, const double *const *v,
                             const double *const *tau_all, const double *const *fext, double *const *qdd)
{
    const mb_rollout *r = g->r;
    const int nv = g->m->nv, nr = r->stops.n_resting;
    workspace *w = &g->w;
    double *H = w->kkt, *J = H + (long)nv * nv, *C = J + (long)nv * nv, *d = C + nv, *zero = d + nv, *rhs = zero + nv,
           *work = rhs + nv;
    for (int l = 0; l < g->L; l++) {
        if (!busy(g, l))
            continue;
        memset(zero, 0, sizeof(double) * nv);
        memset(rhs, 0, sizeof(double) * nr);
        memset(J, 0, sizeof(double) * (size_t)nr * nv);
        for (int k = 0; k < nr; k++)
            J[(long)k * nv + r->stops.resting_v[k]] = 1.0;
        mb_crba(g->md, g->d, q[l], H);
        mb_rnea(g->md, g->d, q[l], v[l], zero, fext[l], C);
        for (int k = 0; k < nv; k++)
            d[k] = tau_all[l][k] - C[k];
        const int st = mb_kkt_solve_tree(nv, g->m->dof_parent, nr, H, d, J, rhs, 1e-13, 1e-10, qdd[l], w->stop_force,
                                         work);
        if (st != MB_KKT_OK) {  /* (limits.py: a ConstraintError) */
            g->st[l] = st == MB_KKT_NO_MEMORY ? MB_NO_MEMORY : MB_SINGULAR;
            continue;
        }
        for (int k = 0; k < nr; k++)  /* exactly zero: a resting joint does not creep off its stop */
            qdd[l][r->stops.resting_v[k]] = 0.0;
    }
}

/* Does a resting joint's stop stop pushing (sign·λ ≤ 0, or λ not a number) at the state the last
 * right-hand side saw? */
static int stop_releases(const group *g)
{
    for (int k = 0; k < g->r->stops.n_resting; k++)
        if (!(g->r->stops.resting_sign[k] * g->w.stop_force[k] > 0.0))
            return 1;
    return 0;
}

/* g(q) = RNEA(q, 0, 0) of every busy run into gq[l] (mb_gravity_torques; the lanes' is its bit for bit).
 * Called right after the forward dynamics at the same q: a run alone has its poses in g->d already
 * (mb_aba's, but for planar trees, which keep other numbers there), and so has the lanes' workspace
 * when one aba_group call took the same busy runs (the same lanes). */
static void gravity_torques(group *g, const double *const *q, double *const *gq)
{
    const int posed = g->posed && g->posed == busy_mask(g);
    if (g->dl && g->stage_lanes && count_busy(g) > 1 &&
        through_lanes(g, g->m, g->lanes->gravity_group, q, posed ? NULL : q, q, gq))
        return;
    for (int l = 0; l < g->L; l++)
        if (busy(g, l))
            mb_gravity_torques(g->m, g->d, q[l], g->L == 1 && !g->m->planar, gq[l]);
}

/* A batch controller's τ at (t, Y) of every busy run into its part of TAU, in one call with the runs in
 * order.  Runs whose stage state is not finite leave first (STAGE_NON_FINITE; the accepted state w->y
 * was checked), as rhs would leave them; a failed call stops every run it was for. */
static void batch_control(group *g, double t, double *Y, double *TAU)
{
    const int nq = g->m->nq, nv = g->m->nv, n = nq + nv + g->nz;
    int count = 0;
    for (int l = 0; l < g->L; l++) {
        if (!busy(g, l))
            continue;
        const double *y = part(Y, l, n);
        if (Y != g->w.y && !mb_all_finite(y, n)) {
            g->st[l] = STAGE_NON_FINITE;
            continue;
        }
        g->call_q[count] = y, g->call_v[count] = y + nq, g->call_tau[count] = part(TAU, l, nv);
        count++;
    }
    const mb_control *c = &g->r->control;
    const int st = count ? c->batch(c->ctx, t, count, g->call_q, g->call_v, g->call_tau) : MB_OK;
    for (int l = 0; l < g->L && st != MB_OK; l++)
        if (busy(g, l))
            g->st[l] = st;
}

/* (A new part of a run's right-hand side goes here and into the conditions of the lean paths that leave
 * it out: fast_single's (rk4_single), defer_g's and rk4_group's, in mb_run_rollouts.)
 * f(t, y) -> K = [v, q̈] and the controller's τ of every busy run (run l's y, K, τ are its parts of
 * Y, KK, TAU); with g->mf and no held τ the PD's g(q) cancels the model's gravity, so ABA runs on
 * the model without gravity and τ gets its g(q) only when `full_tau` (the stage whose τ is
 * recorded).  A run's failure (STAGE_NON_FINITE or a status) goes to its st; the others go on. */
static void rhs(group *g, double t, double *Y, double *KK, double *TAU, int full_tau)
{
    const mb_model *m = g->m;
    const mb_rollout *r = g->r;
    workspace *w = &g->w;
    const int nq = m->nq, nv = m->nv, nz = g->nz, n = nq + nv + nz, nk = 2 * nv + nz;
    const int cancel = g->mf && !g->have_held;
    /* the compliant scene's law implicit in a semi_implicit step on the tree's own dynamics: one CRBA serves the
     * soft stops, the forward dynamics and the implicit correction (mb_scene_contact_implicit does the forward
     * dynamics, on M's factors, in place of ABA) */
    const int one_inertia = g->implicit && !r->call.dynamics && !r->stops.n_resting && !cancel;
    /* hard contact on the tree's own dynamics: the stage's CRBA and LTL factor, which the Delassus operator needs,
     * give the free acceleration too (RNEA on its right-hand side), in place of ABA; a step without rows runs ABA */
    const int hard_fd = r->contact.hard && !r->call.dynamics && !r->stops.n_resting && !cancel;
    const double **q = g->q, **v = g->v, **tau_all = g->tau_all, **fext = g->fext;
    double **qdd = g->qdd, **gq = g->gq;
    if (r->control.kind == MB_CONTROL_BATCH && !g->have_held)
        batch_control(g, t, Y, TAU);
    for (int l = 0; l < g->L; l++) {
        if (!busy(g, l))
            continue;
        const double *y = part(Y, l, n);
        double *tau = part(TAU, l, nv), *K = part(KK, l, nk);
        q[l] = y, v[l] = y + nq;
        if (Y != w->y && !mb_all_finite(y, n)) {  /* the accepted state w->y was checked (its start, or as y1) */
            g->st[l] = STAGE_NON_FINITE;
            continue;
        }
        if (g->have_held)
            memcpy(tau, part(w->held, l, nv), sizeof(double) * nv);
        else if (r->control.kind != MB_CONTROL_BATCH &&  /* (a batch controller's τ is there already) */
                 (g->st[l] = control(m, g->d, w, &r->control, t, q[l], v[l], !cancel, tau)) != MB_OK)
            continue;
        fext[l] = r->fext;
        if (r->call.forces) {  /* the user's forces, their constant part included */
            double *f = part(w->fuser, l, 6 * m->nb);
            if ((g->st[l] = r->call.forces(r->call.forces_ctx, MB_CALL_FORCES, t, q[l], v[l], f)) != MB_OK)
                continue;
            fext[l] = f;
        }
        if (r->contact.ground || (r->contact.scene && !r->contact.hard) || r->contact.call) {  /* f_ext = the user's + contact forces; ż after q̈ */
            const int nb6 = 6 * m->nb;
            double *f = part(w->fcontact, l, nb6), *zdot = K + 2 * nv;
            if (r->contact.ground) {
                double *force = full_tau ? part(w->force, l, 3 * r->contact.ground->npt) : w->force_stage;
                mb_ground_contact(m, g->d, q[l], v[l], y + nq + nv, r->contact.ground, f, zdot, force, w->contact_pos,
                                  w->contact_flags, w->contact_flags + r->contact.ground->npt);
            } else if (r->contact.scene) {  /* the model's geoms (scene_contact.c) */
                double *force = full_tau ? part(w->force, l, 3 * r->contact.scene_slots) : w->force_stage;
                const double hz = r->contact.implicit_dt > 0.0 ? r->contact.implicit_dt : g->h;  /* (the implicit's h) */
                const double zscale = g->implicit ? r->contact.D / (r->contact.D + hz * r->contact.K) : 1.0;
                if (mb_scene_contact_stage(m, g->d, q[l], v[l], r->contact.scene, r->contact.K, r->contact.D, zscale,
                                           y + nq + nv, f, zdot, force, w->scene_scratch) != 0) {
                    g->st[l] = MB_OVERFLOW;  /* (mb_scene_check found a collider for every pair) */
                    continue;
                }
            } else {  /* the caller's law: [f_ext, ż] in one call */
                if ((g->st[l] = r->contact.call(r->contact.ctx, t, q[l], v[l], y + nq + nv, w->call_out)) != MB_OK)
                    continue;
                memcpy(f, w->call_out, sizeof(double) * nb6);
                memcpy(zdot, w->call_out + nb6, sizeof(double) * nz);
            }
            if (!mb_all_finite(f, nb6) || !(g->z_live ? live_finite(g, zdot) : mb_all_finite(zdot, nz))) {
                g->st[l] = STAGE_NON_FINITE;
                continue;
            }
            if (fext[l])
                for (int k = 0; k < nb6; k++)
                    f[k] = fext[l][k] + f[k];
            fext[l] = f;
        }
        if (r->passive.gc_lift) {  /* passive.c: gravcomp acts as f_ext */
            double *f = part(w->fext, l, 6 * m->nb);
            mb_passive_gravcomp(m, g->d, &r->passive, q[l], fext[l], f);
            fext[l] = f;
        }
        tau_all[l] = tau;
        /* (posed: the scene's stage posed the bodies at q[l] above, tree and world, and every computation since is
         * at q[l] too) */
        if (one_inertia)
            mb_scene_implicit_inertia(g->implicit, m, g->md, g->d, q[l], 1);
        if (mb_passive_joint_forces(&r->passive)) {  /* passive.c: damping, friction, tendons, soft stops */
            double *ta = part(w->tau_all, l, nv);
            /* (the compliant scene implicit in the step and hard contact solve the soft stops with the contacts) */
            const mb_passive *laws = g->implicit || r->contact.hard ? &g->passive_no_soft : &r->passive;
            tau_all[l] = ta;
            if ((g->st[l] = mb_passive_forces(m, g->d, laws, q[l], v[l], tau, cancel ? g->mf : m, fext[l],
                                              w->passive, ta)) != MB_OK)
                continue;
        }
        copy_numbers(K, v[l], nv);
        qdd[l] = K + nv;
    }
    g->posed = 0;  /* (forward_dynamics sets it when the lanes leave their poses) */
    if (r->call.dynamics) {  /* the caller's (a constrained model's) */
        for (int l = 0; l < g->L; l++)
            if (busy(g, l))
                g->st[l] = r->call.dynamics(r->call.dynamics_ctx, t, q[l], v[l], tau_all[l], fext[l], qdd[l]);
    } else if (r->stops.n_resting)
        resting_dynamics(g, q, v, tau_all, fext, qdd);
    else if (!one_inertia && !hard_fd)
        forward_dynamics(g, cancel ? g->mf : g->md, q, v, tau_all, fext, qdd);
    if (r->contact.hard)  /* the step's contact impulses into q̈ (hard_contact.c) */
        for (int l = 0; l < g->L; l++) {
            if (!busy(g, l) || (!hard_fd && !mb_all_finite(qdd[l], nv)))
                continue;
            double *force = full_tau ? part(w->force, l, 3 * r->contact.scene_slots) : w->force_stage;
            int st = mb_hard_contact_stage(m, g->md, g->d, q[l], v[l], qdd[l], g->h, &r->contact, force, g->hard, l,
                                           hard_fd ? tau_all[l] : NULL, hard_fd ? fext[l] : NULL, r->passive.n_soft,
                                           r->passive.soft);
            /* no rows: ABA alone; M not factored: ABA names the body */
            if (st == MB_HARD_NO_ROWS || (hard_fd && st == MB_SINGULAR)) {
                forward_dynamics_one(g, g->md, l, q[l], v[l], tau_all[l], fext[l], qdd[l]);
                if (st == MB_HARD_NO_ROWS)
                    continue;
                st = g->st[l] == MB_OK ? st : g->st[l];
            }
            if (st != MB_OK)
                g->st[l] = st < 0 ? MB_OVERFLOW : st;  /* (−1: mb_scene_check found a collider for every pair) */
        }
    if (g->implicit)  /* the compliant scene's law implicit in the semi_implicit step (scene_contact.c), on the
         * tree's M: a constrained model's rows (their Baumgarte terms) restore what the correction moves; joints
         * resting on stops stay held (q̈ = 0: the correction on the free joints' block).  Linearised over the
         * run's dt (contact.implicit_dt), also in the partial steps that locate an event, as the implicit
         * damping in g->md is and as SceneContact.implicit_step is */
        for (int l = 0; l < g->L; l++) {
            if (!busy(g, l) || (!one_inertia && !mb_all_finite(qdd[l], nv)))
                continue;
            double *force = full_tau ? part(w->force, l, 3 * r->contact.scene_slots) : w->force_stage;
            const int st = mb_scene_contact_implicit(m, g->md, g->d, q[l], v[l], one_inertia ? tau_all[l] : NULL,
                                                     one_inertia ? fext[l] : NULL, qdd[l], part(KK, l, nk) + 2 * nv,
                                                     r->contact.implicit_dt > 0.0 ? r->contact.implicit_dt : g->h,
                                                     r->contact.scene, r->contact.K, r->contact.D,
                                                     r->stops.resting_v, r->stops.n_resting,
                                                     r->stops.n_resting ? w->stop_force : NULL, r->passive.n_soft,
                                                     r->passive.soft, force, w->scene_scratch, g->implicit);
            if (st != MB_OK)
                g->st[l] = st;
            if (st == MB_SINGULAR)  /* (its forward dynamics, where it did them, located the body as ABA does) */
                g->singular[l] = mb_singular_take().body;
        }
    for (int l = 0; l < g->L; l++)
        if (busy(g, l) && !mb_all_finite(qdd[l], nv))
            g->st[l] = STAGE_NON_FINITE;
    if (g->stop_out && Y == w->y)  /* one step's start: its resting stops' forces (one run), the caller's */
        memcpy(g->stop_out, w->stop_force, sizeof(double) * (size_t)r->stops.n_resting);
    if (full_tau && Y == w->y && (r->control.kind == MB_CONTROL_BATCH || g->defer_g))  /* a step's first stage:
                                                                  * the start's k₁, τ (deferred: its g(q) is due) */
        for (int l = 0; l < g->L; l++)
            g->first_ok[l] = busy(g, l);
    if (!(cancel && full_tau) || g->defer_g)  /* (deferred: τ_pd now, + g(q) in flush_gravity) */
        return;
    for (int l = 0; l < g->L; l++)  /* the recorded τ is the controller's: τ_pd + g(q) */
        gq[l] = part(w->gq, l, nv);
    gravity_torques(g, q, gq);
    for (int l = 0; l < g->L; l++) {
        if (!busy(g, l))
            continue;
        double *tau = part(TAU, l, nv);
        for (int k = 0; k < nv; k++)
            tau[k] += gq[l][k];
        if (!mb_all_finite(tau, nv))
            g->st[l] = MB_BAD_CONTROL;
    }
}

/* out = y ⊕ h·K: q on the manifold with velocity K[:nv], v and z by addition (out must not alias y). */
static void advance(const mb_model *m, int vector, int nz, const double *restrict y, const double *restrict K, double h,
                    double *restrict out)
{  /* (restrict: the element-wise loops run two numbers an instruction, each number's operations unchanged) */
    const int nq = m->nq, nv = m->nv;
    if (vector) {
        for (int k = 0; k < nq + nv + nz; k++)
            out[k] = y[k] + h * K[k];
        return;
    }
    mb_integrate(m, y, K, h, out);
    const double *restrict yv = y + nq, *restrict Kv = K + nv;  /* v and z: the contact law's states are most */
    double *restrict ov = out + nq;
    for (long k = 0; k < (long)nv + nz; k++)
        ov[k] = yv[k] + h * Kv[k];
}

/* A z_live run's semi_implicit step y1 = y ⊕ h·[K, k1's v̇ and ż]: advance on q and v (K holds the new velocity,
 * then k1's v̇), its contact states on the scene's live slots alone: the others are zero in y, y1 and ż
 * (mb_scene_live_slots), and stay so. */
static void live_advance(const group *g, const double *restrict y, double *restrict K,
                         const double *restrict k1, double h, double *restrict y1)
{
    const mb_model *m = g->m;
    const int nq = m->nq, nv = m->nv, *live;
    for (int k = nv; k < 2 * nv; k++)
        K[k] = k1[k];
    advance(m, g->vector, 0, y, K, h, y1);  /* q and v */
    const double *z = y + nq + nv, *zd = k1 + 2 * nv;
    double *z1 = y1 + nq + nv;
    const int n = mb_scene_live_slots(g->r->contact.scene, g->w.scene_scratch, &live);
    if (n < 0)
        for (int k = 0; k < g->nz; k++)
            z1[k] = z[k] + h * zd[k];
    for (int j = 0; j < n; j++)
        for (long k = 2 * (long)live[j]; k < 2 * (long)live[j] + 2; k++)
            z1[k] = z[k] + h * zd[k];
}

/* ys = y + c·K of every busy run (vector spaces: nq = nv, so a state and a tangent have one length). */
static inline __attribute__((always_inline)) void stage_state(group *g, double c, const double *KK)
{
    const int n = g->m->nq + g->m->nv + g->nz;
    for (int l = 0; l < g->L; l++) {
        if (!busy(g, l))
            continue;
        const double *restrict y = part(g->w.y, l, n), *restrict K = KK + (long)l * n;
        double *restrict ys = part(g->w.ys, l, n);  /* three separate arrays: no overlap tests */
        for (int k = 0; k < n; k++)
            ys[k] = y[k] + c * K[k];
    }
}

/* out = y + h·Σⱼ coef[j]·k_j (j < terms, zero coefficients skipped, summed left to right) of run l; on
 * joint groups y ⊕ h coef[0] k₀ ⊕ h coef[1] k₁ ⊕ … (Crouch–Grossman), through the scratch states
 * s0, s1 (neither is out).  tests/reference_steppers.py's tableau stepper does the same operations. */
static void tableau_state(group *g, int l, const double *coef, int terms, double *const *k, double h,
                          const double *y, double *out, double *s0, double *s1)
{
    const mb_model *m = g->m;
    const int nq = m->nq, nv = m->nv, nz = g->nz, n = nq + nv + nz, nk = 2 * nv + nz;
    if (g->vector) {  /* n = nk */
        double *restrict K = part(g->w.K, l, nk);
        int first = 1;
        for (int j = 0; j < terms; j++) {
            if (coef[j] == 0.0)
                continue;
            const double *restrict kj = part(k[j], l, nk);
            for (int i = 0; i < nk; i++)
                K[i] = first ? coef[j] * kj[i] : K[i] + coef[j] * kj[i];
            first = 0;
        }
        if (first)
            memcpy(out, y, sizeof(double) * n);
        else
            for (int i = 0; i < n; i++)
                out[i] = y[i] + h * K[i];
        return;
    }
    int left = 0;
    for (int j = 0; j < terms; j++)
        left += coef[j] != 0.0;
    const double *from = y;
    if (!left)
        memcpy(out, y, sizeof(double) * n);
    for (int j = 0; j < terms; j++) {
        if (coef[j] == 0.0)
            continue;
        double *to = --left == 0 ? out : from == s0 ? s1 : s0;
        advance(m, 0, nz, from, part(k[j], l, nk), coef[j] * h, to);
        from = to;
    }
}

/* One step of an explicit Runge–Kutta row of mb_steppers (its tableau; k₁ is taken): stage i at
 * y + h Σⱼ a_ij k_j and t + c_i h, then y₁ = y + h Σⱼ b_j k_j (on groups the exponentials composed).
 * Not inlined: inside step() it cost the older rows 8 instructions a step (callgrind), outside it 3. */
__attribute__((noinline)) static void tableau_step(group *g, const mb_stepper *s, double t, double h)
{
    workspace *w = &g->w;
    const mb_model *m = g->m;
    const int n = m->nq + m->nv + g->nz, S = s->stages;
    double *const k[MB_MAX_STAGES] = {w->k1, w->k2, w->k3, w->k4};
    for (int i = 1; i <= S; i++) {
        const int last = i == S;
        const double *coef = last ? s->b : s->a + (long)i * S;
        double *out = last ? w->y1 : w->ys, *s1 = last ? w->ys : w->y1;  /* (y₁ is free until the last) */
        for (int l = 0; l < g->L; l++)
            if (busy(g, l))
                tableau_state(g, l, coef, i, k, h, part(w->y, l, n), part(out, l, n), part(w->y2, l, n),
                              part(s1, l, n));
        if (!last)
            rhs(g, t + s->c[i] * h, w->ys, k[i], w->tau_stage, 0);
    }
}

/* out = −ad_v η (nv × cols, row-major) of the tangent rows η (nv × cols): ∂η̇/∂η of the sensitivities'
 * kinematic rows (sensitivity.py kinematic_block) — zero on joints with q̇ = v, −[ω]× on SO(3), −ad of
 * the twist [ω; u] on SE(3), and on SE(2) with v = [vx, vy, ω]: (ω J η_u − η_θ J u, 0). */
static void minus_ad(const mb_model *m, const double *v, const double *eta, int cols, double *out)
{
    memset(out, 0, sizeof(double) * (size_t)m->nv * cols);
    for (int i = 0; i < m->nb; i++) {
        const int jt = m->jtype[i], vs = m->v_start[i];
        if (mb_joint_is_vector(jt))
            continue;
        const double *w = v + vs;
        for (int c = 0; c < cols; c++) {
            const double *e = eta + (long)vs * cols + c;  /* e[k · cols]: row vs + k */
            double *o = out + (long)vs * cols + c;
#define E(k) e[(long)(k) * cols]
#define O(k) o[(long)(k) * cols]
            if (jt == MB_PLANAR) {
                O(0) = w[2] * E(1) - w[1] * E(2);
                O(1) = -w[2] * E(0) + w[0] * E(2);
                continue;
            }
            for (int b = 0; b < (jt == MB_FREE ? 2 : 1); b++) {  /* −ω × η_block, and on SE(3) −u × η_ω */
                const double *x = b ? w + 3 : w;                /* into the lower block: −[u]× η_ω − [ω]× η_u */
                O(3 * b + 0) += -(x[1] * E(2) - x[2] * E(1));
                O(3 * b + 1) += -(x[2] * E(0) - x[0] * E(2));
                O(3 * b + 2) += -(x[0] * E(1) - x[1] * E(0));
                if (b)
                    O(3) += -(w[1] * E(5) - w[2] * E(4)), O(4) += -(w[2] * E(3) - w[0] * E(5)),
                        O(5) += -(w[0] * E(4) - w[1] * E(3));
            }
#undef E
#undef O
        }
    }
}

/* A new-velocity step's tangent for the sensitivities' Z riding in the contact law's states (one run):
 * K's δv rows hold the rates Ż_δv; the η rows become −ad_{v₁} η + δv₁ with v₁ = K[:nv] the step's new
 * velocity and δv₁ = δv + h Ż_δv, so η₁ = η + h (−ad_{v₁} η + δv₁) (sensitivity.py's semi_implicit, its
 * η taking the new δv as q takes the new v). */
__attribute__((noinline)) static void new_velocity_eta(group *g, const double *y, double *K, double h)
{
    const mb_model *m = g->m;
    const int nv = m->nv, cols = g->r->call.z_columns;
    const long off = m->nq + nv + g->r->call.z_law, koff = 2L * nv + g->r->call.z_law, rows = (long)nv * cols;
    const double *eta = y + off, *dv = y + off + rows;
    double *Keta = K + koff;
    const double *Kdv = K + koff + rows;
    if (!g->vector) {
        double *ad = g->w.zeta;
        minus_ad(m, K, eta, cols, ad);
        for (long k = 0; k < rows; k++)
            Keta[k] = ad[k] + (dv[k] + h * Kdv[k]);
        return;
    }
    for (long k = 0; k < rows; k++)
        Keta[k] = dv[k] + h * Kdv[k];
}

/* One step from (t, y) of size h into y1 for every active run; k1 and τ hold the first stage.  The
 * stages are those of one run, run by run, with each stage's right-hand sides evaluated together. */
static void step(group *g, double t, double h)
{
    const mb_model *m = g->m;
    workspace *w = &g->w;
    const int nq = m->nq, nv = m->nv, nz = g->nz, n = nq + nv + nz, nk = 2 * nv + nz, L = g->L;
    const int vector = g->vector;
#define EACH(l) for (int l = 0; l < L; l++) if (busy(g, l))
#define Y(a, l) part(w->a, l, n)
#define T(a, l) part(w->a, l, nk)
    g->h = h;
    rhs(g, t, w->y, w->k1, w->tau, 1);
    switch (g->r->integrator) {  /* the rows with their own stage code, then the tableaus' */
    case MB_EULER:
        EACH(l) advance(m, vector, nz, Y(y, l), T(k1, l), h, Y(y1, l));
        break;
    case MB_SEMI_IMPLICIT:
        EACH(l) {
            const double *y = Y(y, l), *k1 = T(k1, l);
            double *K = T(K, l);
            for (int k = 0; k < nv; k++)
                K[k] = y[nq + k] + h * k1[nv + k];  /* the new velocity moves q */
            if (g->z_live) {
                live_advance(g, y, K, k1, h, Y(y1, l));
                continue;
            }
            for (int k = nv; k < nk; k++)
                K[k] = k1[k];
            if (g->r->call.z_columns)  /* the sensitivities' η take the new δv too */
                new_velocity_eta(g, y, K, h);
            advance(m, vector, nz, y, K, h, Y(y1, l));
        }
        break;
    case MB_RK4:
        if (vector) {
            stage_state(g, 0.5 * h, w->k1);
            rhs(g, t + 0.5 * h, w->ys, w->k2, w->tau_stage, 0);
            stage_state(g, 0.5 * h, w->k2);
            rhs(g, t + 0.5 * h, w->ys, w->k3, w->tau_stage, 0);
            stage_state(g, h, w->k3);
            rhs(g, t + h, w->ys, w->k4, w->tau_stage, 0);
            EACH(l) {
                const double *restrict y = Y(y, l), *restrict k1 = T(k1, l), *restrict k2 = T(k2, l);
                const double *restrict k3 = T(k3, l), *restrict k4 = T(k4, l);
                double *restrict y1 = Y(y1, l);
                for (int k = 0; k < n; k++)
                    y1[k] = y[k] + (h / 6.0) * (k1[k] + 2.0 * k2[k] + 2.0 * k3[k] + k4[k]);
            }
            break;
        }
        /* CF4, body-velocity (right) form: the exponentials compose on the right */
        EACH(l) advance(m, vector, nz, Y(y, l), T(k1, l), 0.5 * h, Y(y2, l));
        rhs(g, t + 0.5 * h, w->y2, w->k2, w->tau_stage, 0);
        EACH(l) advance(m, vector, nz, Y(y, l), T(k2, l), 0.5 * h, Y(ys, l));
        rhs(g, t + 0.5 * h, w->ys, w->k3, w->tau_stage, 0);
        EACH(l) {
            const double *k1 = T(k1, l), *k3 = T(k3, l);
            double *K = T(K, l);
            for (int k = 0; k < nk; k++)
                K[k] = k3[k] - 0.5 * k1[k];
            advance(m, vector, nz, Y(y2, l), K, h, Y(ys, l));
        }
        rhs(g, t + h, w->ys, w->k4, w->tau_stage, 0);
        EACH(l) {
            const double *k1 = T(k1, l), *k2 = T(k2, l), *k3 = T(k3, l), *k4 = T(k4, l);
            double *K = T(K, l);
            for (int k = 0; k < nk; k++)
                K[k] = 0.25 * k1[k] + (k2[k] + k3[k]) / 6.0 - k4[k] / 12.0;
            advance(m, vector, nz, Y(y, l), K, h, Y(ys, l));
            for (int k = 0; k < nk; k++)
                K[k] = -k1[k] / 12.0 + (k2[k] + k3[k]) / 6.0 + 0.25 * k4[k];
            advance(m, vector, nz, Y(ys, l), K, h, Y(y1, l));
        }
        break;
    default:  /* a row with a Butcher tableau (mb_steppers): the one explicit Runge–Kutta stepper */
        tableau_step(g, &mb_steppers[g->r->integrator], t, h);
    }
    EACH(l) if (g->z_live ? !mb_all_finite(Y(y1, l), nq + nv) || !live_finite(g, Y(y1, l) + nq + nv)
                          : !mb_all_finite(Y(y1, l), n)) g->st[l] = STAGE_NON_FINITE;
#undef EACH
#undef Y
#undef T
}

/* acc += x·0 for n numbers (mb_all_finite's test, summed over several arrays: 0 exactly when all are finite) */
static inline void finite_add(mb_number_pair *acc, const double *x, long n)
{
    long k = 0;
    for (; k + 2 <= n; k += 2) {
        mb_number_pair p;
        memcpy(&p, x + k, sizeof p);
        *acc += p * 0.0;
    }
    if (k < n)
        (*acc)[0] += x[k] * 0.0;
}

/* One stage of rk4_single: rhs's statements for its one run (control, the passive forces, FDab; K = [v, q̈]),
 * without rhs's checks, whose numbers go into acc instead; 0 where a status is not MB_OK. */
static inline __attribute__((always_inline)) int single_stage(group *g, double t, const double *y, double *K,
                                                              double *tau, int first, mb_number_pair *acc)
{
    const mb_model *m = g->m;
    const mb_rollout *r = g->r;
    workspace *w = &g->w;
    const int nv = m->nv, cancel = g->mf != NULL;
    const double *q = y, *v = y + m->nq;
    if (!first)
        finite_add(acc, y, 2L * nv);
    if (control(m, g->d, w, &r->control, t, q, v, !cancel, tau) != MB_OK)
        return 0;
    const double *ta = tau;
    if (mb_passive_joint_forces(&r->passive)) {
        if (mb_passive_forces(m, g->d, &r->passive, q, v, tau, cancel ? g->mf : m, NULL, w->passive,
                              w->tau_all) != MB_OK)
            return 0;
        ta = w->tau_all;
    }
    copy_numbers(K, v, nv);
    if (mb_aba(cancel ? g->mf : g->md, g->d, q, v, ta, NULL, K + nv) != MB_OK)
        return 0;
    finite_add(acc, K + nv, nv);
    if (first && cancel && !g->defer_g) {  /* rhs's gravity_torques for one run: ABA left q's poses in d */
        mb_gravity_torques(m, g->d, q, 1, w->gq);
        for (int k = 0; k < nv; k++)
            tau[k] += w->gq[k];
        finite_add(acc, tau, nv);
    }
    return 1;
}

/* step()'s classical RK4 for one run on vector spaces whose right-hand side calls nothing outside C (no
 * Python, no contact, no held τ: fast_single): the same statements in the same order, so the same numbers, with
 * the finiteness checks of rhs and step summed into one test at the end.  Where that test or a status
 * fails, step() takes the step again from y, with its checks in their places, and so its exact outcome (the
 * statements have no effects outside the workspace; their inputs are unchanged). */
static void rk4_single(group *g, double t, double h)
{
    workspace *w = &g->w;
    const int n = g->m->nq + g->m->nv;
    mb_number_pair acc = {0.0, 0.0};
    g->h = h;
    const double *restrict y = w->y;
    double *restrict ys = w->ys;
    if (!single_stage(g, t, y, w->k1, w->tau, 1, &acc))
        goto again;
    for (int k = 0; k < n; k++)
        ys[k] = y[k] + 0.5 * h * w->k1[k];
    if (!single_stage(g, t + 0.5 * h, ys, w->k2, w->tau_stage, 0, &acc))
        goto again;
    for (int k = 0; k < n; k++)
        ys[k] = y[k] + 0.5 * h * w->k2[k];
    if (!single_stage(g, t + 0.5 * h, ys, w->k3, w->tau_stage, 0, &acc))
        goto again;
    for (int k = 0; k < n; k++)
        ys[k] = y[k] + h * w->k3[k];
    if (!single_stage(g, t + h, ys, w->k4, w->tau_stage, 0, &acc))
        goto again;
    {
        const double *restrict k1 = w->k1, *restrict k2 = w->k2, *restrict k3 = w->k3, *restrict k4 = w->k4;
        double *restrict y1 = w->y1;
        for (int k = 0; k < n; k++)
            y1[k] = y[k] + (h / 6.0) * (k1[k] + 2.0 * k2[k] + 2.0 * k3[k] + k4[k]);
        finite_add(&acc, y1, n);
    }
    if (acc[0] + acc[1] == 0.0) {
        g->first_ok[0] = 1;
        return;
    }
again:
    step(g, t, h);
}

/* One RK4 step of the group wholly in lanes (rollout_lanes.h: the same operations, each run's bits);
 * where a lane fails the ABA (a singular run), the step again stage by stage, which finds the run. */
static void lanes_step(group *g, double t, double h)
{
    workspace *w = &g->w;
    const int W = g->lanes->width, n = g->m->nq + g->m->nv, nv = g->m->nv;
    const double *y[MAX_GROUP];
    double *y1[MAX_GROUP], *k1[MAX_GROUP], *tau[MAX_GROUP];
    int run[MAX_GROUP], st[MAX_GROUP], crossed[MAX_GROUP] = {0}, s = 0;
    for (int l = 0; l < g->L; l++)
        if (busy(g, l))
            y[s] = part(w->y, l, n), y1[s] = part(w->y1, l, n), k1[s] = part(w->k1, l, n), tau[s] = part(w->tau, l, nv),
            run[s++] = l;
    const int used = s;
    for (; s < W; s++)  /* lanes without a run repeat the first's state into the spare outputs */
        y[s] = y[0], y1[s] = w->spare_step, k1[s] = w->spare_step + n, tau[s] = w->spare_step + 2 * n;
    g->lanes_step.h = h;
    if (g->lanes->rk4_group(g->m, g->dl, &g->lanes_step, y, y1, k1, tau, st, crossed) != MB_OK) {
        step(g, t, h);
        return;
    }
    for (int k = 0; k < used; k++)
        g->st[run[k]] = st[k] == -1 ? STAGE_NON_FINITE : st[k], g->crossed[run[k]] = crossed[k];
    g->lanes_stepped = 1;
}

/* Keep sample `row` = (t, y); its q̈ and τ are filled later (the next step's first stage).
 * Energies are not computed here: a Trajectory computes them from q, q̇ on first access, in one
 * batched EnerMo call (MuJoCo's rollout computes none either; they cost ~20 % of an RK4 step). */
static void record(const mb_model *m, int nz, mb_rollout_out *o, double t, const double *y)
{
    const long row = o->count++;
    const int nq = m->nq, nv = m->nv;
    o->t[row] = t;
    copy_numbers(o->q + row * nq, y, nq);
    copy_numbers(o->qd + row * nv, y + nq, nv);
    /* a batch writes records of many runs at once, each its own rows: ask for the rows a few samples
     * ahead now, so the writes then find their lines in cache (a hint: never a fault, past the end too) */
    __builtin_prefetch(o->t + row + 8, 1, 1);
    __builtin_prefetch(o->q + (row + 4) * nq, 1, 1);
    __builtin_prefetch(o->qd + (row + 4) * nv, 1, 1);
    __builtin_prefetch(o->qdd + (row + 4) * nv, 1, 1);
    __builtin_prefetch(o->tau + (row + 4) * nv, 1, 1);
    if (nz)
        memcpy(o->z + row * nz, y + nq + nv, sizeof(double) * nz);
}

/* q̈, τ and the contact forces (`force`, 3 per point, or NULL) of sample `row` */
static void record_derived(const mb_model *m, const mb_rollout *r, mb_rollout_out *o, long row, const double *K,
                           const double *tau, const double *force)
{
    const int nv = m->nv;
    copy_numbers(o->qdd + row * nv, K + nv, nv);
    copy_numbers(o->tau + row * nv, tau, nv);
    const int np = mb_rollout_contact_points(r);
    if (np)
        memcpy(o->force + row * 3 * np, force, sizeof(double) * 3 * np);
}

/* The deferred samples' τ += g(q) (their rows hold the first stage's τ_pd, rhs with g->defer_g), the lanes'
 * width at a time through gravity_group (mb_gravity_torques' bits; τ_pd + g(q) as rhs adds them); the first
 * row whose τ is then not finite, or −1.  Lanes without a sample repeat the first's q. */
static long flush_gravity(group *g, mb_rollout_out *o)
{
    const int n = g->n_deferred, nq = g->m->nq, nv = g->m->nv, W = g->lanes->width;
    if (!n)
        return -1;
    g->n_deferred = 0;
    const double *q[MAX_GROUP];
    double *gq[MAX_GROUP];
    for (int s = 0; s < W; s++)
        q[s] = o->q + g->deferred[s < n ? s : 0] * nq, gq[s] = g->w.deferred_gq + (long)s * nv;
    if (!(g->dl || (g->dl = g->lanes->data_new(g->m))) ||  /* (its first call makes the workspace) */
        g->lanes->gravity_group(g->m, g->dl, q, q, q, gq) != MB_OK)
        for (int s = 0; s < n; s++)
            mb_gravity_torques(g->m, g->d, q[s], 0, gq[s]);
    long bad = -1;
    for (int s = 0; s < n; s++) {
        double *tau = o->tau + g->deferred[s] * nv;
        for (int k = 0; k < nv; k++)
            tau[k] += gq[s][k];
        if (bad < 0 && !mb_all_finite(tau, nv))
            bad = g->deferred[s];
    }
    return bad;
}

/* A step's g(q) that no recorded row waits for (the step failed later, or the records are full): is the
 * first stage's τ_pd + g(q) finite, as rhs checks it step by step?  (One run: its τ_pd in w->tau.) */
static int gravity_now_finite(group *g)
{
    const int nv = g->m->nv;
    double *gq = g->w.deferred_gq;
    mb_gravity_torques(g->m, g->d, g->w.y, 0, gq);
    for (int k = 0; k < nv; k++)
        gq[k] = g->w.tau[k] + gq[k];
    return mb_all_finite(gq, nv);
}

/* The one run back to sample `row`'s step, whose first stage's τ = τ_pd + g(q) flush_gravity found not finite:
 * the outcome step by step (that step MB_BAD_CONTROL, the run's state and samples as they were at its start:
 * the row's q̈ and τ, and the rows after it, NaN again, as py_rollout.c's nan_records left them).  1 if the run
 * was still going (the caller counts it out). */
static int rewind_to(group *g, mb_rollout_out *o, long row, int *status, long n_sample)
{
    const mb_rollout *r = g->r;
    const int nq = g->m->nq, nv = g->m->nv, was_active = g->active[0];
    const double t = o->t[row];
    status[0] = MB_BAD_CONTROL;
    for (long k = row * nv; k < (row + 1) * nv; k++)
        o->qdd[k] = o->tau[k] = NAN;
    for (long i = row + 1; i < o->count; i++) {
        o->t[i] = NAN;
        for (int k = 0; k < nq; k++)
            o->q[i * nq + k] = NAN;
        for (int k = 0; k < nv; k++)
            o->qd[i * nv + k] = o->qdd[i * nv + k] = o->tau[i * nv + k] = NAN;
    }
    o->count = row + 1;
    o->handed_back = o->non_finite = 0;
    o->t_from = t, o->t_to = fmin((double)((long)floor(t / r->dt + 1e-9) + 1) * r->dt, r->t_final);
    memcpy(g->w.y, o->q + row * nq, sizeof(double) * nq);
    memcpy(g->w.y + nq, o->qd + row * nv, sizeof(double) * nv);
    g->active[0] = 0, g->t_end[0] = t, o->n_sample_end = n_sample;
    g->last_recorded_t[0] = t, g->pending[0] = 1;
    return was_active;
}

/* The runs' ends, run l at g->t_end[l]: a diverged run keeps its last finite state (keep_last), the
 * final samples get their q̈ and τ (NaN where they are not finite), the runs that end at one time
 * together (one right-hand side: a batch controller's one call), and y_end the state where each stopped. */
static void finish(group *g, mb_rollout_out *const *o, int *status)
{
    const mb_model *m = g->m;
    const int L = g->L, nv = m->nv, nz = g->nz, n = m->nq + nv + nz, nk = 2 * nv + nz;
    const int np3 = 3 * mb_rollout_contact_points(g->r);
    int *due = g->pending;
    for (int l = 0; l < L; l++) {
        mb_rollout_out *ol = o[l];
        g->active[l] = 0;
        if (status[l] == MB_OK && ol->non_finite && g->r->record.keep_last && g->last_recorded_t[l] != g->t_end[l] &&
            ol->count < g->r->record.capacity) {
            record(m, nz, ol, g->t_end[l], part(g->w.y, l, n));
            due[l] = 1;
        }
        due[l] = status[l] == MB_OK && !ol->handed_back && due[l] && ol->t[ol->count - 1] == g->t_end[l];
    }
    for (int first = 0; first < L; first++) {
        if (!due[first])
            continue;
        const double t = g->t_end[first];
        for (int l = first; l < L; l++)
            if (due[l] && g->t_end[l] == t)
                g->active[l] = 1, g->st[l] = MB_OK, due[l] = 0;
        g->h = g->r->dt;  /* (hard contact: a final sample's impulses as over a step of dt) */
        rhs(g, t, g->w.y, g->w.k1, g->w.tau, 1);
        for (int l = first; l < L; l++) {
            if (!g->active[l])
                continue;
            g->active[l] = 0;
            double *k1 = part(g->w.k1, l, nk), *tau = part(g->w.tau, l, nv);
            double *force = np3 ? part(g->w.force, l, np3) : NULL;
            if (g->st[l] == STAGE_NON_FINITE || g->st[l] == MB_OVERFLOW) {  /* (a diverged run's last state) */
                for (int k = 0; k < nk; k++)
                    k1[k] = NAN;
                for (int k = 0; k < nv; k++)
                    tau[k] = NAN;
                for (int k = 0; k < np3; k++)
                    force[k] = NAN;
            } else if (g->st[l] != MB_OK) {
                status[l] = g->st[l], o[l]->t_from = o[l]->t_to = t;
            }
            if (status[l] == MB_OK)
                record_derived(m, g->r, o[l], o[l]->count - 1, k1, tau, force);
        }
    }
    for (int l = 0; l < L; l++)
        if (o[l]->y_end)
            memcpy(o[l]->y_end, part(g->w.y, l, n), sizeof(double) * n);
}

static int workspace_new(workspace *w, const mb_model *m, int nz, int npt, size_t scene_bytes, int L, int n_resting,
                         int n_soft)
{
    const int nq = m->nq, nv = m->nv;
    const long n = nq + nv + nz, nk = 2L * nv + nz, np3 = 3L * npt;
    const long per_run = 4L * n + 5L * nk + 5L * nv + 18L * m->nb + np3;
    /* the resting stops' KKT system (H, J, C, d, 0, rhs) and its solve's work, where joints rest */
    const long kkt = n_resting ? 2L * nv * nv + 4L * nv + mb_kkt_work_size(nv, n_resting) : 0;
    w->block = calloc((size_t)(L * per_run + 2L * nv + (long)MAX_GROUP * nv + kkt +
                               mb_passive_scratch_size(nv, n_soft) + 6L * m->nb + 2L * nz + 2L * np3 + 2L * n + nv + 1),
                      sizeof(double));
    const size_t flags = ((size_t)(2L * npt + 1) + 63) / 64 * 64;  /* the scene's scratch after, aligned */
    w->contact_flags = calloc(flags + scene_bytes, 1);
    w->scene_scratch = w->contact_flags ? w->contact_flags + flags : NULL;
    if (!w->block || !w->contact_flags) {
        free(w->block), free(w->contact_flags);
        return MB_NO_MEMORY;
    }
    double *p = w->block;
    double **run_arrays[] = {&w->y, &w->y1, &w->ys, &w->y2, &w->k1, &w->k2, &w->k3, &w->k4, &w->K, &w->tau,
                             &w->tau_all, &w->held, &w->tau_stage, &w->gq, &w->fext, &w->fcontact, &w->fuser,
                             &w->force};
    const long length[] = {n, n, n, n, nk, nk, nk, nk, nk, nv, nv, nv, nv, nv, 6L * m->nb, 6L * m->nb, 6L * m->nb, np3};
    for (int a = 0; a < (int)(sizeof length / sizeof length[0]); a++)
        *run_arrays[a] = p, p += L * length[a];
    w->force_stage = p, p += np3, w->contact_pos = p, p += np3;
    w->spare = p, p += nv, w->deferred_gq = p, p += (long)MAX_GROUP * nv;
    w->kkt = p, p += kkt, w->stop_force = p, p += nv;
    w->zeta = p, p += nz, w->call_out = p, p += 6L * m->nb + nz, w->spare_step = p, p += 2L * n + nv, w->passive = p;
    return MB_OK;
}

int mb_run_rollouts(const mb_model *m, mb_data *d, const mb_lanes_impl *lanes, const mb_rollout *r, int L,
                    const double *const *q0, const double *const *qd0, const double *const *z0,
                    mb_rollout_out *const *o, int *status)
{
    const int nq = m->nq, nv = m->nv, nz = mb_rollout_contact_states(r), n = nq + nv + nz, nk = 2 * nv + nz;
    const int np3 = 3 * mb_rollout_contact_points(r);
    if (L < 1 || (L > MAX_GROUP && r->control.kind != MB_CONTROL_BATCH))  /* else groups of the lanes' width */
        return MB_NO_MEMORY;
    group g = {m, NULL, m, d, r, NULL, NULL, L, 1, 0, nz};
    if (books_new(&g, L) != MB_OK)
        return MB_NO_MEMORY;
    if (workspace_new(&g.w, m, nz, np3 / 3, r->contact.scene ? mb_scene_stage_scratch(r->contact.scene) : 0, L,
                      r->stops.n_resting, r->passive.n_soft) != MB_OK) {
        free(g.books);
        return MB_NO_MEMORY;
    }
    for (int l = 0; l < L; l++)
        g.singular[l] = -1;
    g.h = r->dt;
    if (r->contact.hard && !(g.hard = mb_hard_work_new(m, &r->contact, L, r->passive.n_soft))) {
        free(g.w.block), free(g.w.contact_flags), free(g.books);
        return MB_NO_MEMORY;
    }
    /* the compliant scene under semi_implicit: its law implicit in the step (one run a group: the stage's
     * scratch holds the contacts of the run whose forward dynamics follow; py_rollout runs scene contact alone) */
    if (r->contact.scene && !r->contact.hard && r->integrator == MB_SEMI_IMPLICIT &&
        (L != 1 || !(g.implicit = mb_scene_implicit_new(m)))) {
        mb_hard_work_free(g.hard);
        free(g.w.block), free(g.w.contact_flags), free(g.books);
        return MB_NO_MEMORY;
    }
    if (lanes && !r->fext && !r->passive.gc_lift && !r->contact.ground && !r->contact.scene && !r->contact.call &&
        !r->call.forces && (mb_lanes_supported(m) || m->planar)) {
        g.lanes = lanes, g.stage_lanes = mb_lanes_supported(m);
        /* (a lone run of another tree takes them for its deferred g(q) only: flush_gravity makes the workspace) */
        if ((L > 1 || m->planar) && !(g.dl = lanes->data_new(m))) {
            mb_hard_work_free(g.hard), mb_scene_implicit_free(g.implicit);
            free(g.w.block), free(g.w.contact_flags), free(g.books);
            return MB_NO_MEMORY;
        }
    }
    for (int i = 0; i < m->nb; i++)
        if (!mb_joint_is_vector(m->jtype[i]))  /* joints.h: the joint table's one "plain vector" fact */
            g.vector = 0;
    g.passive_no_soft = r->passive;
    g.passive_no_soft.n_soft = 0;
    mb_model dynamics_model = *m;  /* semi_implicit's damping implicit: (M + dt·D) q̈ = τ − C − D q̇ */
    if (r->passive.implicit_armature)
        dynamics_model.armature = (double *)r->passive.implicit_armature;
    g.md = &dynamics_model;
    mb_model free_model = dynamics_model;  /* the model without gravity: a continuous PD with g(q) cancels it */
    memset(free_model.a_grav, 0, sizeof free_model.a_grav);
    memset(free_model.plnr_grav, 0, sizeof free_model.plnr_grav);
    g.mf = r->control.kind == MB_CONTROL_PD && r->control.gravity && !r->call.dynamics && !r->stops.n_resting ? &free_model
                                                                                                 : NULL;
    /* steps the Python loop takes: at a stop, at an event, or turning non-finite (it reports that) */
    const int one = r->one_step != 0.0;
    if (one && L == 1 && r->stops.n_resting && !r->call.dynamics)  /* (the KKT solve's λ: resting_dynamics) */
        g.stop_out = o[0]->stop_force;
    const mb_control *c = &r->control;
    if (g.dl && lanes->rk4_group && g.vector && r->integrator == MB_RK4 && !nz && !one && !r->call.guards &&
        !r->call.dynamics && !r->stops.n_resting && !r->passive.friction && !r->passive.n_tendons && !r->passive.n_soft &&
        !r->passive.effort &&
        !r->passive.n_springs && !r->passive.n_actuators &&
        lanes->width <= MAX_GROUP && nv <= 64 && (L > 1 || m->planar) &&  /* (a lone run of another tree: scalar,
                                                                           * faster; py_rollout.c single_run_lanes) */
        (c->kind == MB_CONTROL_NONE ||
         (c->kind == MB_CONTROL_PD && c->n_times == 1 && !c->q_index && c->period <= 0.0 && (!c->gravity || g.mf)))) {
        const int pd = c->kind == MB_CONTROL_PD;
        g.lanes_step = (mb_group_step){g.mf ? g.mf : g.md, 0.0, pd ? c->kp : NULL, c->kd, c->q_ref, c->qd_ref, c->tau_ff,
                                       r->passive.damping, g.mf != NULL, r->stops.n ? r->stops.rows : NULL,
                                       r->stops.n};
        g.use_lanes_step = 1;
    }
    /* a single run that records every step, with nothing in it that calls back into Python: the recorded τ's
     * g(q) in lanes, several samples at a time (flush_gravity) */
    g.defer_g = g.mf && L == 1 && g.lanes && g.stage_lanes && !g.use_lanes_step && lanes->width <= MAX_GROUP &&
                c->period <= 0.0 && !one && r->record.record_every == 1 && !nz && !r->call.guards && !r->call.forces &&
                !r->contact.hard && !g.implicit;
    g.fast_single = L == 1 && g.vector && !m->planar && r->integrator == MB_RK4 && !nz && !one && !g.use_lanes_step &&
                    (c->kind == MB_CONTROL_PD || c->kind == MB_CONTROL_NONE) && c->period <= 0.0 && !r->fext &&
                    !r->call.forces && !r->call.dynamics && !r->stops.n_resting && !r->contact.ground &&
                    !r->contact.scene && !r->contact.call && !r->contact.hard && !r->passive.gc_lift && !g.implicit;
    /* the law implicit keeps the scene's live list exact at the states the steps start from (mb_scene_live_slots);
     * a resting stop's stage at y₁ would prune it there, the sensitivities' η read every state */
    g.z_live = g.implicit && L == 1 && !r->stops.n_resting && !r->call.z_columns;
    const int hard = !one && (r->stops.n || r->call.guards);
    double *guard0 = NULL, *guard1 = NULL;  /* the user's guards at the step's start and end (one run) */
    if (r->call.guards) {
        if (L != 1 || !(guard0 = malloc(sizeof(double) * 2 * (size_t)(r->call.n_guards + 1)))) {
            if (g.dl)
                lanes->data_free(g.dl);
            mb_hard_work_free(g.hard), mb_scene_implicit_free(g.implicit);
            free(g.w.block), free(g.w.contact_flags), free(g.books);
            return MB_NO_MEMORY;
        }
        guard1 = guard0 + r->call.n_guards + 1;
    }
    const double dt = r->dt, t_final = r->t_final, eps = 1e-9 * dt;
    const double period = r->control.period;
    const int sampled = r->control.kind != MB_CONTROL_NONE && period > 0.0;
    double t = r->t0, *last_recorded_t = g.last_recorded_t, *t_end = g.t_end;
    int *pending = g.pending;  /* the last sample's q̈, τ wait for the step that starts from it */
    int running = L;
    for (int l = 0; l < L; l++) {
        double *y = part(g.w.y, l, n);
        memcpy(y, q0[l], sizeof(double) * nq);
        memcpy(y + nq, qd0[l], sizeof(double) * nv);
        if (nz)
            memcpy(y + nq + nv, z0[l], sizeof(double) * nz);
        if (g.z_live)  /* y₁ = y off the live slots from here on (live_advance writes those alone) */
            memcpy(part(g.w.y1, l, n), y, sizeof(double) * n);
        o[l]->count = 0;
        o[l]->non_finite = 0;
        o[l]->handed_back = 0;
        o[l]->t_from = o[l]->t_to = 0.0;
        record(m, nz, o[l], t, y);
        last_recorded_t[l] = t, pending[l] = 1, status[l] = MB_OK, g.active[l] = 1;
    }
#define LEAVE(l) (g.active[l] = 0, t_end[l] = t, o[l]->n_sample_end = n_sample, running--)
    long n_sample = 0;
    if (sampled && r->held0) {  /* resumed after the Python loop took a step: the hold goes on */
        for (int l = 0; l < L; l++)
            memcpy(part(g.w.held, l, nv), r->held0, sizeof(double) * nv);
        g.have_held = 1;
        n_sample = r->n_sample0;
    }
    if (r->call.guards && !one && (status[0] = r->call.guards(r->call.guards_ctx, MB_CALL_GUARDS, t, q0[0], qd0[0], guard0)) != MB_OK)
        LEAVE(0);
    const double t_stop = one ? INFINITY : t_final;  /* (one step may be backwards: h < 0; it breaks after it) */
    int steps_since_poll = 0;
    while (t < t_stop && running) {
        if (r->call.interrupted && ++steps_since_poll >= MB_POLL_STEPS) {  /* Ctrl-C: every run stops here */
            steps_since_poll = 0;
            if (r->call.interrupted(r->call.interrupted_ctx)) {
                for (int l = 0; l < L; l++)
                    if (g.active[l])
                        status[l] = MB_CALLBACK_FAILED, LEAVE(l);
                break;
            }
        }
        double next_sample = INFINITY;
        if (sampled && !one) {
            if (t >= (double)n_sample * period - eps) {
                for (int l = 0; l < L; l++) {
                    double *y = part(g.w.y, l, n);
                    if (g.active[l] &&
                        (status[l] = control(m, d, &g.w, &r->control, t, y, y + nq, 1, part(g.w.held, l, nv))))
                        LEAVE(l);
                }
                g.have_held = 1;
                n_sample = (long)floor((t + eps) / period) + 1;
                if (!running)
                    break;
            }
            next_sample = (double)n_sample * period;
        }
        const long k_next = (long)floor(t / dt + 1e-9) + 1;
        double t_next = fmin((double)k_next * dt, t_final);
        if (next_sample < t_next - eps)
            t_next = next_sample;
        if (one)
            t_next = t + r->one_step;
        for (int l = 0; l < L; l++)
            g.st[l] = MB_OK;
        g.lanes_stepped = 0;
        if (g.use_lanes_step && (g.L == 1 || count_busy(&g) > 1))
            lanes_step(&g, t, t_next - t);
        else if (g.fast_single)
            rk4_single(&g, t, t_next - t);
        else
            step(&g, t, one ? r->one_step : t_next - t);
        for (int l = 0; l < L; l++) {
            if (!g.active[l])
                continue;
            mb_rollout_out *ol = o[l];
            /* dynamics that overflow from a finite state the run reached (a pivot inf − inf) have blown
             * up as a non-finite state has (System.accelerations: the same); from the start the
             * caller gave, its overflow is named */
            int st = g.st[l] == MB_OVERFLOW && (t > r->t0 || one) ? STAGE_NON_FINITE : g.st[l];
            if (g.defer_g && g.first_ok[l] && (st != MB_OK || !(pending[l] && ol->t[ol->count - 1] == t))) {
                /* no row will take this step's g(q): the rows before it first, then its own, as step by step */
                const long bad = flush_gravity(&g, ol);
                if (bad >= 0) {
                    running -= rewind_to(&g, ol, bad, status, n_sample);
                    continue;
                }
                if (!gravity_now_finite(&g))
                    st = MB_BAD_CONTROL;
            }
            if (st != MB_OK) {  /* non-finite with hard stops: handed back, the Python loop reports it */
                if (st == STAGE_NON_FINITE && c->kind == MB_CONTROL_BATCH && g.first_ok[l] && pending[l] &&
                    ol->t[ol->count - 1] == t) {  /* the start's q̈, τ: no second call for them */
                    record_derived(m, r, ol, ol->count - 1, part(g.w.k1, l, nk), part(g.w.tau, l, nv),
                                   np3 ? part(g.w.force, l, np3) : NULL);
                    pending[l] = 0;
                }
                ol->handed_back = st == STAGE_NON_FINITE && hard;
                ol->non_finite = st == STAGE_NON_FINITE && !hard;
                status[l] = st == STAGE_NON_FINITE ? MB_OK : st;
                ol->t_from = t, ol->t_to = t_next;
                LEAVE(l);
                continue;
            }
            if (pending[l] && ol->t[ol->count - 1] == t) {
                record_derived(m, r, ol, ol->count - 1, part(g.w.k1, l, nk), part(g.w.tau, l, nv),
                               np3 ? part(g.w.force, l, np3) : NULL);
                pending[l] = 0;
                if (g.defer_g) {  /* its τ is τ_pd: g(q) added with the next few samples' */
                    g.deferred[g.n_deferred++] = ol->count - 1;
                    long bad;
                    if (g.n_deferred == g.lanes->width && (bad = flush_gravity(&g, ol)) >= 0) {
                        running -= rewind_to(&g, ol, bad, status, n_sample);
                        continue;
                    }
                }
            }
            if (one)
                continue;
            if (r->stops.n &&
                (g.lanes_stepped ? g.crossed[l] : crosses_stop(r, part(g.w.y, l, n), part(g.w.y1, l, n)))) {
                ol->handed_back = 1, ol->t_from = t, ol->t_to = t_next;  /* the Python loop's event */
                LEAVE(l);
                continue;
            }
            if (r->call.guards) {
                const double *y1 = part(g.w.y1, l, n);
                if ((status[l] = r->call.guards(r->call.guards_ctx, MB_CALL_GUARDS, t_next, y1, y1 + nq, guard1)) != MB_OK) {
                    ol->t_from = t, ol->t_to = t_next;
                    LEAVE(l);
                    continue;
                }
                if (crosses_guard(r, guard0, guard1)) {
                    ol->handed_back = 1, ol->t_from = t, ol->t_to = t_next;
                    LEAVE(l);
                    continue;
                }
                memcpy(guard0, guard1, sizeof(double) * r->call.n_guards);
            }
            if (r->stops.n_resting) {  /* the stops' forces at the step's end: a release is the Python loop's event */
                rhs(&g, t_next, g.w.y1, g.w.K, g.w.tau_stage, 0);
                if (g.st[l] != MB_OK || stop_releases(&g)) {
                    g.st[l] = MB_OK;
                    ol->handed_back = 1, ol->t_from = t, ol->t_to = t_next;
                    LEAVE(l);
                    continue;
                }
            }
        }
        t = t_next;
        const int on_grid = fabs(t - (double)k_next * dt) <= eps;
        for (int l = 0; l < L; l++) {
            if (!g.active[l])
                continue;
            if (g.z_live)
                live_copy(&g, part(g.w.y, l, n), part(g.w.y1, l, n));
            else
                copy_numbers(part(g.w.y, l, n), part(g.w.y1, l, n), n);
            if ((one || t >= t_final || (on_grid && k_next % r->record.record_every == 0)) && o[l]->count < r->record.capacity) {
                record(m, nz, o[l], t, part(g.w.y, l, n));
                last_recorded_t[l] = t;
                pending[l] = !one;  /* one step: the caller wants no q̈ at its end */
            }
        }
        if (one)
            break;
    }
#undef LEAVE
    if (g.defer_g) {  /* the last few samples' g(q); the final sample's own (finish) as step by step */
        const long bad = flush_gravity(&g, o[0]);
        if (bad >= 0)
            rewind_to(&g, o[0], bad, status, n_sample);
        g.defer_g = 0;
    }
    for (int l = 0; l < L; l++) {
        if (g.active[l])
            t_end[l] = t, o[l]->n_sample_end = n_sample;
        g.active[l] = 0;
        if (o[l]->held_end && g.have_held)
            memcpy(o[l]->held_end, part(g.w.held, l, nv), sizeof(double) * nv);
    }
    finish(&g, o, status);
    for (int l = 0; l < L; l++)
        o[l]->singular_body = status[l] == MB_SINGULAR ? g.singular[l] : -1;
    if (g.dl)
        lanes->data_free(g.dl);
    mb_hard_work_free(g.hard), mb_scene_implicit_free(g.implicit);
    free(g.w.block), free(g.w.contact_flags), free(guard0), free(g.books);
    return MB_OK;
}
