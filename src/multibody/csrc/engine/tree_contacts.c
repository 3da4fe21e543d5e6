/* The exact solve for a joint tree with contacts, stops and motors: the tree's equality rows
 * eliminated through its linear-time factorization (tree.c, Baraff 1996), the other rows pivoted
 * on their Schur complement.
 *
 * A step's rows are each joint's base rows (equalities, "j") and the others ("c": contact
 * normals and friction, joint stops and motors, every bounded row).  With
 *     A = [[A_jj, A_jc], [A_cj, A_cc]],   b = [b_j; b_c],
 * eliminating lambda_j = A_jj^-1 (b_j - A_jc lambda_c) leaves the boxed LCP of the c rows alone,
 *     S lambda_c = b_c' + w_c,   S = A_cc - A_cj A_jj^-1 A_jc,   b_c' = b_c - A_cj A_jj^-1 b_j,
 * which Dantzig pivoting solves (lcp.c, friction bounds as for the whole system).  S is the
 * articulated arm's response at its contacts: column k is J_c dv_k with dv_k the bodies' velocity
 * change from a unit impulse along row k while the joints hold,
 *     dv_k = W (J_k^T - J_j^T x_k),   x_k = A_jj^-1 J_j W J_k^T,
 * one tree solve per c row (O(joints) each, on the factors of A_jj made once), and W J^T comes
 * from the rows' own W J^T (iMJ): A itself is never formed.  Then one more tree solve gives
 * lambda_j.  With CFM > 0, S is positive definite like A (a Schur complement of it), so lambda is
 * unique and the result is the dense pivoting's (tests/test_engine_tree_contacts.py), at the cost
 * of m_c tree solves and pivoting on m_c rows instead of all m: the dense solve's first step
 * factors all the equality rows together, m^3/6, and every pivot refactors them again.
 */
#include <stdlib.h>
#include "engine/engine.h"

typedef struct TreeContacts {
    int nj, cap;
    int *start;                 /* nj: where each joint's base rows begin in this step's rows */
    int *crow;                  /* the c rows' indices in the step's rows */
    int n;                      /* how many */
    double *S, *b, *lo, *hi, *mu, *x, *flo, *fhi, *work;
    int *findex, *cone, *iwork;
    double *dv;                 /* nb x 6: a velocity response */
} TreeContacts;

static void *grow(void *p, size_t n) { return realloc(p, n ? n : 1); }

void mb_tree_contacts_free(mb_world *W)
{
    TreeContacts *T = W->tcon;
    if (!T) return;
    void *ps[] = {T->start, T->crow, T->S, T->b, T->lo, T->hi, T->mu, T->x, T->flo, T->fhi, T->work, T->findex, T->cone, T->iwork, T->dv};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) free(ps[i]);
    free(T);
    W->tcon = NULL;
}

static int reserve(TreeContacts *T, int n)
{
    if (n <= T->cap) return 0;
    int cap = 2 * n + 8;
    double **ds[] = {&T->b, &T->lo, &T->hi, &T->mu, &T->x, &T->flo, &T->fhi};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) { double *p = grow(*ds[i], (size_t)cap * sizeof(double)); if (!p) return -1; *ds[i] = p; }
    int **is[] = {&T->crow, &T->findex, &T->cone};
    for (size_t i = 0; i < sizeof is / sizeof is[0]; i++) { int *p = grow(*is[i], (size_t)cap * sizeof(int)); if (!p) return -1; *is[i] = p; }
    int *iw = grow(T->iwork, (size_t)cap * 3 * sizeof(int)); if (!iw) return -1; T->iwork = iw;
    double *S = grow(T->S, (size_t)cap * cap * sizeof(double)); if (!S) return -1; T->S = S;
    double *wk = grow(T->work, ((size_t)cap * cap + 8 * (size_t)cap + 8) * sizeof(double)); if (!wk) return -1; T->work = wk;
    T->cap = cap;
    return 0;
}

/* Whether this step's rows are the tree's base rows, each joint's first, plus others: returns
 * the number of other rows (listed in crow, the base rows' places in start), -1 when the step
 * cannot take this path, -2 out of memory. */
