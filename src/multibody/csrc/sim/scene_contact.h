/* scene_contact.h — contact from the model's own collision geometry, in reduced coordinates.
 *
 * A scene is the model's geoms table (multibody.model.geometry.Geoms, packed by its `packed()`):
 * each geom a shape of the engine's collision table (engine/geometry.h codes) fixed in a body of
 * the tree (or static, body −1), and the candidate pairs the loader kept (MuJoCo's contype /
 * conaffinity / parent–child / <exclude> / <pair> rules, or all but same and adjacent links for
 * URDF).  scene_contact.c poses the geoms from the core's forward kinematics at q and runs the
 * engine's narrow phase (collide.c's table: the one collision library of the project) on every
 * pair; then, for the compliant law, turns the contact list into body forces f_ext.
 *
 * Conventions (MuJoCo's): the normal of a contact points from geom a into geom b (moving b along
 * +normal separates the pair); depth > 0 is penetration, depth in (−margin, 0] a contact inside
 * the pair's margin; pos is the midpoint between the two surfaces.
 */
#ifndef MB_SCENE_CONTACT_H
#define MB_SCENE_CONTACT_H

#include <stddef.h>
#include <stdint.h>

#include "common/core.h"

/* per geom: gint (ng × MB_SG_INTS) int64, gdat (ng × MB_SG_SIZE) float64 */
#define MB_SG_TYPE 0    /* gint: shape code (engine/geometry.h G_*) */
#define MB_SG_BODY 1    /* gint: body of the tree, −1 = static (the world) */
#define MB_SG_HULL 2    /* gint: convex shapes: index of its hull in the scene's hull block, else −1 */
#define MB_SG_INTS 3
#define MB_SG_R 0       /* gdat: rotation of the geom in its body (row-major 3 × 3; world if static) */
#define MB_SG_P 9       /* gdat: position of the geom in its body */
#define MB_SG_SIZE3 12  /* gdat: sphere r; capsule, cylinder r, length; box lx ly lz; ellipsoid rx ry rz */
#define MB_SG_SIZE 15
/* per pair: pairs (np × 2) int64 geom indices a, b; pdat (np × MB_SP_SIZE) float64 */
#define MB_SP_MARGIN 0  /* contacts are kept while depth > −margin */
#define MB_SP_FRICTION 1 /* sliding, torsional, rolling (MuJoCo's three) */
#define MB_SP_CONDIM 4  /* 1 frictionless, 3 sliding friction, 4 and 6 as MuJoCo (the compliant law uses sliding only) */
#define MB_SP_SIZE 5
#define MB_SCENE_PAIR_MAX 8   /* contacts one pair may give (box-box, box on a plane) */

typedef struct mb_scene {
    int ng, npair;
    const int64_t *gint;
    const double *gdat;
    const int64_t *pairs;
    const double *pdat;
    void *hulls;          /* the engine's mb_hull array, parsed by mb_scene_load_hulls (NULL: none) */
    int nhulls;
    int nslot;            /* the contact slots: pair p's are slot0[p] .. slot0[p + 1] − 1 (mb_scene_index_slots) */
    int *slot0;           /* (npair + 1) */
    int *slot_pair;       /* (nslot): the pair of each slot */
    void *owner;          /* whoever keeps hulls and slots for several calls (py_scene.c's last scene), or NULL:
                           * then they are this struct's, for mb_scene_free */
} mb_scene;

typedef struct mb_scene_contact {
    int pair;                     /* index into the scene's pairs: geoms, bodies, friction, condim */
    double pos[3], normal[3], depth;
    int slot;                     /* its state slot, slot0[pair] + k: k the point's feature (mod the pair's slots)
                                   * where the collider names one (a box's corner, a capsule's end on a plane: a
                                   * point keeps its slot as others touch down), else the k-th point it reports */
} mb_scene_contact;

/* parse the hull block (multibody.model.geometry's layout, the engine's shapes.Convex.packed) into
 * s->hulls; 0 ok, else 1 with a message (−1: out of memory) */
