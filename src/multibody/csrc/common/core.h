/* core.h — the algorithms of the C core, one file each.  All take the constant model (model.h)
 * and a workspace (data.h); none allocates, none checks its inputs (the entry points in py_*.c
 * do: finite numbers, non-zero quaternions, shapes), none touches Python. */
#ifndef MULTIBODY_CORE_H
#define MULTIBODY_CORE_H

#include "model/data.h"
#include "model/model.h"
#include "common/status.h"
#include "common/clones.h"  /* MB_CLONES_AVX2 */

#ifndef MB_LANE_BUILD  /* aba_lanes.c sees only kkt.c's solves and its own functions below */
/* jcalc.c */
int mb_check_configuration(const mb_model *m, const double *q);
void mb_jcalc(const mb_model *m, int i, const double *q, double *R, double *p);
void mb_tree_poses(const mb_model *m, const double *q, double *R, double *p);
void mb_world_poses(const mb_model *m, const double *R, const double *p, double *R0, double *p0);
void mb_world_poses_from(const mb_model *m, const double *R, const double *p, double *R0, double *p0, int first);
void mb_sincos(double x, double *s, double *c);
void mb_quat_to_rot(double w, double x, double y, double z, double *R);
void mb_quat_normalise(const double *q, double *out);

/* rnea.c — ID */
void mb_rnea(const mb_model *m, mb_data *d, const double *q, const double *qd, const double *qdd,
             const double *fext, double *tau);
void mb_rnea_posed(const mb_model *m, mb_data *d, const double *qd, const double *qdd, const double *fext,
                   double *tau);
/* g(q) = RNEA(q, 0, 0), the joint forces that hold the tree still against gravity: the same numbers
 * without the velocity terms.  have_poses: d->R, d->p already hold q's poses (an mb_aba on this d and
 * q just ran, not planar), so they are not recomputed. */
void mb_gravity_torques(const mb_model *m, mb_data *d, const double *q, int have_poses, double *tau);

/* rnea_derivatives.c, minv.c, aba_derivatives.c — analytic derivatives (Carpentier & Mansard 2018).
 * Each needs `scratch` of *_scratch(m) doubles besides the workspace; matrices are nv × nv row-major,
 * entry (j, k) = ∂(row quantity)_j / ∂x_k, ∂/∂q in mb_integrate's tangent space; M may be NULL. */
long mb_rnea_derivatives_scratch(const mb_model *m);
void mb_rnea_derivatives(const mb_model *m, mb_data *d, double *scratch, const double *q, const double *qd,
                         const double *qdd, const double *fext, double *dtau_dq, double *dtau_dqd, double *M);
long mb_minv_scratch(const mb_model *m);
int mb_minv(const mb_model *m, mb_data *d, double *scratch, const double *q, double *Minv);
/* their pieces, shared by aba_derivatives.c: the world-frame RNEA passes on `scratch` … */
typedef struct mb_rnead {
    double *J, *U, *dAq, *dAv;          /* (nv × 6) J_k, u_k, ∂a/∂q_k's and ∂a/∂q̇_k's own parts   */
    double *v, *a, *F, *Fx, *Yc, *Bc;   /* per body: v, a, f (then subtree sums), f_ext, Y, B        */
    double *tmp;                        /* (nb × 6)                                                  */
} mb_rnead;
mb_rnead mb_rnead_layout(const mb_model *m, double *scratch);
void mb_rnead_forward(const mb_model *m, mb_data *d, const mb_rnead *w, const double *q, const double *qd,
                      const double *qdd, const double *fext);
void mb_rnead_bias(const mb_model *m, const mb_rnead *w, const double *fext, double *C);
void mb_rnead_add_qdd(const mb_model *m, const mb_rnead *w, const double *qdd);
void mb_rnead_backward(const mb_model *m, const mb_rnead *w, const double *fext, double *dtau_dq,
                       double *dtau_dqd, double *M);
/* … and M⁻¹ from world motion subspaces J (nv × 6), world inertias Y (nb × 10) and the subtree columns
 * cols, first, count (mb_subtree_columns; mb_model_compile makes them once: the model's sub_cols,
 * sub_first, sub_count) */
long mb_minv_world_scratch(const mb_model *m);
void mb_subtree_columns(const mb_model *m, int *cols, int *first, int *count, int *slot);
int mb_minv_world(const mb_model *m, mb_data *d, double *scratch, const double *J, const double *Y,
                  const int *cols, const int *first, const int *count, double *Minv);
long mb_aba_derivatives_scratch(const mb_model *m);
int mb_aba_derivatives(const mb_model *m, mb_data *d, double *scratch, const double *q, const double *qd,
                       const double *tau, const double *fext, double *dqdd_dq, double *dqdd_dqd, double *Minv);

