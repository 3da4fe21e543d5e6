/* Linear-time multipliers for joint trees (Baraff 1996, "Linear-time dynamics using Lagrange
 * multipliers"): when every row is an equality (no contacts, motors or active stops) the matrix
 * A = J W J^T + CFM/h is block-sparse, one block per joint, and joints couple only through a
 * shared body.  If the joints form a forest over the bodies (the static world couples nothing),
 * eliminating each body's joints after those of its subtree makes no fill-in, so a block
 * Cholesky factorization on that order costs O(joints).  Otherwise the step uses dense pivoting.
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

/* A block between rows of joints j and k: sum over their shared bodies of J_a W J_c^T.  All rows
 * of a joint act on the same two bodies, so which sides meet is decided once per block. */
static void block(const EngineWorld *W, int j, int k, double *out)
{
    int mj = W->trows[j], mk = W->trows[k];
    const Row *rj = W->rows + W->tstart[j], *rk = W->rows + W->tstart[k];
    int bj[2] = {rj->b1, rj->b2}, bk[2] = {rk->b1, rk->b2};
    memset(out, 0, sizeof(double) * (size_t)(mj * mk));
    for (int sj = 0; sj < 2; sj++) for (int sk = 0; sk < 2; sk++) {
        if (bj[sj] < 0 || bj[sj] != bk[sk]) continue;
        for (int a = 0; a < mj; a++) {
            const double *Ja = sj ? rj[a].J2 : rj[a].J1;
            for (int c = 0; c < mk; c++) {
                const double *iMJ = W->iMJ + 12 * (size_t)(W->tstart[k] + c) + 6 * sk;
                out[a * mk + c] += Ja[0] * iMJ[0] + Ja[1] * iMJ[1] + Ja[2] * iMJ[2] + Ja[3] * iMJ[3] + Ja[4] * iMJ[4] + Ja[5] * iMJ[5];
            }
        }
    }
}

static double *lower_block(EngineWorld *W, int j, int k)
{   /* stored block L(k, j) (m_k x m_j) for a later neighbour k of j */
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) if (W->nbr_list[e] == k) return W->nbr_block + 36 * (size_t)e;
    return NULL;
}

int tree_solve(EngineWorld *W)
{
    int nj = W->nj;
    /* assemble */
    for (int j = 0; j < nj; j++) {
        double *D = W->tdiag + 36 * (size_t)j, tmp[36];
        block(W, j, j, D);
        for (int a = 0; a < W->trows[j]; a++) D[a * W->trows[j] + a] += W->cfmh[W->tstart[j] + a];
        for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
            int k = W->nbr_list[e];
            block(W, k, j, tmp);
            memcpy(W->nbr_block + 36 * (size_t)e, tmp, sizeof(double) * (size_t)(W->trows[k] * W->trows[j]));
        }
    }
    /* factor in elimination order: D_j = L_jj L_jj^T, L_kj = A_kj L_jj^-T, A_kl -= L_kj L_lj^T */
    for (int i = 0; i < nj; i++) {
        int j = W->torder[i], mj = W->trows[j];
        double *L = W->tdiag + 36 * (size_t)j;
        double *inv = W->tvec + W->tree_m + 6 * (size_t)j;   /* reciprocals of L's diagonal */
        for (int a = 0; a < mj; a++) {
            for (int c = 0; c <= a; c++) {
                double s = L[a * mj + c];
                for (int q = 0; q < c; q++) s -= L[a * mj + q] * L[c * mj + q];
                if (a == c) { if (!(s > 1e-11 * fabs(L[a * mj + a]) + 1e-300)) return 1; L[a * mj + a] = sqrt(s); inv[a] = 1.0 / L[a * mj + a]; }
                else L[a * mj + c] = s * inv[c];
            }
        }
        for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
            int k = W->nbr_list[e], mk = W->trows[k];
            double *restrict B = W->nbr_block + 36 * (size_t)e;
            for (int r = 0; r < mk; r++) {
                double *restrict Br = B + r * mj;
                for (int c = 0; c < mj; c++) {
                    double s = Br[c];
                    for (int q = 0; q < c; q++) s -= Br[q] * L[c * mj + q];
                    Br[c] = s * inv[c];
                }
            }
        }
        for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
            int k = W->nbr_list[e], mk = W->trows[k];
            const double *Bk = W->nbr_block + 36 * (size_t)e;
            for (int f = W->nbr_start[j]; f < W->nbr_start[j + 1]; f++) {
                int l = W->nbr_list[f], ml = W->trows[l];
                if (W->tpos[l] < W->tpos[k]) continue;
                const double *Bl = W->nbr_block + 36 * (size_t)f;
                double *T = l == k ? W->tdiag + 36 * (size_t)k : lower_block(W, k, l);
                if (!T) return 2;                               /* would fill in: not a tree after all */
                for (int r = 0; r < ml; r++) for (int c = 0; c < mk; c++) {   /* T (ml x mk) -= Bl Bk^T */
                    double s = 0;
                    for (int q = 0; q < mj; q++) s += Bl[r * mj + q] * Bk[c * mj + q];
                    T[r * mk + c] -= s;
                }
            }
        }
    }
    /* forward: y_j = L_jj^-1 (b_j - ...), pushing L_kj y_j into later blocks */
    double *y = W->tvec;
    memcpy(y, W->b, sizeof(double) * (size_t)W->tree_m);
    for (int i = 0; i < nj; i++) {
        int j = W->torder[i], mj = W->trows[j];
        const double *L = W->tdiag + 36 * (size_t)j;
        double *yj = y + W->tstart[j];
        const double *inv = W->tvec + W->tree_m + 6 * (size_t)j;
        for (int a = 0; a < mj; a++) { double s = yj[a]; for (int q = 0; q < a; q++) s -= L[a * mj + q] * yj[q]; yj[a] = s * inv[a]; }
        for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
            int k = W->nbr_list[e], mk = W->trows[k];
            const double *B = W->nbr_block + 36 * (size_t)e;
            double *yk = y + W->tstart[k];
            for (int r = 0; r < mk; r++) { double s = 0; for (int q = 0; q < mj; q++) s += B[r * mj + q] * yj[q]; yk[r] -= s; }
        }
    }
    /* backward: x_j = L_jj^-T (y_j - sum_k L_kj^T x_k) */
    for (int i = nj - 1; i >= 0; i--) {
        int j = W->torder[i], mj = W->trows[j];
        const double *L = W->tdiag + 36 * (size_t)j;
        double *xj = y + W->tstart[j];
        for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
            int k = W->nbr_list[e], mk = W->trows[k];
            const double *B = W->nbr_block + 36 * (size_t)e, *xk = y + W->tstart[k];
            for (int q = 0; q < mj; q++) { double s = 0; for (int r = 0; r < mk; r++) s += B[r * mj + q] * xk[r]; xj[q] -= s; }
        }
        const double *inv = W->tvec + W->tree_m + 6 * (size_t)j;
        for (int a = mj - 1; a >= 0; a--) { double s = xj[a]; for (int q = a + 1; q < mj; q++) s -= L[q * mj + a] * xj[q]; xj[a] = s * inv[a]; }
    }
    memcpy(W->lambda, y, sizeof(double) * (size_t)W->tree_m);
    for (int i = 0; i < W->tree_m; i++) if (!isfinite(W->lambda[i])) return 3;
    return 0;
}
