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

static int find(int *up, int a) { while (up[a] != a) { up[a] = up[up[a]]; a = up[a]; } return a; }

void tree_free(EngineWorld *W)
{
    void *ps[] = {W->torder, W->tpos, W->trows, W->tstart, W->nbr_start, W->nbr_list, W->tdiag, W->nbr_block, W->tvec};
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
    W->torder = malloc(sizeof(int) * (size_t)nj); W->tpos = malloc(sizeof(int) * (size_t)nj);
    W->trows = malloc(sizeof(int) * (size_t)nj); W->tstart = malloc(sizeof(int) * (size_t)nj);
    W->nbr_start = calloc((size_t)nj + 1, sizeof(int));
    if (!up || !deg || !adj_start || !adj || !seen || !stack || !post || !parent_joint || !W->torder || !W->tpos ||
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
    W->tvec = malloc(sizeof(double) * (size_t)(m + 6 * nj + 1));
    if (!W->tdiag || !W->nbr_block || !W->tvec) goto fail;
    W->tree_m = m; W->tree_ok = 1;
done:
    free(up); free(deg); free(adj_start); free(adj); free(seen); free(stack); free(post); free(parent_joint);
    return 0;
fail:
    free(up); free(deg); free(adj_start); free(adj); free(seen); free(stack); free(post); free(parent_joint);
    return -1;
}

/* The kernels below take the joint's row count n as a compile-time constant (one copy per joint
 * type's 3, 4, 5 or 6 rows, chosen by dispatch()), so their inner loops unroll; only the lower
 * triangle of each diagonal block is formed, factored and read. */
#define KERNEL static inline __attribute__((always_inline))
#define dispatch(n, call) do { switch (n) { case 3: call(3); break; case 4: call(4); break; \
        case 5: call(5); break; default: call(6); } } while (0)

static inline double dot6(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* Joint j's diagonal block A_jj = sum over its bodies of J W J^T (+ CFM/h), lower triangle, and
 * the blocks A_kj (m_k x n) with its later neighbours k: all rows of a joint act on the same two
 * bodies, so which sides meet is decided once per block. */
KERNEL void assemble_joint(EngineWorld *W, int j, const int n)
{
    const Row *rj = W->rows + W->tstart[j];
    const double *Mj = W->iMJ + 12 * (size_t)W->tstart[j], *cfmh = W->cfmh + W->tstart[j];
    double *D = W->tdiag + 36 * (size_t)j;
    int b1 = rj->b1, b2 = rj->b2;
    for (int a = 0; a < n; a++) for (int c = 0; c <= a; c++) {
        double s = a == c ? cfmh[a] : 0.0;
        if (b1 >= 0) s += dot6(rj[a].J1, Mj + 12 * c);
        if (b2 >= 0) s += dot6(rj[a].J2, Mj + 12 * c + 6);
        D[a * n + c] = s;
    }
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
        int k = W->nbr_list[e], mk = W->trows[k];
        const Row *rk = W->rows + W->tstart[k];
        double *B = W->nbr_block + 36 * (size_t)e;
        int first = 1;
        for (int sk = 0; sk < 2; sk++) for (int sj = 0; sj < 2; sj++) {
            int bk = sk ? rk->b2 : rk->b1, bj = sj ? b2 : b1;
            if (bk < 0 || bk != bj) continue;
            for (int r = 0; r < mk; r++) {
                const double *Jr = sk ? rk[r].J2 : rk[r].J1;
                for (int c = 0; c < n; c++) {
                    double v = dot6(Jr, Mj + 12 * c + 6 * sj);
                    B[r * n + c] = first ? v : B[r * n + c] + v;
                }
            }
            first = 0;
        }
        if (first) memset(B, 0, sizeof(double) * (size_t)(mk * n));
    }
}

static double *lower_block(EngineWorld *W, int j, int k)
{   /* stored block L(k, j) (m_k x m_j) for a later neighbour k of j */
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) if (W->nbr_list[e] == k) return W->nbr_block + 36 * (size_t)e;
    return NULL;
}

/* Eliminate joint j as A = L D L^T with unit lower L (no square roots on the chain of pivots):
 * A_jj = L_jj D_j L_jj^T, then for its later neighbours B_k = A_kj L_jj^-T, A_kl -= B_k D_j^-1 B_l^T,
 * and L_kj = B_k D_j^-1 is stored.  0, or nonzero for a pivot that is not positive or a fill-in
 * (not a tree after all). */