/* crba.c — CRBA / HandC */
void mb_crba(const mb_model *m, mb_data *d, const double *q, double *H);
void mb_crba_posed(const mb_model *m, mb_data *d, double *H);

/* aba.c — FDab, its passes shared with HD (hybrid.c) and FDfb (floating.c) */
int mb_invert_small(const double *D, int n, double *Dinv);
void mb_aba_velocity_pass(const mb_model *m, mb_data *d, const double *q, const double *qd,
                          const double *fext, int first);
int mb_aba_articulated_pass(const mb_model *m, mb_data *d, const double *tau, const unsigned char *fd,
                            int first);
int mb_aba_acceleration_pass(const mb_model *m, mb_data *d, const double *a_root, const unsigned char *fd,
                             double *qdd, double *tau_id, int first, const double *tau);
void mb_aba_start(const mb_model *m, mb_data *d, const double *q, const double *qd, const double *fext,
                  double *a_base);
int mb_aba(const mb_model *m, mb_data *d, const double *q, const double *qd, const double *tau,
           const double *fext, double *qdd);

/* compile.c — the model compile step: the derived tables of model.h (inertia6, axis_kind,
 * pose_kind, dof_axis, dof_unit, the planar tables) from the given ones, once.  MB_OK, or
 * MB_NO_MEMORY (the tables allocated so far are the caller's to free with the model). */
int mb_model_compile(mb_model *m);

/* planar.c — FDab in planar vectors for planar trees */
int mb_planar_setup(mb_model *m);
int mb_aba_planar(const mb_model *m, mb_data *d, const double *q, const double *qd, const double *tau,
                  double *qdd);

/* fd_crb.c — FDcrb */
int mb_fd_crb(const mb_model *m, mb_data *d, const double *q, const double *qd, const double *tau,
              const double *fext, double *qdd);

/* hybrid.c — HD */
int mb_hybrid(const mb_model *m, mb_data *d, const unsigned char *fd, const double *q, const double *qd,
              double *qdd, double *tau, const double *fext);

/* sparse.c — LTDL, its solves, fd_sparse */
int mb_ltdl(int n, const int *lam, double *A);
void mb_ltdl_solve(int n, const int *lam, const double *A, double *x);
enum { MB_MPY_H = 0, MB_MPY_L = 1, MB_MPY_LT = 2, MB_MPY_LI = 3, MB_MPY_LIT = 4 };
int mb_ltdl_factors(int n, const int *lam, const double *H, double *A, double *L, double *d);
int mb_ltl_factor(int n, const int *lam, const double *H, double *L);
int mb_ltl_factor_pattern(int n, const int *lam, const double *H, double *L);
void mb_sparse_mpy(int op, int n, const int *lam, const double *M, const double *x, double *y);
void mb_solve_ltdl(int n, const int *lam, const double *L, const double *d, const double *b, double *x);
int mb_fd_sparse(const mb_model *m, mb_data *d, const double *q, const double *qd, const double *tau,
                 const double *fext, double *qdd);

/* floating.c — FDfb, IDfb (q, qd, tau, qdd are full-model vectors; body 5 is the floating base) */
int mb_fdfb(const mb_model *m, mb_data *d, const double *x, const double *q, const double *qd, const double *tau,
            const double *fext, double *xd, double *qdd);
int mb_idfb(const mb_model *m, mb_data *d, const double *x, const double *q, const double *qd, const double *qdd,
            const double *fext, double *xd, double *tau);

/* kinematics.c — body states, Jacobians, CoM Jacobian, integrate */
void mb_body_states(const mb_model *m, mb_data *d, const double *q, const double *qd, const double *qdd,
                    double *R0, double *p0, double *V, double *A);
void mb_jacobian(const mb_model *m, mb_data *d, const double *q, int body, const double *point, int frame,
                 double *J);
void mb_com_jacobian(const mb_model *m, mb_data *d, const double *q, double *Jc);
void mb_point_jacobian_add(const mb_model *m, const double *R0, const double *p0, int body, const double *P,
                           double weight, double *J3);
void mb_dof_world_axes(const mb_model *m, const double *R0, double *ax);
void mb_point_jacobian_axes_add(const mb_model *m, const double *ax, const double *p0, int body, const double *P,
                                double weight, double *J3);
int mb_contact_columns(const mb_model *m, int ba, int bb, int *chain, int *cols);
void mb_integrate(const mb_model *m, const double *q, const double *v, double dt, double *out);

/* energy.c — EnerMo */
void mb_energy(const mb_model *m, mb_data *d, const double *q, const double *qd, double *KE,
               double *htot, double *Itot);

