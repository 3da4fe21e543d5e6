/* Boxed LCP by Dantzig-style principal pivoting (OpenDE's "big matrix" step, report §3.4 and
 * Baraff 1994, "Fast contact force computation for nonpenetrating rigid bodies").
 *
 * Find x and w with  A x = b + w,  lo <= x <= hi  and for every row
 *     x = lo  ->  w >= 0,     x = hi  ->  w <= 0,     lo < x < hi  ->  w = 0.
 * A = J M^-1 J^T + CFM/h is symmetric positive definite when CFM > 0.  Rows are driven one at a
 * time into complementarity while all rows already driven stay complementary: the set C holds
 * rows with w = 0 (x free between its bounds), the set N rows held at a bound.  Rows without
 * bounds go first (one solve), then bounded rows, then friction rows whose bounds are
 * mu |x[findex]| with the normal force reached so far (the report's §3.3 approximation 2).  A guess of
 * the free rows (a time stepper's last step) joins the first solve where it holds (seed_free_rows).
 *
 * Never crashes and never stalls: a singular A_CC (1), a step without limit (2), a row that will
 * not settle (3, cycling), a result that is not finite (4) or a total past the caller's pivot
 * budget (5) return that code and the caller falls back to the projected Gauss-Seidel quick step.
 * A pivot factors only the rows of A_CC it changed (solve_cc), so the budget bounds the work of a step.
 */
#include "common/clones.h"
#include "engine/engine.h"

enum { UNSEEN = 0, IN_C = MB_LCP_FREE, AT_LO = MB_LCP_AT_LO, AT_HI = MB_LCP_AT_HI };

/* Solve A_CC y = r for the rows listed in C (m of them) by Cholesky, L (row stride n) holding the
 * factor of the first *nf rows of C from the previous solve.  Row a of a Cholesky factor depends only
 * on rows 0..a of A_CC, so rows of C left in place since then keep theirs: only rows *nf..m-1 are
 * factored here, with the same operations in the same order as a fresh factorization (the result is
 * the same to the bit).  The pivots change C by appending a row (the prefix stays) or by moving its
 * last row into a removed one's place (the prefix ends there: drive lowers *nf), so a pivot costs
 * O(|C|^2) where a fresh factor cost |C|^3 / 6. */
MB_CLONES_AVX2
static int solve_cc(int n, const double *A, const int *C, int m, const double *r, double *y, double *L, int *nf)
{
    /* By columns (right-looking): column k's entries below the diagonal are divisions independent of each
     * other, and its updates of the rows below are too, where row by row every entry waited for the one before
     * it (a chain of divisions: a lying humanoid's A_CC of 26 rows is refactored every step).  Each entry still
     * takes its terms A − L·L − … in k's order and its division last: the same bits as row by row.  Columns go
     * two at a time: column k's update of column k + 1 first, k + 1 made, then both updates of the entries right
     * of them in one pass, (a − x_k c_k) − x_{k+1} c_{k+1} as the two passes took them (the trailing rows are
     * loaded and stored once per pair, not per column).  Column k is copied to row k right of its diagonal (L's
     * unused upper part), so that the passes read it contiguously. */
    const int f = *nf;
    for (int a = f; a < m; a++)  /* the new rows' entries start as A_CC's */
        for (int c = 0; c <= a; c++)
            L[(size_t)a * n + c] = A[(size_t)C[a] * n + C[c]];
    for (int k = 0; k < m; k += 2) {
        double *Lk = L + (size_t)k * n;
        if (k >= f) {                                   /* not (numerically) positive definite: */
            if (!(Lk[k] > 1e-11 * fabs(A[(size_t)C[k] * n + C[k]]) + 1e-300)) { *nf = k; return 1; }  /* pivoting failed */
            Lk[k] = sqrt(Lk[k]);
        }
        const int below = k + 1 > f ? k + 1 : f;        /* the rows of column k still to make */
        for (int a = below; a < m; a++)
            L[(size_t)a * n + k] /= Lk[k];
        for (int j = k + 1; j < m; j++)
            Lk[j] = L[(size_t)j * n + k];
        if (k + 1 == m)
            break;
        double *Lk1 = Lk + n;
        for (int a = below; a < m; a++)                 /* column k's update of column k + 1 (and its diagonal) */
            L[(size_t)a * n + k + 1] -= L[(size_t)a * n + k] * Lk[k + 1];
        if (k + 1 >= f) {
            if (!(Lk1[k + 1] > 1e-11 * fabs(A[(size_t)C[k + 1] * n + C[k + 1]]) + 1e-300)) { *nf = k + 1; return 1; }
            Lk1[k + 1] = sqrt(Lk1[k + 1]);
        }
        const int below1 = k + 2 > f ? k + 2 : f;
        for (int a = below1; a < m; a++)
            L[(size_t)a * n + k + 1] /= Lk1[k + 1];
        for (int j = k + 2; j < m; j++)
            Lk1[j] = L[(size_t)j * n + k + 1];
        const double *restrict c0 = Lk, *restrict c1 = Lk1;
        for (int a = below1; a < m; a++) {              /* the entries right of both: − L_ak L_jk − L_a,k+1 L_j,k+1 */
            double *restrict La = L + (size_t)a * n;
            const double x0 = La[k], x1 = La[k + 1];
            for (int j = k + 2; j <= a; j++) {
                const double t = La[j] - x0 * c0[j];
                La[j] = t - x1 * c1[j];
            }
        }
    }
    *nf = m;
    for (int a = 0; a < m; a++) {                          /* L z = r */
        double s = r[a];
        for (int k = 0; k < a; k++) s -= L[(size_t)a * n + k] * y[k];
        y[a] = s / L[(size_t)a * n + a];
    }
    for (int a = m - 1; a >= 0; a--) {                     /* L^T y = z */
        double s = y[a];
        for (int k = a + 1; k < m; k++) s -= L[(size_t)k * n + a] * y[k];
        y[a] = s / L[(size_t)a * n + a];
    }
    return 0;
}