KERNEL int eliminate_joint(EngineWorld *W, int j, const int n)
{
    double *L = W->tdiag + 36 * (size_t)j;
    double *inv = W->tvec + W->tree_m + 6 * (size_t)j;   /* D_j^-1 */
    for (int a = 0; a < n; a++) {
        double t[6];                                      /* L[a][q] d[q] */
        for (int c = 0; c < a; c++) {
            double s = L[a * n + c];
            for (int q = 0; q < c; q++) s -= t[q] * L[c * n + q];
            t[c] = s;
            L[a * n + c] = s * inv[c];
        }
        double s = L[a * n + a];
        for (int q = 0; q < a; q++) s -= t[q] * L[a * n + q];
        if (!(s > 1e-11 * fabs(L[a * n + a]) + 1e-300)) return 1;
        inv[a] = 1.0 / s; L[a * n + a] = 1.0;
    }
    int e0 = W->nbr_start[j], e1 = W->nbr_start[j + 1];
    for (int e = e0; e < e1; e++) {                       /* B_k = A_kj L_jj^-T */
        int mk = W->trows[W->nbr_list[e]];
        double *restrict B = W->nbr_block + 36 * (size_t)e;
        for (int r = 0; r < mk; r++) {
            double *restrict Br = B + r * n;
            for (int c = 1; c < n; c++) {
                double s = Br[c];
                for (int q = 0; q < c; q++) s -= Br[q] * L[c * n + q];
                Br[c] = s;
            }
        }
    }
    for (int e = e0; e < e1; e++) {
        int k = W->nbr_list[e], mk = W->trows[k];
        const double *Bk = W->nbr_block + 36 * (size_t)e;
        for (int f = e0; f < e1; f++) {
            int l = W->nbr_list[f], ml = W->trows[l];
            if (W->tpos[l] < W->tpos[k]) continue;
            const double *Bl = W->nbr_block + 36 * (size_t)f;
            if (l == k) {                                   /* diagonal block: lower triangle */
                double *T = W->tdiag + 36 * (size_t)k;
                for (int r = 0; r < mk; r++) {
                    double Bi[6];
                    for (int q = 0; q < n; q++) Bi[q] = Bk[r * n + q] * inv[q];
                    for (int c = 0; c <= r; c++) {
                        double s = 0;
                        for (int q = 0; q < n; q++) s += Bi[q] * Bk[c * n + q];
                        T[r * mk + c] -= s;
                    }
                }
                continue;
            }
            double *T = lower_block(W, k, l);
            if (!T) return 2;
            for (int r = 0; r < ml; r++) {                  /* T (ml x mk) -= Bl D^-1 Bk^T */
                double Bi[6];
                for (int q = 0; q < n; q++) Bi[q] = Bl[r * n + q] * inv[q];
                for (int c = 0; c < mk; c++) {
                    double s = 0;
                    for (int q = 0; q < n; q++) s += Bi[q] * Bk[c * n + q];
                    T[r * mk + c] -= s;
                }
            }
        }
    }
    for (int e = e0; e < e1; e++) {                       /* L_kj = B_k D_j^-1 */
        int mk = W->trows[W->nbr_list[e]];
        double *B = W->nbr_block + 36 * (size_t)e;
        for (int r = 0; r < mk; r++) for (int q = 0; q < n; q++) B[r * n + q] *= inv[q];
    }
    return 0;
}

/* forward: y_j = L_jj^-1 (b_j - ...), pushing L_kj y_j into later blocks; then y_j <- D_j^-1 y_j */
KERNEL void forward_joint(EngineWorld *W, int j, const int n)
{
    const double *L = W->tdiag + 36 * (size_t)j, *inv = W->tvec + W->tree_m + 6 * (size_t)j;
    double *y = W->tvec, *yj = y + W->tstart[j];
    for (int a = 1; a < n; a++) { double s = yj[a]; for (int q = 0; q < a; q++) s -= L[a * n + q] * yj[q]; yj[a] = s; }
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
        int k = W->nbr_list[e], mk = W->trows[k];
        const double *B = W->nbr_block + 36 * (size_t)e;
        double *yk = y + W->tstart[k];
        for (int r = 0; r < mk; r++) { double s = 0; for (int q = 0; q < n; q++) s += B[r * n + q] * yj[q]; yk[r] -= s; }
    }
    for (int a = 0; a < n; a++) yj[a] *= inv[a];
}

/* backward: x_j = L_jj^-T (y_j - sum_k L_kj^T x_k) */
KERNEL void backward_joint(EngineWorld *W, int j, const int n)
{
    const double *L = W->tdiag + 36 * (size_t)j;
    double *y = W->tvec, *xj = y + W->tstart[j];
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
        int k = W->nbr_list[e], mk = W->trows[k];
        const double *B = W->nbr_block + 36 * (size_t)e, *xk = y + W->tstart[k];
        for (int r = 0; r < mk; r++) for (int q = 0; q < n; q++) xj[q] -= B[r * n + q] * xk[r];
    }
    for (int a = n - 2; a >= 0; a--) { double s = xj[a]; for (int q = a + 1; q < n; q++) s -= L[q * n + a] * xj[q]; xj[a] = s; }
}

int tree_solve(EngineWorld *W)
{
    int nj = W->nj, err = 0;
    for (int j = 0; j < nj; j++) {
#define ASSEMBLE(n) assemble_joint(W, j, n)
        dispatch(W->trows[j], ASSEMBLE);
    }
    for (int i = 0; i < nj && !err; i++) {
        int j = W->torder[i];
#define ELIMINATE(n) err = eliminate_joint(W, j, n)
        dispatch(W->trows[j], ELIMINATE);
    }
    if (err) return err;
    memcpy(W->tvec, W->b, sizeof(double) * (size_t)W->tree_m);
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
    memcpy(W->lambda, W->tvec, sizeof(double) * (size_t)W->tree_m);
    for (int i = 0; i < W->tree_m; i++) if (!isfinite(W->lambda[i])) return 3;
    return 0;
}
