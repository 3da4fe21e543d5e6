/* constraints.c — loop and coupling constraints c(q) = 0 of fixed geometry, and the constrained forward
 * dynamics they ask for (the TMT paper's augmented system, eq. 6, with Baumgarte stabilisation).
 *
 * The rows (multibody.dynamics.constraints, one function per kind there: the Python statement and the
 * tests' reference; each row here is that function's arithmetic, in its order):
 *
 *   point   c = p_a − p_b (world, chosen axes), ċ = v_a − v_b, J = J_a − J_b (linear rows at the
 *           points), bias J̇q̇ = a_a − a_b, the points' accelerations at q̈ = 0
 *   axis    c = u·w (u = R_a u₀, w = R_b w₀), ċ = (u × w)·(ω_a − ω_b), J = (u × w)ᵀ (J^ω_a − J^ω_b),
 *           bias = (u̇ × w + u × ẇ)·(ω_a − ω_b) + (u × w)·(α_a − α_b), u̇ = ω_a × u, ẇ = ω_b × w
 *   linear  fixed tendons L = Σ k_j q_j (a joint coupling: one term of coefficient 1):
 *           c = L_a − a₀ − p(L_b − b₀), J = ∂L_a − p′ ∂L_b, bias = −p″ L̇_b²  (p a polynomial;
 *           without side b, c = L_a − a₀ − c₀)
 *
 * A WeldConstraint is one point item and three axis items, a revolute closure one point and two
 * axis items (the Python side writes the tables: dynamics/constraint_tables.py).
 *
 * Then TMT eq. (6) (van der Linde & Schwab's TMT method; the augmented system of RBDA §8.1), with
 * Baumgarte's (1972) critically damped error dynamics c̈ + 2α ċ + β² c = 0 as the rows' right-hand side:
 *
 *   [ H  −Jᵀ ] [ q̈ ]   [ τ − C                      ]      H = CRBA(q), C = RNEA(q, q̇, 0, f_ext)
 *   [ J   0  ] [ λ  ] = [ −J̇q̇ − 2α ċ − β² c          ]      (the range-space solve of kkt.c, on
 *                                                             H = LᵀL with the tree's sparsity: mb_kkt_solve_tree)
 *
 * Poses, velocities and the q̈ = 0 accelerations come from one mb_body_states pass; the Jacobian
 * columns of a point or a body's rotation are written here from those poses (RBDA §8.1: column k of
 * an ancestor j's dof is [R0_j S_k^ω; R0_j S_k^v + ω_k × (P − p0_j)], mb_jacobian's arithmetic,
 * which reposes the whole tree at each call and fills all six rows).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/core.h"
#include "common/vec.h"

/* Add weight · (the linear rows `axes` of body b's Jacobian at world point P) to J (n_axes × nv). */
static void add_point_columns(const mb_model *m, const double *R0, const double *p0, int b, const double *P,
                              double weight, const int *axes, int n_axes, double *J)
{
    const int nv = m->nv;
    for (int j = b; j >= 0; j = m->parent[j]) {
        const double *Rj = R0 + 9 * j, *pj = p0 + 3 * j;
        const double d[3] = {P[0] - pj[0], P[1] - pj[1], P[2] - pj[2]};
        for (int k = m->v_start[j]; k < m->v_start[j] + m->nv_joint[j]; k++) {
            const double *S = m->S + 6 * k;
            double w[3], u[3];
            mb_mv3(Rj, S, w);
            mb_mv3(Rj, S + 3, u);
            u[0] += w[1] * d[2] - w[2] * d[1];
            u[1] += w[2] * d[0] - w[0] * d[2];
            u[2] += w[0] * d[1] - w[1] * d[0];
            for (int r = 0; r < n_axes; r++)
                J[nv * r + k] += weight * u[axes[r]];
        }
    }
}

