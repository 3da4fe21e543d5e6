/* The quick step: projected Gauss-Seidel on the bodies' velocity changes (ODE's dWorldQuickStep,
 * report §3.4), warm-started from the last step's contact forces and joint multipliers.
 *
 * step.c builds the rows and calls mb_quick_step when the solver is the iterative one, which forms
 * W J^T, b and CFM/h itself, packed for its sweeps (W J^T is left to mb_world_residual); after any
 * solve step.c calls mb_quick_remember to keep the forces for the next start.
 */
#include <stdlib.h>
#include "engine/engine.h"

static void *grow(void *p, size_t n) { return realloc(p, n ? n : 1); }

/* ---- warm start: the last step's forces as the quick step's first guess ------------------- */
/* first: W->ng + 1 ints of scratch */
static void warm_start(mb_world *W, double *x, int *first)
{
    int m = W->m;
    for (int i = 0; i < m; i++) x[i] = 0;
    /* joints (their rows first, each joint's together): same joint, same number of rows -> same
     * multipliers */
    for (int i = 0, n; i < m && W->rows[i].source >= 0; i += n) {
        int j = W->rows[i].source;
        for (n = 1; i + n < m && W->rows[i + n].source == j; n++) {}
        if (j < W->njlam && W->jrow_count[j] == n)
            for (int k = 0; k < n; k++) x[i + k] = W->jlam[W->jrow_start[j] + k];
    }
    /* contacts: the nearest contact of the same geometry pair last step, within 5 mm; the last
     * step's contacts are sorted by pair, first[g] the first whose geometry 1 is at least g */
    if (!W->nwprev) return;
    int ng = W->ng, ng1 = ng + 1;
    for (int g = 0, k = 0; g <= ng; g++) {
        while (k < W->nwprev && W->wkey[k] < (int64_t)g * ng1) k++;
        first[g] = k;
    }
    for (int i = 0; i < m; i++) {
        const mb_row *r = W->rows + i;
        if (r->source >= 0 || r->findex >= 0 || (i > 0 && W->rows[i - 1].source == r->source && r->lo != 0)) continue;
        if (r->lo != 0) continue;                               /* the normal row of a contact */
        const mb_contact_point *c = W->contacts + (-(r->source + 1));
        int64_t key = (int64_t)c->g1 * ng1 + c->g2;
        int best = -1, end = c->g1 < ng ? first[c->g1 + 1] : W->nwprev;
        double bd = 25e-6;
        for (int k = first[c->g1 < ng ? c->g1 : ng]; k < end && W->wkey[k] <= key; k++) {
            if (W->wkey[k] != key) continue;
            const mb_contact_point *p = W->wprev + W->wperm[k];
            double d[3]; mb_sub3(p->pos, c->pos, d);
            double dd = mb_dot3(d, d);
            if (dd < bd) { bd = dd; best = W->wperm[k]; }
        }
        if (best < 0) continue;
        const double *f = W->wforce + 3 * (size_t)best;
        double fn = mb_dot3(f, r->J1);
        x[i] = fn > 0 ? fn : 0;
        for (int k = i + 1; k < m && k <= i + 2; k++)           /* its friction rows: the force's components */
            if (W->rows[k].findex == i) x[k] = mb_dot3(f, W->rows[k].J1);
    }
}

/* Keep this step's contacts and forces, and the joints' multipliers, for the next warm start. */
int mb_quick_remember(mb_world *W)
{
    if (W->nc > W->cap_wprev) {
        int cap = W->nc * 2 + 16;
        mb_contact_point *c = grow(W->wprev, (size_t)cap * sizeof(mb_contact_point)); if (!c) return -1; W->wprev = c;
        double *f = grow(W->wforce, (size_t)cap * 3 * sizeof(double)); if (!f) return -1; W->wforce = f;
        int64_t *k = grow(W->wkey, (size_t)cap * sizeof(int64_t)); if (!k) return -1; W->wkey = k;
        int *pm = grow(W->wperm, (size_t)cap * sizeof(int)); if (!pm) return -1; W->wperm = pm;
        W->cap_wprev = cap;
    }
    if (W->nc) {
        memcpy(W->wprev, W->contacts, sizeof(mb_contact_point) * (size_t)W->nc);
        memset(W->wforce, 0, sizeof(double) * 3 * (size_t)W->nc);
    }
    int ng1 = W->ng + 1, nj_rows = 0;                    /* the joints' rows come first */
    while (nj_rows < W->m && W->rows[nj_rows].source >= 0) nj_rows++;
    for (int i = nj_rows; i < W->m; i++) {
        const mb_row *r = W->rows + i;
        if (r->source >= 0) continue;
        int c = -(r->source + 1);
        for (int k = 0; k < 3; k++) W->wforce[3 * c + k] += W->lambda[i] * r->J1[k];
    }
    if (W->nc) {                                          /* contacts sorted by geometry pair */
        /* stably, in linear time: counted into buckets by geom 1, each bucket (a few contacts)
         * ordered by geom 2 by insertion */
        int ng = W->ng, *start = calloc((size_t)ng + 2, sizeof(int));
        if (!start) return -1;
        for (int c = 0; c < W->nc; c++) start[W->contacts[c].g1 + 1]++;
        for (int g = 0; g < ng; g++) start[g + 1] += start[g];
        for (int c = 0; c < W->nc; c++) W->wperm[start[W->contacts[c].g1]++] = c;
        free(start);
        for (int k = 0; k < W->nc; k++) {
            int c = W->wperm[k], j = k;
            int64_t key = (int64_t)W->contacts[c].g1 * ng1 + W->contacts[c].g2;
            while (j > 0 && W->wkey[j - 1] > key) { W->wkey[j] = W->wkey[j - 1]; W->wperm[j] = W->wperm[j - 1]; j--; }
            W->wkey[j] = key; W->wperm[j] = c;
        }
    }
    W->nwprev = W->nc;
    if (!W->jrow_start) {
        W->jrow_start = calloc((size_t)W->nj + 1, sizeof(int)); W->jrow_count = calloc((size_t)W->nj + 1, sizeof(int));
        if (!W->jrow_start || !W->jrow_count) return -1;
    }
    if (nj_rows > W->cap_jlam) {
        double *l = grow(W->jlam, (size_t)(nj_rows * 2 + 16) * sizeof(double)); if (!l) return -1;
        W->jlam = l; W->cap_jlam = nj_rows * 2 + 16;
    }
    for (int j = 0; j < W->nj; j++) W->jrow_count[j] = 0;
    for (int i = 0; i < nj_rows; i++) {
        int j = W->rows[i].source;
        if (W->jrow_count[j] == 0) W->jrow_start[j] = i;
        W->jrow_count[j]++;
        W->jlam[i] = W->lambda[i];
    }
    W->njlam = W->nj;
    return 0;
}