static double row_w(int n, const double *A, const double *b, const double *x, int i)
{
    double s = -b[i];
    const double *Ai = A + (size_t)i * n;
    for (int j = 0; j < n; j++) s += Ai[j] * x[j];
    return s;
}

/* Drive row i into complementarity (the inner loop of Dantzig's method). */
static int drive(int n, const double *A, const double *b, const double *lo, const double *hi, double *x,
                 double *w, int *state, int *C, int *nC, int i, double *dx, double *dw, double *r, double *y,
                 double *L, int *nf, int *pivots, int max_pivots)
{
    w[i] = row_w(n, A, b, x, i);
    if (lo[i] == hi[i]) { x[i] = lo[i]; state[i] = AT_LO; return 0; }
    if (x[i] <= lo[i] && w[i] >= 0) { x[i] = lo[i]; state[i] = AT_LO; return 0; }
    if (x[i] >= hi[i] && w[i] <= 0) { x[i] = hi[i]; state[i] = AT_HI; return 0; }
    if (w[i] == 0) { state[i] = IN_C; C[(*nC)++] = i; return 0; }
    double s = w[i] < 0 ? 1.0 : -1.0;                    /* raising x_i lowers w_i (A_ii > 0) */
    for (int iter = 0; iter < 8 * n + 32; iter++) {
        if (*pivots >= max_pivots) return LCP_PIVOT_LIMIT;
        (*pivots)++;
        int m = *nC;
        /* direction: dx_i = s, dx_C = -A_CC^-1 A_Ci s keeps w_C = 0 */
        for (int a = 0; a < m; a++) r[a] = -A[(size_t)C[a] * n + i] * s;
        if (m && solve_cc(n, A, C, m, r, y, L, nf)) return LCP_SINGULAR;
        for (int j = 0; j < n; j++) dx[j] = 0;
        for (int a = 0; a < m; a++) dx[C[a]] = y[a];
        dx[i] = s;
        /* the largest step before something changes state */
        double t = INFINITY; int which = -1, kind = 0;
        for (int j = 0; j < n; j++) {
            if (state[j] == AT_LO || state[j] == AT_HI || j == i) {
                const double *Aj = A + (size_t)j * n;
                double d = Aj[i] * s;
                for (int a = 0; a < m; a++) d += Aj[C[a]] * y[a];
                dw[j] = d;
            }
        }
        if (dw[i] * s > 0) { double ti = -w[i] / dw[i]; if (ti < t) { t = ti < 0 ? 0 : ti; which = i; kind = 0; } }
        if (s > 0 && isfinite(hi[i])) { double ti = hi[i] - x[i]; if (ti < t) { t = ti < 0 ? 0 : ti; which = i; kind = 1; } }
        if (s < 0 && isfinite(lo[i])) { double ti = x[i] - lo[i]; if (ti < t) { t = ti < 0 ? 0 : ti; which = i; kind = 1; } }
        for (int a = 0; a < m; a++) {
            int j = C[a]; double d = dx[j], tj;
            if (d > 0 && isfinite(hi[j])) { tj = (hi[j] - x[j]) / d; if (tj < t) { t = tj < 0 ? 0 : tj; which = j; kind = 2; } }
            if (d < 0 && isfinite(lo[j])) { tj = (lo[j] - x[j]) / d; if (tj < t) { t = tj < 0 ? 0 : tj; which = j; kind = 2; } }
        }
        for (int j = 0; j < n; j++) {
            if (j == i) continue;
            if (state[j] == AT_LO && dw[j] < 0) { double tj = -w[j] / dw[j]; if (tj < t) { t = tj < 0 ? 0 : tj; which = j; kind = 3; } }
            if (state[j] == AT_HI && dw[j] > 0) { double tj = -w[j] / dw[j]; if (tj < t) { t = tj < 0 ? 0 : tj; which = j; kind = 3; } }
        }
        if (which < 0 || !isfinite(t)) return LCP_UNBOUNDED;         /* unbounded ray: no solution this way */
        for (int a = 0; a < m; a++) x[C[a]] += t * dx[C[a]];
        x[i] += t * s;
        for (int j = 0; j < n; j++) if (state[j] == AT_LO || state[j] == AT_HI || j == i) w[j] += t * dw[j];
        if (kind == 0) { w[i] = 0; state[i] = IN_C; C[(*nC)++] = i; return 0; }
        if (kind == 1) { x[i] = s > 0 ? hi[i] : lo[i]; state[i] = s > 0 ? AT_HI : AT_LO; return 0; }
        if (kind == 2) {                                    /* a clamped row reaches its bound */
            int a = 0; while (C[a] != which) a++;
            C[a] = C[--(*nC)];
            if (*nf > a) *nf = a;                           /* L's rows from a on no longer C's */
            x[which] = dx[which] > 0 ? hi[which] : lo[which];
            state[which] = dx[which] > 0 ? AT_HI : AT_LO;
            w[which] = 0;
        } else {                                            /* a bounded row becomes free */
            w[which] = 0; state[which] = IN_C; C[(*nC)++] = which;
        }
    }
    return LCP_CYCLING;                                              /* cycling: give up, fall back */
}

