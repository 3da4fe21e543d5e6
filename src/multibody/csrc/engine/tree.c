/* Linear-time multipliers for joint trees (Baraff 1996, "Linear-time dynamics using Lagrange
 * multipliers"): when every row is an equality (no contacts, motors or active stops) the matrix
 * A = J W J^T + CFM/h is block-sparse, one block per joint, and joints couple only through a
 * shared body.  If the joints form a forest over the bodies (the static world couples nothing),
 * eliminating joints from the leaves inward (each one when its remaining neighbours all share
 * one body) makes no fill-in, so a block LDL^T factorization on that order costs O(joints).
 * Otherwise the step uses dense pivoting.
 */
#include <stdlib.h>
#include "engine/engine.h"

int mb_joint_base_rows(int type)
{
    static const int rows[] = {3, 5, 5, 6, 4, 4};   /* ball hinge slider fixed universal hinge2 */
    return type >= 0 && type <= J_HINGE2 ? rows[type] : 0;
}

static int find(int *up, int a) { while (up[a] != a) { up[a] = up[up[a]]; a = up[a]; } return a; }

void mb_tree_free(mb_world *W)
{
    void *ps[] = {W->torder, W->tpos, W->trows, W->tstart, W->nbr_start, W->nbr_list, W->tdiag, W->nbr_block, W->nbr_L, W->tvec,
                  W->nbr_side, W->nbr_imb, W->tang, W->tG, W->hterms, W->tim};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) free(ps[i]);
}

int mb_tree_init(mb_world *W)
{
    int nb = W->nb, nj = W->nj;
    W->tree_ok = 0;
    if (nj == 0) return 0;
    int *up = malloc(sizeof(int) * (size_t)(nb + 1)), *deg = calloc((size_t)nb + 1, sizeof(int));
    int *adj_start = calloc((size_t)nb + 2, sizeof(int)), *adj = malloc(sizeof(int) * (size_t)(2 * nj + 1));
    int *cnt = calloc((size_t)nb + 1, sizeof(int)), *gone = calloc((size_t)nj + 1, sizeof(int));
    W->torder = malloc(sizeof(int) * (size_t)nj); W->tpos = malloc(sizeof(int) * (size_t)nj);
    W->trows = malloc(sizeof(int) * (size_t)nj); W->tstart = malloc(sizeof(int) * (size_t)nj);
    W->nbr_start = calloc((size_t)nj + 1, sizeof(int));
    if (!up || !deg || !adj_start || !adj || !cnt || !gone || !W->torder || !W->tpos ||
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
    /* Elimination order by rounds of leaf stripping: a joint whose remaining neighbours all share
     * one body (a world joint, or one whose other body has no other joint left) goes without
     * fill-in, and stays eligible while others go.  Each round takes every joint eligible at its
     * start (a chain is eliminated from both ends toward the middle). */
    int nord = 0;
    for (int b = 0; b < nb; b++) cnt[b] = adj_start[b + 1] - adj_start[b];
    while (nord < nj) {
        int start = nord;
        for (int j = 0; j < nj; j++) {
            if (gone[j]) continue;
            int b1 = (int)W->jint[(size_t)j * JI_SIZE + JI_B1], b2 = (int)W->jint[(size_t)j * JI_SIZE + JI_B2];
            if (b2 < 0 || cnt[b1] == 1 || cnt[b2] == 1) { W->torder[nord++] = j; gone[j] = 1; }
        }
        if (nord == start) break;                   /* none eligible: not a forest after all */
        for (int i = start; i < nord; i++) {
            int j = W->torder[i], b2 = (int)W->jint[(size_t)j * JI_SIZE + JI_B2];
            cnt[W->jint[(size_t)j * JI_SIZE + JI_B1]]--;
            if (b2 >= 0) cnt[b2]--;
        }
    }
    if (nord != nj) goto done;
    int m = 0;
    for (int j = 0; j < nj; j++) { W->trows[j] = mb_joint_base_rows((int)W->jint[(size_t)j * JI_SIZE]); W->tstart[j] = m; m += W->trows[j]; }
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
    W->tdiag = calloc(36 * (size_t)nj, sizeof(double));             /* pads stay zero */
    W->nbr_block = calloc(36 * (size_t)(total + 1), sizeof(double));
    W->nbr_L = calloc(36 * (size_t)(total + 1), sizeof(double));
    W->tvec = calloc(6 * (size_t)nj + 1, sizeof(double));   /* pads stay zero */
    if (!W->tdiag || !W->nbr_block || !W->nbr_L || !W->tvec) goto fail;
    /* ball-based joints: the side of the shared body in each neighbour pair, and its m^-1 signed
     * by the product of the anchor rows' linear parts (+1 on body 1, -1 on body 2) */
    W->tree_ball = 1;
    for (int j = 0; j < nj; j++) {
        int type = (int)W->jint[(size_t)j * JI_SIZE + JI_TYPE];
        if (type != J_BALL && type != J_HINGE && type != J_UNIVERSAL && type != J_FIXED) W->tree_ball = 0;
    }
    if (W->tree_ball) {
        W->nbr_side = calloc(2 * (size_t)total + 1, sizeof(int));
        W->nbr_imb = calloc((size_t)total + 1, sizeof(double));
        W->tang = calloc(36 * (size_t)nj, sizeof(double));          /* pads and static sides stay zero */
        W->tG = calloc(36 * (size_t)nj, sizeof(double));
        W->tim = calloc((size_t)nj, sizeof(double));
        if (!W->nbr_side || !W->nbr_imb || !W->tang || !W->tG || !W->tim) goto fail;
        for (int j = 0; j < nj; j++) {
            int b1 = (int)W->jint[(size_t)j * JI_SIZE + JI_B1], b2 = (int)W->jint[(size_t)j * JI_SIZE + JI_B2];
            W->tim[j] = W->bprop[(size_t)b1 * BP_SIZE + BP_INVMASS] + (b2 >= 0 ? W->bprop[(size_t)b2 * BP_SIZE + BP_INVMASS] : 0.0);
            for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
                int k = W->nbr_list[e], k1 = (int)W->jint[(size_t)k * JI_SIZE + JI_B1];
                int sk = k1 == b1 || k1 == b2 ? 0 : 1, bk = sk ? (int)W->jint[(size_t)k * JI_SIZE + JI_B2] : k1;
                int sj = bk == b1 ? 0 : 1;
                W->nbr_side[2 * e] = sk; W->nbr_side[2 * e + 1] = sj;
                W->nbr_imb[e] = (sk == sj ? 1.0 : -1.0) * W->bprop[(size_t)bk * BP_SIZE + BP_INVMASS];
            }
        }
    }
    W->tree_hinges = W->tree_ball;
    for (int j = 0; j < nj; j++) if (W->jint[(size_t)j * JI_SIZE + JI_TYPE] != J_HINGE) W->tree_hinges = 0;
    if (W->tree_hinges && !(W->hterms = calloc(HT_SIZE * (size_t)nj, sizeof(double)))) goto fail;
    W->tree_m = m; W->tree_ok = 1;
done:
    free(up); free(deg); free(adj_start); free(adj); free(cnt); free(gone);
    return 0;
fail:
    free(up); free(deg); free(adj_start); free(adj); free(cnt); free(gone);
    return -1;
}

