/* hard_contact.c — hard contact with Coulomb friction and restitution, in reduced coordinates:
 * a velocity-level time stepper (Stewart & Trinkle 1996; Anitescu & Potra 1997), as ODE's step and
 * MuJoCo's do, on the model's own geoms (scene_contact.c's narrow phase).
 *
 * Each step of h from (q, v) with the contacts at q (normal n from geom a into b, tangents t1, t2 of
 * mb_scene_tangents, depth d):
 *
 *   v⁺ = v + M⁻¹ (h (τ − C) + Jᵀ λ) = v_free + M⁻¹ Jᵀ λ,     q⁺ = q ⊕ h v⁺      (semi_implicit's step)
 *
 * J the rows n·(J_b − J_a)(x), t·(J_b − J_a)(x) of each contact point x (linear Jacobians of the two
 * bodies at x, world-aligned), λ the impulses from the LCP on the Delassus operator
 *
 *   A = J M⁻¹ Jᵀ = Yᵀ Y,  Y = L⁻ᵀ Jᵀ,  M = Lᵀ L  (the core's LTL: branch-induced sparsity, RBDA §6.5)
 *   (A + ε diag A) λ = b + w:   normal rows   0 ≤ λ_n ⊥ w_n ≥ 0,  b_n = v*_n − J_n v_free
 *                               friction rows |λ_t| ≤ μ λ_n (the pyramid), b_t = −J_t v_free
 *
 * solved by the engine's pivoting LCP (engine/lcp.c: mb_lcp_friction, ODE's findex rows followed to the
 * true pyramid's fixed point) — the one LCP solver of the project.  The normal target velocity
 *
 *   v*_n = max(e·max(−J_n v, 0),  ERP·max(d − slop, 0)/h)     (d ≥ 0: restitution, Baumgarte's ERP)
 *   v*_n = d/h                                                 (−margin < d < 0: a gap the step may close)
 *
 * so a contact approaching at J_n v leaves at −e J_n v (Newton's restitution on the approach speed),
 * and a penetration beyond the slop is removed at ERP per step (Baumgarte stabilisation, as ODE's
 * ERP) while one within it stays (resting contacts persist: no lift-off and fall every other step).
 * Friction rows are along t1, t2 (pyramid: Coulomb exact for sliding along a tangent); condim 1 or
 * μ = 0: the normal row alone; torsional and rolling friction are not modelled.  The impulses enter
 * the step as the mean force λ/h: q̈ = q̈₀ + M⁻¹ Jᵀ λ / h, recorded with the slot's force λ/h.
 *
 * Joint limits (the run's hard stops: rows q index, v index, position, sign) are rows of the same
 * LCP, as MuJoCo and ODE take them: a limit whose gap sign (q − pos) the step may close gets the row
 * sign·e_i, λ ≥ 0, with a contact normal's target (−gap/h while apart; restitution on the approach,
 * ERP beyond the slop once past).
 *
 * Soft stops (limits="soft": MuJoCo's soft limits, passive.c's rows) a joint has passed are rows of the same LCP
 * too, as MuJoCo solves its limits with its contacts: the stop's force f = (a_ref − J a)/R at the step's
 * a = (v⁺ − v)/h is, for its impulse λ = h f, J v⁺ + R λ = J v + h a_ref with λ ≥ 0 — R on A's diagonal.
 *
 * Constraints of constant Jacobian G (MJCF fixed-tendon and joint couplings, c = G q − c₀ on
 * one-variable joints) are rows of the same LCP, unbounded (its bilateral rows, as ODE's joints), with
 * Baumgarte's target G v⁺ = −ERP c/h: the free step q̈₀ is the unconstrained FDab's, and the whole
 * step stays in C.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "sim/hard_contact.h"

struct mb_hard_work {
    int cap, rows;                  /* contacts the narrow phase may give; rows the buffers hold */
    mb_scene_contact *c;            /* (cap) contacts                                          */
    void *poses;                    /* the narrow phase's geom poses (mb_scene_pose_scratch)    */
    int *slot, *first;              /* (cap) each contact's slot and its first row             */
    const double *F_last;           /* the F of the last call, and the slots it wrote there     */
    int n_last;                     /*   (w->slot[0..n_last)): only those are zeroed next time  */
    int *lim;                       /* (joint limits, then soft stops) those in this step's rows */
    double *H, *L;                  /* (nv × nv) M, its LTL factor (on M's pattern: mb_ltl_factor_pattern) */
    double *J3, *u, *vfree;         /* (3 nv), (nv), (nv)                                       */
    double *ax;                     /* (6 nv) the dofs' world axes at the step's poses (mb_dof_world_axes) */
    double *dir;                    /* (rows × 3) each row's direction (n, t1 or t2)            */
    double *Y, *A, *b, *lo, *hi, *mu, *x, *flo, *fhi, *work, *bpp_work;
    int *findex, *iwork, *guess, *bpp_iwork;
    int *nz, *nnz;                  /* (rows × nv), (rows): each row of Y's nonzero columns, ascending */
    int *group, groups;             /* (rows + 1): the first row of each group of rows sharing nz (a contact's) */
    int *path;                      /* (rows) per group: its columns are one path from the root (delassus)   */
    uint64_t *mask;                 /* (rows × ⌈nv / 64⌉) each group's columns as bits (delassus)             */
    int *chain;                     /* (3 nv) scratch: two bodies' dof chains, a pair of groups' common columns */
    /* the warm start: per run (lane) of the group, the states of the last solve's rows (MB_LCP_*; 0 none),
     * 3 per slot (normal, t1, t2) and 1 per joint limit, valid where stamp (per slot, per limit) is the
     * lane's call count less one: each run guesses from its own last step, so a batch's runs are the
     * single runs bit for bit */
    int lanes, keys;                /* keys: slots (cap) + joint limits */
    signed char *memo;              /* (lanes × keys × 3) */
    long *stamp, *calls;            /* (lanes × keys), (lanes) */
};

