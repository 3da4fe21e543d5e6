/* joints.h — GENERATED from multibody/model/joints.py (JOINTS) by
 * `python -m multibody.model.joints`; do not edit: add a joint type to the table there.
 * The kernels read only these facts; each joint's transform is one case of mb_jcalc_inline
 * (poses.h), and a joint that is not a plain vector has one case of mb_integrate (kinematics.c). */
#ifndef MULTIBODY_JOINTS_H
#define MULTIBODY_JOINTS_H

/* Joint type codes: the same numbers as multibody.model.joints.JointType. */
enum mb_joint_type {
    MB_FIXED = 0,  /* nq 0, nv 0: no motion */
    MB_REVOLUTE = 1,  /* nq 1, nv 1: angle about axis; S = [a; 0] */
    MB_PRISMATIC = 2,  /* nq 1, nv 1: slide along axis; S = [0; a] */
    MB_HELICAL = 3,  /* nq 1, nv 1: angle, slide pitch·angle; S = [a; pitch·a] */
    MB_SPHERICAL = 4,  /* nq 4, nv 3: quaternion [w,x,y,z]; v = ω in body coordinates */
    MB_FREE = 5,  /* nq 7, nv 6: [x,y,z (in parent), w,qx,qy,qz]; v = [ω; v] body coordinates */
    MB_PLANAR = 6,  /* nq 3, nv 3: [x, y, θ] in the joint frame's x-y plane; v = [vx, vy, ω] body coordinates */
    MB_CYLINDRICAL = 7  /* nq 2, nv 2: [angle about axis, slide along axis]; S = [a 0; 0 a] */
};

enum { MB_JOINT_COUNT = 8 };

/* Bit jt set: joint type jt has a plain-vector q with q̇ = v (nq = nv, q + v·dt). */
#define MB_VECTOR_JOINTS 0x8fu

static inline int mb_joint_is_vector(int jt)
{
    return jt >= 0 && jt < MB_JOINT_COUNT && ((MB_VECTOR_JOINTS >> jt) & 1u);
}

/* Nibble jt: 1 + offset of the unit quaternion in the joint's q, 0 = none. */
#define MB_JOINT_QUATS 0x410000ull

static inline int mb_joint_quat_offset(int jt)
{
    return jt >= 0 && jt < MB_JOINT_COUNT ? (int)((MB_JOINT_QUATS >> (4 * jt)) & 0xfu) - 1 : -1;
}

/* Nibble jt: the joint type's nq and nv (CModel checks the tables it is given against them). */
#define MB_JOINT_NQ 0x23741110ull
#define MB_JOINT_NV 0x23631110ull

static inline int mb_joint_nq(int jt)
{
    return jt >= 0 && jt < MB_JOINT_COUNT ? (int)((MB_JOINT_NQ >> (4 * jt)) & 0xfu) : -1;
}

static inline int mb_joint_nv(int jt)
{
    return jt >= 0 && jt < MB_JOINT_COUNT ? (int)((MB_JOINT_NV >> (4 * jt)) & 0xfu) : -1;
}

#endif