/* Storage.  Every block is padded to 6 x 6 (a joint's rows n = 3..6), and each kernel takes the
 * joint's row count n as a compile-time constant (one copy per 3, 4, 5 or 6 rows, chosen by
 * dispatch()), so the loops unroll whole.  Blocks are kept so that the inner loops run along
 * rows of memory two lanes at a time (v2d):
 *   tdiag[j]      A_jj as its upper triangle U[c][r] = A_jj[r][c], r >= c; after elimination
 *                 F[p][p] = 1/d_p and F[p][i] = L[i][p] (i > p), from A_jj = L D L^T;
 *   nbr_block[e]  for joint j and its later neighbour k, A_kj transposed: B[q][r] = A_kj[r][q]
 *                 (q over j's rows, r over k's); after elimination W = A_kj L^-T, transposed;
 *   nbr_L[e]      V = W D^-1 transposed, so the block factor L_kj = A_kj A_jj^-1 = V L^-1.
 * Pads are zero and stay zero (zero blocks in, zeros out), so pairs may run over them. */
#define KERNEL static inline __attribute__((always_inline))
/* four lanes (AVX2 in the clones, two pairs in the portable build): a padded block's row of six
 * is four lanes and two.  No v4d crosses a call (-Wpsabi's note on the ABI of 32-byte arguments
 * does not apply): ld4 is always inlined, st4 a macro. */
typedef double v4d __attribute__((vector_size(32)));
#pragma GCC diagnostic ignored "-Wpsabi"
KERNEL v4d ld4(const double *p) { v4d v; memcpy(&v, p, sizeof v); return v; }
#define st4(p, v) do { const v4d st4_ = (v); memcpy((p), &st4_, sizeof st4_); } while (0)
#define S 6
#define dispatch(n, call) do { switch (n) { case 3: call(3); break; case 4: call(4); break; \
        case 5: call(5); break; default: call(6); } } while (0)

/* A_kj = J_k W J_j^T on the body they share (side sk of joint k, side sj of joint j), stored
 * transposed: for each of j's columns W J_j^T, the dot products with two of k's rows at once.
 * One copy per (n, m), from block_kernels. */
KERNEL void neighbour_block(const mb_row *rk, int sk, const double *Mj, double *restrict B, const int n, const int m)
{
#pragma GCC unroll 3
    for (int r = 0; r + 1 < m; r += 2) {             /* a pair of k's rows held, j's columns streamed */
        const double *Ja = sk ? rk[r].J2 : rk[r].J1, *Jb = sk ? rk[r + 1].J2 : rk[r + 1].J1;
#pragma GCC unroll 6
        for (int q = 0; q < n; q++) st2(B + q * S + r, dot6x2(Mj + 12 * q, Ja, Jb));
    }
    if (m & 1) {                                      /* k's last row, against two of j's columns at once */
        const double *Jr = sk ? rk[m - 1].J2 : rk[m - 1].J1;
#pragma GCC unroll 3
        for (int q = 0; q + 1 < n; q += 2) {
            v2d d = dot6x2(Jr, Mj + 12 * q, Mj + 12 * q + 12);
            B[q * S + m - 1] = d[0]; B[(q + 1) * S + m - 1] = d[1];
        }
        if (n & 1) B[(n - 1) * S + m - 1] = dot6(Jr, Mj + 12 * (n - 1));
    }
}
typedef void (*BlockKernel)(const mb_row *, int, const double *, double *);
#define BLOCK(n, m) static void block_##n##_##m(const mb_row *rk, int sk, const double *Mj, double *B) \
    { neighbour_block(rk, sk, Mj, B, n, m); }
#define BLOCKS(n) BLOCK(n, 3) BLOCK(n, 4) BLOCK(n, 5) BLOCK(n, 6)
BLOCKS(3) BLOCKS(4) BLOCKS(5) BLOCKS(6)
#define BLOCK_ROW(n) {block_##n##_3, block_##n##_4, block_##n##_5, block_##n##_6}
static const BlockKernel block_kernels[4][4] = {BLOCK_ROW(3), BLOCK_ROW(4), BLOCK_ROW(5), BLOCK_ROW(6)};

/* Joint j's diagonal block A_jj = J W J^T (+ CFM/h) as its upper triangle, and the blocks A_kj
 * with its later neighbours k.  A column of W J^T (zero on the side of the static world) against
 * a row's J1, J2 is one 12-vector dot product, so neither side needs a test. */