mb_hard_work *mb_hard_work_new(const mb_model *m, const mb_contact *hc, int lanes, int n_soft)
{
    mb_hard_work *w = calloc(1, sizeof *w);
    const int nv = m->nv, cap = hc->scene->nslot;
    if (!w)
        return NULL;
    w->cap = cap, w->lanes = lanes > 0 ? lanes : 1, w->keys = cap + hc->hard_limits + n_soft;
    w->memo = calloc((size_t)w->lanes * w->keys * 3 + 1, 1);
    w->stamp = calloc((size_t)w->lanes * (w->keys + 1) + 1, sizeof(long));
    if (!w->memo || !w->stamp) {
        mb_hard_work_free(w);
        return NULL;
    }
    w->calls = w->stamp + (size_t)w->lanes * w->keys;
    for (size_t i = 0; i < (size_t)w->lanes * w->keys; i++)
        w->stamp[i] = -2;  /* (calls start at 0: no key is the last call's) */
    w->c = malloc(sizeof(mb_scene_contact) * (size_t)(cap ? cap : 1));
    w->slot = malloc(sizeof(int) * (2 * (size_t)cap + (size_t)hc->hard_limits + (size_t)n_soft + 1));
    w->H = malloc(sizeof(double) * (2 * (size_t)nv * nv + 11 * (size_t)nv + 1));
    w->poses = malloc(mb_scene_pose_scratch(hc->scene));
    w->chain = malloc(sizeof(int) * (3 * (size_t)nv + 1));
    if (!w->c || !w->slot || !w->H || !w->poses || !w->chain) {
        mb_hard_work_free(w);
        return NULL;
    }
    w->first = w->slot + cap, w->lim = w->first + cap;
    w->L = w->H + (size_t)nv * nv, w->J3 = w->L + (size_t)nv * nv;
    w->u = w->J3 + 3 * nv, w->vfree = w->u + nv, w->ax = w->vfree + nv;
    return w;
}

void mb_hard_work_free(mb_hard_work *w)
{
    if (!w)
        return;
    free(w->c), free(w->slot), free(w->H), free(w->Y), free(w->findex), free(w->mask), free(w->poses), free(w->chain);
    free(w->memo), free(w->stamp);
    free(w);
}