/* Projected Gauss-Seidel on the bodies' velocity changes (ODE's quick step), the cone by
 * projecting each contact's two friction forces onto the disk of radius mu lambda_n.
 *
 * A sweep visits every row, reads its two bodies' velocity changes fc and writes them back.
 * In the rows' own order, consecutive rows mostly share a body (a contact's normal and friction
 * rows, a box's contacts), so each waits for the one before through fc: the sweep runs at the
 * latency of that chain, not at the processor's width.  Rows on disjoint bodies commute, so the
 * sweep takes the rows by wavefront instead (level = 1 + the level of the last row before it on
 * either of its bodies; by level, then row): every row still sees its bodies' fc after exactly the
 * updates it saw in row order, in the same order, while the rows of one level are independent and
 * overlap.  (Taking a contact's rows as one unit, fc kept in registers, saves a fifth of the
 * instructions but chains the unit's rows through fc: slower.  A joint's free rows are taken as
 * one unit, a block, with their couplings instead: see BLOCK_MOST.)  Each row is packed once per step
 * into a QRow in that order (J and W J^T per side, its scalars, where its bodies' fc lie), read
 * front to back in two-lane loads, and its lambda kept in that order too (xs).  A row against the
 * static world keeps its body on side 1 and updates that body alone: through a shared slot for
 * the world, every such row would wait on the one before. */
typedef struct QRow {
    double J1[4], J2[4], JT[4];          /* J per side, the live body on side 1: entries 0-3 of
                                          * each side, then JT = entries 4-5 of side 1 and of
                                          * side 2; times sad (below) except in a cone's pair   */
    double M1[6], M2[6];                 /* W J^T per side (zero for the static world)          */
    double b, keep;                      /* sad b and 1 - sad CFM/h, where sad = sor / (J W J^T +
                                          * CFM/h)_ii: the row's new lambda is keep lambda +
                                          * b - J fc (ODE's scaling); in a cone's pair b and
                                          * CFM/h as they are                                   */
    double lo, hi;                       /* the bounds, times lambda of row findex (>= 0)        */
    double unused;
    int f1, f2;                          /* offsets of the bodies' fc; f2 < 0: the static world */
    int row;                             /* this row in the rows' order (lambda)                */
    int findex;                          /* the packed place of a friction row's normal row, or
                                          * m, where the packed lambdas hold a 1: no branch    */
    int pair;                            /* cone: -2 the first row of a pair (solved with the
                                          * second), else the packed place of the first, or -1 */
    int block;                           /* the first row of a joint's block: its rows (below) */
} __attribute__((aligned(16))) QRow;
/* 256 bytes: every QRow, like fc's 6-double blocks, starts on 16 bytes (malloc's alignment), so
 * the sweep's two-lane loads are aligned and fold into the arithmetic */
_Static_assert(sizeof(QRow) == 256, "QRow packs to 256 bytes");
static inline v2d lda(const double *p) { return ld2(__builtin_assume_aligned(p, 16)); }
static inline void sta(double *p, v2d v) { st2(__builtin_assume_aligned(p, 16), v); }

static int reserve_qrows(mb_world *W, int m)
{
    if (m <= W->cap_qrows) return 0;
    int cap = m * 2 + 16;
    QRow *q = grow(W->qrows, (size_t)cap * sizeof(QRow));
    if (!q) return -1;
    W->qrows = q; W->cap_qrows = cap;
    return 0;
}

/* A joint's rows without bounds (its anchor and axis rows, not its stops or motors) form a block:
 * they join the same two bodies, so each row's J fc after the rows before it in the block is its
 * J fc before the block plus their changes times the couplings J_i W J_j^T, computed once a step.
 * The sweep takes a block as one unit: its bodies' fc read once, its rows' new lambdas in
 * registers, one after another (the same Gauss-Seidel steps as row by row, with fewer loads,
 * stores and sums), fc written once. */
#define BLOCK_MOST 6
static int free_joint_row(const mb_row *r)
{
    return r->source >= 0 && r->findex < 0 && r->cone_pair < 0 && r->lo == -INFINITY && r->hi == INFINITY;
}
/* what decides the blocks a row is in: the joint of a block's row, else -1 */
static inline int block_key(const mb_row *r) { return free_joint_row(r) ? r->source : -1; }
/* the rows of the unit that starts at row i: a block, or 1 */
static int unit_rows(const mb_world *W, int i)
{
    int n = 1;
    if (free_joint_row(W->rows + i))
        while (i + n < W->m && n < BLOCK_MOST && W->rows[i + n].source == W->rows[i].source && free_joint_row(W->rows + i + n)) n++;
    return n;
}

/* The sweep order: units (rows, blocks) by wavefront level, within a level by kind (against the
 * static world or between two bodies, row or block: the sweep's test of the kind changes once a
 * level), then by index (see mb_quick_step).  order[k] is the row taken k-th, place[i] where row i
 * is taken, units[k] the rows of the unit that starts at place k (0 inside a block); the runs of
 * one kind of unit go to runs (run j ends before place runs[j] / 4, its kind the low two bits:
 * bit 0 two bodies, bit 1 a block), their number to *nruns; returns the number of levels.
 * scratch: nb + 1 + 6 m + 6 ints. */
