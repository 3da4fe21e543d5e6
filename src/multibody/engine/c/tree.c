/* Linear-time multipliers for joint trees (Baraff 1996, "Linear-time dynamics using Lagrange
 * multipliers"): when every row is an equality (no contacts, motors or active stops) the matrix
 * A = J W J^T + CFM/h is block-sparse, one block per joint, and joints couple only through a
 * shared body.  If the joints form a forest over the bodies (the static world couples nothing),
 * eliminating each body's joints after those of its subtree makes no fill-in, so a block
 * LDL^T factorization on that order costs O(joints).  Otherwise the step uses dense pivoting.
 */
#include <stdlib.h>
#include "engine.h"

int joint_base_rows(int type)
{
    static const int rows[] = {3, 5, 5, 6, 4, 4};   /* ball hinge slider fixed universal hinge2 */
    return type >= 0 && type <= J_HINGE2 ? rows[type] : 0;
}

/* Base rows that constrain rotation only (zero linear parts on both bodies), as joints.c writes
 * them: the hinge's two axis rows, the slider's and the fixed joint's orientation rows, the
 * universal's and hinge2's angle row.  Their products in the blocks need only the angular half;
 * tree_solve checks the rows before it relies on this. */
static int joint_angular_rows(int type)
{
    static const int mask[] = {0x00, 0x18, 0x07, 0x38, 0x08, 0x08};   /* ball hinge slider fixed universal hinge2 */
    return type >= 0 && type <= J_HINGE2 ? mask[type] : 0;
}

static int angular_rows_hold(const Row *r, int n, int mask)
{
    for (int a = 0; a < n; a++)
        if ((mask >> a) & 1)
            for (int k = 0; k < 3; k++) if (r[a].J1[k] != 0.0 || r[a].J2[k] != 0.0) return 0;
    return 1;
}

static int find(int *up, int a) { while (up[a] != a) { up[a] = up[up[a]]; a = up[a]; } return a; }

void tree_free(EngineWorld *W)
{
    void *ps[] = {W->tmask, W->torder, W->tpos, W->trows, W->tstart, W->nbr_start, W->nbr_list, W->tdiag, W->nbr_block, W->nbr_L, W->tvec};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) free(ps[i]);
}

