/* jcalc.c — joint transforms (RBDA table 4.1; spatial_v2 jcalc) and the tree poses built on them.
 *
 * One jcalc for every joint type.  It returns the pose of body i in its joint frame J as
 * (R_JB, J_r_JB); mb_tree_poses composes it with the tree transform (Xtree) into Xup_i, the pose
 * of body i in its parent.  Motion subspaces are constant in body coordinates (model.h: S), so
 * nothing else about a joint depends on q.  The transforms themselves are in poses.h, shared with
 * the SIMD-over-states ABA (aba_lanes.c); this file exports them for one state.
 */
#include <math.h>

#include "common/core.h"
#include "model/poses.h"
#include "common/spatial.h"
#include "common/vec.h"
#include "common/trig.h"

void mb_quat_to_rot(double w, double x, double y, double z, double *R)
{
    mb_quat_to_rot_inline(w, x, y, z, R);
}

void mb_sincos(double x, double *s, double *c)
{
    mb_sincos_joint(x, s, c);
}

/* q[0..3] / |q| for a quaternion that is not zero, however large or small its entries. */
void mb_quat_normalise(const double *q, double *out)
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    const double n = sqrt(mb_quat_norm2(&w, &x, &y, &z));
    out[0] = w / n, out[1] = x / n, out[2] = y / n, out[3] = z / n;
}

/* Status of a configuration: non-finite entries, or a zero quaternion (any other one normalises:
 * poses.h rescales huge and tiny ones). */
int mb_check_configuration(const mb_model *m, const double *q)
{
    if (!mb_all_finite(q, m->nq))
        return MB_BAD_Q;
    for (int i = 0; i < m->nb; i++) {
        const int o = mb_joint_quat_offset(m->jtype[i]);
        if (o >= 0) {
            const double *e = q + m->q_start[i] + o;
            if (e[0] == 0 && e[1] == 0 && e[2] == 0 && e[3] == 0)
                return MB_ZERO_QUAT;
        }
    }
    return MB_OK;
}

void mb_jcalc(const mb_model *m, int i, const double *q, double *R, double *p)
{
    mb_jcalc_inline(m, i, q, R, p);
}

void mb_tree_poses(const mb_model *m, const double *q, double *R, double *p)
{
    mb_tree_poses_inline(m, q, R, p);
}

/* Base-frame poses of bodies first … nb−1 from parent-relative ones (bodies are numbered parents
 * first); a body whose parent is before `first` is taken to hang from the base. */
void mb_world_poses_from(const mb_model *m, const double *R, const double *p, double *R0, double *p0, int first)
{
    for (int i = first; i < m->nb; i++) {
        const int par = m->parent[i];
        const double *Ri = R + 9 * i, *pi = p + 3 * i;
        double *Ro = R0 + 9 * i, *po = p0 + 3 * i;
        if (par < first)
            mb_pose_copy(Ri, pi, Ro, po);
        else
            mb_pose_compose(R0 + 9 * par, p0 + 3 * par, Ri, pi, Ro, po);
    }
}

void mb_world_poses(const mb_model *m, const double *R, const double *p, double *R0, double *p0)
{
    mb_world_poses_from(m, R, p, R0, p0, 0);
}