KERNEL void assemble_joint(mb_world *W, int j, const int n)
{
    const mb_row *rj = W->rows + W->tstart[j];
    const double *Mj = W->iMJ + 12 * (size_t)W->tstart[j], *cfmh = W->cfmh + W->tstart[j];
    double *restrict U = W->tdiag + 36 * (size_t)j;
    int b1 = rj->b1, b2 = rj->b2;
#pragma GCC unroll 6
    for (int c = 0; c < n; c++) {
        const double *G = Mj + 12 * c;
#pragma GCC unroll 3
        for (int r = c; r + 1 < n; r += 2) st2(U + c * S + r, dot12_two(G, rj[r].J1, rj[r].J2, rj[r + 1].J1, rj[r + 1].J2));
        if ((n - c) & 1) U[c * S + n - 1] = dot12_one(rj[n - 1].J1, rj[n - 1].J2, G);
        U[c * S + c] += cfmh[c];
    }
    double *y = W->tvec + S * (size_t)j;                  /* right-hand side (the pads stay zero) */
#pragma GCC unroll 6
    for (int a = 0; a < n; a++) y[a] = W->b[W->tstart[j] + a];
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
        int k = W->nbr_list[e];
        const mb_row *rk = W->rows + W->tstart[k];
        /* in a forest two joints share exactly one body: the sides sk of k and sj of j */
        int sk = rk->b1 >= 0 && (rk->b1 == b1 || rk->b1 == b2) ? 0 : 1, bk = sk ? rk->b2 : rk->b1;
        int sj = bk == b1 ? 0 : 1;
        block_kernels[n - 3][W->trows[k] - 3](rk, sk, Mj + 6 * sj, W->nbr_block + 36 * (size_t)e);
    }
}

static double *lower_block(mb_world *W, int j, int k)
{   /* stored block A(k, j), transposed, for a later neighbour k of j */
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) if (W->nbr_list[e] == k) return W->nbr_block + 36 * (size_t)e;
    return NULL;
}

/* For a later neighbour k (m rows) of joint j (n rows), with A_jj = L D L^T factored in F (see
 * Storage) and 1/D in id: W = A_kj L^-T by forward substitution, V = W D^-1, and A_kk -= V W^T
 * on its upper triangle (row c from column c / 2 on, or from 0 in the four lanes).  W replaces
 * A_kj in B; V goes to Vt.  k's rows 0-3 run in four lanes, 4-5 in two (while m > 4); a
 * broadcast entry of F or W serves both. */
KERNEL void neighbour_factor4(double *restrict B, const double *restrict F, const double *restrict id,
                              double *restrict Vt, double *restrict Uk, const int n, const int m)
{
    v4d w[6], v[6];
    v2d x[6], y[6];
#pragma GCC unroll 6
    for (int q = 0; q < n; q++) {
        v4d s = ld4(B + q * S);
        v2d t = ld2(B + q * S + 4);
#pragma GCC unroll 6
        for (int r = 0; r < q; r++) { s -= F[r * S + q] * w[r]; if (m > 4) t -= F[r * S + q] * x[r]; }
        w[q] = s; v[q] = s * id[q];
        st4(B + q * S, s); st4(Vt + q * S, v[q]);
        if (m > 4) { x[q] = t; y[q] = t * id[q]; st2(B + q * S + 4, t); st2(Vt + q * S + 4, y[q]); }
    }
    /* A_kk -= V W^T, row c < 4: W's column c (w[q][c]) broadcast against V's rows */
#pragma GCC unroll 4
    for (int c = 0; c < (m < 4 ? m : 4); c++) {
        v4d acc = {0, 0, 0, 0};
#pragma GCC unroll 6
        for (int q = 0; q < n; q++) acc += B[q * S + c] * v[q];   /* (read back: no lane taken out of a vector) */
        st4(Uk + c * S, ld4(Uk + c * S) - acc);
    }
    if (m > 4) {
        /* rows 4 (and 5) of the columns 0-3 in four lanes over the columns, W's rows against a
         * broadcast entry of V (each entry the same products and sums as by rows), scattered */
#pragma GCC unroll 2
        for (int r = 4; r < m; r++) {
            v4d acc = {0, 0, 0, 0};
#pragma GCC unroll 6
            for (int q = 0; q < n; q++) acc += w[q] * y[q][r - 4];
            for (int c = 0; c < 4; c++) Uk[c * S + r] -= acc[c];
        }
        /* the columns 4 on, in two lanes */
#pragma GCC unroll 2
        for (int c = 4; c < m; c++) {
            v2d acc2 = {0, 0};
#pragma GCC unroll 6
            for (int q = 0; q < n; q++) acc2 += x[q][c - 4] * y[q];
            st2(Uk + c * S + 4, ld2(Uk + c * S + 4) - acc2);
        }
    }
}
/* the same in two lanes only (the portable build: four-lane vectors would be split into pairs
 * and spilled), one pair of k's rows at a time */
KERNEL void neighbour_factor2(double *restrict B, const double *restrict F, const double *restrict id,
                              double *restrict Vt, double *restrict Uk, const int n, const int m)
{
    const int np = (m + 1) / 2;
    /* one pair of k's rows at a time: its n entries of W and V stay in registers */
#pragma GCC unroll 3
    for (int p = 0; p < np; p++) {
        v2d w[6];
#pragma GCC unroll 6
        for (int q = 0; q < n; q++) {
            v2d s = ld2(B + q * S + 2 * p);
#pragma GCC unroll 6
            for (int t = 0; t < q; t++) s -= F[t * S + q] * w[t];
            w[q] = s;
            st2(B + q * S + 2 * p, s); st2(Vt + q * S + 2 * p, s * id[q]);
        }
    }
    /* A_kk -= V W^T, row c of the upper triangle: W[c][q] broadcast against V's pairs */
#pragma GCC unroll 6
    for (int c = 0; c < m; c++) {
        v2d acc[3] = {{0, 0}, {0, 0}, {0, 0}};
#pragma GCC unroll 6
        for (int q = 0; q < n; q++) {
            double wc = B[q * S + c];
#pragma GCC unroll 3
            for (int p = c / 2; p < np; p++) acc[p] += wc * ld2(Vt + q * S + 2 * p);
        }
#pragma GCC unroll 3
        for (int p = c / 2; p < np; p++) st2(Uk + c * S + 2 * p, ld2(Uk + c * S + 2 * p) - acc[p]);
    }
}
KERNEL void neighbour_factor(double *restrict B, const double *restrict F, const double *restrict id,
                             double *restrict Vt, double *restrict Uk, const int n, const int m, const int L)
{
    if (L == 4) neighbour_factor4(B, F, id, Vt, Uk, n, m); else neighbour_factor2(B, F, id, Vt, Uk, n, m);
}

