/* kkt.c — constrained equations of motion: TMT eq. (6) and FDgq's reduced system, small and dense.
 *
 * TMT eq. (6), the augmented system of a tree with constraint rows J (m × n) and right-hand side
 * r (Baumgarte's −J̇q̇ − 2αċ − β²c), solved by the range-space (Schur complement) method:
 *
 *   [ H  −Jᵀ ] [ q̈ ]   [ d ]      q̈₀ = H⁻¹ d,   A = J H⁻¹ Jᵀ,
 *   [ J   0  ] [ λ  ] = [ r ]      λ = A⁻¹ (r − J q̈₀),   q̈ = q̈₀ + H⁻¹ Jᵀ λ,
 *
 * each H⁻¹ through the Cholesky factor H = L Lᵀ: with Y = L⁻¹Jᵀ and z = L⁻¹d, A = YᵀY, J q̈₀ = Yᵀz and
 * q̈ = L⁻ᵀ(z + Y λ).
 *
 * FDgq (spatial_v2; RBDA eq. 3.20) needs one SPD solve, (Gᵀ H G) ÿ = Gᵀ(τ − C − H gs), by the same
 * Cholesky factorisation (mb_fdgq_solve).  Both H and A are symmetric positive definite when the problem is
 * well posed; a pivot below rel_tol × its diagonal entry means "singular" (LAPACK only refuses
 * pivots ≤ 0; rounding leaves tiny positive pivots in matrices singular in exact arithmetic).
 * multibody.dynamics.constraints falls back to its eigen-decomposition for the diagnostics
 * (which rows are dependent) and for minimum-norm multipliers.  Matrices are row-major.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/core.h"

/* Lower Cholesky factor L of SPD A (n × n); 0 if a pivot s fails s > 0 and s > rel_tol · A_jj. */
int mb_cholesky_factor(int n, const double *A, double *L, double rel_tol)
{
    for (int j = 0; j < n; j++) {
        double s = A[n * j + j];
        for (int k = 0; k < j; k++)
            s -= L[n * j + k] * L[n * j + k];
        if (!(s > 0.0 && s > rel_tol * A[n * j + j]))
            return 0;
        L[n * j + j] = sqrt(s);
        for (int i = j + 1; i < n; i++) {
            double t = A[n * i + j];
            for (int k = 0; k < j; k++)
                t -= L[n * i + k] * L[n * j + k];
            L[n * i + j] = t / L[n * j + j];
        }
        for (int i = 0; i < j; i++)
            L[n * i + j] = 0.0;
    }
    return 1;
}

/* x ← L⁻¹ x (forward substitution). */
static void forward_substitute(int n, const double *L, double *x)
{
    for (int i = 0; i < n; i++) {
        double s = x[i];
        for (int k = 0; k < i; k++)
            s -= L[n * i + k] * x[k];
        x[i] = s / L[n * i + i];
    }
}

/* x ← L⁻ᵀ x (back substitution). */
static void back_substitute(int n, const double *L, double *x)
{
    for (int i = n - 1; i >= 0; i--) {
        double s = x[i];
        for (int k = i + 1; k < n; k++)
            s -= L[n * k + i] * x[k];
        x[i] = s / L[n * i + i];
    }
}

/* x ← A⁻¹ x with A = L Lᵀ (forward, then back substitution). */
void mb_cholesky_apply_inverse(int n, const double *L, double *x)
{
    forward_substitute(n, L, x);
    back_substitute(n, L, x);
}

/* x = H⁻¹ b for SPD H (n×n) with L as scratch; 0 if a pivot is lost to round-off (H singular). */
int mb_cholesky_solve(int n, const double *H, double *L, const double *b, double *x)
{
    if (!mb_cholesky_factor(n, H, L, 1e-13))
        return 0;
    if (x != b)
        memcpy(x, b, sizeof(double) * n);
    mb_cholesky_apply_inverse(n, L, x);
    return 1;
}

/* The multipliers of both solves, given Y (m columns of n: H's factor applied to Jᵀ) and z (in qdd): A = YᵀY
 * = J H⁻¹ Jᵀ factored, λ = A⁻¹ (r − Yᵀz), and z ← z + Y λ.  0 if A is singular (rank_tol). */