/* Add weight · (body b's angular Jacobian rows, world coordinates) to Jw (3 × nv). */
static void add_angular_columns(const mb_model *m, const double *R0, int b, double weight, double *Jw)
{
    const int nv = m->nv;
    for (int j = b; j >= 0; j = m->parent[j])
        for (int k = m->v_start[j]; k < m->v_start[j] + m->nv_joint[j]; k++) {
            double w[3];
            mb_mv3(R0 + 9 * j, m->S + 6 * k, w);
            for (int r = 0; r < 3; r++)
                Jw[nv * r + k] += weight * w[r];
        }
}

/* The kinematics of one constraint evaluation: world poses, body-coordinate velocities [ω; v] and
 * q̈ = 0 accelerations of every body (mb_body_states). */
typedef struct {
    const double *R0, *p0, *V, *A;
} poses;

/* World position, velocity and q̈ = 0 acceleration of point r fixed in body b (the base: r itself). */
static void point_motion(const poses *k, int b, const double *r, double *p, double *v, double *a)
{
    if (b < 0) {
        mb_copy3(r, p);
        memset(v, 0, 3 * sizeof(double)), memset(a, 0, 3 * sizeof(double));
        return;
    }
    const double *R = k->R0 + 9 * b, *w = k->V + 6 * b, *al = k->A + 6 * b;
    double vp[3], acc[3], t[3], Rr[3];
    mb_cross3(w, r, t);
    mb_add3(k->V + 6 * b + 3, t, vp);      /* v + ω × r */
    mb_cross3(al, r, t);
    mb_add3(k->A + 6 * b + 3, t, acc);     /* a + α × r */
    mb_cross3(w, vp, t);
    mb_add3(acc, t, acc);                  /*   + ω × (v + ω × r) */
    mb_mv3(R, r, Rr);
    mb_add3(k->p0 + 3 * b, Rr, p);
    mb_mv3(R, vp, v);
    mb_mv3(R, acc, a);
}

/* World angular velocity and q̈ = 0 angular acceleration of body b (zero for the base). */
static void body_spin(const poses *k, int b, double *w, double *al)
{
    if (b < 0) {
        memset(w, 0, 3 * sizeof(double)), memset(al, 0, 3 * sizeof(double));
        return;
    }
    mb_mv3(k->R0 + 9 * b, k->V + 6 * b, w);
    mb_mv3(k->R0 + 9 * b, k->A + 6 * b, al);
}

static void rotate(const poses *k, int b, const double *x, double *out)
{
    if (b < 0)
        mb_copy3(x, out);
    else
        mb_mv3(k->R0 + 9 * b, x, out);
}

/* PointConstraint's rows (item: body a, body b, n axes, point a, point b, the axes). */
static void point_rows(const mb_model *m, const poses *k, const double *it, double *J, double *c, double *cd,
                       double *bias)
{
    const int a = (int)it[1], b = (int)it[2], n = (int)it[3];
    const int axes[3] = {(int)it[12], (int)it[13], (int)it[14]};
    double pa[3], va[3], aa[3], pb[3], vb[3], ab[3];
    point_motion(k, a, it + 4, pa, va, aa);
    point_motion(k, b, it + 7, pb, vb, ab);
    for (int r = 0; r < n; r++) {
        const int x = axes[r];
        c[r] = pa[x] - pb[x], cd[r] = va[x] - vb[x], bias[r] = aa[x] - ab[x];
    }
    if (a >= 0)
        add_point_columns(m, k->R0, k->p0, a, pa, 1.0, axes, n, J);
    if (b >= 0)
        add_point_columns(m, k->R0, k->p0, b, pb, -1.0, axes, n, J);
}