/* A_jj = L D L^T of a five-row joint in four lanes (eliminate_joint's in the AVX2 clone): row q's
 * entries q..4 held as one vector (row 2's with its pad, which stays zero), each entry with the
 * scalar loop's products and differences in its order.  0, or 1 for a pivot that is not positive. */
typedef long long v4i __attribute__((vector_size(32)));
KERNEL int ldl5_4(double *restrict U, double *restrict id)
{
    const v4d zero = {0, 0, 0, 0};
    const double d0[5] = {U[0], U[S + 1], U[2 * S + 2], U[3 * S + 3], U[4 * S + 4]};
    v4d r1 = ld4(U + S + 1), r2 = ld4(U + 2 * S + 2);
    v2d r3 = ld2(U + 3 * S + 3);
    double r4 = U[4 * S + 4], d;
#define PIVOT_OK(d, p) ((d) > 1e-11 * fabs(d0[p]) + 1e-300)
    /* pivot 0: L's column (entries 1-4) from row 0 */
    d = d0[0];
    if (!PIVOT_OK(d, 0)) return 1;
    id[0] = 1.0 / d;
    v4d c = ld4(U + 1), l = c * id[0];
    U[0] = id[0]; st4(U + 1, l);
    r1 -= c[0] * l;
    r2 -= c[1] * __builtin_shuffle(l, zero, (v4i){1, 2, 3, 4});
    r3 -= c[2] * (v2d){l[2], l[3]};
    r4 -= c[3] * l[3];
    /* pivot 1: row 1 is r1 (diagonal in lane 0) */
    d = r1[0];
    if (!PIVOT_OK(d, 1)) return 1;
    id[1] = 1.0 / d;
    c = r1; l = c * id[1];
    st4(U + S + 1, __builtin_shuffle(l, (v4d){id[1], id[1], id[1], id[1]}, (v4i){4, 1, 2, 3}));
    r2 -= c[1] * __builtin_shuffle(l, zero, (v4i){1, 2, 3, 4});
    r3 -= c[2] * (v2d){l[2], l[3]};
    r4 -= c[3] * l[3];
    /* pivot 2: row 2 is r2 (lane 3 the pad) */
    d = r2[0];
    if (!PIVOT_OK(d, 2)) return 1;
    id[2] = 1.0 / d;
    c = r2; l = c * id[2];
    st4(U + 2 * S + 2, __builtin_shuffle(l, (v4d){id[2], id[2], id[2], id[2]}, (v4i){4, 1, 2, 3}));
    r3 -= c[1] * (v2d){l[1], l[2]};
    r4 -= c[2] * l[2];
    /* pivots 3 and 4 */
    d = r3[0];
    if (!PIVOT_OK(d, 3)) return 1;
    id[3] = 1.0 / d;
    double l4 = r3[1] * id[3];
    U[3 * S + 3] = id[3]; U[3 * S + 4] = l4;
    r4 -= r3[1] * l4;
    if (!PIVOT_OK(r4, 4)) return 1;
    id[4] = 1.0 / r4;
    U[4 * S + 4] = id[4];
#undef PIVOT_OK
    return 0;
}

/* A_jj = L D L^T by n right-looking pivots, each a rank-one update of the trailing rows, in
 * place, unrolled whole: the trailing rows stay in registers between pivots */
KERNEL int ldl(double *restrict U, double *restrict id, const int n)
{
    double d0[6];
#pragma GCC unroll 6
    for (int p = 0; p < n; p++) d0[p] = U[p * S + p];
#pragma GCC unroll 6
    for (int p = 0; p < n; p++) {
        double d = U[p * S + p];
        if (!(d > 1e-11 * fabs(d0[p]) + 1e-300)) return 1;
        double c[6];
        id[p] = 1.0 / d;
        U[p * S + p] = id[p];
#pragma GCC unroll 6
        for (int i = p + 1; i < n; i++) { c[i] = U[p * S + i]; U[p * S + i] = c[i] * id[p]; }   /* L[i][p] */
#pragma GCC unroll 6
        for (int q = p + 1; q < n; q++)
#pragma GCC unroll 6
            for (int i = q; i < n; i++) U[q * S + i] -= c[q] * U[p * S + i];
    }
    return 0;
}

/* Eliminate joint j (Baraff's block elimination, each block by LDL^T): A_jj = L D L^T (ldl, or
 * ldl5_4 in four lanes), then for its later neighbours W, V and A_kk -= V W^T (neighbour_factor)
 * and A_lk -= V_l W_k^T.  0, or nonzero for a pivot that is not positive or a fill-in (not a tree
 * after all).  M: every neighbour's row count when all joints have the same (0: looked up). */
KERNEL int eliminate_joint(mb_world *W, int j, const int n, const int L, const int M)
{
    double *restrict U = W->tdiag + 36 * (size_t)j, id[6];
    if (n == 5 && L == 4 ? ldl5_4(U, id) : ldl(U, id, n)) return 1;
    int e0 = W->nbr_start[j], e1 = W->nbr_start[j + 1];
    for (int e = e0; e < e1; e++) {
#define NEIGHBOUR(m) neighbour_factor(W->nbr_block + 36 * (size_t)e, U, id, W->nbr_L + 36 * (size_t)e, \
                                      W->tdiag + 36 * (size_t)W->nbr_list[e], n, m, L)
        if (M) NEIGHBOUR(M);
        else dispatch(W->trows[W->nbr_list[e]], NEIGHBOUR);
    }
    for (int e = e0; e1 - e0 > 1 && e < e1; e++) {        /* A_lk -= V_l W_k^T for later neighbours k < l */
        int k = W->nbr_list[e], mk = W->trows[k];
        const double *restrict Wk = W->nbr_block + 36 * (size_t)e;
        for (int f = e0; f < e1; f++) {
            int l = W->nbr_list[f], ml = W->trows[l];
            if (W->tpos[l] <= W->tpos[k]) continue;
            double *restrict T = lower_block(W, k, l);    /* A_lk transposed: T[c][r], c over k's rows */
            if (!T) return 2;
            const double *restrict Vl = W->nbr_L + 36 * (size_t)f;
            for (int c = 0; c < mk; c++) for (int r = 0; r < ml; r++) {
                double s = 0;
                for (int q = 0; q < n; q++) s += Vl[q * S + r] * Wk[q * S + c];
                T[c * S + r] -= s;
            }
        }
    }
    return 0;
}