/* Dantzig's pivoting seeded with a guess of the free set: the rows guessed free (seed[i] == MB_LCP_FREE: the
 * last step's, for a contact that stays) join the rows without bounds in the first solve, x_C = A_CC^-1 b_C
 * with every other row at 0, and are kept if each lies strictly inside its bounds there — a friction row
 * inside mu |x_n| of its normal, which must be kept too (its bounds are then fixed at that x_n, as pass 3
 * fixes a row's bounds when it drives it).  Those rows are then complementary (w = 0 inside the bounds), the
 * invariant that pivoting keeps for the rows it has driven, so the pivoting goes on from there with the
 * others: a row that stays free costs no pivot, where unseeded every row is driven in by at least one.  Rows
 * outside their bounds leave the guess and it is solved again (a few times); nf: L's factored rows of C.
 * Returns the rows of C: the rows without bounds alone (x all 0) where no guess holds or A_CC is singular. */
static int seed_free_rows(int n, const double *A, const double *b, double *lo, double *hi, const int *findex,
                          const double *mu, const int *seed, double *x, int *state, int *C, int n_free,
                          double *r, double *y, double *L, int *nf)
{
    int nC = n_free;
    for (int a = 0; a < n_free; a++) state[C[a]] = IN_C;   /* (the rows without bounds: in C already) */
    for (int i = 0; i < n; i++)
        if (seed[i] == IN_C && state[i] == UNSEEN && lo[i] < hi[i] &&
            (findex[i] < 0 || (findex[i] < n && seed[findex[i]] == IN_C && findex[findex[i]] < 0)))
            C[nC++] = i;
    for (int tries = 0; tries < 4 && nC > n_free; tries++) {
        for (int a = 0; a < nC; a++) r[a] = b[C[a]];
        *nf = 0;
        if (solve_cc(n, A, C, nC, r, y, L, nf)) break;     /* (dependent rows guessed: pivoting picks among them) */
        for (int a = 0; a < nC; a++) x[C[a]] = y[a];
        int kept = n_free;   /* the guessed rows strictly inside their bounds (a friction row: and its normal) */
        for (int a = n_free; a < nC; a++) {
            const int i = C[a], k = findex[i];
            if (k >= 0 ? x[k] > lo[k] && x[k] < hi[k] && fabs(x[i]) < mu[i] * fabs(x[k]) : x[i] > lo[i] && x[i] < hi[i])
                C[kept++] = i;
        }
        if (kept == nC) {    /* all of them: complementary, the friction rows' bounds fixed at their normals' */
            for (int a = 0; a < nC; a++) state[C[a]] = IN_C;
            for (int a = n_free; a < nC; a++)
                if (findex[C[a]] >= 0) hi[C[a]] = mu[C[a]] * fabs(x[findex[C[a]]]), lo[C[a]] = -hi[C[a]];
            return nC;
        }
        for (int i = 0; i < n; i++) x[i] = 0.0;
        nC = kept;           /* (a friction row whose normal left fails the next try's test: its normal is 0) */
    }
    *nf = 0;                 /* (x is all 0 here: each failed try cleared it) */
    return n_free;
}

