/* energy.c — kinetic energy, momentum and total inertia (spatial_v2 EnerMo).
 *
 *   v_i = Xup_i v_λ(i) + S_i q̇_i,   h_i = I_i v_i,   KE = ½ Σ v_iᵀ h_i + ½ Σ armature_k q̇_k²
 *   Ic_λ(i) += Xup_iᵀ Ic_i Xup_i,   hc_λ(i) += Xup_iᵀ hc_i   (leaves to root, then into the base)
 *
 * Results: KE (J), htot = total spatial momentum about the base origin in base coordinates,
 * Itot = total spatial inertia (6×6, base coordinates).  The Python face derives mass, CoM,
 * potential energy and CoM velocity from Itot and htot.  The armature (a rotor spinning with
 * its joint) adds kinetic energy but no momentum or inertia of the bodies. */
#include <string.h>

#include "common/core.h"
#include "common/spatial.h"

void mb_energy(const mb_model *m, mb_data *d, const double *q, const double *qd, double *KE,
               double *htot, double *Itot)
{
    const int nb = m->nb;
    double *hc = d->f, *Ic = d->Ic, Ibase[MB_NI] = {0};
    double ke = 0.0;
    mb_tree_poses(m, q, d->R, d->p);
    for (int i = 0; i < nb; i++) {
        const int par = m->parent[i], vs = m->v_start[i], nj = m->nv_joint[i];
        double *v = d->v + 6 * i;
        if (par < 0)
            memset(v, 0, 6 * sizeof(double));
        else
            mb_motion_to_child(d->R + 9 * i, d->p + 3 * i, d->v + 6 * par, v);
        for (int k = vs; k < vs + nj; k++) {
            for (int r = 0; r < 6; r++)
                v[r] += m->S[6 * k + r] * qd[k];
            ke += 0.5 * m->armature[k] * qd[k] * qd[k];
        }
        mb_inertia_mul(m->inertia + MB_NI * i, v, hc + 6 * i);
        for (int r = 0; r < 6; r++)
            ke += 0.5 * v[r] * hc[6 * i + r];
    }
    *KE = ke;
    memcpy(Ic, m->inertia, sizeof(double) * MB_NI * nb);
    memset(htot, 0, 6 * sizeof(double));
    for (int i = nb - 1; i >= 0; i--) {
        const int par = m->parent[i];
        const double *R = d->R + 9 * i, *p = d->p + 3 * i;
        mb_inertia_to_parent_add_kind(m->pose_kind[i], R, p, Ic + MB_NI * i, par >= 0 ? Ic + MB_NI * par : Ibase);
        mb_force_to_parent_add(R, p, hc + 6 * i, par >= 0 ? hc + 6 * par : htot);
    }
    mb_inertia_to_matrix(Ibase, Itot);
}