/* forward: z_j = L^-1 y_j (column by column), then y_k -= V_k z_j (= L_kj y_j) for the later
 * neighbours k of j, two of k's rows at a time */
KERNEL void forward_joint(mb_world *W, int j, const int n, const int L)
{
    const double *F = W->tdiag + 36 * (size_t)j;
    double *yj = W->tvec + S * (size_t)j, z[6];
    for (int q = 0; q < n; q++) z[q] = yj[q];
#pragma GCC unroll 6
    for (int t = 0; t < n; t++)
#pragma GCC unroll 6
        for (int i = t + 1; i < n; i++) z[i] -= F[t * S + i] * z[t];
    for (int q = 0; q < n; q++) yj[q] = z[q];
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
        const double *Vt = W->nbr_L + 36 * (size_t)e;
        double *yk = W->tvec + S * (size_t)W->nbr_list[e];
        if (L == 4) {                                     /* rows 0-3 in four lanes, 4-5 in two */
            v4d s4 = ld4(Vt) * z[0];
            v2d s2 = ld2(Vt + 4) * z[0];
#pragma GCC unroll 6
            for (int q = 1; q < n; q++) { s4 += ld4(Vt + q * S) * z[q]; s2 += ld2(Vt + q * S + 4) * z[q]; }
            st4(yk, ld4(yk) - s4); st2(yk + 4, ld2(yk + 4) - s2);
            continue;
        }
#pragma GCC unroll 3
        for (int p = 0; p < S; p += 2) {
            v2d s = ld2(Vt + p) * z[0];
#pragma GCC unroll 6
            for (int q = 1; q < n; q++) s += ld2(Vt + q * S + p) * z[q];
            st2(yk + p, ld2(yk + p) - s);
        }
    }
}

/* backward: x_j = A_jj^-1 y_j - sum_k L_kj^T x_k = L^-T (D^-1 z_j - sum_k V_k^T x_k), also the
 * joint's multipliers */
KERNEL void backward_joint(mb_world *W, int j, const int n)
{
    const double *F = W->tdiag + 36 * (size_t)j;
    double *xj = W->tvec + S * (size_t)j, t[6];
    for (int a = 0; a < n; a++) t[a] = F[a * S + a] * xj[a];
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
        const double *Vt = W->nbr_L + 36 * (size_t)e, *xk = W->tvec + S * (size_t)W->nbr_list[e];
        v2d x01 = ld2(xk), x23 = ld2(xk + 2), x45 = ld2(xk + 4);
#pragma GCC unroll 6
        for (int q = 0; q < n; q++) {
            v2d s = ld2(Vt + q * S) * x01 + ld2(Vt + q * S + 2) * x23 + ld2(Vt + q * S + 4) * x45;
            t[q] -= s[0] + s[1];
        }
    }
#pragma GCC unroll 6
    for (int q = n - 1; q >= 0; q--) {
        double s = t[q];
#pragma GCC unroll 6
        for (int i = q + 1; i < n; i++) s -= F[q * S + i] * t[i];
        t[q] = s;
    }
    double *l = W->lambda + W->tstart[j];
#pragma GCC unroll 6
    for (int q = 0; q < n; q++) xj[q] = l[q] = t[q];
}

/* x - x is 0 for every finite x and NaN otherwise: one sum over the multipliers in tvec (and the
 * zero pads) tells whether all are finite */
ENGINE_CLONES_AVX2 static int multipliers_finite(const mb_world *W)
{
    const double *x = W->tvec;
    const int nx = S * W->nj;
    v4d chk = {0, 0, 0, 0};
    int i = 0;
    for (; i + 3 < nx; i += 4) { v4d v = ld4(x + i); chk += v - v; }
    if (i < nx) { v2d v = ld2(x + i); v -= v; chk[0] += v[0]; chk[1] += v[1]; }   /* nx is even */
    return (chk[0] + chk[1]) + (chk[2] + chk[3]) == 0;
}

/* The backward pass over every joint, last eliminated first (each joint's row count looked up) */
ENGINE_CLONES_AVX2 static void backward_all(mb_world *W)
{
    for (int i = W->nj - 1; i >= 0; i--) {
        int j = W->torder[i];
#define BACKWARD(n) backward_joint(W, j, n)
        dispatch(W->trows[j], BACKWARD);
    }
}

ENGINE_CLONES_AVX2 static int factor_solve(mb_world *W)
{
    int nj = W->nj, err = 0;
    const int L4 = ENGINE_FOUR_LANES();
    /* each joint's forward step right after its elimination: y_j has had every update from the
     * joints before it */
    if (W->tree_hinges) {                                  /* five rows a joint: no look-ups */
        if (L4) for (int i = 0; i < nj && !err; i++) { int j = W->torder[i]; if (!(err = eliminate_joint(W, j, 5, 4, 5))) forward_joint(W, j, 5, 4); }
        else for (int i = 0; i < nj && !err; i++) { int j = W->torder[i]; if (!(err = eliminate_joint(W, j, 5, 2, 5))) forward_joint(W, j, 5, 2); }
        if (err) return err;
        for (int i = nj - 1; i >= 0; i--) backward_joint(W, W->torder[i], 5);
    } else {
        for (int i = 0; i < nj && !err; i++) {
            int j = W->torder[i];
#define ELIMINATE(n) if (!(err = L4 ? eliminate_joint(W, j, n, 4, 0) : eliminate_joint(W, j, n, 2, 0))) forward_joint(W, j, n, L4 ? 4 : 2)
            dispatch(W->trows[j], ELIMINATE);
        }
        if (err) return err;
        backward_all(W);
    }
    return multipliers_finite(W) ? 0 : 3;
}