static int dantzig(int n, const double *A, const double *b, const double *lo_in, const double *hi_in,
                   const int *findex, const double *mu, const int *seed, double *x, double *work, int *iwork,
                   int *pivots, int max_pivots)
{
    double *lo = work, *hi = lo + n, *w = hi + n, *dx = w + n, *dw = dx + n, *r = dw + n, *y = r + n;
    double *L = y + n;                                       /* n x n */
    int *state = iwork, *C = state + n, nC = 0, nf = 0;     /* nf: rows of C factored in L */
    for (int i = 0; i < n; i++) { lo[i] = lo_in[i]; hi[i] = hi_in[i]; x[i] = 0; w[i] = 0; state[i] = UNSEEN; }
    /* 1. rows without bounds: all clamped at once, x_C = A_CC^-1 b_C */
    for (int i = 0; i < n; i++) if (findex[i] < 0 && isinf(lo[i]) && isinf(hi[i]) && lo[i] < 0 && hi[i] > 0) C[nC++] = i;
    if (seed) {
        const int n_free = nC;
        nC = seed_free_rows(n, A, b, lo, hi, findex, mu, seed, x, state, C, n_free, r, y, L, &nf);
        if (nC > n_free) goto driven;
    }
    if (nC) {
        for (int a = 0; a < nC; a++) r[a] = b[C[a]];
        if (solve_cc(n, A, C, nC, r, y, L, &nf)) return LCP_SINGULAR;
        for (int a = 0; a < nC; a++) { x[C[a]] = y[a]; state[C[a]] = IN_C; }
    }
driven:
    /* 2. bounded rows, 3. friction rows with bounds from the normal force found so far */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            if (state[i] != UNSEEN) continue;
            if ((pass == 0) != (findex[i] < 0)) continue;
            if (findex[i] >= 0) { double f = mu[i] * fabs(x[findex[i]]); lo[i] = -f; hi[i] = f; }
            int err = drive(n, A, b, lo, hi, x, w, state, C, &nC, i, dx, dw, r, y, L, &nf, pivots, max_pivots);
            if (err) return err;
        }
    }
    for (int i = 0; i < n; i++) if (!isfinite(x[i])) return LCP_NOT_FINITE;
    return 0;
}

int mb_lcp_dantzig(int n, const double *A, const double *b, const double *lo_in, const double *hi_in,
                const int *findex, const double *mu, int friction_mode, double *x,
                double *work, int *iwork, int *pivots, int max_pivots)
{
    (void)friction_mode;
    return dantzig(n, A, b, lo_in, hi_in, findex, mu, NULL, x, work, iwork, pivots, max_pivots);
}