int mb_scene_load_hulls(mb_scene *s, const double *block, int64_t n, char *msg, size_t len);
/* the slots of a pair of shape codes: as many as its collider ever reports points (mb_collide_max_points: a
 * sphere's or an ellipsoid's pairs 1, a capsule on a plane 2, …), at most MB_SCENE_PAIR_MAX */
int mb_scene_pair_slots(int ta, int tb);
/* s->nslot, s->slot0, s->slot_pair from the pairs' shapes (after mb_scene_check); 0, or −1 out of memory */
int mb_scene_index_slots(mb_scene *s);
/* frees what mb_scene_load_hulls and mb_scene_index_slots allocated (nothing where s->owner keeps them) */
void mb_scene_free(mb_scene *s);
/* whether the scene is one the narrow phase can run on this model: shape codes, bodies, hull
 * indices, pairs in range, planes static, a collider for every pair; 0 ok, else 1 with a message
 * naming the geom or pair */
int mb_scene_check(const mb_model *m, const mb_scene *s, char *msg, size_t len);
/* The contacts at configuration q, at most cap of them written to out; returns how many there are
 * (more than cap: call again with room for them), −1 when a pair met has no collider, −2 out of memory.
 * Every geom is posed (and boxed) once per call, then each candidate pair whose boxes (grown by its
 * margin) meet goes to the collider.  scratch: mb_scene_pose_scratch(s) bytes for the poses (8-byte
 * aligned), or NULL to allocate them for this call. */
size_t mb_scene_pose_scratch(const mb_scene *s);
int mb_scene_contacts(const mb_model *m, mb_data *d, const double *q, const mb_scene *s, mb_scene_contact *out,
                      int cap, void *scratch);

/* The compliant law (contact.c's GroundContact law, Azad & Featherstone, ACRA 2010) on a contact
 * list: with d the depth and v = v_b(pos) − v_a(pos) the relative velocity of the two bodies at
 * the contact point (n = normal, t1, t2 = mb_scene_tangents(n)),
 *   f_n = √d⁺ (K d − D n·v)          (clipped at 0)
 *   sticking f_t = −√d (K u + D v_t), u̇ = v_t;  sliding (|f_t| > μ f_n): f_t scaled onto μ f_n,
 *   u̇ = −(f_t/√d + K u)/D;  apart u̇ = −(K/D) u;  μ = 0 (condim 1 or zero friction): f_t = 0, u̇ = 0
 * u (nc × 2): each contact's tangential ground deformation in (t1, t2).  The force f = f_n n + f_t
 * acts on body b at pos and −f on body a: fext (nb × 6, zeroed here) gets [pos × f; f] (spatial
 * force about the base origin, base coordinates, as the loop's f_ext).  F (nc × 3): f;
 * state (nc): 0 apart, 1 sticking, 2 sliding.  μ is the pair's sliding friction. */
void mb_scene_contact_forces(const mb_model *m, mb_data *d, const double *q, const double *qd, const mb_scene *s,
                             const mb_scene_contact *c, int nc, double K, double D, const double *u, double *fext,
                             double *udot, double *F, unsigned char *state);
/* The loop's contact stage (rollout.c): contacts at q, the compliant law on them, and the states
 * z (2 per slot) mapped to them, each ż times zscale (1; D/(D + h K) where the law is implicit in a
 * semi_implicit step of h, whose relaxation of u that is: mb_scene_contact_implicit).  Slot
 * slot0[p] + k holds the tangential deformation u of point k of candidate pair p (its feature,
 * or its place in the collider's list: mb_scene_contact.slot).  A slot without a contact is apart: u̇ = −(K/D) u
 * when the pair has friction (the ground law's release, u decays to 0), else u̇ = 0; its force is 0.
 * fext (nb × 6) as mb_scene_contact_forces; zdot (2 slots); F (3 slots) each slot's force on body b.
 * scratch: mb_scene_stage_scratch(s) bytes, zeroed before the run's first call (it remembers the slots of F
 * it wrote, so that a call on the same F zeroes only those, and the live slots, those whose z may not be zero,
 * so that a call visits those and its contacts' alone: a call on the same zdot as the last call's expects it
 * as that call left it, zero off the live slots).  Returns 0, or −1 when a pair met has no collider. */