/* Another right-hand side on the factors the last mb_tree_solve left: y in tvec (per joint, pads
 * zero) becomes A_jj^-1 y, there and in lambda at tstart (tree_contacts.c); 0, or 3 when not finite */
ENGINE_CLONES_AVX2 int mb_tree_resolve(mb_world *W)
{
    int nj = W->nj;
    const int L4 = ENGINE_FOUR_LANES();
    for (int i = 0; i < nj; i++) {
        int j = W->torder[i];
#define RESOLVE_FORWARD(n) forward_joint(W, j, n, L4 ? 4 : 2)
        dispatch(W->trows[j], RESOLVE_FORWARD);
    }
    backward_all(W);
    return multipliers_finite(W) ? 0 : 3;
}

ENGINE_CLONES_AVX2 int mb_tree_solve(mb_world *W)
{
    for (int j = 0; j < W->nj; j++) {
#define ASSEMBLE(n) assemble_joint(W, j, n)
        dispatch(W->trows[j], ASSEMBLE);
    }
    return factor_solve(W);
}

/* ---- ball-based joints: blocks from the angular parts ------------------------------------------
 * A ball, hinge, universal or fixed joint's first three rows pin its anchor along the world axes,
 * J = [+e_k, a] on body 1 and [-e_k, a'] on body 2; its other rows are angular, J = [0, a].  So a
 * block J_k W_b J_j^T on a body b is m_b^-1 (signed) where anchor rows meet plus the products of
 * the angular parts with G = I_b^-1 a: W J^T is never formed, nor its zero products.  Per joint
 * and side s (body 1, body 2; the static world's side stays zero) the angular parts are kept
 * transposed, tang[s][k][r] (r over the joint's rows, pads zero), so that the blocks' columns run
 * two rows at a time, and G = I_b^-1 a the same way, tG[s][k][r]: a column of A_jj is then four
 * lanes over the joint's rows as well as a row of it. */
/* G's row r (side s at G + 18 s) from its three entries */
KERNEL void put_g(double *G, int r, const double *g) { G[r] = g[0]; G[6 + r] = g[1]; G[12 + r] = g[2]; }
static const double ZERO6[6] = {0, 0, 0, 0, 0, 0};

/* angular parts, G, b = rhs/h - J (v/h + W f) (also the right-hand side y_j) and CFM/h of joint j's rows */
KERNEL void ball_prepare(mb_world *W, int j, double ih, const int n)
{
    const int t0 = W->tstart[j];
    const mb_row *rj = W->rows + t0;
    const int b1 = rj->b1, b2 = rj->b2;
    double *restrict At = W->tang + 36 * (size_t)j, *restrict G = W->tG + 36 * (size_t)j;
    const double *v1 = W->vfree + 6 * (size_t)b1, *v2 = b2 >= 0 ? W->vfree + 6 * (size_t)b2 : ZERO6;
    const double *I1 = W->invIw + 9 * (size_t)b1, *I2 = W->invIw + 9 * (size_t)(b2 >= 0 ? b2 : 0);
    double *restrict y = W->tvec + S * (size_t)j;          /* the right-hand side y_j = b */
#pragma GCC unroll 6
    for (int r = 0; r < n; r++) {
        const double *a1 = rj[r].J1 + 3, *a2 = rj[r].J2 + 3;
        for (int k = 0; k < 3; k++) At[6 * k + r] = a1[k];
        double g[3];
        smv3(I1, a1, g); put_g(G, r, g);
        double lin = r < 3 ? v1[r] - v2[r] : 0.0, ang = mb_dot3(a1, v1 + 3);
        if (b2 >= 0) {
            for (int k = 0; k < 3; k++) At[18 + 6 * k + r] = a2[k];
            smv3(I2, a2, g); put_g(G + 18, r, g);
            ang += mb_dot3(a2, v2 + 3);
        }
        W->b[t0 + r] = y[r] = rj[r].rhs * ih - (lin + ang);
        W->cfmh[t0 + r] = rj[r].cfm * ih;
    }
}

/* What both lane widths of ball_assemble add once U's products are in: CFM/h and the two bodies'
 * inverse masses (tim, from mb_tree_init) on the diagonal (the linear rows) */
static inline __attribute__((always_inline)) void diagonal(mb_world *W, int j, int n, double *restrict U)
{
    const double *cfmh = W->cfmh + W->tstart[j], im = W->tim[j];
#pragma GCC unroll 6
    for (int c = 0; c < n; c++) U[c * S + c] += c < 3 ? cfmh[c] + im : cfmh[c];
}

/* A_jj (+ CFM/h) as the upper triangle U[c][r] (a pair may also write the unused entry left of
 * the diagonal), its right-hand side, and the blocks A_kj with its later neighbours, transposed:
 * B[q][r] = A_kj[r][q], all of k's row pairs (k's pads are zero) */