/* The passes' fixed point, found directly.  With the rows' states of the last pass held (C free,
 * the others at a bound), the passes' map from bounds to forces is affine: a friction row at its
 * bound carries sigma mu x_n, linear in its normal force.  Putting that in as an equation instead
 * of a number, A_CC x_C + sum over those rows f of A_Cf sigma_f mu_f x_n(f) = b_C - (the fixed
 * rows), is one linear solve (not symmetric: LU with partial pivoting) whose x meets its own
 * bounds mu |x_n| exactly.  It is taken only if it keeps every row complementary (free rows within
 * those bounds, rows at a bound pushing the right way, to tol); then it is the passes' limit and
 * the solve is done, otherwise the passes go on.  Pyramid rows only (cone bounds are not linear).
 * Without such rows M is A_CC itself, solved by Cholesky.
 * x_new: n doubles out; M: n (n + 1) doubles of scratch; rhs: n; Cs: n ints of scratch; tol: the checks' tolerance relative to
 * max(1, |x|) and max(1, |b|).  Returns 1 when x_new is taken, 2 when x_new (finite) is the held states' point
 * but some row is not complementary there, 0 when the solve failed.  next: NULL (the tests stop at the first
 * row that fails), or n states that every row failing them changes to — a free row past a bound to that bound,
 * a row at a bound pulling the wrong way to free (block principal pivoting: mb_lcp_friction_warm); the others'
 * entries are left as they are. */
MB_CLONES_AVX2
static int solve_fixed_point(int n, const double *A, const double *b, const double *lo, const double *hi,
                             const int *bound_by, const double *mu, const int *state, const double *x,
                             double *x_new, double *M, double *rhs, double *lo_new, double *hi_new, double tol,
                             int *Cs, int *next)
{
    int m = 0;
    double xscale = 1, bscale = 1;
    for (int i = 0; i < n; i++) { xscale = fmax(xscale, fabs(x[i])); bscale = fmax(bscale, fabs(b[i])); }
    /* the C index of each free row sits in lo_new (as a double) while M is built */
    for (int i = 0; i < n; i++) lo_new[i] = state[i] == IN_C ? (double)m++ : -1.0;
    if (m == 0) return 0;
    int linked = 0;                                      /* a friction row carried on a free normal? */
    for (int i = 0; i < n; i++) {
        const int k = bound_by[i];
        if (state[i] != IN_C && k >= 0 && state[k] == IN_C && x[i] != 0) linked = 1;
    }
    if (!linked) {   /* M is A_CC, symmetric positive definite: Cholesky (solve_cc), half of LU's work */
        int nfix = 0;    /* Cs: the free rows, then the others (fixed), both ascending */
        const int *fixed = Cs + m;
        for (int i = 0, a = 0; i < n; i++) if (state[i] == IN_C) Cs[a++] = i; else Cs[m + nfix++] = i;
        for (int a = 0; a < m; a++) {
            const int j = Cs[a];
            double r = b[j];
            for (int t = 0; t < nfix; t++) r -= A[(size_t)j * n + fixed[t]] * x[fixed[t]];
            hi_new[a] = r;
        }
        int nf = 0;
        if (solve_cc(n, A, Cs, m, hi_new, rhs, M, &nf)) return 0;
    } else {
        memset(M, 0, sizeof(double) * (size_t)m * (m + 1));
        for (int i = 0; i < n; i++) Cs[i] = (int)lo_new[i];  /* (each row's C index as an int, once) */
        for (int j = 0, a = 0; j < n; j++) {                 /* rows of M: the free rows' w_j = 0 */
            if (state[j] != IN_C) continue;
            double r = b[j];
            for (int i = 0; i < n; i++) {
                const double Aji = A[(size_t)j * n + i];
                if (state[i] == IN_C) { M[a * (m + 1) + Cs[i]] += Aji; continue; }
                const int k = bound_by[i];
                if (k >= 0 && state[k] == IN_C && x[i] != 0) {
                    const double sigma = x[i] > 0 ? 1.0 : -1.0, sn = x[k] >= 0 ? 1.0 : -1.0;
                    M[a * (m + 1) + Cs[k]] += Aji * sigma * mu[i] * sn;
                } else {
                    r -= Aji * x[i];
                }
            }
            M[a * (m + 1) + m] = r;
            a++;
        }
        for (int c = 0; c < m; c++) {                        /* Gaussian elimination, partial pivoting */
            int p = c;
            for (int a = c + 1; a < m; a++) if (fabs(M[a * (m + 1) + c]) > fabs(M[p * (m + 1) + c])) p = a;
            if (!(fabs(M[p * (m + 1) + c]) > 1e-300)) return 0;
            for (int k = c; p != c && k <= m; k++) {
                const double t = M[c * (m + 1) + k];
                M[c * (m + 1) + k] = M[p * (m + 1) + k]; M[p * (m + 1) + k] = t;
            }
            for (int a = c + 1; a < m; a++) {   /* (rows a and c apart, said so: the update runs on lanes, each
                                                  * entry's product and difference as before, to the bit) */
                double *restrict Ma = M + a * (m + 1);
                const double *restrict Mc = M + c * (m + 1);
                const double f = Ma[c] / Mc[c];
                if (f != 0) for (int k = c; k <= m; k++) Ma[k] -= f * Mc[k];
            }
        }
        for (int a = m - 1; a >= 0; a--) {
            double s = M[a * (m + 1) + m];
            for (int k = a + 1; k < m; k++) s -= M[a * (m + 1) + k] * rhs[k];
            rhs[a] = s / M[a * (m + 1) + a];
        }
    }
    for (int i = 0; i < n; i++) x_new[i] = state[i] == IN_C ? rhs[(int)lo_new[i]] : x[i];
    for (int i = 0; i < n; i++) {                        /* the rows carried on their normal force */
        const int k = bound_by[i];
        if (state[i] != IN_C && k >= 0 && state[k] == IN_C && x[i] != 0)
            x_new[i] = (x[i] > 0 ? 1.0 : -1.0) * mu[i] * fabs(x_new[k]);
    }
    /* is every row complementary under the bounds x_new implies? */
    for (int i = 0; i < n; i++)  /* (a warm start's x holds only signs: the scale is the solution's too) */
        xscale = fmax(xscale, fabs(x_new[i]));
    const double tol_x = tol * xscale, tol_w = tol * bscale;
    for (int i = 0; i < n; i++) {
        double l = lo[i], h = hi[i];
        if (bound_by[i] >= 0) { h = mu[i] * fabs(x_new[bound_by[i]]); l = -h; }
        if (!isfinite(x_new[i])) return 0;
        lo_new[i] = l; hi_new[i] = h;
    }
    int broken = 0;
    for (int i = 0; i < n; i++) {
        const double l = lo_new[i], h = hi_new[i];
        int to = -1;                                     /* the state a row that breaks complementarity takes */
        if (x_new[i] < l - tol_x) {
            to = AT_LO;
        } else if (x_new[i] > h + tol_x) {
            to = AT_HI;
        } else if (state[i] != IN_C) {
            double w = -b[i];
            for (int j = 0; j < n; j++) w += A[(size_t)i * n + j] * x_new[j];
            if (l == h) continue;                        /* a row held at a point: any w */
            if (x_new[i] - l <= h - x_new[i]) {          /* at its lower bound: pushing up */
                if (x_new[i] > l + tol_x || w < -tol_w) to = IN_C;
            } else if (x_new[i] < h - tol_x || w > tol_w) {  /* at its upper bound: pushing down */
                to = IN_C;
            }
        }
        if (to < 0) continue;
        if (!next) return 2;
        next[i] = to, broken = 1;
    }
    return broken ? 2 : 1;
}

