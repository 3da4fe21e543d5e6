/* data.h — per-thread workspace (like MuJoCo's mjData, Pinocchio's Data).
 *
 * Everything an algorithm writes while it runs lives here, so a call allocates nothing but its
 * result.  One workspace per thread: the single-state entry points use the one owned by the
 * C model (they hold the GIL), every batch worker thread gets its own.  Contents between calls
 * are meaningless; each algorithm fills what it reads.  In the SIMD-over-states build (lanes.h,
 * aba_lanes.c) the same struct is mb_data_lanes and each entry is a vector of MB_LANES doubles.
 */
#ifndef MULTIBODY_DATA_H
#define MULTIBODY_DATA_H

#include "common/lanes.h"
#include "model/model.h"

typedef struct mb_data {
    real *R;       /* (nb × 9) Xup_i as a pose: rotation of body i in its parent (jcalc ∘ Xtree) */
    real *p;       /* (nb × 3) origin of body i in parent coordinates, m                         */
    real *R0;      /* (nb × 9) rotation of body i in the base (world) frame                      */
    real *p0;      /* (nb × 3) origin of body i in base coordinates, m                           */
    real *v;       /* (nb × 6) spatial velocity of body i, body coordinates [rad/s; m/s]          */
    real *a;       /* (nb × 6) spatial acceleration of body i (gravity folded in: a_0 = −a_grav)  */
    real *f;       /* (nb × 6) net spatial force of body i (RNEA), body coordinates [N·m; N]     */
    real *c;       /* (nb × 6) velocity-product acceleration c_i = v_i ×m vJ_i (ABA)           */
    real *IA;      /* (nb × 36) articulated-body inertia of body i, body coordinates (ABA)      */
    real *pA;      /* (nb × 6) articulated bias force of body i (ABA)                            */
    real *Dinv;    /* (nb × 36) inverse of D_i = S_iᵀ U_i (+ armature), nv_joint × nv_joint used  */
    real *U;       /* (nv × 6) U = IA S per velocity variable (ABA)                              */
    real *u;       /* (nv) u = τ − Sᵀ pA (ABA)                                                  */
    real *Ic;      /* (nb × 10) composite rigid-body inertia of the subtree at i (CRBA)          */
    real *H;       /* (nv × nv) joint-space inertia scratch (fd_crb, fd_sparse; CRBA in lanes)   */
    real *L;       /* (nv × nv) factor scratch (fd_crb, fd_sparse)                               */
    real *tmp;     /* (4 nv + nq + 64) vectors: C, rhs, full q …                                        */
    real *block;   /* the single allocation all of the above point into                         */
} mb_data;

#ifndef MB_LANE_BUILD
mb_data *mb_data_new(const mb_model *m);
void mb_data_free(mb_data *d);
#endif

#endif