KERNEL void ball_assemble4(mb_world *W, int j, const int n)
{
    const double *At = W->tang + 36 * (size_t)j, *G = W->tG + 36 * (size_t)j;
    double *restrict U = W->tdiag + 36 * (size_t)j;
    /* rows 0-3 in four lanes, then rows 4-5 in two: the group's angular parts stay in registers
     * (all twelve halves of a four-lane group in the portable build) while the columns stream by */
    const v4d a0 = ld4(At), a1 = ld4(At + 6), a2 = ld4(At + 12), e0 = ld4(At + 18), e1 = ld4(At + 24), e2 = ld4(At + 30);
#pragma GCC unroll 4
    for (int c = 0; c < (n < 4 ? n : 4); c++) {
        const double *g = G + c, *h = G + 18 + c;
        st4(U + c * S, (a0 * g[0] + a1 * g[6] + a2 * g[12]) + (e0 * h[0] + e1 * h[6] + e2 * h[12]));
    }
    if (n > 4) {
        /* rows 4 (and 5) of the columns 0-3: A_rc = a_r . g_c in four lanes over c (the same
         * products and sums as a row's), scattered into U[c][r] */
        const v4d g0 = ld4(G), g1 = ld4(G + 6), g2 = ld4(G + 12), h0 = ld4(G + 18), h1 = ld4(G + 24), h2 = ld4(G + 30);
#pragma GCC unroll 2
        for (int r = 4; r < n; r++) {
            const v4d col = (At[r] * g0 + At[6 + r] * g1 + At[12 + r] * g2) + (At[18 + r] * h0 + At[24 + r] * h1 + At[30 + r] * h2);
            U[r] = col[0]; U[S + r] = col[1]; U[2 * S + r] = col[2]; U[3 * S + r] = col[3];
        }
        /* rows 4-5 of the columns 4 on, in two lanes */
        const v2d c0 = ld2(At + 4), c1 = ld2(At + 10), c2 = ld2(At + 16), d0 = ld2(At + 22), d1 = ld2(At + 28), d2 = ld2(At + 34);
#pragma GCC unroll 2
        for (int c = 4; c < n; c++) {
            const double *g = G + c, *h = G + 18 + c;
            st2(U + c * S + 4, (c0 * g[0] + c1 * g[6] + c2 * g[12]) + (d0 * h[0] + d1 * h[6] + d2 * h[12]));
        }
    }
    diagonal(W, j, n, U);
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
        const double *Ak = W->tang + 36 * (size_t)W->nbr_list[e] + 18 * W->nbr_side[2 * e];
        const double *Gj = G + 18 * W->nbr_side[2 * e + 1];
        double *restrict B = W->nbr_block + 36 * (size_t)e;
        const v4d a0 = ld4(Ak), a1 = ld4(Ak + 6), a2 = ld4(Ak + 12);
        const v2d c0 = ld2(Ak + 4), c1 = ld2(Ak + 10), c2 = ld2(Ak + 16);
#pragma GCC unroll 6
        for (int q = 0; q < n; q++) {
            const double *g = Gj + q;
            st4(B + q * S, a0 * g[0] + a1 * g[6] + a2 * g[12]);
            st2(B + q * S + 4, c0 * g[0] + c1 * g[6] + c2 * g[12]);
        }
        double imb = W->nbr_imb[e];
        for (int q = 0; q < 3; q++) B[q * S + q] += imb;
    }
}
/* the same in two lanes only (the portable build), a pair of rows p, p + 1 at a time */
KERNEL void ball_assemble2(mb_world *W, int j, const int n)
{
    const double *At = W->tang + 36 * (size_t)j, *G = W->tG + 36 * (size_t)j;
    double *restrict U = W->tdiag + 36 * (size_t)j;
    /* a pair of rows p, p + 1 at a time: its six lane pairs of the angular parts stay in registers
     * while the columns c <= p + 1 stream by */
#pragma GCC unroll 3
    for (int p = 0; p < n; p += 2) {
        const v2d a0 = ld2(At + p), a1 = ld2(At + 6 + p), a2 = ld2(At + 12 + p);
        const v2d b0 = ld2(At + 18 + p), b1 = ld2(At + 24 + p), b2 = ld2(At + 30 + p);
#pragma GCC unroll 6
        for (int c = 0; c < (p + 2 < n ? p + 2 : n); c++) {
            const double *g = G + c, *h = G + 18 + c;
            st2(U + c * S + p, (a0 * g[0] + a1 * g[6] + a2 * g[12]) + (b0 * h[0] + b1 * h[6] + b2 * h[12]));
        }
    }
    diagonal(W, j, n, U);
    for (int e = W->nbr_start[j]; e < W->nbr_start[j + 1]; e++) {
        const double *Ak = W->tang + 36 * (size_t)W->nbr_list[e] + 18 * W->nbr_side[2 * e];
        const double *Gj = G + 18 * W->nbr_side[2 * e + 1];
        double *restrict B = W->nbr_block + 36 * (size_t)e;
#pragma GCC unroll 3
        for (int p = 0; p < S; p += 2) {
            const v2d a0 = ld2(Ak + p), a1 = ld2(Ak + 6 + p), a2 = ld2(Ak + 12 + p);
#pragma GCC unroll 6
            for (int q = 0; q < n; q++) st2(B + q * S + p, a0 * Gj[q] + a1 * Gj[6 + q] + a2 * Gj[12 + q]);
        }
        double imb = W->nbr_imb[e];
        for (int q = 0; q < 3; q++) B[q * S + q] += imb;
    }
}
KERNEL void ball_assemble(mb_world *W, int j, const int n, const int L)
{
    if (L == 4) ball_assemble4(W, j, n); else ball_assemble2(W, j, n);
}

/* A free hinge from its terms (HT_*): its angular parts, G, b and CFM/h as ball_prepare finds
 * them in its rows.  Anchor row i has the angular part +-(r x e_i), one entry zero, and the
 * anchor rows' J (v/h + W f) are the components of the free velocities of the anchor points,
 * v + w x r. */
/* one side of a free hinge, body 1 (neg = 0) or body 2 (neg = 1: every angular part negated, as
 * its rows' J2 has them): the angular parts into A (the anchor rows' zero entries are left as they
 * are, zero), G = I^-1 a, and the rows' J (v/h + W f) added into u */