/* contact.c — compliant ground contact (spatial_v2 gcPosVel, gcontact, Fpt) for all points */
typedef struct mb_ground_contact_spec {
    int npt, nd;                /* points; 3 (z up) or 2 (planar: y up)                              */
    const long long *bodies;    /* (npt) body of each point                                           */
    const double *points;       /* (npt × 3) points in body coordinates, m                            */
    double K, D, mu;            /* N/m^1.5, N·s/m^1.5, friction coefficient (0: frictionless)          */
} mb_ground_contact_spec;

void mb_ground_contact(const mb_model *m, mb_data *d, const double *q, const double *qd, const double *z,
                       const mb_ground_contact_spec *g, double *fext, double *zdot, double *F, double *pos,
                       unsigned char *in_contact, unsigned char *sticking);

#endif

/* kkt.c — TMT eq. (6) by the range-space method, and the SPD solves of FDgq */
enum { MB_KKT_OK = 0, MB_KKT_H_NOT_SPD = 1, MB_KKT_A_SINGULAR = 2, MB_KKT_NO_MEMORY = 3 };
int mb_cholesky_factor(int n, const double *A, double *L, double rel_tol);
void mb_cholesky_apply_inverse(int n, const double *L, double *x);
int mb_cholesky_solve(int n, const double *H, double *L, const double *b, double *x);
int mb_kkt_solve(int n, int m, const double *H, const double *d, const double *J, const double *r, double h_tol,
                 double rank_tol, double *qdd, double *lam);
/* the same in the caller's work (mb_kkt_work_size(n, m) doubles): MB_KKT_OK, _H_NOT_SPD or _A_SINGULAR */
static inline long mb_kkt_work_size(int n, int m)
{
    return (long)n * n + (long)m * n + 2L * m * m;
}
int mb_kkt_solve_in(int n, int m, const double *H, const double *d, const double *J, const double *r, double h_tol,
                    double rank_tol, double *qdd, double *lam, double *work);
/* the same on H = Lᵀ L with the tree's sparsity (lam: dof_parent), in the same work */
int mb_kkt_solve_tree(int n, const int *lam, int m, const double *H, const double *d, const double *J,
                      const double *r, double h_tol, double rank_tol, double *qdd, double *lmb, double *work);
int mb_fdgq_solve(int n, int ny, const double *H, const double *C, const double *tau, const double *G,
                  const double *gs, double *qdd, double *tauc);

#ifndef MB_LANE_BUILD
/* constraints.c — loop and coupling constraints of fixed geometry (dynamics/constraint_tables.py writes
 * the tables) and TMT eq. (6) with Baumgarte stabilisation.  An item is MB_CON_WIDTH numbers:
 *   MB_CON_POINT  (kind, body a, body b (−1 base), n axes, point a (3), point b (3), –, –, axes (3), –)
 *   MB_CON_AXIS   (kind, body a, body b, –, unit axis a (3) in a, unit direction (3) in b, …)  one row
 *   MB_CON_LINEAR (kind, first term a, terms a, first term b, terms b (0: none), first coefficient,
 *                  coefficients, a₀, b₀, …)  one row: L_a − a₀ − p(L_b − b₀), L = Σ k q over its terms
 * terms: (q index, v index, coefficient) rows; coef: the polynomials' coefficients c₀, c₁, … */
enum { MB_CON_POINT = 0, MB_CON_AXIS = 1, MB_CON_LINEAR = 2, MB_CON_WIDTH = 16 };
typedef struct mb_constraints {
    int n_items, n_terms, n_coef, rows;  /* rows: the constraint rows the items make                  */
    const double *items, *terms, *coef;
    double alpha, beta;     /* Baumgarte gains: c̈ + 2α ċ + β² c = 0                                    */
    double rank_tol;        /* a pivot of J H⁻¹ Jᵀ below rank_tol × its diagonal entry: singular            */
} mb_constraints;
long mb_constraints_scratch(const mb_model *m, const mb_constraints *cs);  /* doubles of scratch */
/* c, ċ, J (rows × nv, row-major) and the bias J̇q̇ at (q, q̇) */
void mb_constraint_rows(const mb_model *m, mb_data *d, const mb_constraints *cs, double *scratch, const double *q,
                        const double *qd, double *J, double *c, double *cdot, double *bias);
/* q̈ and λ (rows, or NULL) of TMT eq. (6) with d = τ − C(q, q̇, f_ext): kkt.c's status (MB_KKT_*) */
int mb_constrained_fd(const mb_model *m, mb_data *d, const mb_constraints *cs, double *scratch, const double *q,
                      const double *qd, const double *tau, const double *fext, double *qdd, double *lam);