static int wavefront_order(const mb_world *W, int *order, int *place, int *units, int *runs, int *nruns, int *scratch)
{
    int m = W->m, nb = W->nb, *last = scratch, *count = scratch + nb + 1, *len = count + 4 * m + 6, *kinds = len + m, top = 0;
    for (int b = 0; b <= nb; b++) last[b] = 0;
    for (int l = 0; l <= 4 * m + 5; l++) count[l] = 0;
    for (int i = 0; i < m;) {
        int n = unit_rows(W, i), b1 = W->rows[i].b1, b2 = W->rows[i].b2, l = 0;
        if (b1 >= 0 && last[b1] > l) l = last[b1];
        if (b2 >= 0 && last[b2] > l) l = last[b2];
        l++;
        if (b1 >= 0) last[b1] = l;
        if (b2 >= 0) last[b2] = l;
        int key = 4 * l + (b1 >= 0 && b2 >= 0) + 2 * (n > 1);
        place[i] = key; len[i] = n; count[key + 1] += n;
        if (key > top) top = key;
        i += n;
    }
    for (int l = 1; l <= top; l++) count[l + 1] += count[l];
    for (int i = 0; i < m; i += len[i]) {
        int k = count[place[i]];
        count[place[i]] += len[i];
        units[k] = len[i]; kinds[k] = place[i] & 3;
        for (int r = 0; r < len[i]; r++) { order[k + r] = i + r; if (r) units[k + r] = 0; }
    }
    for (int k = 0; k < m; k++) place[order[k]] = k;
    int nr = 0;
    for (int k = 0; k < m; k += units[k]) {
        int kind = kinds[k];
        if (nr && (runs[nr - 1] & 3) == kind) runs[nr - 1] = 4 * (k + units[k]) + kind;
        else runs[nr++] = 4 * (k + units[k]) + kind;
    }
    *nruns = nr;
    return top / 4;
}

/* Sweeps pipelined: rows on disjoint bodies commute across sweeps too, so `copies` sweeps in a
 * row are one wavefront over copies x m rows (level = 1 + the level of the last unit before it,
 * in this sweep or an earlier one, on either of its bodies).  A chain's rows form one long
 * dependency: its sweep s + 1 starts at the root while sweep s is still on its way down the
 * chain, and the units of several sweeps overlap.  Every unit sees its bodies' fc after the same
 * updates in the same order: the same bits as sweeping `copies` times.  Q is packed in one
 * sweep's wavefront order, so a unit's packed place names it; sched lists the places taken
 * (copies x the units), runs its runs of one kind (as wavefront_order's), their number returned.
 * scratch: nb + 1 + 6 copies m + 6 ints. */
static int pipelined_schedule(const mb_world *W, const QRow *Q, const int *units, int copies, int *sched, int *runs,
                              int *scratch)
{
    int m = W->m, nb = W->nb, n = copies * m, *last = scratch, *count = scratch + nb + 1, *key = count + 4 * n + 6, top = 0;
    int *at = key + n, t = 0;
    for (int b = 0; b <= nb; b++) last[b] = 0;
    for (int l = 0; l <= 4 * n + 5; l++) count[l] = 0;
    for (int c = 0; c < copies; c++)
        for (int k = 0; k < m; k += units[k], t++) {
            int b1 = Q[k].f1 / 6, b2 = Q[k].f2 < 0 ? nb : Q[k].f2 / 6, two = Q[k].f2 >= 0;
            int l = last[b1];                                /* the world's slot nb is never waited on */
            if (two && last[b2] > l) l = last[b2];
            l++;
            if (b1 < nb) last[b1] = l;
            if (two) last[b2] = l;
            key[t] = 4 * l + two + 2 * (units[k] > 1); at[t] = k; count[key[t] + 1]++;
            if (key[t] > top) top = key[t];
        }
    for (int l = 1; l <= top; l++) count[l + 1] += count[l];
    int nu = t;
    for (t = 0; t < nu; t++) sched[count[key[t]]++] = at[t];
    int nruns = 0;
    for (t = 0; t < nu; t++) {
        int k = sched[t], kind = (Q[k].f2 >= 0) + 2 * (units[k] > 1);
        if (nruns && (runs[nruns - 1] & 3) == kind) runs[nruns - 1] = 4 * (t + 1) + kind;
        else runs[nruns++] = 4 * (t + 1) + kind;
    }
    return nruns;
}


/* Four-lane vectors for the first four entries of a side's 6-vector, two lanes for the last two:
 * one AVX register and one SSE register where the sweep's AVX2 clone runs (below), two SSE
 * registers and one in the plain build, with the same sums in the same order: the same bits. */
typedef double v4d __attribute__((vector_size(32)));
#if defined(__clang__)
#define SHUF4(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
typedef long long v4i __attribute__((vector_size(32)));
#define SHUF4(a, b, i, j, k, l) __builtin_shuffle(a, b, (v4i){i, j, k, l})
#endif
#define ld4(p) ({ v4d v_; memcpy(&v_, (p), sizeof v_); v_; })   /* a macro: a function returning v4d */
#define st4(p, v) do { v4d v_ = (v); memcpy((p), &v_, sizeof v_); } while (0)   /* warns of the AVX ABI */

/* J . fc over the row's live sides: entries 0-3 of both sides in lanes 0-3 and, between two
 * bodies, entries 4-5 of both in lanes 0-3 too (JT against the two tails side by side); then the
 * lanes folded */