/* room for n rows (a contact-rich step grows the buffers once; later steps reuse them) */
static int reserve(mb_hard_work *w, int nv, int n)
{
    if (n <= w->rows)
        return 0;
    free(w->Y), free(w->findex), free(w->mask);
    const size_t N = (size_t)n;
    /* Y (n nv), A (n²), dir (3 n), b lo hi mu x flo fhi (7 n), lcp's work (n² + 8 n), its block pivoting's
     * (n² + 7 n); ints: findex, iwork (3 n), guess, nnz, group (n + 1), nz (n nv), the block pivoting's (4 n),
     * path */
    w->Y = malloc(sizeof(double) * (N * nv + 3 * N * N + 25 * N));
    w->findex = malloc(sizeof(int) * (12 * N + N * nv + 1));
    w->mask = malloc(sizeof(uint64_t) * (N * (size_t)((nv + 63) / 64) + 1));
    if (!w->Y || !w->findex || !w->mask) {
        free(w->Y), free(w->findex), free(w->mask);
        w->Y = NULL, w->findex = NULL, w->mask = NULL, w->rows = 0;
        return 1;
    }
    w->A = w->Y + N * nv, w->dir = w->A + N * N, w->b = w->dir + 3 * N, w->lo = w->b + N, w->hi = w->lo + N;
    w->mu = w->hi + N, w->x = w->mu + N, w->flo = w->x + N, w->fhi = w->flo + N, w->work = w->fhi + N;
    w->bpp_work = w->work + N * N + 8 * N;
    w->iwork = w->findex + N, w->guess = w->iwork + 3 * N, w->nnz = w->guess + N, w->group = w->nnz + N;
    w->nz = w->group + N + 1, w->bpp_iwork = w->nz + N * nv, w->path = w->bpp_iwork + 4 * N;
    w->rows = n;
    return 0;
}

/* y = L⁻ᵀ y in place (mb_sparse_mpy's MB_MPY_LIT), for a sparse y: a contact's row lives on the dofs of its
 * bodies and their ancestors, and so does its solution (branch-induced sparsity, RBDA §6.5), so a zero y_i
 * (nothing to carry to i's ancestors) is skipped; then Y's row r's nonzero columns into nz (ascending). */
static void solve_row(int nv, const int *lam, const double *L, double *y, int *nz, int *nnz)
{
    for (int i = nv - 1; i >= 0; i--) {
        if (y[i] == 0.0)
            continue;
        y[i] /= L[(size_t)nv * i + i];
        for (int j = lam[i]; j >= 0; j = lam[j])
            y[j] -= L[(size_t)nv * i + j] * y[i];
    }
    int c = 0;
    for (int k = 0; k < nv; k++)
        if (y[k] != 0.0)
            nz[c++] = k;
    *nnz = c;
}

/* Y's rows r0 .. r0 + rows − 1 = L⁻ᵀ (their J rows) in place, on their common columns pat (ascending, closed
 * under λ): solve_row's operations on each row, in its order (a zero y_i it skips changes nothing here: its
 * terms are exact zeros), the rows together: i's chain of ancestors walked once for all of them (a contact's
 * normal and tangents: each hop of λ a dependent load, three rows' updates independent). */
static void solve_rows(int nv, const int *lam, const double *L, double *Y, int rows, const int *pat, int np)
{
    double *y0 = Y, *y1 = Y + nv, *y2 = Y + 2 * (size_t)nv;
    for (int t = np - 1; t >= 0; t--) {
        const int i = pat[t];
        const double *Li = L + (size_t)nv * i;
        if (rows == 3) {
            const double a0 = y0[i] /= Li[i], a1 = y1[i] /= Li[i], a2 = y2[i] /= Li[i];
            for (int j = lam[i]; j >= 0; j = lam[j]) {
                const double l = Li[j];
                y0[j] -= l * a0, y1[j] -= l * a1, y2[j] -= l * a2;
            }
            continue;
        }
        for (int r = 0; r < rows; r++) {
            double *y = Y + (size_t)r * nv;
            y[i] /= Li[i];
            for (int j = lam[i]; j >= 0; j = lam[j])
                y[j] -= Li[j] * y[i];
        }
    }
}

/* Y's row r = L⁻ᵀ (sign e_vi), a joint's own row (a limit's, a soft stop's): its columns vi and its ancestors
 * (L⁻ᵀ e_vi lives there), ascending */
static void joint_row(int nv, const int *lam, mb_hard_work *w, int r, int vi, double sign)
{
    double *y = w->Y + (size_t)r * nv;
    int *pat = w->nz + (size_t)r * nv, np = 0;
    for (int k = vi; k >= 0; k = lam[k])
        np++;
    for (int k = vi, t = np - 1; k >= 0; k = lam[k], t--)
        pat[t] = k, y[k] = 0.0;
    y[vi] = sign;
    solve_rows(nv, lam, w->L, y, 1, pat, np);
    w->nnz[r] = np;
}

/* Block (a, b) of A = YᵀY for groups of 1 or 3 rows: the sums Σ_t ya[ks[t]] yb[ks[t]] over the common columns
 * ks in ascending order, in registers, each column's values loaded once for the block (the 3 × 3 block of two
 * contacts with friction, a limit's 1 × 3 with one, 1 × 1); s[3 a + b] out. */