/* rollout.c — a whole fixed-step run: integrators, built-in controllers, recording */
enum { MB_EULER = 0, MB_SEMI_IMPLICIT = 1, MB_RK4 = 2 };  /* the steppers with their own stage code */
/* The fixed-step methods, one row each (rollout.c's mb_steppers, indexed by the integrator code).  A row
 * with a Butcher tableau (a: stages × stages, row-major, strictly lower; b, c: stages) is stepped by
 * rollout.c's one explicit Runge–Kutta stepper, in Crouch–Grossman form on joint groups; a row without
 * one by its own stage code (euler, semi_implicit, rk4: switch on the code).  Python reads the table
 * (core._core.steppers()): the names simulate accepts, the Python reference steppers, the damping
 * bound and the flags below. */
enum { MB_STEP_IMPLICIT_DAMPING = 1,  /* FD runs with (M + dt·D): joint damping implicit            */
       MB_STEP_NEW_VELOCITY = 2,      /* q moves with the step's new velocity, and so do the
                                       * sensitivities' η rows with the new δv (semi_implicit)         */
       MB_STEP_SYMPLECTIC = 4 };      /* symplectic for separable Hamiltonians (q̈ independent of q̇)  */
enum { MB_MAX_STAGES = 4 };           /* the loop's tangents k₁ … k₄                                 */
typedef struct mb_stepper {
    const char *name;       /* simulate's integrator name                                               */
    int order;              /* order of convergence (on vector spaces and on the joint groups)          */
    int stages;             /* right-hand sides per step (≤ MB_MAX_STAGES)                              */
    double stable_decay;    /* B: a step of h follows v̇ = −λ v (λ > 0) while λ h < B (limits.py)       */
    int flags;              /* MB_STEP_*                                                                */
    const double *a, *b, *c; /* explicit tableau, or NULL: the row's own stage code                    */
    const char *source;     /* where the method is written down                                         */
} mb_stepper;
extern const mb_stepper mb_steppers[];
extern const int mb_n_steppers;
enum { MB_CONTROL_NONE = 0, MB_CONTROL_PD = 1, MB_CONTROL_CALL = 2, MB_CONTROL_BATCH = 3 };
/* A function of the caller's (a Python callable, py_rollout.c) evaluated at a state: `what` is
 * MB_CALL_CONTROL (out: τ, nv) or MB_CALL_FORCES (out: f_ext, nb × 6); MB_OK or MB_CALLBACK_FAILED. */
enum { MB_CALL_CONTROL = 0, MB_CALL_FORCES = 1, MB_CALL_GUARDS = 2 };
typedef int (*mb_callback)(void *ctx, int what, double t, const double *q, const double *v, double *out);
/* The caller's forward dynamics (a constrained model's q̈ from τ_all and f_ext, f_ext NULL for none):
 * MB_OK or MB_CALLBACK_FAILED. */
typedef int (*mb_dynamics_callback)(void *ctx, double t, const double *q, const double *v, const double *tau_all,
                                    const double *fext, double *qdd);
/* The caller's contact forces at a state with its contact states z: out = [f_ext (nb × 6), ż (nz)];
 * MB_OK or MB_CALLBACK_FAILED. */
typedef int (*mb_contact_callback)(void *ctx, double t, const double *q, const double *v, const double *z,
                                   double *out);
/* The caller's controller of a whole batch (a Python function of (t, Q, QD), py_rollout.c): τ of the
 * `count` runs whose states are (q[i], v[i]) into tau[i], in one call; MB_OK or MB_CALLBACK_FAILED. */
typedef int (*mb_batch_callback)(void *ctx, double t, int count, const double *const *q, const double *const *v,
                                 double *const *tau);
enum { MB_STOPS_NONE = 0, MB_STOPS_SOFT = 1, MB_STOPS_HARD = 2 };

/* A run's plan as C reads it: one small struct per record of simulation/rollout.py's Plan (py_rollout.c
 * fills each from its record).  mb_rollout gathers them with the run's window. */
typedef struct mb_control {
    int kind;               /* MB_CONTROL_NONE (τ = 0), MB_CONTROL_PD, or MB_CONTROL_CALL (τ = call(…))   */
    const double *kp, *kd;  /* (nv) gains                                                                */
    int n_times;            /* rows of the reference tables (≥ 1; 1 = constant references)               */
    const double *times;    /* (n_times) increasing sample times of the tables, s                        */
    const double *q_ref;    /* (n_times × nq) position reference                                         */
    const double *qd_ref;   /* (n_times × nv) velocity reference                                         */
    const double *tau_ff;   /* (n_times × nv) feed-forward τ (kp = kd = 0: a torque table)               */
    double period;          /* > 0: zero-order hold sampled at 0, T, 2T, …;  0: continuous               */
    int gravity;            /* 1: add the gravity torques g(q) = RNEA(q, 0, 0) (PD with gravity compensation) */
    const int *q_index;     /* (nv) q index of each velocity variable of a one-dof joint, −1 on joints with
                               several (kp = 0 there: their position error is not a difference); NULL: nq = nv */
    mb_callback call;       /* MB_CONTROL_CALL: τ from the caller's function, with its context           */
    void *ctx;
    mb_batch_callback batch; /* MB_CONTROL_BATCH: τ of all the group's runs at a stage in one call (ctx)  */
} mb_control;