/* mb_lcp_friction's try of the fixed point of the row states in iwork (mb_lcp_dantzig's last pivoting's) with
 * the rows' own bounds: where it holds (1), x and the bounds used (work[0 … 2n)) are its, one pivot counted;
 * else (0) nothing but scratch is written (work past mb_lcp_dantzig's bounds, iwork past its 2 n states). */
static int take_fixed_point(int n, const double *A, const double *b, const double *lo, const double *hi,
                            const int *bound_by, const double *mu, double *x, double *work, int *iwork, int *pivots)
{
    if (solve_fixed_point(n, A, b, lo, hi, bound_by, mu, iwork, x, work + 2 * n, work + 7 * n, work + 3 * n,
                          work + 4 * n, work + 5 * n, 1e-9, iwork + n, NULL) != 1)
        return 0;
    (*pivots)++;
    for (int i = 0; i < n; i++) { x[i] = work[2 * n + i]; work[i] = work[4 * n + i]; work[n + i] = work[5 * n + i]; }
    return 1;
}

/* The boxed LCP with friction rows (findex >= 0) bounded by mu |x[findex]|: first ODE's
 * approximation (bounds from the normal forces reached while pivoting), then fixed-point passes
 * with the bounds from the previous normal forces until they settle, which is the true pyramid
 * (and, with a cone pair's bounds shared along the previous friction direction, the cone).
 * Settled means a change of 1e-8 relative (about sqrt(eps)): the normal forces of a box's four
 * coplanar contacts are fixed only by CFM (A's normal block has a condition near 1e8), so a pass
 * moves them by that much whatever the bounds; a tighter test (1e-10) ran every step to the 20
 * passes, 10 times the pivots.  The passes alone converge linearly, often slowly (a ratio of 0.6
 * to 0.95 per pass on the dropped Panda, where they missed the test within 20 passes in 8 % of the
 * steps) and some cycle; after each pass solve_fixed_point tries their limit directly, and is
 * taken after the first pass in 81 % of those steps, within 5 in 99 %.
 *
 * lo, hi: the rows' own bounds in, the bounds used last out; findex is set to -1 (the passes'
 * bounds are fixed); cone_pair may be NULL.  flo, fhi: n doubles each; work, iwork as for
 * mb_lcp_dantzig. */