static int schur_step(int n, int m, const double *Y, const double *r, double rank_tol, double *A, double *LA,
                      double *qdd, double *lam)
{
    double diag_max = 0.0;
    for (int i = 0; i < m; i++)
        for (int k = 0; k <= i; k++) {  /* A = J H⁻¹ Jᵀ = Yᵀ Y */
            double s = 0.0;
            for (int c = 0; c < n; c++)
                s += Y[n * i + c] * Y[n * k + c];
            A[m * i + k] = A[m * k + i] = s;
            if (i == k && s > diag_max)
                diag_max = s;
        }
    if (diag_max == 0.0 || !mb_cholesky_factor(m, A, LA, rank_tol))
        return 0;
    for (int i = 0; i < m; i++) {  /* λ = A⁻¹ (r − J q̈₀),  J q̈₀ = Yᵀ z */
        double s = r[i];
        for (int c = 0; c < n; c++)
            s -= Y[n * i + c] * qdd[c];
        lam[i] = s;
    }
    mb_cholesky_apply_inverse(m, LA, lam);
    for (int k = 0; k < m; k++)  /* z + Y λ */
        for (int c = 0; c < n; c++)
            qdd[c] += Y[n * k + c] * lam[k];
    return 1;
}

/* With H = L Lᵀ, the solve needs only L⁻¹: Y = L⁻¹Jᵀ and z = L⁻¹d give A = YᵀY and J q̈₀ = Yᵀz, and
 * q̈ = L⁻ᵀ(z + Y λ) — m + 1 forward substitutions and one back substitution. */
int mb_kkt_solve(int n, int m, const double *H, const double *d, const double *J, const double *r, double h_tol,
                 double rank_tol, double *qdd, double *lam)
{
    double *work = malloc(sizeof(double) * ((size_t)mb_kkt_work_size(n, m) + 1));
    if (!work)
        return MB_KKT_NO_MEMORY;
    const int st = mb_kkt_solve_in(n, m, H, d, J, r, h_tol, rank_tol, qdd, lam, work);
    free(work);
    return st;
}

int mb_kkt_solve_in(int n, int m, const double *H, const double *d, const double *J, const double *r, double h_tol,
                    double rank_tol, double *qdd, double *lam, double *work)
{
    /* work: L (n²), Y = L⁻¹Jᵀ stored by columns (m·n), A and its factor (2 m²) */
    double *L = work, *Y = L + n * n, *A = Y + m * n, *LA = A + m * m;
    int st = MB_KKT_OK;
    if (!mb_cholesky_factor(n, H, L, h_tol)) {
        st = MB_KKT_H_NOT_SPD;
        goto done;
    }
    memcpy(qdd, d, sizeof(double) * n);
    forward_substitute(n, L, qdd);  /* z = L⁻¹ d */
    if (m == 0)
        goto back;
    for (int k = 0; k < m; k++) {  /* column k of Y = L⁻¹ (row k of J) */
        memcpy(Y + n * k, J + n * k, sizeof(double) * n);
        forward_substitute(n, L, Y + n * k);
    }
    if (!schur_step(n, m, Y, r, rank_tol, A, LA, qdd, lam)) {
        st = MB_KKT_A_SINGULAR;
        goto done;
    }
back:
    back_substitute(n, L, qdd);  /* q̈ = L⁻ᵀ (z + Y λ) */
done:
    return st;
}

/* The same range-space solve on H = Lᵀ L, L lower triangular with the tree's branch-induced sparsity
 * (RBDA §6.5, table 6.3's LTL; lam = the model's dof_parent): row i of L is non-zero only at i and its
 * ancestors, so the factor costs O(n·depth²) and a solve O(n·depth) instead of n³/6 and n².  With
 * H⁻¹ = L⁻¹ L⁻ᵀ: Y = L⁻ᵀ Jᵀ, z = L⁻ᵀ d, A = YᵀY, J q̈₀ = Yᵀz and q̈ = L⁻¹ (z + Y λ).  A row of J that
 * lives on a few joints (a fixed tendon's) makes a column of Y on their ancestors only. */
static int ltl_factor(int n, const int *lam, const double *H, double *L, double rel_tol)
{
    for (int i = 0; i < n; i++) {  /* L ← H's lower pattern (the rest of L is never read) */
        L[n * i + i] = H[n * i + i];
        for (int j = lam[i]; j >= 0; j = lam[j])
            L[n * i + j] = H[n * i + j];
    }
    for (int k = n - 1; k >= 0; k--) {
        const double s = L[n * k + k];
        if (!(s > 0.0 && s > rel_tol * H[n * k + k]))  /* as mb_cholesky_factor's pivots */
            return 0;
        const double r = sqrt(s);
        L[n * k + k] = r;
        for (int i = lam[k]; i >= 0; i = lam[i])
            L[n * k + i] /= r;
        for (int i = lam[k]; i >= 0; i = lam[i])
            for (int j = i; j >= 0; j = lam[j])
                L[n * i + j] -= L[n * k + i] * L[n * k + j];
    }
    return 1;
}