/* The model's passive forces (passive.c: one function per law, mb_passive_forces for all of them).
 * Every table NULL (or count 0) where its law is absent. */
typedef struct mb_passive {
    const double *effort;   /* (nv) or NULL: the controller's τ clipped to ±effort first (URDF effort limits) */
    const double *damping;  /* (nv) joint damping: τ −= damping ⊙ q̇                                    */
    const double *friction; /* (nv) Coulomb friction f, smoothed: τ −= f ⊙ tanh(q̇ / friction_velocity)   */
    const double *friction_velocity; /* (nv) its v_s per variable (simulation/limits.py: step_friction_velocity) */
    const double *gc_lift;  /* (nb × 3) gravity compensation force gravcomp·m·(−g) per body, or NULL     */
    const double *gc_com;   /* (nb × 3) body centres of mass in body coordinates (with gc_lift)          */
    int n_tendons;          /* fixed tendons' springs and dampers (model/tendons.py): (k, d, L_lo, L_hi)  */
    const double *tendons;  /* per tendon, and n_tendon_terms rows (tendon, q index, v index, coefficient) */
    int n_tendon_terms;     /* grouped by tendon in order                                               */
    const double *tendon_terms;
    int n_soft;             /* soft position limits (MuJoCo's soft constraints): n_soft rows of MB_SOFT_ROW */
    const double *soft;     /* (q index, v index, position, sign, B, K, dmin, dmax, width, midpoint, power,
                             * margin, Â): sign +1 for a lower bound (pushes q up), −1 for an upper one;
                             * B, K from solref, solimp's five, the row's (M⁻¹)_jj at the default q  */
    const double *implicit_armature; /* (nv) or NULL: FD runs with this armature (semi_implicit's damping,
                                        armature + dt·damping: System.implicit_damping) */
    int n_springs;          /* joint springs (MJCF stiffness): rows (q index, v index, k, q_spring),      */
    const double *springs;  /* τ_v −= k (q − q_spring)                                                   */
    int n_actuators;        /* actuators (model/actuators.py ROW): rows (first term, terms, gear, gain,   */
    const double *actuators; /* b0, b1, b2, ctrl lo, ctrl hi, force lo, force hi), ±inf: unlimited        */
    int n_actuator_terms;   /* their transmissions: rows (q index, v index, coefficient), a joint's one   */
    const double *actuator_terms; /* term of coefficient 1, a fixed tendon's one per joint              */
    const double *actuator_ctrl;      /* (n_actuators) the run's constant ctrl                           */
    const double *actuator_dof_range; /* (nv × 2) each variable's actuator force range (actuatorfrcrange) */
    int n_actuator_gc;      /* variables whose joint routes its gravity compensation (gc_lift) through   */
    const double *actuator_gc; /* the actuator force range (MJCF actuatorgravcomp): v indices, increasing */
} mb_passive;

/* Hard position limits: events with impact resets, handled by the Python loop (rollout.c hands a step
 * that crosses one back); joints resting on their stops are held here by the KKT solve (kkt.c). */
typedef struct mb_stops {
    int n;                  /* rows (q index, v index, position, sign) as mb_passive's soft ones, or 0   */
    const double *rows;
    int n_resting;          /* joints resting on hard stops (one run): rows q̈_j = 0 of TMT eq. (6);      */
    const int *resting_v;   /* (n_resting) their v indices, and the sign of each one's stop; the run is  */
    const double *resting_sign; /* handed back when a stop's push sign·λ falls to ≤ 0 (its release)      */
} mb_stops;