static inline void block_sums(int na, int nb, int nv, const double *ya, const double *yb, const int *ks, int nk,
                              double *s)
{
    if (na == 3 && nb == 3) {
        double s00 = 0.0, s01 = 0.0, s02 = 0.0, s10 = 0.0, s11 = 0.0, s12 = 0.0, s20 = 0.0, s21 = 0.0, s22 = 0.0;
        for (int t = 0; t < nk; t++) {
            const int k = ks[t];
            const double a0 = ya[k], a1 = ya[nv + k], a2 = ya[2 * nv + k];
            const double b0 = yb[k], b1 = yb[nv + k], b2 = yb[2 * nv + k];
            s00 += a0 * b0, s01 += a0 * b1, s02 += a0 * b2;
            s10 += a1 * b0, s11 += a1 * b1, s12 += a1 * b2;
            s20 += a2 * b0, s21 += a2 * b1, s22 += a2 * b2;
        }
        s[0] = s00, s[1] = s01, s[2] = s02, s[3] = s10, s[4] = s11, s[5] = s12, s[6] = s20, s[7] = s21, s[8] = s22;
    } else if (na == 1 && nb == 3) {
        double s0 = 0.0, s1 = 0.0, s2 = 0.0;
        for (int t = 0; t < nk; t++) {
            const int k = ks[t];
            const double a = ya[k];
            s0 += a * yb[k], s1 += a * yb[nv + k], s2 += a * yb[2 * nv + k];
        }
        s[0] = s0, s[1] = s1, s[2] = s2;
    } else {
        for (int a = 0; a < na; a++)
            for (int b = 0; b < nb; b++) {
                const double *y1 = ya + (size_t)a * nv, *y2 = yb + (size_t)b * nv;
                double sum = 0.0;
                for (int t = 0; t < nk; t++)
                    sum += y1[ks[t]] * y2[ks[t]];
                s[3 * a + b] = sum;
            }
    }
}

/* A = Yᵀ Y (n × n, both triangles) by blocks of groups of rows sharing their columns (a contact's normal and
 * tangents): a block's entries summed over the columns the two groups have in common, ascending — each entry
 * the sum over the sparser row's nonzeros in their order, the other terms exact zeros.  Where both groups'
 * columns are one path from the root (a contact with the world or along one chain, a joint's row: path[g]),
 * the common columns are their common ancestors' dofs, which come first in both lists (a dof's parent is
 * numbered before it): the lists' common prefix.  Otherwise they are the set bits of the two groups' column
 * masks ANDed (words of 64 columns, mask: groups × words of scratch), lowest first.  Either way the same
 * columns in the same order.  A product's two factors commute, so a block (3, 1) is the (1, 3) of its mirror.
 * isect: nv ints of scratch. */
static void delassus(int n, int nv, const int *lam, const double *Y, const int *nz, const int *nnz,
                     const int *group, int groups, int *path, uint64_t *mask, int *isect, double *A)
{
    const int words = (nv + 63) / 64;
    int all_paths = 1;
    for (int g = 0; g < groups; g++) {
        const int r = group[g], *pat = nz + (size_t)r * nv;
        path[g] = nnz[r] == 0 || lam[pat[0]] < 0;
        for (int t = 1; path[g] && t < nnz[r]; t++)
            path[g] = lam[pat[t]] == pat[t - 1];
        all_paths &= path[g];
    }
    for (int g = 0; !all_paths && g < groups; g++) {  /* (a pair with one group off a path reads both masks) */
        uint64_t *mg = mask + (size_t)g * words;
        const int r = group[g], *pat = nz + (size_t)r * nv;
        memset(mg, 0, sizeof(uint64_t) * words);
        for (int t = 0; t < nnz[r]; t++)
            mg[pat[t] >> 6] |= (uint64_t)1 << (pat[t] & 63);
    }
    for (int gi = 0; gi < groups; gi++)
        for (int gj = 0; gj <= gi; gj++) {
            const int ri = group[gi], ni = group[gi + 1] - ri, rj = group[gj], nj = group[gj + 1] - rj;
            const int *ks = isect;
            int nk = 0;
            if (gi == gj) {
                ks = nz + (size_t)ri * nv, nk = nnz[ri];
            } else if (path[gi] && path[gj]) {
                const int *pi = nz + (size_t)ri * nv, *pj = nz + (size_t)rj * nv;
                const int most = nnz[ri] < nnz[rj] ? nnz[ri] : nnz[rj];
                while (nk < most && pi[nk] == pj[nk])
                    nk++;
                ks = pi;
            } else {
                const uint64_t *mi = mask + (size_t)gi * words, *mj = mask + (size_t)gj * words;
                for (int wd = 0; wd < words; wd++)
                    for (uint64_t bits = mi[wd] & mj[wd]; bits; bits &= bits - 1)
                        isect[nk++] = 64 * wd + __builtin_ctzll(bits);
            }
            const double *yi = Y + (size_t)ri * nv, *yj = Y + (size_t)rj * nv;
            double s[9];
            if (ni == 3 && nj == 1) {  /* (the mirror's sums: s[b] is row ri + b's with row rj) */
                block_sums(1, 3, nv, yj, yi, ks, nk, s);
                for (int a = 0; a < 3; a++)
                    A[(size_t)(ri + a) * n + rj] = A[(size_t)rj * n + ri + a] = s[a];
                continue;
            }
            block_sums(ni, nj, nv, yi, yj, ks, nk, s);
            for (int a = 0; a < ni; a++)
                for (int b = 0; b < nj; b++)
                    A[(size_t)(ri + a) * n + rj + b] = A[(size_t)(rj + b) * n + ri + a] = s[3 * a + b];
        }
}