int mb_tree_contacts_rows(mb_world *W)
{
    const double *wp = W->wpar;
    if (!W->tree_ok || wp[WP_TREE] == 0 || (int)wp[WP_SOLVER] == SOLVER_PGS) return -1;
    TreeContacts *T = W->tcon;
    if (!T) {
        T = W->tcon = calloc(1, sizeof *T);
        if (!T) return -2;
        T->start = malloc(sizeof(int) * ((size_t)W->nj + 1));
        T->dv = malloc(sizeof(double) * 6 * ((size_t)W->nb + 1));
        if (!T->start || !T->dv) return -2;
    }
    const int m = W->m;
    if (reserve(T, m)) return -2;
    int i = 0, n = 0;
    for (int j = 0; j < W->nj; j++) {                 /* joint j's rows: its base rows, then its others */
        int nr = W->trows[j];
        if (i + nr > m) return -1;
        T->start[j] = i;
        for (int q = 0; q < nr; q++, i++) {
            const mb_row *r = W->rows + i;
            if (r->source != j || r->lo != -INFINITY || r->hi != INFINITY) return -1;
        }
        while (i < m && W->rows[i].source == j) T->crow[n++] = i++;
    }
    while (i < m) {                                    /* contacts */
        if (W->rows[i].source >= 0) return -1;
        T->crow[n++] = i++;
    }
    T->n = n;
    return n;
}

/* dv = W J_j^T x for the joint multipliers x in tvec's layout (6 per joint) */
static void joint_response(const mb_world *W, const double *x, double *dv)
{
    memset(dv, 0, sizeof(double) * 6 * (size_t)W->nb);
    for (int j = 0; j < W->nj; j++) {
        const mb_row *r = W->rows + W->tstart[j];
        const double *xj = x + 6 * (size_t)j;
        int b1 = r->b1, b2 = r->b2;
        for (int q = 0; q < W->trows[j]; q++) {
            for (int k = 0; k < 6; k++) dv[6 * b1 + k] += xj[q] * r[q].J1[k];
            if (b2 >= 0) for (int k = 0; k < 6; k++) dv[6 * b2 + k] += xj[q] * r[q].J2[k];
        }
    }
    for (int b = 0; b < W->nb; b++) {                  /* forces to velocities: [f / m; I^-1 tau] */
        double *d = dv + 6 * (size_t)b, t[3];
        const double im = W->bprop[(size_t)b * BP_SIZE + BP_INVMASS];
        for (int k = 0; k < 3; k++) d[k] *= im;
        smv3(W->invIw + 9 * (size_t)b, d + 3, t); mb_copy3(t, d + 3);
    }
}

/* J_r u for row r and a 12-vector u on bodies (b1, b2) (W J^T of another row): the sides the two
 * rows share */
static double row_dot_pair(const mb_row *r, int b1, int b2, const double *u)
{
    double s = 0;
    if (r->b1 >= 0) {
        if (r->b1 == b1) s += dot6(r->J1, u);
        if (r->b1 == b2) s += dot6(r->J1, u + 6);
    }
    if (r->b2 >= 0) {
        if (r->b2 == b1) s += dot6(r->J2, u);
        if (r->b2 == b2) s += dot6(r->J2, u + 6);
    }
    return s;
}

/* J_r dv for a velocity change of every body */
static double row_dot_bodies(const mb_row *r, const double *dv)
{
    return (r->b1 >= 0 ? dot6(r->J1, dv + 6 * r->b1) : 0.0) + (r->b2 >= 0 ? dot6(r->J2, dv + 6 * r->b2) : 0.0);
}

/* tvec = J_j u: the base rows' products with u = W J_k^T of a c row on bodies (b1, b2), zero
 * for the joints on neither body (the pads stay zero) */
static void joint_rhs_of_row(mb_world *W, int b1, int b2, const double *u)
{
    memset(W->tvec, 0, sizeof(double) * 6 * (size_t)W->nj);
    for (int j = 0; j < W->nj; j++) {
        const mb_row *r = W->rows + W->tstart[j];
        int touches = (r->b1 >= 0 && (r->b1 == b1 || r->b1 == b2)) || (r->b2 >= 0 && (r->b2 == b1 || r->b2 == b2));
        if (!touches) continue;
        for (int q = 0; q < W->trows[j]; q++) W->tvec[6 * (size_t)j + q] = row_dot_pair(r + q, b1, b2, u);
    }
}

/* The step's lambda for every row, W->lo and W->hi the bounds used; iMJ, b and CFM/h formed
 * (lcp_terms).  0, or an LCP_* code (a tree that will not factor reads as A_CC singular). */