size_t mb_scene_stage_scratch(const mb_scene *s);
/* The stage's live slots in its scratch: how many (*live: their indices, in no order), or −1 before the run's
 * first call.  Every slot off the list has z = 0, and ż = 0 in what the last call wrote; under semi_implicit with
 * the law implicit (mb_scene_contact_implicit, which drops the slots whose z and ż are both zero) a slot leaves
 * the list only where the state the step starts from has z = 0 there, so a step z₁ = z + h ż need visit the
 * listed slots alone (rollout.c's z_live). */
int mb_scene_live_slots(const mb_scene *s, void *scratch, const int **live);
int mb_scene_contact_stage(const mb_model *m, mb_data *d, const double *q, const double *qd, const mb_scene *s,
                           double K, double D, double zscale, const double *z, double *fext, double *zdot, double *F,
                           void *scratch);
/* The law implicit in a semi_implicit step (scene_contact.c says the method): from the explicit q̈ (with the
 * stage's forces), q̈ gets M⁻¹ Jᵀ Δf and ż (2 per slot, the stage's) the sticking contacts' new tangential
 * velocity, so that v⁺ = v + h q̈ is the step with each active contact's force at the step's end linearised
 * in its velocity (damping and stiffness), on the active contacts' Delassus operator J M⁻¹ Jᵀ (md: the model
 * FD runs on, M its CRBA), solved in joint space on M + h Jᵀ G J.  The explicit q̈ is either the caller's (tau_all NULL: qdd holds it on
 * entry) or this function's, from one CRBA and its factors that the correction then reuses (tau_all, fext:
 * the forward dynamics' τ and f_ext, after mb_scene_implicit_inertia at this q; no held joints; where it was
 * posed, the poses it read are this function's too).  F (3 per
 * slot): the contact forces of the step.  scratch: the stage's (the contacts of its last call, at this q, and
 * its z).  A contact in the floor that the law judged apart at the step's start but that stays in it over the
 * step at its speed is a candidate (the step's end decides), and every slot apart at the step's end gets
 * ż = −z/h (its deformation forgotten: z = 0 after the step).
 * held (n_held): joints resting on hard stops, kept at q̈_j = q̈₀_j = 0 (the correction moves the others); their
 * stops take up the correction's load, which held_force (n_held: the stops' λ from the forward dynamics, or NULL)
 * gets added: (M Δq̈)_j − (Jᵀ Δf)_j, so that a stop's force is the one the step holds its joint with.
 * soft (n_soft rows of MB_SOFT_ROW, passive.c's): the soft stops, solved with the contacts (then left out of
 * the forward dynamics' τ_all and q̈).
 * Returns MB_OK, MB_SINGULAR, MB_NO_MEMORY or the pivot status of a singular M. */
typedef struct mb_scene_implicit mb_scene_implicit;
mb_scene_implicit *mb_scene_implicit_new(const mb_model *m);
void mb_scene_implicit_free(mb_scene_implicit *w);
/* the step's joint-space inertia, once: M of md from CRBA(m, q) (the soft stops are rows of the step's solve).
 * posed: d holds the bodies' poses at q already (the stage's mb_body_states at q, the step's state), which
 * this CRBA and the implicit step's RNEA then read instead of posing the bodies again */
void mb_scene_implicit_inertia(mb_scene_implicit *w, const mb_model *m, const mb_model *md, mb_data *d,
                               const double *q, int posed);
int mb_scene_contact_implicit(const mb_model *m, const mb_model *md, mb_data *d, const double *q, const double *v,
                              const double *tau_all, const double *fext, double *qdd, double *zdot, double h,
                              const mb_scene *s, double K, double D, const int *held, int n_held,
                              double *held_force, int n_soft, const double *soft, double *F,
                              void *scratch, mb_scene_implicit *w);
/* the contact's tangent basis: t1 = e_x (or e_y when n is near ±e_x) made orthogonal to n, t2 = n × t1;
 * for n = e_z it is (e_x, e_y), the ground contact's axes */
void mb_scene_tangents(const double *n, double *t1, double *t2);

#endif
