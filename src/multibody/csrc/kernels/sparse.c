/* sparse.c — factorisations that keep branch-induced sparsity (RBDA §6.5, tables 6.3-6.4;
 * spatial_v2 LTDL, mpyLi, mpyLit) and forward dynamics built on them (fd_sparse):
 *
 *   H = CRBA(q),  C = ID(q, q̇, 0, f_ext),  H = Lᵀ D L,  q̈ = L⁻¹ D⁻¹ L⁻ᵀ (τ − C)
 *
 * Below the diagonal, row i of H is non-zero only in the columns λ(i), λ(λ(i)), … (the ancestors
 * of variable i, λ = model.dof_parent), and LTDL fills in nothing else, so the factorisation and
 * the solves cost O(n·depth) instead of O(n³). */
#include <math.h>
#include <string.h>

#include "common/core.h"
#include "common/vec.h"

/* k's ancestors, nearest first, as runs of consecutive dofs hi[r] ≥ … ≥ lo[r] (a dof whose λ is the dof
 * before it continues the run); returns the number of runs */
static int ancestor_runs(const int *lam, int k, int *lo, int *hi)
{
    int nr = 0;
    for (int i = lam[k]; i >= 0; i = lam[i]) {
        hi[nr] = i;
        while (i > 0 && lam[i] == i - 1)
            i--;
        lo[nr++] = i;
    }
    return nr;
}

/* LTDL (RBDA table 6.3) in place on A (n×n, row-major, holding H): afterwards L's strictly lower
 * part is below A's diagonal (unit diagonal implied) and D on it.  Returns the failing pivot
 * index, or −1. */
MB_CLONES_AVX2
int mb_ltdl(int n, const int *lam, double *A)
{
    /* k's ancestors, nearest first, walked once per k as runs of consecutive dofs hi[r] ≥ … ≥ lo[r] (a joint's
     * dofs, and a child's first dof after its parent's last: dm_control's humanoid has one or two runs a dof),
     * so that the updates run over contiguous memory instead of chasing λ or an index list (each hop a dependent
     * load, each element a gather: the humanoid's factor, twice a step, spent most of its time there).  The same
     * operations in the same order as the book's loops: row i of the ancestors, nearest first, each gets
     * A_ij −= a A_kj for i and its ancestors j, the elements independent of each other. */
    int lo[n > 0 ? n : 1], hi[n > 0 ? n : 1];
    for (int k = n - 1; k >= 0; k--) {
        if (!(A[n * k + k] > 0.0))
            return k;
        const int nr = ancestor_runs(lam, k, lo, hi);
        double *Ak = A + (long)n * k;
        for (int r = 0; r < nr; r++)
            for (int i = hi[r]; i >= lo[r]; i--) {
                const double a = Ak[i] / Ak[k];
                double *Ai = A + (long)n * i;
                mb_add_scaled_run(Ai, Ak, -a, lo[r], i);  /* Ai −= a Ak */
                for (int t = r + 1; t < nr; t++)
                    mb_add_scaled_run(Ai, Ak, -a, lo[t], hi[t]);
                Ak[i] = a;
            }
    }
    return -1;
}

/* x ← L⁻¹ D⁻¹ L⁻ᵀ x with the factors of mb_ltdl in A (mpyLit, D⁻¹, mpyLi). */
void mb_ltdl_solve(int n, const int *lam, const double *A, double *x)
{
    for (int i = n - 1; i >= 0; i--)  /* Lᵀ w = x */
        for (int j = lam[i]; j >= 0; j = lam[j])
            x[j] -= A[n * i + j] * x[i];
    for (int i = 0; i < n; i++)  /* D z = w */
        x[i] /= A[n * i + i];
    for (int i = 0; i < n; i++)  /* L y = z */
        for (int j = lam[i]; j >= 0; j = lam[j])
            x[i] -= A[n * i + j] * x[j];
}

int mb_fd_sparse(const mb_model *m, mb_data *d, const double *q, const double *qd, const double *tau,
                 const double *fext, double *qdd)
{
    const int nv = m->nv;
    double *C = d->tmp, *zero = d->tmp + nv;
    for (int k = 0; k < nv; k++)
        zero[k] = 0.0;
    mb_crba(m, d, q, d->H);                          /* H (table 6.2)            */
    mb_rnea(m, d, q, qd, zero, fext, C);             /* C                        */
    memcpy(d->L, d->H, sizeof(double) * nv * nv);
    if (mb_ltdl(nv, m->dof_parent, d->L) >= 0)       /* H = Lᵀ D L (table 6.3)   */
        return mb_pivot_status(d->H, nv * nv);
    for (int k = 0; k < nv; k++)  /* a pivot that is round-off of its diagonal: H singular */
        if (!(d->L[nv * k + k] > 1e-13 * d->H[nv * k + k]))
            return mb_pivot_status(d->H, nv * nv);
    for (int k = 0; k < nv; k++)
        qdd[k] = tau[k] - C[k];
    mb_ltdl_solve(nv, m->dof_parent, d->L, qdd);     /* L⁻¹ D⁻¹ L⁻ᵀ (τ − C)      */
    return MB_OK;
}

/* ---- the factorisations and products of multibody.sparse, one matrix at a time ----------------
 * M is n×n row-major, lam the expanded parent array (−1 ≤ lam[i] < i, checked by the caller). */

/* L (unit lower, pattern of H) and d with H = Lᵀ diag(d) L (LTDL); A is n×n scratch.
 * Returns the failing pivot or −1; L and d are filled from what was factored either way. */
