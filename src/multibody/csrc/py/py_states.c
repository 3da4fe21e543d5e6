/* py_states.c — Per-state functions: each checks the inputs of state n of a job (finite numbers, non-zero
 * quaternions) and runs its kernel; a status code (status.h) says what failed. */
#include "py/py_boundary.h"

/* The rate inputs of one state: q̇ (code MB_BAD_QD), x (code bad_x), f_ext. */
int check_rates(const mb_model *m, const double *qd, const double *x, int bad_x, const double *fext)
{
    if (!mb_all_finite(qd, m->nv))
        return MB_BAD_QD;
    if (x && !mb_all_finite(x, m->nv))
        return bad_x;
    if (fext && !mb_all_finite(fext, 6 * (Py_ssize_t)m->nb))
        return MB_BAD_FEXT;
    return MB_OK;
}

/* rnea: in = q, qd, qdd, f_ext; out = tau */
int rnea_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n), *qd = IN(j, 1, n), *qdd = IN(j, 2, n);
    const double *fe = j->use_fext ? IN(j, 3, n) : NULL;
    int st = mb_check_configuration(m, q);
    if (st == MB_OK)
        st = check_rates(m, qd, qdd, MB_BAD_QDD, fe);
    if (st == MB_OK)
        mb_rnea(m, d, q, qd, qdd, fe, OUT(j, 0, n));
    return st;
}

/* crba: in = q; out = H */
int crba_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n);
    const int st = mb_check_configuration(m, q);
    if (st == MB_OK)
        mb_crba(m, d, q, OUT(j, 0, n));
    return st;
}

/* hand_c: in = q, qd, f_ext; out = H, C */
int hand_c_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n), *qd = IN(j, 1, n);
    const double *fe = j->use_fext ? IN(j, 2, n) : NULL;
    int st = mb_check_configuration(m, q);
    if (st == MB_OK)
        st = check_rates(m, qd, NULL, 0, fe);
    if (st != MB_OK)
        return st;
    double *zero = d->tmp;
    for (int k = 0; k < m->nv; k++)
        zero[k] = 0.0;
    mb_crba(m, d, q, OUT(j, 0, n));
    mb_rnea(m, d, q, qd, zero, fe, OUT(j, 1, n));
    return MB_OK;
}

/* aba, fd_crb, fd_sparse: in = q, qd, tau, f_ext; out = qdd by the job's forward-dynamics algorithm */
int forward_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n), *qd = IN(j, 1, n), *tau = IN(j, 2, n);
    const double *fe = j->use_fext ? IN(j, 3, n) : NULL;
    int st = mb_check_configuration(m, q);
    if (st == MB_OK)
        st = check_rates(m, qd, tau, MB_BAD_TAU, fe);
    if (st == MB_OK)
        st = j->forward(m, d, q, qd, tau, fe, OUT(j, 0, n));
    return st;
}

/* hybrid: in = q, qd, qdd, tau, f_ext; out = qdd, tau (given values read where they are used) */
int hybrid_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n), *qd = IN(j, 1, n), *qdd_in = IN(j, 2, n), *tau_in = IN(j, 3, n);
    const double *fe = j->use_fext ? IN(j, 4, n) : NULL;
    double *qdd = OUT(j, 0, n), *tau = OUT(j, 1, n);
    int st = mb_check_configuration(m, q);
    if (st == MB_OK)
        st = check_rates(m, qd, NULL, 0, fe);
    if (st != MB_OK)
        return st;
    for (int i = 0; i < m->nb; i++)
        for (int k = m->v_start[i]; k < m->v_start[i] + m->nv_joint[i]; k++) {
            if (j->fd[i]) {
                if (!isfinite(tau_in[k]))
                    return MB_BAD_TAU;
                tau[k] = tau_in[k];
            } else {
                if (!isfinite(qdd_in[k]))
                    return MB_BAD_QDD;
                qdd[k] = qdd_in[k];
            }
        }
    return mb_hybrid(m, d, j->fd, q, qd, qdd, tau, fe);
}

/* Floating base: in = xfb, q, qd, tau-or-qdd (real joints only), f_ext; out = xd, qdd-or-tau.
 * The full-model vectors (emulation entries 0) are assembled in the workspace. */
