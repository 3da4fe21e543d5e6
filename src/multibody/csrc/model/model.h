/* model.h — the constant C model (like MuJoCo's mjModel, Pinocchio's Model).
 *
 * Built once from the Python `multibody.Model` (see py_model.c: CModel) and owned by it: the
 * boundary copies the given tables, mb_model_compile (compile.c) derives the others (inertia6,
 * axis_kind, pose_kind, turn_code, tree_R_exact, dof_unit, dof_axis, the planar tables, the subtree columns); never written after that, so any number of threads may read it at once.  Bodies are
 * numbered 0…nb-1 parents first; parent −1 is the fixed base.  Body i hangs from its parent
 * through joint i.  Spatial vectors are [angular; linear] (Featherstone, spatial_v2).  SI units.
 *
 * A pose (R, p) of a child frame C in a parent frame P means: R (3×3, row-major) rotates
 * C-coordinates into P-coordinates and p is C's origin in P-coordinates.  The spatial_v2 motion
 * transform P → C is then X = plux(Rᵀ, p); spatial.h applies X, X⁻¹, Xᵀ without 6×6 matrices.
 */
#ifndef MULTIBODY_MODEL_H
#define MULTIBODY_MODEL_H

#include "model/joints.h"  /* enum mb_joint_type and per-type facts, generated from the joint table */

/* Rigid-body inertia in "10-parameter" form about a frame's origin, in that frame's coordinates
 * (RBDA §2.13): [m, h0, h1, h2, Ixx, Ixy, Ixz, Iyy, Iyz, Izz] with h = m·c (first moment of mass,
 * kg·m) and Ī the rotational inertia about the origin (kg·m², not about the CoM).  The 6×6
 * spatial inertia is [Ī, h×; (h×)ᵀ, m·1]. */
enum { MB_I_M = 0, MB_I_H = 1, MB_I_BAR = 4, MB_NI = 10 };

/* mb_model.aba_tree's bits (compile.c) */
enum { MB_ABA_HAS_CHILD = 1, MB_ABA_FIRST_CHILD = 2 };