static inline __attribute__((always_inline)) double qrow_dot(const QRow *r, const double *fc, int two)
{
    const double *a = fc + r->f1;
    v4d q = ld4(r->J1) * ld4(a);
    if (two) {
        const double *c = fc + r->f2;
        v2d ta = lda(a + 4), tc = lda(c + 4);
#if defined(__clang__) || __GNUC__ >= 12
        v4d t = __builtin_shufflevector(ta, tc, 0, 1, 2, 3);    /* one vinsertf128 */
#else
        v4d t = {ta[0], ta[1], tc[0], tc[1]};
#endif
        q += ld4(r->J2) * ld4(c);
        q += ld4(r->JT) * t;
        v2d lo = {q[0], q[1]}, hi = {q[2], q[3]}, u = lo + hi;
        return u[0] + u[1];
    }
    v2d lo = {q[0], q[1]}, hi = {q[2], q[3]}, u = (lo + hi) + lda(r->JT) * lda(a + 4);
    return u[0] + u[1];
}
/* J . (W J^T) of row q against row r over their live sides (the same bodies) */
static double qrow_jm(const QRow *q, const QRow *r, int two)
{
    double s = 0;
    for (int e = 0; e < 4; e++) s += q->J1[e] * r->M1[e] + (two ? q->J2[e] * r->M2[e] : 0.0);
    s += q->JT[0] * r->M1[4] + q->JT[1] * r->M1[5];
    return two ? s + q->JT[2] * r->M2[4] + q->JT[3] * r->M2[5] : s;
}
/* qrow_jm in four lanes, J of q against the W J^T of r as qrow_dot against fc (the blocks'
 * couplings) */
static inline __attribute__((always_inline)) double qrow_jm4(const QRow *q, const QRow *r, int two)
{
    v4d p = ld4(q->J1) * ld4(r->M1);
    if (two) {
        v4d t = {r->M1[4], r->M1[5], r->M2[4], r->M2[5]};
        p += ld4(q->J2) * ld4(r->M2);
        p += ld4(q->JT) * t;
        v2d lo = {p[0], p[1]}, hi = {p[2], p[3]}, u = lo + hi;
        return u[0] + u[1];
    }
    v2d lo = {p[0], p[1]}, hi = {p[2], p[3]}, u = (lo + hi) + lda(q->JT) * lda(r->M1 + 4);
    return u[0] + u[1];
}
/* fc += s W J^T on the live sides */
static inline __attribute__((always_inline)) void qrow_add(const QRow *r, double s, double *fc, int two)
{
    double *a = fc + r->f1, *c = fc + (two ? r->f2 : 0);  /* both read before a store (stores through
                                                            * memcpy may alias the row) */
    v4d s4 = {s, s, s, s};
    v2d s2 = {s, s};
    st4(a, ld4(a) + s4 * ld4(r->M1)); sta(a + 4, lda(a + 4) + s2 * lda(r->M1 + 4));
    if (two) { st4(c, ld4(c) + s4 * ld4(r->M2)); sta(c + 4, lda(c + 4) + s2 * lda(r->M2 + 4)); }
}

/* both friction rows q (packed at k - 1... or earlier, j) and r (at k) of a contact under the
 * cone at once: Newton step on the 2 x 2 block of A, then projection onto the disk of radius
 * mu lambda_n (their J, b and CFM/h unscaled) */
static void correct_cone(const QRow *q, const QRow *r, int j, int k, const double *Ad, double sor, double *xs, double *fc,
                         double *dmax)
{
    int two = r->f2 >= 0;
    double aij = qrow_jm(q, r, two);
    double aii = 1.0 / Ad[q->row], ajj = 1.0 / Ad[r->row], xi = xs[j], xj = xs[k];
    double ri = q->b - q->keep * xi - qrow_dot(q, fc, two), rj = r->b - r->keep * xj - qrow_dot(r, fc, two);
    double det = aii * ajj - aij * aij, di, dj;
    if (det > 1e-14 * aii * ajj) { di = (ajj * ri - aij * rj) / det; dj = (aii * rj - aij * ri) / det; }
    else { di = ri / aii; dj = rj / ajj; }
    double ni = xi + sor * di, nj = xj + sor * dj;
    double rad = r->hi * xs[r->findex], t = sqrt(ni * ni + nj * nj), rn = sqrt(ri * ri + rj * rj);
    if (t > rad) {
        /* sliding: maximum dissipation puts the force against the slip, which is along the
         * residual (ri, rj) at the current forces, at the cone's edge */
        if (rn > 1e-12) { ni = rad * ri / rn; nj = rad * rj / rn; }
        else { double sc = t > 0 ? rad / t : 0; ni *= sc; nj *= sc; }
    }
    qrow_add(q, ni - xi, fc, two); qrow_add(r, nj - xj, fc, two);
    double d = fmax(fabs(ni - xi), fabs(nj - xj));
    *dmax = d > *dmax ? d : *dmax;
    xs[j] = ni; xs[k] = nj;
}

/* one row: the new lambda clamped to its bounds (a friction row's from its normal row's lambda,
 * never negative), fc += change W J^T; the largest change when track */
static inline __attribute__((always_inline))
void correct_row(const QRow *r, double *xk, const double *xs, double *fc, int two, int track, double *dmax)
{
    double scale = xs[r->findex], lo = r->lo * scale, hi = r->hi * scale, x = *xk;
    double nx = r->keep * x + (r->b - qrow_dot(r, fc, two));
    nx = nx < lo ? lo : nx; nx = nx > hi ? hi : nx;   /* maxsd, minsd: no branch to mispredict */
    double dx = nx - x;
    qrow_add(r, dx, fc, two);
    *xk = nx;
    if (track) { dx = fabs(dx); *dmax = dx > *dmax ? dx : *dmax; }
}

/* one block of n rows (see BLOCK_MOST) at Q with its couplings C (8 a row: C[8 i + j] = J_i W J_j^T
 * times row i's scaling, j < i): the rows' J fc from the fc read once, each row's new lambda
 * from it less the couplings times the changes of the rows before it, then fc += the changes
 * times W J^T, written once.  No bounds (the block's rows have none). */