/* AxisConstraint's row for one direction (item: body a, body b, axis a, direction b). */
static void axis_row(const mb_model *m, const poses *k, const double *it, double *Jw, double *J, double *c,
                     double *cd, double *bias)
{
    const int a = (int)it[1], b = (int)it[2], nv = m->nv;
    double u[3], w[3], wa[3], ala[3], wb[3], alb[3], rel[3], rel_acc[3], ud[3], wd[3], n[3], s[3], t[3];
    rotate(k, a, it + 4, u);
    body_spin(k, a, wa, ala);
    body_spin(k, b, wb, alb);
    memset(Jw, 0, sizeof(double) * 3 * (size_t)nv);
    if (a >= 0)
        add_angular_columns(m, k->R0, a, 1.0, Jw);
    if (b >= 0)
        add_angular_columns(m, k->R0, b, -1.0, Jw);
    mb_sub3(wa, wb, rel);
    mb_sub3(ala, alb, rel_acc);
    mb_cross3(wa, u, ud);
    rotate(k, b, it + 7, w);
    mb_cross3(u, w, n);
    mb_cross3(wb, w, wd);
    *c = mb_dot3(u, w);
    *cd = mb_dot3(n, rel);
    for (int col = 0; col < nv; col++)
        J[col] = n[0] * Jw[col] + n[1] * Jw[nv + col] + n[2] * Jw[2 * nv + col];
    mb_cross3(ud, w, s);
    mb_cross3(u, wd, t);
    mb_add3(s, t, s);
    *bias = mb_dot3(s, rel) + mb_dot3(n, rel_acc);
}

/* p(x), p′(x), p″(x) of Σ coef[i] xⁱ (Horner, as the Python statement). */
static void polynomial(const double *coef, int n, double x, double *p, double *dp, double *ddp)
{
    *p = *dp = *ddp = 0.0;
    for (int i = n - 1; i >= 0; i--) {
        *ddp = *ddp * x + 2.0 * *dp;
        *dp = *dp * x + *p;
        *p = *p * x + coef[i];
    }
}

/* A fixed tendon's length Σ k q and its row ∂L (added into row, which the caller zeroed). */
static double tendon(const mb_constraints *cs, int first, int count, const double *q, double *row)
{
    double L = 0.0;
    for (int i = first; i < first + count; i++) {
        const double *t = cs->terms + 3 * i;
        L += t[2] * q[(int)t[0]];
        row[(int)t[1]] += t[2];
    }
    return L;
}

/* The linear-coupling row (item: first term a, count a, first term b, count b (0: none), first
 * coefficient, count, a₀, b₀); Jb is nv scratch. */
static void linear_row(const mb_model *m, const mb_constraints *cs, const double *it, const double *q,
                       const double *qd, double *Jb, double *J, double *c, double *bias)
{
    const int nv = m->nv, nb_terms = (int)it[4];
    const double *coef = cs->coef + (int)it[5];
    const double La = tendon(cs, (int)it[1], (int)it[2], q, J);
    *c = La - it[7], *bias = 0.0;
    if (nb_terms == 0) {
        *c -= coef[0];
        return;
    }
    memset(Jb, 0, sizeof(double) * (size_t)nv);
    const double Lb = tendon(cs, (int)it[3], nb_terms, q, Jb);
    double p, dp, ddp, Lbd = 0.0;
    polynomial(coef, (int)it[6], Lb - it[8], &p, &dp, &ddp);
    *c -= p;
    for (int k = 0; k < nv; k++)
        J[k] -= dp * Jb[k], Lbd += Jb[k] * qd[k];
    *bias = -ddp * (Lbd * Lbd);
}

long mb_constraints_scratch(const mb_model *m, const mb_constraints *cs)
{
    const long nb = m->nb, nv = m->nv, rows = cs->rows;
    return 24 * nb + 6 * nv + nv * nv + rows * (nv + 5) + mb_kkt_work_size(m->nv, cs->rows);
}

/* Scratch layout: R0 (9 nb), p0 (3 nb), V, A (6 nb each), zero q̈, Jw (3 nv), Jb (nv), H (nv²), C (nv),
 * then J (rows × nv), c, ċ, bias, rhs (rows each), λ (rows) and the KKT solve's work. */