KERNEL void hinge_side(const double *t, const double *r, const double *I, const double *vf,
                       double *restrict A, double *restrict g, double *u, const int neg)
{
    const double sg = neg ? -1.0 : 1.0;                 /* a constant: sg * x is x or -x */
    const double a[5][3] = {{0, sg * r[2], -sg * r[1]}, {-sg * r[2], 0, sg * r[0]}, {sg * r[1], -sg * r[0], 0},
                            {sg * t[HT_P], sg * t[HT_P + 1], sg * t[HT_P + 2]}, {sg * t[HT_Q], sg * t[HT_Q + 1], sg * t[HT_Q + 2]}};
    double wr[3];
#pragma GCC unroll 5
    for (int q = 0; q < 5; q++)
#pragma GCC unroll 3
        for (int k = 0; k < 3; k++) if (q >= 3 || k != q) A[6 * k + q] = a[q][k];
    /* an anchor row's a has a zero entry (a_q = r x e_q), whose products are left out: smv3's
     * other sums, in its order */
#pragma GCC unroll 3
    for (int q = 0; q < 3; q++) {
        const int k1 = q == 0 ? 1 : 0, k2 = q == 2 ? 1 : 2;
        v2d c01 = ld2(I + 3 * k1) * a[q][k1] + ld2(I + 3 * k2) * a[q][k2];
        g[q] = c01[0]; g[6 + q] = c01[1];
        g[12 + q] = I[3 * k1 + 2] * a[q][k1] + I[3 * k2 + 2] * a[q][k2];
    }
    double gq[3];
    smv3(I, a[3], gq); put_g(g, 3, gq); smv3(I, a[4], gq); put_g(g, 4, gq);
    mb_cross3(vf + 3, r, wr);
    for (int k = 0; k < 3; k++) u[k] += sg * (vf[k] + wr[k]);
    u[3] += mb_dot3(a[3], vf + 3); u[4] += mb_dot3(a[4], vf + 3);
}

KERNEL void hinge_prepare(mb_world *W, int j, double ih)
{
    const double *t = W->hterms + HT_SIZE * (size_t)j;
    const int t0 = W->tstart[j], b1 = (int)W->jint[(size_t)j * JI_SIZE + JI_B1], b2 = (int)W->jint[(size_t)j * JI_SIZE + JI_B2];
    double *restrict At = W->tang + 36 * (size_t)j, *restrict G = W->tG + 36 * (size_t)j;
    double *restrict b = W->b + t0, *restrict cfmh = W->cfmh + t0, *restrict y = W->tvec + S * (size_t)j;
    double u[5] = {0, 0, 0, 0, 0};                       /* J (v/h + W f), row by row */
    hinge_side(t, t + HT_R1, W->invIw + 9 * (size_t)b1, W->vfree + 6 * (size_t)b1, At, G, u, 0);
    if (b2 >= 0) hinge_side(t, t + HT_R2, W->invIw + 9 * (size_t)b2, W->vfree + 6 * (size_t)b2, At + 18, G + 18, u, 1);
    const double ic = t[HT_CFM] * ih;
    for (int q = 0; q < 5; q++) { b[q] = y[q] = t[HT_RHS + q] * ih - u[q]; cfmh[q] = ic; }
}

/* a tree of free hinges from their terms; the rows stay unwritten */
ENGINE_CLONES_AVX2 int mb_tree_solve_hinges(mb_world *W, double ih)
{
    for (int j = 0; j < W->nj; j++) hinge_prepare(W, j, ih);
    if (ENGINE_FOUR_LANES()) for (int j = 0; j < W->nj; j++) ball_assemble(W, j, 5, 4);
    else for (int j = 0; j < W->nj; j++) ball_assemble(W, j, 5, 2);
    return factor_solve(W);
}

ENGINE_CLONES_AVX2 int mb_tree_solve_ball(mb_world *W, double ih)
{
    const int L4 = ENGINE_FOUR_LANES();
    for (int j = 0; j < W->nj; j++) {
#define PREPARE(n) ball_prepare(W, j, ih, n)
        dispatch(W->trows[j], PREPARE);
    }
    for (int j = 0; j < W->nj; j++) {
#define ASSEMBLE_BALL(n) if (L4) ball_assemble(W, j, n, 4); else ball_assemble(W, j, n, 2)
        dispatch(W->trows[j], ASSEMBLE_BALL);
    }
    return factor_solve(W);
}

/* J^T lambda of every joint added into fc: the anchor rows' force +-lambda on the linear parts,
 * the angular parts' torque sum_r lambda_r a_r from the transposed parts and the padded lambda */
ENGINE_CLONES_AVX2 void mb_tree_add_forces(const mb_world *W, double *fc)
{
    for (int j = 0; j < W->nj; j++) {
        const int b1 = (int)W->jint[(size_t)j * JI_SIZE + JI_B1], b2 = (int)W->jint[(size_t)j * JI_SIZE + JI_B2];
        const double *At = W->tang + 36 * (size_t)j, *x = W->tvec + S * (size_t)j;
        v2d x01 = ld2(x), x23 = ld2(x + 2), x45 = ld2(x + 4);
        v2d t01[2];                                   /* torque of side s: t01[s], t2[s] */
        double t2[2];
        for (int s = 0; s < 2; s++) {
            const double *A = At + 18 * s;
            v2d p0 = ld2(A) * x01 + ld2(A + 2) * x23 + ld2(A + 4) * x45;
            v2d p1 = ld2(A + 6) * x01 + ld2(A + 8) * x23 + ld2(A + 10) * x45;
            v2d p2 = ld2(A + 12) * x01 + ld2(A + 14) * x23 + ld2(A + 16) * x45;
            t01[s] = hsum2(p0, p1); t2[s] = p2[0] + p2[1];
        }
        /* added in lane pairs where the entries pair up */
        double *f1 = fc + 6 * (size_t)b1;
        st2(f1, ld2(f1) + x01); f1[2] += x23[0];
        st2(f1 + 3, ld2(f1 + 3) + t01[0]); f1[5] += t2[0];
        if (b2 >= 0) {
            double *f2 = fc + 6 * (size_t)b2;
            st2(f2, ld2(f2) - x01); f2[2] -= x23[0];
            st2(f2 + 3, ld2(f2 + 3) + t01[1]); f2[5] += t2[1];
        }
    }
}