/* Rows that no dof can move (A_rr = 0 to 1e-12 of the largest: a planar model's friction across its plane, a
 * constraint row with nothing left to act on) do nothing whatever impulse they carry, and they make A_CC
 * singular once pivoted in (no CFM helps a zero diagonal: it scales it).  They are held at 0, out of the
 * pivoting: bounds [0, 0], no normal to follow, the warm start's guess at that bound. */
static void hold_idle_rows(int n, const double *A, double *lo, double *hi, int *findex, int *guess)
{
    double largest = 0.0;
    for (int r = 0; r < n; r++)
        largest = fmax(largest, A[(size_t)r * n + r]);
    for (int r = 0; r < n; r++)
        if (!(A[(size_t)r * n + r] > 1e-12 * largest))
            lo[r] = hi[r] = 0.0, findex[r] = -1, guess[r] = MB_LCP_AT_LO;
}

static int body_of(const mb_scene *s, int pair, int which)
{
    return (int)s->gint[s->pairs[2 * pair + which] * MB_SG_INTS + MB_SG_BODY];
}

MB_CLONES_AVX2
int mb_hard_contact_stage(const mb_model *m, const mb_model *md, mb_data *d, const double *q, const double *v,
                          double *qdd, double h, const mb_contact *hc, double *F, mb_hard_work *w, int lane,
                          const double *tau, const double *fext, int n_soft, const double *soft)
{
    const int nv = m->nv, *lam = m->dof_parent, n_eq = hc->hard_rows;
    const mb_scene *s = hc->scene;
    const double *par = hc->hard, *G = hc->hard_G;
    const int gn = nv + m->nq + 1;  /* a constraint's row: G (nv), its position form (nq), c₀ */
    const double e = par[MB_HARD_RESTITUTION], erp = par[MB_HARD_ERP], slop = par[MB_HARD_SLOP];
    if (lane < 0 || lane >= w->lanes)
        return MB_NO_MEMORY;
    const long call = w->calls[lane]++;  /* (a step without rows breaks the chain of warm starts) */
    signed char *memo = w->memo + (size_t)lane * w->keys * 3;
    long *stamp = w->stamp + (size_t)lane * w->keys;
    if (F == w->F_last)  /* F is zero but for the slots the last call wrote (slots × 3 doubles is ~45 kB) */
        for (int i = 0; i < w->n_last; i++)
            memset(F + 3 * (size_t)w->slot[i], 0, sizeof(double) * 3);
    else
        memset(F, 0, sizeof(double) * 3 * (size_t)w->cap);
    w->F_last = F, w->n_last = 0;
    const int nc = mb_scene_contacts(m, d, q, s, w->c, w->cap, w->poses);  /* (poses d->R0, d->p0 at q) */
    if (nc < 0)
        return -1;
    int ns = 0;  /* the soft stops passed (MuJoCo's soft limits, passive.c's rows): rows of this LCP too */
    double aref, R;
    for (int k = 0; k < n_soft; k++)
        if (mb_soft_stop_passed(soft + MB_SOFT_ROW * k, q))
            w->lim[hc->hard_limits + ns++] = k;
    if (tau) {  /* the free acceleration q̈₀ from M's factor (RBDA §6.5: CRBA, LTL), which the rows need too */
        if (nc == 0 && hc->hard_limits == 0 && n_eq == 0 && ns == 0)
            return MB_HARD_NO_ROWS;
        mb_crba_posed(md, d, w->H);  /* (on the narrow phase's poses at q: d->R, d->p, d->R0, d->p0) */
        if (mb_ltl_factor_pattern(nv, lam, w->H, w->L) >= 0)
            return mb_pivot_status(w->H, nv * nv);
        memset(w->u, 0, sizeof(double) * nv);
        mb_rnea_posed(md, d, v, w->u, fext, qdd);  /* C(q, v, f_ext) */
        for (int k = 0; k < nv; k++)
            qdd[k] = tau[k] - qdd[k];
        mb_sparse_mpy(MB_MPY_LIT, nv, lam, w->L, qdd, qdd);
        mb_sparse_mpy(MB_MPY_LI, nv, lam, w->L, qdd, qdd);
    }
    for (int k = 0; k < nv; k++)
        w->vfree[k] = v[k] + h * qdd[k];
    int nl = 0;  /* the joint limits this step may reach: gap = sign (q − pos) within the free step's travel */
    for (int k = 0; k < hc->hard_limits; k++) {
        const double *row = hc->hard_limit_rows + 4 * k;
        const double gap = row[3] * (q[(int)row[0]] - row[2]);
        if (gap <= slop + h * fabs(w->vfree[(int)row[1]]))
            w->lim[nl++] = k;
    }
    for (int k = 0; k < ns; k++)  /* the soft stops' after the limits' (w->lim: their rows in soft) */
        w->lim[nl + k] = w->lim[hc->hard_limits + k];
    if (nc == 0 && nl == 0 && n_eq == 0 && ns == 0)
        return MB_OK;
    /* rows: G's, the limits', the soft stops', then per contact a normal and two friction rows where the pair has
     * friction */
    int n = n_eq + nl + ns;
    for (int i = 0; i < nc; i++) {
        const int p = w->c[i].pair;
        const double *pd = s->pdat + (size_t)p * MB_SP_SIZE;
        w->slot[i] = w->c[i].slot, w->first[i] = n;
        n += pd[MB_SP_CONDIM] >= 3 && pd[MB_SP_FRICTION] > 0.0 ? 3 : 1;
    }
    w->n_last = nc;
    if (reserve(w, nv, n))
        return MB_NO_MEMORY;
    /* J's rows and Y = L⁻ᵀ Jᵀ, row by row */
    if (!tau) {
        mb_crba_posed(md, d, w->H);
        if (mb_ltl_factor_pattern(nv, lam, w->H, w->L) >= 0)
            return mb_pivot_status(w->H, nv * nv);
    }
    for (int r = 0; r < n_eq; r++) {  /* the constraints' rows: G v⁺ = −ERP c / h */
        const double *g = G + (size_t)r * gn, *gq = g + nv;
        double *y = w->Y + (size_t)r * nv, c = -gq[m->nq], Gv = 0.0;
        for (int k = 0; k < m->nq; k++)
            c += gq[k] * q[k];
        for (int k = 0; k < nv; k++)
            Gv += g[k] * w->vfree[k];
        memcpy(y, g, sizeof(double) * nv);
        solve_row(nv, lam, w->L, y, w->nz + (size_t)r * nv, w->nnz + r);
        w->b[r] = -erp * c / h - Gv, w->lo[r] = -INFINITY, w->hi[r] = INFINITY, w->findex[r] = -1, w->mu[r] = 0.0;
    }
    for (int j = 0; j < nl; j++) {  /* a limit: sign v⁺_i ≥ its target, as a contact's normal */
        const double *row = hc->hard_limit_rows + 4 * w->lim[j];
        const int qi = (int)row[0], vi = (int)row[1], r = n_eq + j;
        const double sign = row[3], gap = sign * (q[qi] - row[2]), u = sign * v[vi];
        joint_row(nv, lam, w, r, vi, sign);
        const double target = gap > 0.0 ? -gap / h
                                         : fmax(par[MB_HARD_LIMIT_RESTITUTION] * fmax(-u, 0.0),
                                                erp * fmax(-gap - slop, 0.0) / h);
        w->b[r] = target - sign * w->vfree[vi], w->lo[r] = 0.0, w->hi[r] = INFINITY, w->findex[r] = -1;
        w->mu[r] = 0.0;
    }
    for (int j = 0; j < ns; j++) {  /* a soft stop: f = (a_ref − J a)/R at the step's a = (v⁺ − v)/h, so that for its
                                     * impulse λ = h f: J v⁺ + R λ = J v + h a_ref, λ ≥ 0 (R on A's diagonal) */
        const double *row = soft + MB_SOFT_ROW * w->lim[nl + j];
        const int vi = (int)row[1], r = n_eq + nl + j;
        const double sign = row[3];
        mb_soft_stop_terms(row, q, v, &aref, &R);
        joint_row(nv, lam, w, r, vi, sign);
        w->b[r] = sign * (v[vi] - w->vfree[vi]) + h * aref, w->lo[r] = 0.0, w->hi[r] = INFINITY, w->findex[r] = -1;
        w->mu[r] = 0.0;
    }
    if (nc)  /* the dofs' world axes once, for every contact's point Jacobian */
        mb_dof_world_axes(m, d->R0, w->ax);
    for (int i = 0; i < nc; i++) {
        const mb_scene_contact *c = w->c + i;
        const int p = c->pair, r0 = w->first[i], rows = (i + 1 < nc ? w->first[i + 1] : n) - r0;
        const int ba = body_of(s, p, 0), bb = body_of(s, p, 1);
        int *pat = w->nz + (size_t)r0 * nv;
        const int np = mb_contact_columns(m, ba, bb, w->chain, pat);  /* (the ancestors' dofs of its bodies) */
        for (int t = 0; t < np; t++)  /* (J3's columns off the pattern are not read) */
            w->J3[pat[t]] = w->J3[nv + pat[t]] = w->J3[2 * nv + pat[t]] = 0.0;
        if (bb >= 0)
            mb_point_jacobian_axes_add(m, w->ax, d->p0, bb, c->pos, 1.0, w->J3);
        if (ba >= 0)
            mb_point_jacobian_axes_add(m, w->ax, d->p0, ba, c->pos, -1.0, w->J3);
        double *dn = w->dir + 3 * r0;
        mb_copy3(c->normal, dn);
        if (rows == 3)
            mb_scene_tangents(c->normal, dn + 3, dn + 6);
        for (int r = r0; r < r0 + rows; r++) {
            const double *t = w->dir + 3 * r;
            double *y = w->Y + (size_t)r * nv, Jv = 0.0, Jvf = 0.0;
            for (int u = 0; u < np; u++) {  /* (Y's columns off the pattern are not read either) */
                const int k = pat[u];
                y[k] = t[0] * w->J3[k] + t[1] * w->J3[nv + k] + t[2] * w->J3[2 * nv + k];
                Jv += y[k] * v[k], Jvf += y[k] * w->vfree[k];
            }
            if (r > r0)
                memcpy(w->nz + (size_t)r * nv, pat, sizeof(int) * (size_t)np);
            w->nnz[r] = np;
            if (r == r0) {  /* the normal: its target velocity */
                const double depth = c->depth;
                const double target = depth < 0.0 ? depth / h
                                                  : fmax(e * fmax(-Jv, 0.0), erp * fmax(depth - slop, 0.0) / h);
                w->b[r] = target - Jvf, w->lo[r] = 0.0, w->hi[r] = INFINITY, w->findex[r] = -1, w->mu[r] = 0.0;
            } else {
                w->b[r] = -Jvf, w->lo[r] = -INFINITY, w->hi[r] = INFINITY, w->findex[r] = r0;
                w->mu[r] = s->pdat[(size_t)p * MB_SP_SIZE + MB_SP_FRICTION];
            }
        }
        solve_rows(nv, lam, w->L, w->Y + (size_t)r0 * nv, rows, pat, np);
    }
    /* A = Yᵀ Y by groups of rows: each constraint's and limit's row alone, each contact's rows together */
    w->groups = 0;
    for (int r = 0; r < n_eq + nl + ns; r++)
        w->group[w->groups++] = r;
    for (int i = 0; i < nc; i++)
        w->group[w->groups++] = w->first[i];
    w->group[w->groups] = n;
    delassus(n, nv, lam, w->Y, w->nz, w->nnz, w->group, w->groups, w->path, w->mask, w->chain, w->A);
    for (int j = 0; j < ns; j++) {  /* the soft stops' R on their diagonal */
        const int r = n_eq + nl + j;
        mb_soft_stop_terms(soft + MB_SOFT_ROW * w->lim[nl + j], q, v, &aref, &R);
        w->A[(size_t)r * n + r] += R;
    }
    /* the warm start's guess: each row's state in the last step's solution where the row was there (its
     * contact's slot, its limit), a new row free (a contact that stays, a limit that holds) */
    int known = 0;
    for (int r = 0; r < n_eq; r++)
        w->guess[r] = MB_LCP_FREE;
    for (int j = 0; j < nl + ns; j++) {  /* (a soft stop's key after the limits': cap + hard limits + its row) */
        const int key = w->cap + (j < nl ? 0 : hc->hard_limits) + w->lim[j], was = stamp[key] == call - 1;
        w->guess[n_eq + j] = was ? memo[3 * key] : MB_LCP_FREE, known += was;
    }
    for (int i = 0; i < nc; i++) {
        const int key = w->slot[i], was = stamp[key] == call - 1;
        for (int r = w->first[i], t = 0; r < (i + 1 < nc ? w->first[i + 1] : n); r++, t++)
            w->guess[r] = was ? memo[3 * key + t] : MB_LCP_FREE;
        known += was;
    }
    /* the engine's LCP, warm from the guess (one solve, taken only when it is the LCP's solution) or cold, its
     * pivoting started from the guess's free rows that hold (a falling humanoid's cold steps: 25 pivots, not
     * 45); a failed pivoting (a degenerate contact set) once more with more regularisation, unseeded */
    int err = 1, warm = 0;
    for (int attempt = 0; attempt < 2 && err; attempt++) {
        const double eps = par[MB_HARD_CFM] * (attempt ? 1e4 : 1.0);
        for (int r = 0; attempt && r < n_eq + nl + ns; r++)
            w->lo[r] = r < n_eq ? -INFINITY : 0.0, w->hi[r] = INFINITY, w->findex[r] = -1;
        if (attempt)  /* mb_lcp_friction changed the bounds and findex: set them again */
            for (int i = 0; i < nc; i++)
                for (int r = w->first[i]; r < (i + 1 < nc ? w->first[i + 1] : n); r++) {
                    const int normal = r == w->first[i];
                    w->lo[r] = normal ? 0.0 : -INFINITY, w->hi[r] = INFINITY, w->findex[r] = normal ? -1 : w->first[i];
                }
        hold_idle_rows(n, w->A, w->lo, w->hi, w->findex, w->guess);
        for (int i = 0; i < n; i++) {
            if (attempt)
                w->A[(size_t)i * n + i] /= 1.0 + par[MB_HARD_CFM];
            w->A[(size_t)i * n + i] *= 1.0 + eps;
        }
        if (!attempt && known &&
            mb_lcp_friction_warm(n, w->A, w->b, w->lo, w->hi, w->findex, w->mu, w->guess, w->x, w->work, w->iwork)) {
            err = 0, warm = 1;
            continue;
        }
        int pivots = 0;
        err = mb_lcp_friction(n, w->A, w->b, w->lo, w->hi, w->findex, w->mu, NULL, w->x, w->flo, w->fhi, w->work,
                           w->iwork, &pivots, 1000 + 100 * n, w->bpp_work, w->bpp_iwork,
                           known && !attempt ? w->guess : NULL);
    }
    if (err)
        return MB_CONTACT_LCP;
    /* the solution's row states, for the next step's guess (cold: mb_lcp_friction left the bounds it used) */
    if (!warm)
        for (int r = 0; r < n; r++)
            w->guess[r] = w->x[r] == w->lo[r] ? MB_LCP_AT_LO : w->x[r] == w->hi[r] ? MB_LCP_AT_HI : MB_LCP_FREE;
    for (int j = 0; j < nl + ns; j++) {
        const int key = w->cap + (j < nl ? 0 : hc->hard_limits) + w->lim[j];
        memo[3 * key] = (signed char)w->guess[n_eq + j], stamp[key] = call;
    }
    for (int i = 0; i < nc; i++) {
        const int key = w->slot[i];
        for (int r = w->first[i], t = 0; r < (i + 1 < nc ? w->first[i + 1] : n); r++, t++)
            memo[3 * key + t] = (signed char)w->guess[r];
        stamp[key] = call;
    }
    /* q̈ += M⁻¹ Jᵀ λ / h = L⁻¹ (Y λ) / h;  each contact's mean force on its body b */
    memset(w->u, 0, sizeof(double) * nv);
    for (int r = 0; r < n; r++) {
        const double *y = w->Y + (size_t)r * nv, xr = w->x[r];
        const int *nz = w->nz + (size_t)r * nv;
        for (int t = 0; t < w->nnz[r]; t++)
            w->u[nz[t]] += y[nz[t]] * xr;
    }
    mb_sparse_mpy(MB_MPY_LI, nv, lam, w->L, w->u, w->u);
    for (int k = 0; k < nv; k++)
        qdd[k] += w->u[k] / h;
    for (int i = 0; i < nc; i++) {
        double *f = F + 3 * (size_t)w->slot[i];
        for (int r = w->first[i]; r < (i + 1 < nc ? w->first[i + 1] : n); r++)
            for (int j = 0; j < 3; j++)
                f[j] += w->x[r] * w->dir[3 * r + j] / h;
    }
    return MB_OK;
}