int tree_init(EngineWorld *W)
{
    int nb = W->nb, nj = W->nj;
    W->tree_ok = 0;
    if (nj == 0) return 0;
    int *up = malloc(sizeof(int) * (size_t)(nb + 1)), *deg = calloc((size_t)nb + 1, sizeof(int));
    int *adj_start = calloc((size_t)nb + 2, sizeof(int)), *adj = malloc(sizeof(int) * (size_t)(2 * nj + 1));
    int *seen = calloc((size_t)nb + 1, sizeof(int)), *stack = malloc(sizeof(int) * (size_t)(nb + 1));
    int *post = malloc(sizeof(int) * (size_t)(nb + 1)), *parent_joint = malloc(sizeof(int) * (size_t)(nb + 1));
    W->tmask = malloc(sizeof(int) * (size_t)nj);
    W->torder = malloc(sizeof(int) * (size_t)nj); W->tpos = malloc(sizeof(int) * (size_t)nj);
    W->trows = malloc(sizeof(int) * (size_t)nj); W->tstart = malloc(sizeof(int) * (size_t)nj);
    W->nbr_start = calloc((size_t)nj + 1, sizeof(int));
    if (!up || !deg || !adj_start || !adj || !seen || !stack || !post || !parent_joint || !W->tmask || !W->torder || !W->tpos ||
        !W->trows || !W->tstart || !W->nbr_start) goto fail;
    int forest = 1;
    for (int b = 0; b < nb; b++) up[b] = b;
    for (int j = 0; j < nj; j++) {
        int b1 = (int)W->jint[(size_t)j * JI_SIZE + JI_B1], b2 = (int)W->jint[(size_t)j * JI_SIZE + JI_B2];
        deg[b1]++; if (b2 >= 0) deg[b2]++;
        if (b2 >= 0) { int r1 = find(up, b1), r2 = find(up, b2); if (r1 == r2) forest = 0; else up[r1] = r2; }
    }
    if (!forest) goto done;
    /* joints of each body (incidence lists) */
    for (int b = 0; b < nb; b++) adj_start[b + 1] = adj_start[b] + deg[b];
    for (int b = 0; b < nb; b++) deg[b] = adj_start[b];
    for (int j = 0; j < nj; j++) {
        int b1 = (int)W->jint[(size_t)j * JI_SIZE + JI_B1], b2 = (int)W->jint[(size_t)j * JI_SIZE + JI_B2];
        adj[deg[b1]++] = j; if (b2 >= 0) adj[deg[b2]++] = j;
    }
    /* post-order of bodies, component by component (roots first those with world joints) */
    int npost = 0;
    for (int pass = 0; pass < 2; pass++) for (int root = 0; root < nb; root++) {
        if (seen[root]) continue;
        int has_world = 0;
        for (int a = adj_start[root]; a < adj_start[root + 1]; a++) if (W->jint[(size_t)adj[a] * JI_SIZE + JI_B2] < 0) has_world = 1;
        if (pass == 0 && !has_world) continue;
        int top = 0; stack[top++] = root; seen[root] = 1; parent_joint[root] = -1;
        int start = npost;
        while (top) {                       /* preorder, reversed below into a post-order */
            int b = stack[--top]; post[npost++] = b;
            for (int a = adj_start[b]; a < adj_start[b + 1]; a++) {
                int j = adj[a];
                int b1 = (int)W->jint[(size_t)j * JI_SIZE + JI_B1], b2 = (int)W->jint[(size_t)j * JI_SIZE + JI_B2];
                int o = b1 == b ? b2 : b1;
                if (o < 0 || seen[o]) continue;
                seen[o] = 1; parent_joint[o] = j; stack[top++] = o;
            }
        }
        for (int i = start, k = npost - 1; i < k; i++, k--) { int t = post[i]; post[i] = post[k]; post[k] = t; }
    }
    int nord = 0;
    for (int i = 0; i < npost; i++) {       /* children before parents: each body's world joints, then its parent joint */
        int b = post[i];
        for (int a = adj_start[b]; a < adj_start[b + 1]; a++) if (W->jint[(size_t)adj[a] * JI_SIZE + JI_B2] < 0) W->torder[nord++] = adj[a];
        if (parent_joint[b] >= 0) W->torder[nord++] = parent_joint[b];
    }
    if (nord != nj) goto done;
    int m = 0;
    for (int j = 0; j < nj; j++) { W->trows[j] = joint_base_rows((int)W->jint[(size_t)j * JI_SIZE]); W->tstart[j] = m; m += W->trows[j]; }
    for (int j = 0; j < nj; j++) if (W->trows[j] < 3 || W->trows[j] > 6) goto done;   /* the kernels' sizes */
    for (int i = 0; i < nj; i++) W->tpos[W->torder[i]] = i;
    /* later neighbours of each joint: joints sharing a body, eliminated after it */
    int total = 0;
    for (int pass = 0; pass < 2; pass++) {
        total = 0;
        for (int j = 0; j < nj; j++) {
            if (pass) W->nbr_start[j] = total;
            for (int s = 1; s <= 2; s++) {
                int b = (int)W->jint[(size_t)j * JI_SIZE + s];
                if (b < 0) continue;
                for (int a = adj_start[b]; a < adj_start[b + 1]; a++) {
                    int k = adj[a];
                    if (W->tpos[k] <= W->tpos[j]) continue;
                    if (pass) W->nbr_list[total] = k;
                    total++;
                }
            }
        }
        if (!pass) { W->nbr_list = malloc(sizeof(int) * (size_t)(total + 1)); if (!W->nbr_list) goto fail; }
    }
    W->nbr_start[nj] = total;
    W->tdiag = malloc(sizeof(double) * 36 * (size_t)nj);
    W->nbr_block = malloc(sizeof(double) * 36 * (size_t)(total + 1));
    W->nbr_L = calloc(36 * (size_t)(total + 1), sizeof(double));   /* pads stay zero */
    W->tvec = malloc(sizeof(double) * (size_t)(6 * nj + 1));
    if (!W->tdiag || !W->nbr_block || !W->nbr_L || !W->tvec) goto fail;
    W->tree_m = m; W->tree_ok = 1;
done:
    free(up); free(deg); free(adj_start); free(adj); free(seen); free(stack); free(post); free(parent_joint);
    return 0;
fail:
    free(up); free(deg); free(adj_start); free(adj); free(seen); free(stack); free(post); free(parent_joint);
    return -1;
}