/* The caller's functions the loop calls back (one run), each NULL where absent. */
typedef struct mb_callbacks {
    mb_callback forces;     /* f_ext (constant forces included) from the caller's function               */
    void *forces_ctx;
    mb_callback guards;     /* the user's events: their guards at a state (MB_CALL_GUARDS); a step where */
    void *guards_ctx;       /* one crosses zero in its direction is handed back                          */
    int n_guards;
    const int *directions;  /* (n_guards) −1: from > 0 to ≤ 0, +1: from < 0 to ≥ 0, 0: either           */
    mb_dynamics_callback dynamics; /* q̈ from the caller's function instead of FDab (constraints)        */
    void *dynamics_ctx;     /* (a PD's g(q) then goes into τ instead of cancelling gravity)              */
    int (*interrupted)(void *ctx); /* asked every MB_POLL_STEPS steps: nonzero stops every run (Ctrl-C);  */
    void *interrupted_ctx;  /* or NULL.  Called from any thread of a batch, without the GIL              */
    int z_columns;          /* > 0: the contact law's states end with the sensitivities' Z, (2 nv + nz_law)
                             * rows × z_columns (row-major; rows η, δv, δz), rates from the law's call;
                             * an MB_STEP_NEW_VELOCITY step moves η with the new δv (sensitivity.py)   */
    int z_law;              /* with z_columns: the law's own states before Z (nz_law)                   */
} mb_callbacks;

/* Steps between two looks at the caller's interrupted(): a few ms of the heaviest single run. */
enum { MB_POLL_STEPS = 1024 };

/* Contact: the compliant ground's table (contact.c) or another law, the caller's (its forces and ż
 * from one call back per stage); its states follow v in the state. */
struct mb_scene;
typedef struct mb_contact {
    const struct mb_ground_contact_spec *ground; /* or NULL                                             */
    const struct mb_scene *scene; /* or NULL: the model's geoms (sim/scene_contact.h) under the compliant  */
    double K, D;            /* law with stiffness K, damping D; its states: 2 per slot, a slot per       */
    int scene_slots;        /* (candidate pair, its point: mb_scene_contact.slot), MB_SCENE_PAIR_MAX per pair */
    const double *hard;     /* or NULL: the scene under hard contact (sim/hard_contact.h's MB_HARD_SIZE
                             * parameters), impulses each step from an LCP, no states; K, D unused          */
    int hard_rows;          /* and the run's constraints with a constant Jacobian, rows of its LCP: per row  */
    const double *hard_G;   /* G (nv), c = G_q q − c₀ as G_q (nq) and c₀ (hard_rows × (nv + nq + 1); NULL) */
    int hard_limits;        /* and the joint limits, rows of its LCP: (q index, v index, position, sign)    */
    const double *hard_limit_rows;
    mb_contact_callback call;  /* or NULL (one run; not with ground)                                     */
    void *ctx;
    int n_call_z;           /* the caller's law's states                                                  */
    double implicit_dt;     /* the step the scene's law is implicit over (semi_implicit: the run's dt, also
                             * in a partial step that locates an event); 0: each step's own size          */
} mb_contact;

typedef struct mb_record {
    long record_every;      /* keep every k-th grid sample (and the final one)                           */
    long capacity;          /* rows of the output arrays                                                 */
    int keep_last;          /* a non-finite run also records its last finite state when off the grid     */
} mb_record;

typedef struct mb_rollout {
    int integrator;         /* row of mb_steppers (MB_EULER, MB_SEMI_IMPLICIT, MB_RK4, …)                */
    double t0;              /* start time (a run resumed after the Python loop took a step at a stop)    */
    double t_final, dt;     /* run [t0, t_final] on the grid k·dt (last step ends at t_final)            */
    double one_step;        /* ≠ 0: one step of exactly this size from t0 (< 0: backwards), nothing else (no sampling, no */
                            /* stop, guard or release checks, no q̈ at its end): the Python loop's event */
                            /* machinery taking a handed-back step or locating an event inside it      */
    const double *held0;    /* (nv) a sampled controller's τ held at t0, or NULL (sample at t0)          */
    long n_sample0;         /* with held0: the next sample is n_sample0 · period                          */
    mb_control control;
    const double *fext;     /* (nb × 6) constant spatial forces in base coordinates, or NULL             */
    mb_passive passive;
    mb_stops stops;
    mb_contact contact;
    mb_callbacks call;
    mb_record record;
} mb_rollout;

/* The contact points whose forces a run records (3 numbers each per sample): the ground's points or the
 * scene's slots. */
static inline int mb_rollout_contact_points(const mb_rollout *r)
{
    return r->contact.ground ? r->contact.ground->npt : r->contact.scene ? r->contact.scene_slots : 0;
}

/* The contact states a run's state carries after [q, v]: the caller's law's, or the ground's tangential
 * deformations, (nd − 1) per point with friction. */
static inline int mb_rollout_contact_states(const mb_rollout *r)
{
    if (r->contact.call)
        return r->contact.n_call_z;
    if (r->contact.scene)
        return r->contact.hard ? 0 : 2 * r->contact.scene_slots;
    const struct mb_ground_contact_spec *g = r->contact.ground;
    return g && g->mu > 0.0 ? (g->nd - 1) * g->npt : 0;
}