int mb_ltdl_factors(int n, const int *lam, const double *H, double *A, double *L, double *d)
{
    memcpy(A, H, sizeof(double) * n * n);
    const int info = mb_ltdl(n, lam, A);
    memset(L, 0, sizeof(double) * n * n);
    for (int i = 0; i < n; i++) {
        L[n * i + i] = 1.0;
        d[i] = A[n * i + i];
        for (int j = lam[i]; j >= 0; j = lam[j])
            L[n * i + j] = A[n * i + j];
    }
    return info;
}

/* L with H = Lᵀ L (LTL, RBDA table 6.3), dense: L's entries off the pattern zero (mb_ltl_factor_pattern on a
 * cleared L).  Returns the failing pivot or −1. */
int mb_ltl_factor(int n, const int *lam, const double *H, double *L)
{
    memset(L, 0, sizeof(double) * n * n);
    return mb_ltl_factor_pattern(n, lam, H, L);
}

/* LTL on H's pattern alone: L's diagonal and the columns λ(i), λ(λ(i)), … of each row i are H's and then the
 * factor's; its other entries are neither read nor written (the solves mb_sparse_mpy and hard_contact.c's read
 * the pattern only), so a caller refactoring every step keeps no n² copies or clears (hard contact: two copies
 * and a clear of 27² doubles a humanoid step before).  k's ancestors walked as runs of consecutive dofs, as
 * mb_ltdl's; the same operations in the same order as the book's loops: A_kk = √A_kk, A_ki /= A_kk, then
 * A_ij −= A_ki A_kj for i and its ancestors j (each entry once per k, independent of the others).  Returns the
 * failing pivot or −1. */
MB_CLONES_AVX2
int mb_ltl_factor_pattern(int n, const int *lam, const double *H, double *L)
{
    for (int i = 0; i < n; i++) {
        L[n * i + i] = H[n * i + i];
        for (int j = lam[i]; j >= 0; j = lam[j])
            L[n * i + j] = H[n * i + j];
    }
    int lo[n > 0 ? n : 1], hi[n > 0 ? n : 1];
    for (int k = n - 1; k >= 0; k--) {
        double *Lk = L + (long)n * k;
        if (!(Lk[k] > 0.0))
            return k;
        Lk[k] = sqrt(Lk[k]);
        const int nr = ancestor_runs(lam, k, lo, hi);
        for (int r = 0; r < nr; r++)
            for (int i = hi[r]; i >= lo[r]; i--)
                Lk[i] /= Lk[k];
        for (int r = 0; r < nr; r++)
            for (int i = hi[r]; i >= lo[r]; i--) {
                double *Li = L + (long)n * i;
                mb_add_scaled_run(Li, Lk, -Lk[i], lo[r], i);  /* L_i −= L_ki L_k on i's ancestors and i */
                for (int t = r + 1; t < nr; t++)
                    mb_add_scaled_run(Li, Lk, -Lk[i], lo[t], hi[t]);
            }
    }
    return -1;
}

/* y = op(M) x for op = MB_MPY_H (symmetric H from its lower pattern), MB_MPY_L (L x),
 * MB_MPY_LT (Lᵀ x), MB_MPY_LI (L⁻¹ x), MB_MPY_LIT (L⁻ᵀ x)  (spatial_v2 mpyH, mpyL, mpyLt, mpyLi,
 * mpyLit). */
void mb_sparse_mpy(int op, int n, const int *lam, const double *M, const double *x, double *y)
{
    switch (op) {
    case MB_MPY_H:
        for (int i = 0; i < n; i++)
            y[i] = M[n * i + i] * x[i];
        for (int i = n - 1; i >= 0; i--)
            for (int j = lam[i]; j >= 0; j = lam[j]) {
                y[i] += M[n * i + j] * x[j];
                y[j] += M[n * i + j] * x[i];
            }
        return;
    case MB_MPY_L:
        for (int i = 0; i < n; i++) {
            double s = M[n * i + i] * x[i];
            for (int j = lam[i]; j >= 0; j = lam[j])
                s += M[n * i + j] * x[j];
            y[i] = s;
        }
        return;
    case MB_MPY_LT:
        for (int i = 0; i < n; i++)
            y[i] = M[n * i + i] * x[i];
        for (int i = n - 1; i >= 0; i--)
            for (int j = lam[i]; j >= 0; j = lam[j])
                y[j] += M[n * i + j] * x[i];
        return;
    case MB_MPY_LI:  /* forward substitution */
        memmove(y, x, sizeof(double) * n);
        for (int i = 0; i < n; i++) {
            double s = y[i];
            for (int j = lam[i]; j >= 0; j = lam[j])
                s -= M[n * i + j] * y[j];
            y[i] = s / M[n * i + i];
        }
        return;
    default:  /* MB_MPY_LIT: back substitution */
        memmove(y, x, sizeof(double) * n);
        for (int i = n - 1; i >= 0; i--) {
            y[i] /= M[n * i + i];
            for (int j = lam[i]; j >= 0; j = lam[j])
                y[j] -= M[n * i + j] * y[i];
        }
        return;
    }
}

/* x = L⁻¹ D⁻¹ L⁻ᵀ b with explicit factors (L with its diagonal, d). */
void mb_solve_ltdl(int n, const int *lam, const double *L, const double *d, const double *b, double *x)
{
    mb_sparse_mpy(MB_MPY_LIT, n, lam, L, b, x);
    for (int i = 0; i < n; i++)
        x[i] /= d[i];
    mb_sparse_mpy(MB_MPY_LI, n, lam, L, x, x);
}