/* Every block is stored padded to 6 x 6 (a joint's rows n = 3..6; pad rows and columns are zero,
 * the diagonal blocks' pads identity) so the products below have fixed strides, and each kernel
 * takes the joint's own row count n as a compile-time constant (one copy per 3, 4, 5 or 6 rows,
 * chosen by dispatch()): the loops unroll and their sums are independent of one another, which is
 * what keeps them fast (a chain of scalar pivots waits on itself). */
#define KERNEL static inline __attribute__((always_inline))
#define S 6
#define dispatch(n, call) do { switch (n) { case 3: call(3); break; case 4: call(4); break; \
        case 5: call(5); break; default: call(6); } } while (0)

static inline double dot3a(const double *a, const double *b) { return a[3] * b[3] + a[4] * b[4] + a[5] * b[5]; }

/* Joint j's diagonal block A_jj = sum over its bodies of J W J^T (+ CFM/h) and the blocks A_kj
 * (m_k x n) with its later neighbours k: all rows of a joint act on the same two bodies, so which
 * sides meet is decided once per block.  Blocks are formed in local arrays and stored once, so the
 * compiler need not assume the stores alias the rows it reads. */
KERNEL void assemble_joint(EngineWorld *W, int j, const int n, const int mask)
{
    const Row *rj = W->rows + W->tstart[j];
    const double *Mj = W->iMJ + 12 * (size_t)W->tstart[j], *cfmh = W->cfmh + W->tstart[j];
    double *restrict D = W->tdiag + 36 * (size_t)j;
    int b1 = rj->b1, b2 = rj->b2;
    for (int a = 0; a < n; a++) for (int c = 0; c <= a; c++) {
        int ang = ((mask >> a) | (mask >> c)) & 1;
        double s = a == c ? cfmh[a] : 0.0;
        if (b1 >= 0) s += ang ? dot3a(rj[a].J1, Mj + 12 * c) : dot6(rj[a].J1, Mj + 12 * c);
        if (b2 >= 0) s += ang ? dot3a(rj[a].J2, Mj + 12 * c + 6) : dot6(rj[a].J2, Mj + 12 * c + 6);
        D[a * S + c] = D[c * S + a] = s;
    }
    for (int a = n; a < S; a++) for (int c = 0; c < S; c++) D[a * S + c] = D[c * S + a] = a == c;
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
        int k = W->nbr_list[e], mk = W->trows[k], mask_k = W->tmask[k];
        const Row *rk = W->rows + W->tstart[k];
        double *restrict B = W->nbr_block + 36 * (size_t)e;
        /* in a forest two joints share exactly one body: the sides sk of k and sj of j */
        int sk = rk->b1 >= 0 && (rk->b1 == b1 || rk->b1 == b2) ? 0 : 1, bk = sk ? rk->b2 : rk->b1;
        int sj = bk == b1 ? 0 : 1;
        for (int r = 0; r < S; r++) for (int c = 0; c < S; c++) {
            double s = 0.0;
            if (r < mk && c < n) {
                const double *Jr = sk ? rk[r].J2 : rk[r].J1, *Mc = Mj + 12 * c + 6 * sj;
                s = ((mask_k >> r) | (mask >> c)) & 1 ? dot3a(Jr, Mc) : dot6(Jr, Mc);
            }
            B[r * S + c] = s;
        }
    }
}