int mb_lcp_friction(int n, const double *A, const double *b, double *lo, double *hi, int *findex,
                 const double *mu, const int *cone_pair, double *x, double *flo, double *fhi,
                 double *work, int *iwork, int *pivots, int max_pivots, double *bpp_work, int *bpp_iwork,
                 const int *seed)
{
    int err = dantzig(n, A, b, lo, hi, findex, mu, seed, x, work, iwork, pivots, max_pivots);
    if (err) return err;
    int *bound_by = iwork + 2 * n;                           /* findex, kept for the passes */
    int has_friction = 0, cone_pair_used = 0;
    for (int i = 0; i < n; i++) { bound_by[i] = findex[i]; if (findex[i] >= 0) { has_friction = 1; findex[i] = -1; } }
    if (cone_pair) for (int i = 0; i < n; i++) if (cone_pair[i] >= 0) cone_pair_used = 1;
    /* the first pivoting's states may already be the pyramid's: their fixed point first (a cold step of a falling
     * humanoid otherwise pivots every row in again for pass 0 before it is tried) */
    if (has_friction && !cone_pair_used && take_fixed_point(n, A, b, lo, hi, bound_by, mu, x, work, iwork, pivots))
        has_friction = 0;
    /* else those states corrected by block principal pivoting, before another pass pivots every row in again:
     * the steps of a falling humanoid whose warm start failed then took 46 pivots, not 60 */
    if (has_friction && !cone_pair_used && bpp_work && bpp_iwork) {
        int *guess = bpp_iwork + 3 * n;
        double *x_bpp = bpp_work + (size_t)n * n + 6 * n;
        memcpy(guess, iwork, sizeof(int) * n);
        (*pivots)++;
        if (mb_lcp_friction_warm(n, A, b, lo, hi, bound_by, mu, guess, x_bpp, bpp_work, bpp_iwork)) {
            memcpy(x, x_bpp, sizeof(double) * n);
            for (int i = 0; i < n; i++) {   /* the bounds the solution meets, as a pass leaves them */
                const double f = bound_by[i] >= 0 ? mu[i] * fabs(x[bound_by[i]]) : 0.0;
                work[i] = bound_by[i] >= 0 ? -f : lo[i], work[n + i] = bound_by[i] >= 0 ? f : hi[i];
            }
            has_friction = 0;
        }
    }
    for (int pass = 0; has_friction && pass < 20; pass++) {
        double change = 0, scale = 0;
        for (int i = 0; i < n; i++) {
            flo[i] = lo[i]; fhi[i] = hi[i];
            if (bound_by[i] < 0) continue;
            double bound = mu[i] * fabs(x[bound_by[i]]);
            if (cone_pair && cone_pair[i] >= 0) {
                double f = hypot(x[i], x[cone_pair[i]]), share = f > 1e-12 ? fabs(x[i]) / f : 0.7071067811865476;
                if (share < 0.05) share = 0.05;
                bound *= share;
            }
            flo[i] = -bound; fhi[i] = bound;
            double old = work[n + i];                            /* the bound used last */
            change = fmax(change, fabs(bound - old)); scale = fmax(scale, bound);
        }
        if (pass > 0 && change <= 1e-8 * (1 + scale)) break;
        /* bound_by lies in iwork beyond mb_lcp_dantzig's 2 n */
        err = mb_lcp_dantzig(n, A, b, flo, fhi, findex, mu, 0, x, work, iwork, pivots, max_pivots);
        if (err) return err;
        /* the pass's states known: try their fixed point (work past mb_lcp_dantzig's bounds is free) */
        if (!cone_pair_used && take_fixed_point(n, A, b, lo, hi, bound_by, mu, x, work, iwork, pivots))
            break;
    }
    for (int i = 0; i < n; i++) { lo[i] = work[i]; hi[i] = work[n + i]; }
    return 0;
}