static inline __attribute__((always_inline))
void correct_block(const QRow *Q, const double *C, int n, double *xs, double *fc, int two, int track, double *dmax)
{
    double *a = fc + Q->f1, *c = fc + (two ? Q->f2 : Q->f1);
    v4d a4 = ld4(a), c4 = ld4(c);
    v2d a2 = lda(a + 4), c2 = lda(c + 4);
#if defined(__clang__) || __GNUC__ >= 12
    v4d t = __builtin_shufflevector(a2, c2, 0, 1, 2, 3);
#else
    v4d t = {a2[0], a2[1], c2[0], c2[1]};
#endif
    /* written out row by row (the changes in registers; a loop over them the compiler would
     * vectorize across the block's rows and keep in memory) */
    double dx0 = 0, dx1 = 0, dx2 = 0, dx3 = 0, dx4 = 0, dx5 = 0;
#define BLOCK_ROW(i, couplings, dxi)                                                        \
    if (i < n) {                                                                            \
        const QRow *r = Q + i;                                                              \
        double d;                                                                           \
        if (two) {                                                                          \
            v4d q = ld4(r->J1) * a4 + ld4(r->J2) * c4 + ld4(r->JT) * t;                     \
            v2d lo = {q[0], q[1]}, hi = {q[2], q[3]}, u = lo + hi;                          \
            d = u[0] + u[1];                                                                \
        } else {                                                                            \
            v4d q = ld4(r->J1) * a4;                                                        \
            v2d lo = {q[0], q[1]}, hi = {q[2], q[3]}, u = (lo + hi) + lda(r->JT) * a2;      \
            d = u[0] + u[1];                                                                \
        }                                                                                   \
        const double *Ci = C + 8 * i; (void)Ci;                                             \
        double nx = r->keep * xs[i] + (r->b - d) couplings;                                 \
        dxi = nx - xs[i];                                                                   \
        xs[i] = nx;                                                                         \
        if (track) { double e = fabs(dxi); *dmax = e > *dmax ? e : *dmax; }                 \
    }
    if (two && n >= 4) {
        /* the first four rows' J fc in four lanes at once (their sums folded together), and
         * their keep lambda + b - J fc - lambda as one vector (b and keep of these rows lie in
         * C's first row, which holds no couplings) */
        v4d q0 = ld4(Q[0].J1) * a4 + ld4(Q[0].J2) * c4 + ld4(Q[0].JT) * t;
        v4d q1 = ld4(Q[1].J1) * a4 + ld4(Q[1].J2) * c4 + ld4(Q[1].JT) * t;
        v4d q2 = ld4(Q[2].J1) * a4 + ld4(Q[2].J2) * c4 + ld4(Q[2].JT) * t;
        v4d q3 = ld4(Q[3].J1) * a4 + ld4(Q[3].J2) * c4 + ld4(Q[3].JT) * t;
        v4d e01 = SHUF4(q0, q1, 0, 4, 2, 6) + SHUF4(q0, q1, 1, 5, 3, 7);
        v4d e23 = SHUF4(q2, q3, 0, 4, 2, 6) + SHUF4(q2, q3, 1, 5, 3, 7);
        v4d d = SHUF4(e01, e23, 0, 1, 4, 5) + SHUF4(e01, e23, 2, 3, 6, 7);
        v4d x4 = ld4(xs), v = (ld4(C + 4) * x4 + (ld4(C) - d)) - x4;
        dx0 = v[0];
        dx1 = v[1] - C[8] * dx0;
        dx2 = v[2] - C[16] * dx0 - C[17] * dx1;
        dx3 = v[3] - C[24] * dx0 - C[25] * dx1 - C[26] * dx2;
        v4d dx4v = {dx0, dx1, dx2, dx3};
        st4(xs, x4 + dx4v);
        if (track) {
            double e = fmax(fmax(fabs(dx0), fabs(dx1)), fmax(fabs(dx2), fabs(dx3)));
            *dmax = e > *dmax ? e : *dmax;
        }
    } else {
        BLOCK_ROW(0, , dx0)
        BLOCK_ROW(1, - Ci[0] * dx0, dx1)
        BLOCK_ROW(2, - Ci[0] * dx0 - Ci[1] * dx1, dx2)
        BLOCK_ROW(3, - Ci[0] * dx0 - Ci[1] * dx1 - Ci[2] * dx2, dx3)
    }
    BLOCK_ROW(4, - Ci[0] * dx0 - Ci[1] * dx1 - Ci[2] * dx2 - Ci[3] * dx3, dx4)
    BLOCK_ROW(5, - Ci[0] * dx0 - Ci[1] * dx1 - Ci[2] * dx2 - Ci[3] * dx3 - Ci[4] * dx4, dx5)
#undef BLOCK_ROW
    _Static_assert(BLOCK_MOST == 6, "correct_block writes out six rows");
    double dx[BLOCK_MOST] = {dx0, dx1, dx2, dx3, dx4, dx5};
    for (int i = 0; i < n; i++) {
        v4d s4 = {dx[i], dx[i], dx[i], dx[i]};
        v2d s2 = {dx[i], dx[i]};
        a4 += s4 * ld4(Q[i].M1); a2 += s2 * lda(Q[i].M1 + 4);
        if (two) { c4 += s4 * ld4(Q[i].M2); c2 += s2 * lda(Q[i].M2 + 4); }
    }
    st4(a, a4); sta(a + 4, a2);
    if (two) { st4(c, c4); sta(c + 4, c2); }
}

/* one unit of kind `kind` (wavefront_order's) at place k */
static inline __attribute__((always_inline))
void correct_unit(const QRow *Q, const double *C, int k, int kind, double *xs, double *fc, int track, double *dmax)
{
    if (!(kind & 2)) { correct_row(Q + k, xs + k, xs, fc, kind & 1, track, dmax); return; }
    int n = Q[k].block;                                  /* unrolled for a hinge's, a ball's */
    if (n == 5) correct_block(Q + k, C + 8 * (size_t)k, 5, xs + k, fc, kind & 1, track, dmax);
    else if (n == 3) correct_block(Q + k, C + 8 * (size_t)k, 3, xs + k, fc, kind & 1, track, dmax);
    else correct_block(Q + k, C + 8 * (size_t)k, n, xs + k, fc, kind & 1, track, dmax);
}