static double *lower_block(EngineWorld *W, int j, int k)
{   /* stored block A(k, j) (m_k x m_j) for a later neighbour k of j */
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) if (W->nbr_list[e] == k) return W->nbr_block + 36 * (size_t)e;
    return NULL;
}

/* For a later neighbour k (m rows) of joint j (n rows): L_kj = A_kj D_j^-1 from the swept
 * -D_j^-1 in A, and A_kk -= L_kj A_kj^T on its lower triangle. */
KERNEL void neighbour_factor(const double *restrict B, const double *restrict A, double *restrict L,
                             double *restrict T, const int n, const int m)
{
    for (int r = 0; r < m; r++) for (int q = 0; q < n; q++) {
        double s = 0;
        for (int t = 0; t < n; t++) s += B[r * S + t] * A[t * S + q];
        L[r * S + q] = -s;
    }
    for (int r = 0; r < m; r++) for (int c = 0; c <= r; c++) {
        double s = 0;
        for (int q = 0; q < n; q++) s += L[r * S + q] * B[c * S + q];
        T[r * S + c] -= s;
    }
}

/* Eliminate joint j as A = L D L^T with L block unit lower and D block diagonal (Baraff's
 * block elimination): D_j^-1 = A_jj^-1 by sweeping its n pivots (Gauss-Jordan, each sweep a
 * rank-one update of independent entries), then for its later neighbours L_kj = A_kj D_j^-1 and
 * A_lk -= L_lj A_kj^T.  0, or nonzero for a pivot that is not positive or a fill-in (not a tree
 * after all).  D_j^-1 replaces A_jj; L_kj goes to nbr_L beside A_kj. */
KERNEL int eliminate_joint(EngineWorld *W, int j, const int n)
{
    double A[36], diag[6];
    double *restrict Dj = W->tdiag + 36 * (size_t)j;
    for (int i = 0; i < n; i++) for (int q = 0; q <= i; q++) A[i * S + q] = A[q * S + i] = Dj[i * S + q];   /* lower triangle */
    for (int p = 0; p < n; p++) diag[p] = A[p * S + p];
    /* sweep: A becomes -A^-1 on the n x n part.  Unrolled whole, so A's entries live in registers
     * (stored and reloaded at other widths they would stall store-to-load forwarding) */
#pragma GCC unroll 6
    for (int p = 0; p < n; p++) {
        double d = A[p * S + p];
        if (!(d > 1e-11 * fabs(diag[p]) + 1e-300)) return 1;
        double id = 1.0 / d, c[6], r[6];
#pragma GCC unroll 6
        for (int i = 0; i < n; i++) { r[i] = A[p * S + i]; c[i] = r[i] * id; }
#pragma GCC unroll 6
        for (int i = 0; i < n; i++)
#pragma GCC unroll 6
            for (int q = 0; q < n; q++) A[i * S + q] -= c[i] * r[q];
#pragma GCC unroll 6
        for (int i = 0; i < n; i++) { A[i * S + p] = c[i]; A[p * S + i] = c[i]; }
        A[p * S + p] = -id;
    }
    for (int i = 0; i < n; i++) for (int q = 0; q < n; q++) Dj[i * S + q] = -A[i * S + q];
    int e0 = W->nbr_start[j], e1 = W->nbr_start[j + 1];
    for (int e = e0; e < e1; e++) {
        int mk = W->trows[W->nbr_list[e]];
#define NEIGHBOUR(m) neighbour_factor(W->nbr_block + 36 * (size_t)e, A, W->nbr_L + 36 * (size_t)e, \
                                      W->tdiag + 36 * (size_t)W->nbr_list[e], n, m)
        dispatch(mk, NEIGHBOUR);
    }
    for (int e = e0; e < e1; e++) {                       /* A_lk -= L_lj A_kj^T for later neighbours k < l */
        int k = W->nbr_list[e], mk = W->trows[k];
        const double *restrict Bk = W->nbr_block + 36 * (size_t)e;
        for (int f = e0; f < e1; f++) {
            int l = W->nbr_list[f], ml = W->trows[l];
            if (W->tpos[l] <= W->tpos[k]) continue;
            double *restrict T = lower_block(W, k, l);
            if (!T) return 2;
            const double *restrict Ll = W->nbr_L + 36 * (size_t)f;
            for (int r = 0; r < ml; r++) for (int c = 0; c < mk; c++) {
                double s = 0;
                for (int q = 0; q < n; q++) s += Ll[r * S + q] * Bk[c * S + q];
                T[r * S + c] -= s;
            }
        }
    }
    return 0;
}

