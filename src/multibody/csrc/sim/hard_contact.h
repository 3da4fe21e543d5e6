/* hard_contact.h — hard contact with Coulomb friction and restitution on the model's own geoms, as a
 * velocity-level time stepper (hard_contact.c says the method). */
#ifndef MB_HARD_CONTACT_H
#define MB_HARD_CONTACT_H

#include "common/core.h"
#include "sim/scene_contact.h"

/* the law's parameters (core.h's mb_contact.hard points at MB_HARD_SIZE doubles, rollout.Contact.hard) */
#define MB_HARD_RESTITUTION 0  /* e: a contact approaching at v_n⁻ < 0 leaves at −e v_n⁻                    */
#define MB_HARD_ERP 1          /* Baumgarte's error reduction parameter: a step removes ERP of the depth      */
#define MB_HARD_SLOP 2         /* depth (m) left uncorrected, so resting contacts persist (no lift-off)       */
#define MB_HARD_CFM 3          /* relative regularisation ε: the LCP's matrix is A + ε diag(A)                */
#define MB_HARD_LIMIT_RESTITUTION 4  /* e of the joint limits' rows                                          */
#define MB_HARD_SIZE 5

typedef struct mb_hard_work mb_hard_work;  /* the solve's buffers (grown to the contacts met) */
mb_hard_work *mb_hard_work_new(const mb_model *m, const mb_contact *hc, int lanes, int n_soft);
void mb_hard_work_free(mb_hard_work *w);

/* One step's contact impulses.  On entry qdd holds the free acceleration q̈₀ (contact-free forward
 * dynamics at (q, v) on the model md FD ran on: its armature is M's); on return q̈ = q̈₀ + M⁻¹Jᵀλ/h,
 * so that the step v⁺ = v + h q̈ is the time stepper's.  hc: the run's contact record (core.h): the scene,
 * the parameters, the rows of constraints with a constant Jacobian (q̈₀ is then the constrained one, and
 * the impulses keep them) and the joint limits (rows of the LCP).  F (slots × 3, the scene's slots
 * as the compliant law's): each slot's mean force λ/h on its geom b.  Returns MB_OK, MB_SINGULAR
 * (M not positive definite), MB_NO_MEMORY, MB_CONTACT_LCP (no solution found), or −1 (a pair met has no
 * collider).  lane: the run (0 .. the lanes mb_hard_work_new was given − 1) whose last step's solve warm-starts
 * this one's LCP.  tau (fext may be NULL): given, qdd is not read: q̈₀ = M⁻¹ (τ − C(q, v, f_ext)) is found here on
 * the factor the Delassus operator needs anyway (M = LᵀL, C by RNEA on md), in place of the caller's ABA: one
 * inertia for both (MB_HARD_NO_ROWS: no rows, qdd untouched, the caller's forward dynamics then stands alone).
 * soft (n_soft rows of MB_SOFT_ROW, passive.c's; mb_hard_work_new's n_soft): the soft stops, rows of the same
 * LCP (then left out of q̈₀), as MuJoCo solves its soft limits with its contacts. */
int mb_hard_contact_stage(const mb_model *m, const mb_model *md, mb_data *d, const double *q, const double *v,
                          double *qdd, double h, const mb_contact *hc, double *F, mb_hard_work *w, int lane,
                          const double *tau, const double *fext, int n_soft, const double *soft);

/* mb_hard_contact_stage's answer, given τ, when the step has no rows (no contact, constraint or joint limit
 * within reach): q̈₀ is not computed (the caller's ABA is cheaper than CRBA, LTL and RNEA), nor needed more */
#define MB_HARD_NO_ROWS (-2)

#endif