/* One sweep; returns the largest change of a lambda (0 unless track: ODE's fixed sweeps,
 * tolerance 0, skip it).  Without the cone the units come in runs[] of one kind
 * (wavefront_order's): no test a unit.  cone: some rows are the cone's pairs. */
static inline __attribute__((always_inline))
double sweep_rows(const QRow *Q, const double *C, int m, const int *runs, int nruns, const double *Ad, double sor, double *xs,
                  double *fc, int track, int cone)
{
    double dmax = 0;
    if (cone) {
        for (int k = 0; k < m; k++) {
            const QRow *r = Q + k;
            if (r->block > 1) {
                correct_block(r, C + 8 * (size_t)k, r->block, xs + k, fc, r->f2 >= 0, 1, &dmax);
                k += r->block - 1;
                continue;
            }
            if (r->pair != -1) {
                if (r->pair >= 0) correct_cone(Q + r->pair, r, r->pair, k, Ad, sor, xs, fc, &dmax);
                continue;                                /* -2: solved at the pair's second row */
            }
            if (r->f2 < 0) correct_row(r, xs + k, xs, fc, 0, 1, &dmax);
            else correct_row(r, xs + k, xs, fc, 1, 1, &dmax);
        }
        return dmax;
    }
    for (int j = 0, k = 0; j < nruns; j++) {
        int end = runs[j] >> 2;
        switch (runs[j] & 3) {
        case 0: for (; k < end; k++) correct_unit(Q, C, k, 0, xs, fc, track, &dmax); break;
        case 1: for (; k < end; k++) correct_unit(Q, C, k, 1, xs, fc, track, &dmax); break;
        case 2: for (; k < end; k += Q[k].block) correct_unit(Q, C, k, 2, xs, fc, track, &dmax); break;
        default: for (; k < end; k += Q[k].block) correct_unit(Q, C, k, 3, xs, fc, track, &dmax); break;
        }
    }
    return dmax;
}
/* One pass over a pipelined schedule (pipelined_schedule): units taken at their places in sched,
 * in runs of one kind; no largest change (fixed sweeps only). */
static inline __attribute__((always_inline))
void sweep_scheduled(const QRow *Q, const double *C, const int *sched, const int *runs, int nruns, double *xs, double *fc)
{
    double unused = 0;
    for (int j = 0, t = 0; j < nruns; j++) {
        int end = runs[j] >> 2;
        switch (runs[j] & 3) {
        case 0: for (; t < end; t++) correct_unit(Q, C, sched[t], 0, xs, fc, 0, &unused); break;
        case 1: for (; t < end; t++) correct_unit(Q, C, sched[t], 1, xs, fc, 0, &unused); break;
        case 2: for (; t < end; t++) correct_unit(Q, C, sched[t], 2, xs, fc, 0, &unused); break;
        default: for (; t < end; t++) correct_unit(Q, C, sched[t], 3, xs, fc, 0, &unused); break;
        }
    }
}
/* The same source compiled twice where the compiler can dispatch at load time (GCC, x86-64
 * ELF): with AVX2 (four lanes, three-operand encoding) on processors that have it, plain SSE2
 * elsewhere.  The same sums in the same order and no FMA (C11 mode contracts nothing), so both
 * give the same bits. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
__attribute__((target_clones("avx2", "default")))
#endif
static double sweep(const QRow *Q, const double *C, int m, const int *runs, int nruns, const double *Ad, double sor, double *xs,
                    double *fc, int track, int cone, const int *sched)
{
    if (sched) { sweep_scheduled(Q, C, sched, runs, nruns, xs, fc); return 0; }
    if (cone) return sweep_rows(Q, C, m, runs, nruns, Ad, sor, xs, fc, 1, 1);
    return track ? sweep_rows(Q, C, m, runs, nruns, Ad, sor, xs, fc, 1, 0) : sweep_rows(Q, C, m, runs, nruns, Ad, sor, xs, fc, 0, 0);
}

/* the largest |lambda| */
static double abs_max(const double *x, int m)
{
    double a = 0, b = 0;
    int k = 0;
    for (; k + 1 < m; k += 2) { double p = fabs(x[k]), q = fabs(x[k + 1]); a = p > a ? p : a; b = q > b ? q : b; }
    if (k < m) { double p = fabs(x[k]); a = p > a ? p : a; }
    return a > b ? a : b;
}