/* x ← L⁻ᵀ x (Lᵀ is upper triangular: from the leaves to the root, each entry pushed to its ancestors). */
static void ltl_solve_t(int n, const int *lam, const double *L, double *x)
{
    for (int i = n - 1; i >= 0; i--) {
        if (x[i] == 0.0)  /* (a sparse row: nothing to push) */
            continue;
        x[i] /= L[n * i + i];
        for (int j = lam[i]; j >= 0; j = lam[j])
            x[j] -= L[n * i + j] * x[i];
    }
}

/* x ← L⁻¹ x (from the root to the leaves). */
static void ltl_solve(int n, const int *lam, const double *L, double *x)
{
    for (int i = 0; i < n; i++) {
        double s = x[i];
        for (int j = lam[i]; j >= 0; j = lam[j])
            s -= L[n * i + j] * x[j];
        x[i] = s / L[n * i + i];
    }
}

int mb_kkt_solve_tree(int n, const int *lam, int m, const double *H, const double *d, const double *J,
                      const double *r, double h_tol, double rank_tol, double *qdd, double *lmb, double *work)
{
    /* work: L (n², its lower pattern), Y = L⁻ᵀJᵀ stored by columns (m·n), A and its factor (2 m²) */
    double *L = work, *Y = L + n * n, *A = Y + m * n, *LA = A + m * m;
    if (!ltl_factor(n, lam, H, L, h_tol))
        return MB_KKT_H_NOT_SPD;
    memcpy(qdd, d, sizeof(double) * n);
    ltl_solve_t(n, lam, L, qdd);  /* z = L⁻ᵀ d */
    if (m > 0) {
        for (int k = 0; k < m; k++) {  /* column k of Y = L⁻ᵀ (row k of J) */
            memcpy(Y + n * k, J + n * k, sizeof(double) * n);
            ltl_solve_t(n, lam, L, Y + n * k);
        }
        if (!schur_step(n, m, Y, r, rank_tol, A, LA, qdd, lmb))
            return MB_KKT_A_SINGULAR;
    }
    ltl_solve(n, lam, L, qdd);  /* q̈ = L⁻¹ (z + Y λ) */
    return MB_KKT_OK;
}

/* FDgq's solve (RBDA eq. 3.20): q̈ = G (Gᵀ H G)⁻¹ Gᵀ (τ − C − H gs) + gs for G (n × ny), and the
 * generalised constraint force τc = H q̈ + C − τ (Gᵀ τc = 0).  0 if Gᵀ H G is not positive definite
 * (a Cholesky pivot ≤ 1e-13 of its diagonal entry). */
int mb_fdgq_solve(int n, int ny, const double *H, const double *C, const double *tau, const double *G,
                  const double *gs, double *qdd, double *tauc)
{
    double *work = malloc(sizeof(double) * ((size_t)n * ny + 2 * (size_t)ny * ny + n + ny + 1));
    if (!work)
        return -1;
    double *HG = work, *A = HG + n * ny, *LA = A + ny * ny, *r = LA + ny * ny, *y = r + n;
    int ok = 1;
    for (int i = 0; i < n; i++) {  /* HG = H G,  r = τ − C − H gs */
        double s = tau[i] - C[i];
        for (int c = 0; c < n; c++)
            s -= H[n * i + c] * gs[c];
        r[i] = s;
        for (int k = 0; k < ny; k++) {
            double t = 0.0;
            for (int c = 0; c < n; c++)
                t += H[n * i + c] * G[ny * c + k];
            HG[ny * i + k] = t;
        }
    }
    for (int a = 0; a < ny; a++) {  /* A = Gᵀ H G,  y = Gᵀ r */
        double s = 0.0;
        for (int c = 0; c < n; c++)
            s += G[ny * c + a] * r[c];
        y[a] = s;
        for (int b = 0; b < ny; b++) {
            double t = 0.0;
            for (int c = 0; c < n; c++)
                t += G[ny * c + a] * HG[ny * c + b];
            A[ny * a + b] = t;
        }
    }
    if (!mb_cholesky_factor(ny, A, LA, 1e-13)) {  /* as for H in TMT eq. (6): rounding leaves tiny pivots */
        ok = 0;
        goto done;
    }
    mb_cholesky_apply_inverse(ny, LA, y);  /* ÿ */
    for (int i = 0; i < n; i++) {
        double s = gs[i];
        for (int k = 0; k < ny; k++)
            s += G[ny * i + k] * y[k];
        qdd[i] = s;
    }
    for (int i = 0; i < n; i++) {
        double s = C[i] - tau[i];
        for (int c = 0; c < n; c++)
            s += H[n * i + c] * qdd[c];
        tauc[i] = s;
    }
done:
    free(work);
    return ok;
}