/* passive.c — the model's passive forces, one function per law (each with its Python statement, the
 * tests' reference: simulation/limits.py, dynamics/gravcomp.py, model/tendons.py).  Scratch:
 * mb_passive_scratch_size doubles; the soft stops' factors (LTDL) go to d->L. */
enum { MB_SOFT_ROW = 13 };  /* the doubles of a soft stop's row (mb_passive.soft) */
/* the soft stops' scratch: M, a₀, M⁻¹'s columns, the LCP's matrix, vectors and work, the active rows */
static inline long mb_passive_soft_scratch(int nv, int n_soft)
{
    return (long)nv * nv + nv + (long)n_soft * nv + 2L * n_soft * n_soft + 18L * n_soft + 1;
}
static inline long mb_passive_scratch_size(int nv, int n_soft)
{
    const long laws = 5L * nv, soft = n_soft ? mb_passive_soft_scratch(nv, n_soft) : 0;
    return laws > soft ? laws : soft;
}
void mb_passive_effort(int nv, const double *effort, const double *tau, double *tau_all);
void mb_passive_damping(int nv, const double *damping, const double *v, const double *tau, double *tau_all);
void mb_passive_friction(int nv, const double *friction, const double *velocity, const double *v, double *tau_all);
void mb_passive_springs(int n, const double *rows, const double *q, double *tau_all);
void mb_passive_actuators(const mb_model *m, mb_data *d, const mb_passive *p, const double *q, const double *v,
                          double *scratch, double *tau_all);
void mb_passive_tendons(int nv, const mb_passive *p, const double *q, const double *v, double *sum, double *one,
                        double *tau_all);
int mb_passive_soft_stops(const mb_model *ma, mb_data *d, const mb_passive *p, const double *q, const double *v,
                          const double *fext, double *scratch, double *tau_all);
/* A soft stop's row (mb_passive.soft) at (q, v): 1 where the joint has passed the limit (dist = sign (q − pos) less
 * the margin < 0), with MuJoCo's reference acceleration a_ref = −B sign v − K d dist and regulariser
 * R = (1 − d)/d Â (d: the impedance of dist; the stop's force f = (a_ref − J q̈)/R at the step's q̈), else 0 */
int mb_soft_stop_terms(const double *row, const double *q, const double *v, double *aref, double *R);
/* has the joint passed the soft stop's row (mb_soft_stop_terms's test alone)? */
static inline int mb_soft_stop_passed(const double *row, const double *q)
{
    return row[3] * (q[(int)row[0]] - row[2]) - row[11] < 0.0;
}
void mb_passive_gravcomp(const mb_model *m, mb_data *d, const mb_passive *p, const double *q, const double *base,
                         double *fext);
/* Does the plan carry joint-space passive forces (damping, friction, tendons, soft stops)? */
static inline int mb_passive_joint_forces(const mb_passive *p)
{
    return p->effort || p->damping || p->friction || p->n_tendons || p->n_soft || p->n_springs || p->n_actuators;
}
/* τ_all = τ + the joint-space passive forces at (q, v), in the Python statement's order (damping,
 * friction, tendons, soft stops); ma, fext: the soft stops' model and f_ext (passive.c); scratch as above. */
int mb_passive_forces(const mb_model *m, mb_data *d, const mb_passive *p, const double *q, const double *v,
                      const double *tau, const mb_model *ma, const double *fext, double *scratch,
                      double *tau_all);

typedef struct mb_rollout_out {
    double *t, *q, *qd, *qdd, *tau;  /* (capacity), (capacity × nq), (capacity × nv) ×3          */
                                      /* (no energies: Trajectory computes them on first access)  */
    long count;                       /* samples written                                          */
    int non_finite;                   /* 1: stopped in the step [t_from, t_to] at a non-finite state */
    double t_from, t_to;              /* the failing step (also set for an error status)          */
    int handed_back;                  /* MB_STOPS_HARD: stopped at t_from before a step that crosses a
                                         stop or turns non-finite (the Python loop takes that step) */
    double *y_end;                    /* (nq + nv + nz) the state where the run ended or was handed back */
    double *z, *force;                /* with contact: (capacity × nz) states, (capacity × points × 3) forces */
    double *held_end;                 /* (nv) a sampled controller's held τ where the run stopped, or NULL */
    long n_sample_end;                /* and the index of its next sample there                    */
    int singular_body;                /* status MB_SINGULAR: the body whose joint's D is singular, else −1 */
    double *stop_force;               /* one step (mb_rollout.one_step) of one run with joints resting on stops:
                                         their λ at its start, as the step holds them (n_resting), or NULL */
} mb_rollout_out;

