/* status.h — the one table of status codes the kernels return instead of raising.
 * py_batch.c (raise_status) turns a code into a Python ValueError with mb_status_message (status.c). */
#ifndef MULTIBODY_STATUS_H
#define MULTIBODY_STATUS_H

enum mb_status {
    MB_OK = 0,
    MB_BAD_Q = 1,        /* q contains NaN or inf                                    */
    MB_BAD_QD = 2,       /* qd contains NaN or inf                                   */
    MB_BAD_QDD = 3,      /* qdd contains NaN or inf                                  */
    MB_BAD_TAU = 4,      /* tau contains NaN or inf                                  */
    MB_BAD_FEXT = 5,     /* f_ext contains NaN or inf                                */
    MB_ZERO_QUAT = 6,    /* a quaternion of q has (numerically) zero norm            */
    MB_SINGULAR = 7,     /* joint-space or articulated inertia block is singular     */
    MB_BAD_XFB = 8,      /* floating-base state xfb contains NaN or inf              */
    MB_ZERO_QUAT_FB = 9, /* floating-base quaternion has zero norm                   */
    MB_NO_MEMORY = 10,   /* a worker could not allocate its workspace                */
    MB_BAD_CONTROL = 11, /* a built-in controller's τ is NaN or inf (rollout.c)    */
    MB_OVERFLOW = 12,    /* finite inputs overflowed inside an algorithm (inf/NaN)   */
    MB_BAD_V = 13,       /* a tangent vector v (integrate) contains NaN or inf       */
    MB_BAD_Z = 14,       /* a run's contact states z (rollout.c) contain NaN or inf  */
    MB_CALLBACK_FAILED = 15, /* a caller's function (a Python callable) raised       */
    MB_CONTACT_LCP = 16, /* hard contact's LCP (lcp.c) found no impulses at a step (rollout.c) */
    MB_CONTACT_STIFF = 17, /* the compliant law's implicit step (scene_contact.c) has no solution to working
                            * precision: its contact terms swamp M, which alone is positive definite */
    MB_SOFT_LIMITS = 18, /* the soft stops' LCP (passive.c: MuJoCo's soft limits, solved alone) found no forces */
    MB_N_STATUS = 19
};

/* Message for a status code ("q: contains NaN or inf", …); NULL for MB_OK.  For MB_SINGULAR it
 * names the body that a kernel on this thread reported with mb_singular_at (then forgets it). */
const char *mb_status_message(int status);

/* A pivot or solve failed on the matrix a[0..n): MB_OVERFLOW when it holds inf or NaN (finite inputs
 * too large for double precision overflowed on the way), MB_SINGULAR when it is finite. */
int mb_pivot_status(const double *a, int n);

/* Where a kernel found the joint-space inertia singular: body index (−1: not located) and name. */
typedef struct {
    int body;
    char name[96];
} mb_singular_body;

struct mb_model;
/* MB_SINGULAR, remembering on this thread that the articulated inertia of body i's joint is
 * singular (ABA: D_i = S_iᵀ IA_i S_i + armature has no inverse — body i and all it carries have no
 * inertia about the joint's motion), with the body's name from the model, so that the message can
 * say where.  Per thread: two calls failing at once on different threads keep their own body. */
int mb_singular_at(const struct mb_model *m, int body);
/* This thread's record (then forgotten): a worker hands it to the thread that raises the error. */
mb_singular_body mb_singular_take(void);
/* Make a record taken on a worker thread this thread's own (the caller's, which builds the message). */
void mb_singular_put(const mb_singular_body *s);

#endif