/* Warm start: the rows' states guessed (free, at the lower or the upper bound; the last step's, where the
 * caller knows them), the LCP's solution with those states is one linear solve, solve_fixed_point's:
 * free rows w = 0, rows at a fixed bound at it, friction rows at a bound carrying sigma mu x_n of their
 * normal (unknown when the normal is free).  It is taken only if every row is then complementary under
 * the bounds it implies (free rows within mu |x_n|, rows at a bound pushing the right way) to 1e-12
 * relative: then it is a solution of the pyramid LCP itself, not an approximation (Dantzig's pivoting from
 * a guessed index set, as Featherstone's and Todorov's warm starts: one factorisation where a cold solve
 * drives every row in by pivots).  Where it is not, the guess is corrected and solved again, up to
 * MB_LCP_WARM_TRIES solves in all: every row that breaks complementarity at that point changes its state at
 * once — a free row past a bound to that bound, a row at a bound pulling (w of the wrong sign) to free, a free
 * normal carrying friction rows that came out negative to its bound 0 — Judice and Pires' block principal
 * pivoting ("A block principal pivoting algorithm for large-scale strictly monotone linear complementarity
 * problems", 1994), capped because it may cycle where A is not a P-matrix's; a falling humanoid's steps
 * where contacts start to slide or stick then cost a few solves, not a cold pivoting of every row.
 * Otherwise nothing is written but scratch and the caller solves cold.
 * lo, hi: the rows' own bounds (friction rows: their mu and findex say the bounds); guess: n states in, the
 * solution's out (when 1 is returned); work: n^2 + 6 n doubles; iwork: 3 n ints.  Returns 1 when x holds the
 * solution. */
int mb_lcp_friction_warm(int n, const double *A, const double *b, const double *lo, const double *hi,
                         const int *findex, const double *mu, int *guess, double *x, double *work, int *iwork)
{
    double *xg = work, *x_new = xg + n, *rhs = x_new + n, *lo_new = rhs + n, *hi_new = lo_new + n, *M = hi_new + n;
    int *state = iwork;
    for (int i = 0; i < n; i++) {
        if (guess[i] != IN_C && guess[i] != AT_LO && guess[i] != AT_HI)
            return 0;
        if (findex[i] >= n || (findex[i] >= 0 && findex[findex[i]] >= 0))
            return 0;
        state[i] = guess[i];
    }
    for (int tries = 0; tries < MB_LCP_WARM_TRIES; tries++) {
        /* the states as the numbers solve_fixed_point reads: a row's value at its bound, a friction row at a
         * bound of a free normal only its sign (its value follows the normal's), a free normal's sign + */
        for (int i = 0; i < n; i++) {
            const int g = state[i], k = findex[i];
            if (g == IN_C)
                xg[i] = 1.0;
            else if (k < 0)
                xg[i] = g == AT_LO ? lo[i] : hi[i];
            else
                xg[i] = 0.0;  /* set below, once the normals' states are known */
            if (g != IN_C && k < 0 && !isfinite(xg[i]))
                return 0;
        }
        for (int i = 0; i < n; i++) {
            const int k = findex[i];
            if (k < 0 || state[i] == IN_C)
                continue;
            const double sigma = state[i] == AT_HI ? 1.0 : -1.0;
            xg[i] = state[k] == IN_C ? sigma : sigma * mu[i] * fabs(xg[k]);
        }
        /* the states solved with, kept; the rows that break complementarity at x_new change theirs in `state`
         * (solve_fixed_point's tests) */
        int *held = iwork + 2 * n;
        memcpy(held, state, sizeof(int) * n);
        const int got = solve_fixed_point(n, A, b, lo, hi, findex, mu, held, xg, x_new, M, rhs, lo_new, hi_new,
                                          1e-12, iwork + n, state);
        if (!got)
            return 0;
        int changed = got == 2;
        for (int i = 0; i < n; i++)  /* a free normal carrying friction rows must come out >= 0 (its sign was +) */
            if (findex[i] >= 0 && held[i] != IN_C && held[findex[i]] == IN_C && x_new[findex[i]] < 0)
                state[findex[i]] = AT_LO, changed = 1;
        if (!changed) {
            memcpy(x, x_new, sizeof(double) * n);
            memcpy(guess, state, sizeof(int) * n);
            return 1;
        }
    }
    return 0;
}