/* L ≤ 8 runs of r from (q0[l], qd0[l]) into o[l], advanced in lockstep (any L ≥ 1 with a batch
 * controller, MB_CONTROL_BATCH: its one call per stage sees every run); with `lanes` (or NULL: run
 * by run) the forward dynamics of the group where the lanes allow (no f_ext, no gravcomp,
 * mb_lanes_supported).  status[l]: run l's status; returns MB_NO_MEMORY or MB_OK. */
struct mb_lanes_impl;
int mb_run_rollouts(const mb_model *m, mb_data *d, const struct mb_lanes_impl *lanes, const mb_rollout *r, int L,
                    const double *const *q0, const double *const *qd0, const double *const *z0,
                    mb_rollout_out *const *o, int *status);
#endif

/* aba_lanes.c — FDab, ID and CRBA on several states at once (SIMD over states, lanes.h); FDab for trees
 * whose joints have at most one dof, under an optional free root without rotor inertia, and no
 * f_ext (mb_lanes_supported).  aba_group reads state l's q, q̇, τ from q[l], qd[l], tau[l], l < width,
 * and writes its q̈ to qdd[l]; every lane's result is mb_aba's bit for bit.  A status other than
 * MB_OK means some lane failed: run those states one by one to know which.  One implementation
 * per build of aba_lanes.c: the baseline vectors, and AVX2 and AVX-512F on x86-64. */
/* One RK4 step of a group's runs in lanes (rk4_group, rollout_lanes.h): a model whose joints all have
 * q̇ = v, under a PD with constant references (kp NULL: no controller, τ = 0) and optional damping;
 * ABA runs on `model` (the model, or its copy without gravity when `gravity`: g(q) on the model is
 * added to the first stage's τ only, rollout.c's cancellation).  Additive to rollout.c's mb_rollout. */
typedef struct mb_group_step {
    const mb_model *model;
    double h;
    const double *kp, *kd, *q_ref, *qd_ref, *tau_ff, *damping;
    int gravity;
    const double *stops;  /* hard stops (mb_rollout's rows), or NULL: whether the step crosses one */
    int n_stops;
} mb_group_step;

typedef struct mb_lanes_impl {
    int width;
    void *(*data_new)(const mb_model *m);  /* the workspace in lanes; NULL if out of memory */
    void (*data_free)(void *d);
    int (*aba_group)(const mb_model *m, void *d, const double *const *q, const double *const *qd,
                     const double *const *tau, double *const *qdd);
    int (*rnea_group)(const mb_model *m, void *d, const double *const *q, const double *const *qd,
                      const double *const *qdd, double *const *tau);  /* any tree, no f_ext */
    int (*crba_group)(const mb_model *m, void *d, const double *const *q, const double *const *unused1,
                      const double *const *unused2, double *const *H);  /* any tree */
    int (*crba_stream_group)(const mb_model *m, void *d, const double *const *q, const double *const *unused1,
                             const double *const *unused2, double *const *H);
                        /* crba_group for batches far larger than the caches: H written with
                         * non-temporal stores (lanes.h: scatter_streaming); MB_OVERFLOW (H written
                         * all the same) when some entry is not finite */
    int (*gravity_group)(const mb_model *m, void *d, const double *const *q, const double *const *fresh,
                         const double *const *unused, double *const *tau);  /* g(q): mb_gravity_torques;
                         * fresh NULL: d holds these q's poses (the last aba_group call on d, same lanes) */
    int (*rk4_group)(const mb_model *m, void *d, const mb_group_step *s, const double *const *y,
                     double *const *y1, double *const *k1, double *const *tau, int *st, int *crossed);
                        /* y₁, k₁ = [v, q̈], τ of state l = y[l]; st[l]: MB_OK, −1 (non-finite) or
                         * MB_BAD_CONTROL; crossed[l]: the step crosses one of s->stops; another return
                         * than MB_OK: a lane failed the ABA (run the step run by run) */
} mb_lanes_impl;
int mb_lanes_supported(const mb_model *m);
extern const mb_lanes_impl mb_lanes_baseline;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX__)
#define MB_HAVE_LANES_AVX2 1
extern const mb_lanes_impl mb_lanes_avx2;
extern const mb_lanes_impl mb_lanes_avx2_pair;  /* 2 lanes, AVX2 code: single planar runs (py_rollout.c) */
#define MB_HAVE_ABA_AVX2 1
int mb_aba_avx2(const mb_model *m, mb_data *d, const double *q, const double *qd, const double *tau,
                const double *fext, double *qdd);  /* mb_aba in AVX2 code (aba_avx2.c); mb_aba calls it */
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX512F__)
#define MB_HAVE_LANES_AVX512 1
extern const mb_lanes_impl mb_lanes_avx512;
#endif

#endif