typedef struct mb_model {
    int nb;               /* number of bodies (= joints)                                   */
    int nq;               /* length of q (configuration)                                   */
    int nv;               /* length of qd, qdd, tau (velocity variables)                   */

    /* per body (nb) */
    int *parent;          /* (nb) parent body index, −1 = fixed base; parent[i] < i            */
    int *jtype;           /* (nb) enum mb_joint_type of joint i                               */
    int *q_start;         /* (nb) first index of joint i in q                                 */
    int *nq_joint;        /* (nb) number of q entries of joint i                              */
    int *v_start;         /* (nb) first index of joint i in qd/qdd/tau                        */
    int *nv_joint;        /* (nb) number of velocity variables of joint i                     */
    double *tree_R;       /* (nb × 9) A_PJ: rotates joint-frame coordinates into the parent's,
                                      row-major; the joint frame J is fixed in the parent     */
    double *tree_p;       /* (nb × 3) P_r_PJ: joint frame origin in parent coordinates, m      */
    double *axis;         /* (nb × 3) unit joint axis in joint-frame (= body) coordinates       */
    double *pitch;        /* (nb) helical pitch, m/rad (0 for other joints)                   */
    double *inertia;      /* (nb × 10) body inertia about the body origin, body coordinates,
                                      10-parameter form above (kg, kg·m, kg·m²)               */
    double *inertia6;     /* (nb × 36) the same as a 6×6 spatial inertia (mcI), row-major      */

    /* per velocity variable (nv) */
    double *S;            /* (nv × 6) column k of the motion subspace, body coordinates; the
                                      columns of joint i are rows v_start[i] … +nv_joint[i]−1 */
    double *armature;     /* (nv) rotor inertia added to the diagonal of H (kg·m² or kg), ≥ 0 */
    int *dof_parent;      /* (nv) expanded parent array λ (RBDA table 6.4), −1 = none          */

    int *axis_kind;       /* (nb) k = 0, 1, 2 when joint i is revolute or prismatic about the
                                      coordinate axis e_k exactly (jcalc then composes with an
                                      elementary rotation), −1 otherwise                      */
    int *pose_kind;       /* (nb) k = 0, 1, 2 when Xup_i is a turn about e_k only (a revolute joint
                                      about e_k with no tree rotation), −1 otherwise            */
    int *turn_code;       /* (nb) the structure of Xup_i's R (spatial.h: mb_turn_zero): pose_kind's
                                      k = 0…2; 3 + 3ρ + k when joint i is revolute about e_k and its
                                      tree rotation is a signed permutation T other than the identity
                                      (tree_R_exact): R = T·R_k(θ) has column k ±e_ρ and row ρ ±e_kᵀ;
                                      3 + 4t for a prismatic joint whose R = T has row and column t
                                      ±e_t; −1 otherwise.  Inside pose_kind's allocation          */
    int *unit_handover;   /* (nb) ABA's hand-over copy (aba.c's switch) for a one-dof joint with
                                      S = ±e_s (taken when its armature is 0), −1 for the general one;
                                      inside pose_kind's allocation                               */
    int *aba_tree;        /* (nb) ABA's articulated-inertia bookkeeping (aba.c pass 2), from parent[]
                                      only: MB_ABA_HAS_CHILD when body i has a child, MB_ABA_FIRST_CHILD
                                      when it is its parent's child of largest index (pass 2's first
                                      hand-over into the parent, which then starts from I_λ(i));
                                      inside pose_kind's allocation                               */
    double *tree_R_exact; /* (nb × 9) tree_R, but a rotation that is a signed permutation up to the
                                      rounding of multiples of π/2 (URDF rpy ±1.5707963267948966:
                                      cos = 6.1e-17) has those residues exactly 0: the poses
                                      (poses.h) are then exact ±cos θ, ±sin θ, ±1, 0; inside
                                      inertia6's allocation                                    */
    int *dof_unit;        /* (nv) s when column k of S is the unit vector e_s (s = 0…5), so
                                      products with S are picks (ABA's U = IA S), −1 otherwise  */
    int *dof_axis;        /* (nv) s when column k of S is ±e_s (then S_sk = ±1 is its sign): ABA's
                                      products with S are picks and sign flips, −1 otherwise    */

    /* planar trees (planar.c): every joint frame turned about one coordinate axis e_k only,
     * revolute joints about e_k, prismatic ones in the plane ⊥ e_k.  FDab then runs in planar
     * vectors [ω; v_a; v_b] with a = k+1, b = k+2 (mod 3).                                          */
    int planar;           /* 1 if the tree is planar (tables below filled), else 0                 */
    double *plnr;         /* (nb × 8) cos, sin of the tree rotation's angle about e_k; tree
                                      translation (a, b); Ī_kk, h_a, h_b, m of the body inertia     */
    double *plnr_S;       /* (nv × 3) planar motion subspace columns (inside plnr's allocation)   */
    double plnr_grav[3];  /* planar gravity [0, g_a, g_b]                                         */

    int *sub_cols;        /* (nv) the dofs in depth-first preorder of the bodies (children in index
                                      order): M⁻¹'s columns by subtree (minv.c); one allocation
                                      with the two below                                          */
    int *sub_first;       /* (nb) the subtree of body i owns sub_cols[sub_first[i] … + sub_count[i]) */
    int *sub_count;       /* (nb) number of dofs in the subtree of body i (joint i's included)    */
    int *sub_slot;        /* (nb) M⁻¹'s forward pass: the block of P body i writes (its depth when
                                      dfs_preorder, else i); inside sub_cols' allocation       */
    int dfs_preorder;     /* 1 if every body's parent is the body before it or one of that body's
                                      ancestors (bodies numbered depth-first: URDF, MJCF)      */
    int free_root;        /* 1 if body 0 is the only root and its joint a free joint with S = 1
                                      (the armature, which a run may change, is tested by minv.c) */

    double a_grav[6];     /* spatial gravity [0,0,0, gx,gy,gz] in base coordinates, m/s²      */
    int max_nvj;          /* largest nv_joint (size of the D blocks of ABA)                   */

    char **body_names;    /* (nb) NUL-terminated names, for error messages; NULL: not given     */
} mb_model;

/* Number of doubles a workspace needs for this model (data.h). */
#ifndef MB_LANE_BUILD  /* aba_lanes.c has its own, private */
long mb_data_size(const mb_model *m);
#endif

#endif