static int solve(mb_world *W, TreeContacts *T)
{
    const int n = T->n, nj = W->nj;
    double *tv = W->tvec, *dv = T->dv;
    /* A_jj factored, y = A_jj^-1 b_j (in tvec), b_c' = b_c - J_c W J_j^T y */
    if (mb_tree_solve(W)) return LCP_SINGULAR;
    joint_response(W, tv, dv);
    for (int a = 0; a < n; a++) T->b[a] = W->b[T->crow[a]] - row_dot_bodies(W->rows + T->crow[a], dv);
    /* S column by column: dv_k = W J_k^T - W J_j^T A_jj^-1 J_j W J_k^T, S[a][k] = J_a dv_k */
    for (int k = 0; k < n; k++) {
        const mb_row *rk = W->rows + T->crow[k];
        const double *u = W->iMJ + 12 * (size_t)T->crow[k];
        joint_rhs_of_row(W, rk->b1, rk->b2, u);
        if (mb_tree_resolve(W)) return LCP_NOT_FINITE;
        joint_response(W, tv, dv);
        for (int a = 0; a < n; a++) {
            const mb_row *ra = W->rows + T->crow[a];
            T->S[(size_t)a * n + k] = row_dot_pair(ra, rk->b1, rk->b2, u) - row_dot_bodies(ra, dv);
        }
    }
    for (int a = 0; a < n; a++) {                      /* exactly symmetric, CFM/h on the diagonal */
        for (int k = 0; k < a; k++) {
            double s = 0.5 * (T->S[(size_t)a * n + k] + T->S[(size_t)k * n + a]);
            T->S[(size_t)a * n + k] = T->S[(size_t)k * n + a] = s;
        }
        T->S[(size_t)a * n + a] += W->cfmh[T->crow[a]];
    }
    /* the c rows' LCP, friction indices to their places among the c rows (a normal row is a c
     * row and comes before its friction rows) */
    int *place = T->iwork;                             /* row -> c index, over the rows from crow[0] */
    const int first = n ? T->crow[0] : 0;
    for (int a = 0; a < n; a++) place[T->crow[a] - first] = a;
    for (int a = 0; a < n; a++) {
        const mb_row *r = W->rows + T->crow[a];
        T->lo[a] = r->lo; T->hi[a] = r->hi; T->mu[a] = r->mu;
        T->findex[a] = r->findex >= first ? place[r->findex - first] : -1;
        T->cone[a] = r->cone_pair >= first ? place[r->cone_pair - first] : -1;
    }
    int err = n ? mb_lcp_friction(n, T->S, T->b, T->lo, T->hi, T->findex, T->mu, T->cone, T->x, T->flo, T->fhi, T->work,
                               T->iwork, &W->pivots, (int)W->wpar[WP_MAX_PIVOTS], NULL, NULL, NULL) : 0;
    if (err) return err;
    /* lambda_j = A_jj^-1 (b_j - J_j W J_c^T lambda_c): the c rows' forces as velocities, then one
     * more tree solve, which writes the joints' multipliers in place */
    memset(dv, 0, sizeof(double) * 6 * (size_t)W->nb);
    for (int a = 0; a < n; a++) {
        const int i = T->crow[a];
        const mb_row *r = W->rows + i;
        const double *u = W->iMJ + 12 * (size_t)i;
        W->lambda[i] = T->x[a]; W->lo[i] = T->lo[a]; W->hi[i] = T->hi[a];
        if (r->b1 >= 0) for (int k = 0; k < 6; k++) dv[6 * r->b1 + k] += T->x[a] * u[k];
        if (r->b2 >= 0) for (int k = 0; k < 6; k++) dv[6 * r->b2 + k] += T->x[a] * u[6 + k];
    }
    for (int j = 0; j < nj; j++) {
        const int t0 = W->tstart[j];
        for (int q = 0; q < W->trows[j]; q++) {
            tv[6 * (size_t)j + q] = W->b[t0 + q] - row_dot_bodies(W->rows + t0 + q, dv);
            W->lo[t0 + q] = -INFINITY; W->hi[t0 + q] = INFINITY;
        }
        for (int q = W->trows[j]; q < 6; q++) tv[6 * (size_t)j + q] = 0;
    }
    return mb_tree_resolve(W) ? LCP_NOT_FINITE : 0;
}

int mb_tree_contacts_solve(mb_world *W)
{
    /* tree.c reads joint j's base rows at tstart[j], their places when the rows are base rows
     * only; here each joint's stop and motor rows follow its base rows, so tstart points at the
     * places this step wrote them while the tree works */
    int *keep = W->tstart;
    W->tstart = W->tcon->start;
    int err = solve(W, W->tcon);
    W->tstart = keep;
    return err;
}