typedef struct {
    double *R0, *p0, *V, *A, *zero, *Jw, *Jb, *H, *C, *J, *c, *cd, *bias, *rhs, *lam, *kkt;
} layout;

static layout lay_out(const mb_model *m, const mb_constraints *cs, double *s)
{
    layout L;
    const long nb = m->nb, nv = m->nv, rows = cs->rows;
    L.R0 = s, L.p0 = L.R0 + 9 * nb, L.V = L.p0 + 3 * nb, L.A = L.V + 6 * nb, L.zero = L.A + 6 * nb;
    L.Jw = L.zero + nv, L.Jb = L.Jw + 3 * nv, L.H = L.Jb + nv, L.C = L.H + nv * nv, L.J = L.C + nv;
    L.c = L.J + rows * nv, L.cd = L.c + rows, L.bias = L.cd + rows, L.rhs = L.bias + rows, L.lam = L.rhs + rows;
    L.kkt = L.lam + rows;
    return L;
}

void mb_constraint_rows(const mb_model *m, mb_data *d, const mb_constraints *cs, double *scratch, const double *q,
                        const double *qd, double *J, double *c, double *cdot, double *bias)
{
    const layout L = lay_out(m, cs, scratch);
    const int nv = m->nv;
    memset(L.zero, 0, sizeof(double) * (size_t)nv);
    memset(J, 0, sizeof(double) * (size_t)cs->rows * nv);
    int posed = 0;  /* linear rows (fixed tendons, joint couplings) read q and q̇ only: no kinematics for them */
    for (int i = 0; i < cs->n_items && !posed; i++)
        posed = (int)cs->items[MB_CON_WIDTH * i] != MB_CON_LINEAR;
    if (posed)
        mb_body_states(m, d, q, qd, L.zero, L.R0, L.p0, L.V, L.A);
    const poses k = {L.R0, L.p0, L.V, L.A};
    int row = 0;
    for (int i = 0; i < cs->n_items; i++) {
        const double *it = cs->items + MB_CON_WIDTH * i;
        double *Jr = J + (long)nv * row;
        switch ((int)it[0]) {
        case MB_CON_POINT:
            point_rows(m, &k, it, Jr, c + row, cdot + row, bias + row);
            row += (int)it[3];
            continue;
        case MB_CON_AXIS:
            axis_row(m, &k, it, L.Jw, Jr, c + row, cdot + row, bias + row);
            break;
        default: /* MB_CON_LINEAR */
            linear_row(m, cs, it, q, qd, L.Jb, Jr, c + row, bias + row);
            cdot[row] = 0.0;
            for (int col = 0; col < nv; col++)
                cdot[row] += Jr[col] * qd[col];
        }
        row++;
    }
}

int mb_constrained_fd(const mb_model *m, mb_data *d, const mb_constraints *cs, double *scratch, const double *q,
                      const double *qd, const double *tau, const double *fext, double *qdd, double *lam)
{
    const layout L = lay_out(m, cs, scratch);
    const int nv = m->nv, rows = cs->rows;
    mb_constraint_rows(m, d, cs, scratch, q, qd, L.J, L.c, L.cd, L.bias);
    const double two_alpha = 2.0 * cs->alpha, beta2 = cs->beta * cs->beta;
    for (int r = 0; r < rows; r++)  /* Baumgarte: J q̈ = −J̇q̇ − 2α ċ − β² c */
        L.rhs[r] = -L.bias[r] - two_alpha * L.cd[r] - beta2 * L.c[r];
    mb_crba(m, d, q, L.H);
    mb_rnea(m, d, q, qd, L.zero, fext, L.C);
    for (int k = 0; k < nv; k++)
        L.C[k] = tau[k] - L.C[k];
    return mb_kkt_solve_tree(nv, m->dof_parent, rows, L.H, L.C, L.J, L.rhs, 1e-13, cs->rank_tol, qdd,
                             lam ? lam : L.lam, L.kkt);
}