/* forward: y_k -= L_kj y_j for the later neighbours k of j */
KERNEL void forward_joint(EngineWorld *W, int j, const int n)
{
    const double *yj = W->tvec + S * (size_t)j;
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
        const double *L = W->nbr_L + 36 * (size_t)e;
        double *yk = W->tvec + S * (size_t)W->nbr_list[e];
        for (int r = 0; r < S; r++) { double s = 0; for (int q = 0; q < n; q++) s += L[r * S + q] * yj[q]; yk[r] -= s; }
    }
}

/* backward: x_j = D_j^-1 y_j - sum_k L_kj^T x_k */
KERNEL void backward_joint(EngineWorld *W, int j, const int n)
{
    const double *Dj = W->tdiag + 36 * (size_t)j;
    double *xj = W->tvec + S * (size_t)j, x[6];
    for (int a = 0; a < n; a++) { double s = 0; for (int q = 0; q < n; q++) s += Dj[a * S + q] * xj[q]; x[a] = s; }
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
        const double *L = W->nbr_L + 36 * (size_t)e, *xk = W->tvec + S * (size_t)W->nbr_list[e];
        for (int r = 0; r < S; r++) for (int q = 0; q < n; q++) x[q] -= L[r * S + q] * xk[r];
    }
    for (int q = 0; q < n; q++) xj[q] = x[q];
}

int tree_solve(EngineWorld *W)
{
    int nj = W->nj, err = 0;
    for (int j = 0; j < nj; j++) {                       /* which rows are rotation-only, this step */
        int mask = joint_angular_rows((int)W->jint[(size_t)j * JI_SIZE]);
        W->tmask[j] = angular_rows_hold(W->rows + W->tstart[j], W->trows[j], mask) ? mask : 0;
    }
    for (int j = 0; j < nj; j++) {
        switch (W->tmask[j]) {                            /* one kernel per joint type's row pattern */
        case 0x18: assemble_joint(W, j, 5, 0x18); break;  /* hinge */
        case 0x07: assemble_joint(W, j, 5, 0x07); break;  /* slider */
        case 0x38: assemble_joint(W, j, 6, 0x38); break;  /* fixed */
        case 0x08: assemble_joint(W, j, 4, 0x08); break;  /* universal, hinge2 */
        default:
#define ASSEMBLE(n) assemble_joint(W, j, n, 0)
            dispatch(W->trows[j], ASSEMBLE);
        }
    }
    for (int i = 0; i < nj && !err; i++) {
        int j = W->torder[i];
#define ELIMINATE(n) err = eliminate_joint(W, j, n)
        dispatch(W->trows[j], ELIMINATE);
    }
    if (err) return err;
    for (int j = 0; j < nj; j++) {
        double *y = W->tvec + S * (size_t)j;
        const double *b = W->b + W->tstart[j];
        for (int a = 0; a < S; a++) y[a] = a < W->trows[j] ? b[a] : 0.0;
    }
    for (int i = 0; i < nj; i++) {
        int j = W->torder[i];
#define FORWARD(n) forward_joint(W, j, n)
        dispatch(W->trows[j], FORWARD);
    }
    for (int i = nj - 1; i >= 0; i--) {
        int j = W->torder[i];
#define BACKWARD(n) backward_joint(W, j, n)
        dispatch(W->trows[j], BACKWARD);
    }
    for (int j = 0; j < nj; j++) {
        const double *x = W->tvec + S * (size_t)j;
        double *l = W->lambda + W->tstart[j];
        for (int a = 0; a < W->trows[j]; a++) {
            if (!isfinite(x[a])) return 3;
            l[a] = x[a];
        }
    }
    return 0;
}