static int floating_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n, int forward)
{
    enum { NE = 6 };  /* emulated joint variables: Px Py Pz Rx Ry Rz */
    const int nq = m->nq, nv = m->nv;
    const double *x = IN(j, 0, n), *fe = j->use_fext ? IN(j, 4, n) : NULL;
    double *q = d->tmp, *qd = q + nq, *in = qd + nv, *out = in + nv;
    memset(d->tmp, 0, sizeof(double) * (nq + 3 * nv));
    memcpy(q + NE, IN(j, 1, n), sizeof(double) * (nq - NE));
    memcpy(qd + NE, IN(j, 2, n), sizeof(double) * (nv - NE));
    memcpy(in + NE, IN(j, 3, n), sizeof(double) * (nv - NE));
    if (!mb_all_finite(x, 13))
        return MB_BAD_XFB;
    if (x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3] < 1e-24)
        return MB_ZERO_QUAT_FB;
    int st = mb_check_configuration(m, q);
    if (st == MB_ZERO_QUAT)
        return MB_ZERO_QUAT_FB;
    if (st == MB_OK)
        st = check_rates(m, qd, in, forward ? MB_BAD_TAU : MB_BAD_QDD, fe);
    if (st == MB_OK)
        st = forward ? mb_fdfb(m, d, x, q, qd, in, fe, OUT(j, 0, n), out)
                     : mb_idfb(m, d, x, q, qd, in, fe, OUT(j, 0, n), out);
    if (st == MB_OK)
        memcpy(OUT(j, 1, n), out + NE, sizeof(double) * (nv - NE));
    return st;
}

int fdfb_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    return floating_state(m, d, j, n, 1);
}

int idfb_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    return floating_state(m, d, j, n, 0);
}

/* body_states: in = q, qd?, qdd?; out = R0, p0, V?, A? */
int body_states_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n), *qd = j->in[1] ? IN(j, 1, n) : NULL;
    const double *qdd = qd && j->in[2] ? IN(j, 2, n) : NULL;
    int st = mb_check_configuration(m, q);
    if (st == MB_OK && qd && !mb_all_finite(qd, m->nv))
        st = MB_BAD_QD;
    if (st == MB_OK && qdd && !mb_all_finite(qdd, m->nv))
        st = MB_BAD_QDD;
    if (st == MB_OK)
        mb_body_states(m, d, q, qd, qdd, OUT(j, 0, n), OUT(j, 1, n), qd ? OUT(j, 2, n) : NULL,
                       qdd ? OUT(j, 3, n) : NULL);
    return st;
}

/* jacobian: in = q; out = J (6 × nv) */
int jacobian_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n);
    const int st = mb_check_configuration(m, q);
    if (st == MB_OK)
        mb_jacobian(m, d, q, j->body, j->point, j->frame, OUT(j, 0, n));
    return st;
}

/* com_jacobian: in = q; out = Σ m_i J_i(c_i) (3 × nv) */
int com_jacobian_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n);
    const int st = mb_check_configuration(m, q);
    if (st == MB_OK)
        mb_com_jacobian(m, d, q, OUT(j, 0, n));
    return st;
}

/* integrate: in = q, v; out = q ⊕ v·dt */
int integrate_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    (void)d;
    const double *q = IN(j, 0, n), *v = IN(j, 1, n);
    int st = mb_check_configuration(m, q);
    if (st == MB_OK && !mb_all_finite(v, m->nv))
        st = MB_BAD_V;
    if (st == MB_OK)
        mb_integrate(m, q, v, j->dt, OUT(j, 0, n));
    return st;
}

/* energy: in = q, qd; out = KE (1), htot (6), Itot (36) */
int energy_state(const mb_model *m, mb_data *d, const job *j, Py_ssize_t n)
{
    const double *q = IN(j, 0, n), *qd = IN(j, 1, n);
    int st = mb_check_configuration(m, q);
    if (st == MB_OK && !mb_all_finite(qd, m->nv))
        st = MB_BAD_QD;
    if (st == MB_OK)
        mb_energy(m, d, q, qd, OUT(j, 0, n), OUT(j, 1, n), OUT(j, 2, n));
    return st;
}