/* Pack the rows into Q in sweep order (order, place, units: wavefront_order's), W's 1 / A_ii into
 * W->Ad, the warm start x into xs and its velocity changes into fc, the blocks' couplings into C
 * (8 doubles a row); *cone set when some rows are a cone's pairs.
 * Compiled twice like the sweep: in four lanes the packing costs a third of the plain build's
 * instructions, with the same bits. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
__attribute__((target_clones("avx2", "default")))
#endif
static void pack_rows(mb_world *W, QRow *Q, const int *order, const int *place, const int *units, double ih, double sor,
                      const double *x, double *xs, double *fc, double *C, int *cone)
{
    int m = W->m, nb = W->nb;
    for (int k = 0; k < m; k++) {
        int i = order[k];
        const mb_row *r = W->rows + i;
        /* W J^T, b = rhs/h - J (v/h + W f) and CFM/h, as lcp_terms forms them (the same bits:
         * the static world's v/h + W f is zero) */
        static const double zero[6];
        double M[12];
        const double *v1 = zero, *v2 = zero;
        if (r->b1 >= 0) {
            double im = W->bprop[(size_t)r->b1 * BP_SIZE + BP_INVMASS];
            for (int e = 0; e < 3; e++) M[e] = im * r->J1[e];
            smv3(W->invIw + 9 * (size_t)r->b1, r->J1 + 3, M + 3);
            v1 = W->vfree + 6 * (size_t)r->b1;
        } else zero6(M);
        if (r->b2 >= 0) {
            double im = W->bprop[(size_t)r->b2 * BP_SIZE + BP_INVMASS];
            for (int e = 0; e < 3; e++) M[6 + e] = im * r->J2[e];
            smv3(W->invIw + 9 * (size_t)r->b2, r->J2 + 3, M + 9);
            v2 = W->vfree + 6 * (size_t)r->b2;
        } else zero6(M + 6);
        v2d pv = ld2(r->J1) * ld2(v1) + ld2(r->J1 + 2) * ld2(v1 + 2) + ld2(r->J1 + 4) * ld2(v1 + 4);
        pv += ld2(r->J2) * ld2(v2) + ld2(r->J2 + 2) * ld2(v2 + 2) + ld2(r->J2 + 4) * ld2(v2 + 4);
        double bi = r->rhs * ih - (pv[0] + pv[1]), cfmh = r->cfm * ih;
        W->b[i] = bi; W->cfmh[i] = cfmh;
        QRow *q = Q + k;
        int swap = r->b1 < 0, two = r->b1 >= 0 && r->b2 >= 0;   /* the live side first */
        const double *J1 = swap ? r->J2 : r->J1, *J2 = swap ? r->J1 : r->J2, *M1 = M + (swap ? 6 : 0), *M2 = M + (swap ? 0 : 6);
        v4d j1 = ld4(J1), j2 = ld4(J2), m1 = ld4(M1), m2 = ld4(M2);
        v2d t1 = ld2(J1 + 4), t2 = ld2(J2 + 4), n1 = ld2(M1 + 4), n2 = ld2(M2 + 4);
        st4(q->M1, m1); sta(q->M1 + 4, n1); st4(q->M2, m2); sta(q->M2 + 4, n2);
        /* 1 / (J W J^T + CFM/h) on the diagonal: W J^T is zero on a static side */
        v4d p = j1 * m1 + j2 * m2;
        v2d lo = {p[0], p[1]}, hi = {p[2], p[3]}, h = (lo + hi) + (t1 * n1 + t2 * n2);
        double ad = 1.0 / (cfmh + (h[0] + h[1]));
        W->Ad[i] = ad;
        q->lo = r->findex >= 0 ? -r->mu : r->lo; q->hi = r->findex >= 0 ? r->mu : r->hi;
        q->f1 = 6 * (swap ? r->b2 : r->b1); q->f2 = two ? 6 * r->b2 : -1;
        if (q->f1 < 0) q->f1 = 6 * nb;                   /* no body at all: the world's zero slot */
        q->row = i; q->findex = r->findex >= 0 ? place[r->findex] : m;
        q->pair = r->cone_pair < 0 ? -1 : r->cone_pair > i ? -2 : place[r->cone_pair];
        if (q->pair == -1) {                             /* ODE's scaling: J, b and CFM/h times sad */
            double sad = sor * ad;
            v4d s4 = {sad, sad, sad, sad};
            v4d tt = {t1[0], t1[1], t2[0], t2[1]};
            st4(q->J1, s4 * j1); st4(q->J2, s4 * j2); st4(q->JT, s4 * tt);
            q->b = sad * bi; q->keep = 1.0 - sad * cfmh;
        } else {
            *cone = 1;
            v4d tt = {t1[0], t1[1], t2[0], t2[1]};
            st4(q->J1, j1); st4(q->J2, j2); st4(q->JT, tt);
            q->b = bi; q->keep = cfmh;
        }
        q->block = units[k];
        xs[k] = x[i];
        if (x[i] != 0) qrow_add(q, x[i], fc, two);
    }
    for (int k = 0; k < m; k += units[k]) {              /* the blocks' couplings */
        if (units[k] >= 4)                               /* and the first four rows' b, keep */
            for (int i = 0; i < 4; i++) { C[8 * (size_t)k + i] = Q[k + i].b; C[8 * (size_t)k + 4 + i] = Q[k + i].keep; }
        for (int i = 1; i < units[k]; i++)
            for (int j = 0; j < i; j++) C[8 * (size_t)(k + i) + j] = qrow_jm4(Q + k + i, Q + k + j, Q[k].f2 >= 0);
    }
}

/* What the quick step keeps from one step to the next: the sweep order depends only on which
 * bodies each row joins, which stays the same from step to step while nothing new touches (a
 * chain, a resting pile); then the orders are reused, not rebuilt. */
typedef struct QCache {
    int m, nb, cap;
    int *bodies;                         /* b1, b2 and block_key of each row (3 m)              */
    int *order, *place, *units, *runs;   /* wavefront_order's (4 m)                             */
    int nruns, depth, nunits;            /* its runs, levels and units (rows and blocks) */
    double *coup;                        /* the blocks' couplings (8 m)                         */
    int copies, rem, n_pass, n_rem;      /* pipelined sweeps: a pass of `copies` sweeps, then
                                          * one of `rem`; their schedules and runs (0: none)    */
    int *pass, *pass_runs, *last, *last_runs, cap_pipe;
} QCache;

void mb_quick_free(mb_world *W)
{
    QCache *C = W->qcache;
    if (C) { free(C->bodies); free(C->order); free(C->coup); free(C->pass); free(C); }
    W->qcache = NULL;
}

/* the cache's orders for this step's rows (rebuilt when some row joins other bodies or the
 * blocks change); -1: out of memory */
static int cached_order(mb_world *W, QCache *C)
{
    int m = W->m, nb = W->nb, same = C->m == m && C->nb == nb;
    for (int i = 0; same && i < m; i++) {
        const mb_row *r = W->rows + i;
        same = C->bodies[3 * i] == r->b1 && C->bodies[3 * i + 1] == r->b2 && C->bodies[3 * i + 2] == block_key(r);
    }
    if (same) return 0;
    C->m = -1;
    if (m > C->cap) {
        int cap = 2 * m + 16;
        free(C->bodies); free(C->order); free(C->coup);
        C->bodies = malloc(sizeof(int) * 3 * (size_t)cap); C->order = malloc(sizeof(int) * 4 * (size_t)cap);
        C->coup = malloc(sizeof(double) * 8 * (size_t)cap);
        if (!C->bodies || !C->order || !C->coup) { C->cap = 0; return -1; }
        C->cap = cap;
    }
    C->place = C->order + m; C->units = C->place + m; C->runs = C->units + m;
    int *scratch = malloc(sizeof(int) * ((size_t)nb + 1 + 6 * (size_t)m + 6));
    if (!scratch) return -1;
    C->depth = wavefront_order(W, C->order, C->place, C->units, C->runs, &C->nruns, scratch);
    C->nunits = 0;
    for (int k = 0; k < m; k += C->units[k]) C->nunits++;
    free(scratch);
    for (int i = 0; i < m; i++) {
        C->bodies[3 * i] = W->rows[i].b1; C->bodies[3 * i + 1] = W->rows[i].b2; C->bodies[3 * i + 2] = block_key(W->rows + i);
    }
    C->m = m; C->nb = nb;
    C->copies = C->rem = 0;                              /* the pipelined schedules are stale */
    return 0;
}

/* the pipelined schedules for `iters` fixed sweeps of Q: passes of `copies` sweeps, the rest in
 * one pass (kept while the order is) */
static int cached_pipeline(mb_world *W, QCache *C, const QRow *Q, int copies, int rem)
{
    if (C->copies == copies && C->rem == rem) return 0;
    size_t m = (size_t)W->m, need = 2 * ((size_t)copies + (size_t)rem) * m;
    if (need > (size_t)C->cap_pipe) {
        free(C->pass); C->pass = malloc(sizeof(int) * need);
        if (!C->pass) { C->cap_pipe = 0; C->copies = C->rem = 0; return -1; }
        C->cap_pipe = (int)need;
    }
    C->pass_runs = C->pass + copies * m; C->last = C->pass_runs + copies * m; C->last_runs = C->last + rem * m;
    int most = copies > rem ? copies : rem;
    int *scratch = malloc(sizeof(int) * ((size_t)W->nb + 1 + 6 * most * m + 6));
    if (!scratch) { C->copies = C->rem = 0; return -1; }
    C->n_pass = pipelined_schedule(W, Q, C->units, copies, C->pass, C->pass_runs, scratch);
    C->n_rem = rem ? pipelined_schedule(W, Q, C->units, rem, C->last, C->last_runs, scratch) : 0;
    free(scratch);
    C->copies = copies; C->rem = rem;
    return 0;
}

/* sweeps pipelined when one sweep's units form chains: fewer than this many a level */
#define PIPELINE_BELOW_UNITS_PER_LEVEL 4
/* and at most this many sweeps in one pass (its schedule: copies x m places) */
#define PIPELINE_MOST_COPIES 32

int mb_quick_step(mb_world *W, double ih, int iters, double sor, double tol)
{
    int m = W->m, nb = W->nb, cone = 0;
    double *fc = W->fc, *x = W->lambda;
    if (reserve_qrows(W, m)) return -1;
    if (!W->qcache && !(W->qcache = calloc(1, sizeof(QCache)))) return -1;
    QCache *C = W->qcache;
    if (cached_order(W, C)) return -1;
    /* the packed lambdas and a 1 (m + 1 doubles), then warm_start's scratch */
    double *xs = malloc(sizeof(double) * (size_t)(m + 1) + sizeof(int) * ((size_t)W->ng + 1));
    if (!xs) return -1;
    xs[m] = 1.0;
    QRow *Q = W->qrows;
    memset(fc, 0, sizeof(double) * 6 * (size_t)(nb + 1));
    warm_start(W, x, (int *)(void *)(xs + m + 1));
    pack_rows(W, Q, C->order, C->place, C->units, ih, sor, x, xs, fc, C->coup, &cone);
    /* The convergence stop: a sweep whose largest change of any lambda is at most tol times the
     * largest |lambda| ends the iteration (a warm-started settled pile needs a few sweeps, not
     * iters).  tol = 0 sweeps iters times, as ODE's quick step does.  The largest |lambda| is
     * looked at only when the bound it cannot pass (the last one known plus the sweep's largest
     * change) lets the test succeed: most sweeps of a tumbling pile are far from it. */
    int it = 0;
    if (tol == 0 && !cone && iters > 1 && C->nunits < PIPELINE_BELOW_UNITS_PER_LEVEL * C->depth) {
        int copies = iters < PIPELINE_MOST_COPIES ? iters : PIPELINE_MOST_COPIES;
        if (cached_pipeline(W, C, Q, copies, iters % copies)) { free(xs); return -1; }
        for (; it + copies <= iters; it += copies) sweep(Q, C->coup, m, C->pass_runs, C->n_pass, W->Ad, sor, xs, fc, 0, 0, C->pass);
        if (it < iters) { sweep(Q, C->coup, m, C->last_runs, C->n_rem, W->Ad, sor, xs, fc, 0, 0, C->last); it = iters; }
    }
    double xmax = tol > 0 ? abs_max(xs, m) : 0;
    while (it < iters) {
        double dmax = sweep(Q, C->coup, m, C->runs, C->nruns, W->Ad, sor, xs, fc, tol > 0, cone, NULL);
        it++;
        if (tol > 0) {
            xmax += dmax;
            if (dmax <= tol * xmax) {
                xmax = abs_max(xs, m);
                if (dmax <= tol * xmax) break;
            }
        }
    }
    for (int k = 0; k < m; k++) x[Q[k].row] = xs[k];
    free(xs);
    W->iterations = it;
    return 0;
}
