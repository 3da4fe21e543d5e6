/* status.c — messages of the status codes (status.h): the same words the Python boundary used. */
#include "common/status.h"

#include "model/model.h"

#include <stdio.h>

static const char *const MESSAGES[MB_N_STATUS] = {
    [MB_OK] = 0,
    [MB_BAD_Q] = "q: contains NaN or inf",
    [MB_BAD_QD] = "qd: contains NaN or inf",
    [MB_BAD_QDD] = "qdd: contains NaN or inf",
    [MB_BAD_TAU] = "tau: contains NaN or inf",
    [MB_BAD_FEXT] = "f_ext: contains NaN or inf",
    [MB_ZERO_QUAT] = "q: a quaternion (spherical or free joint) has zero norm; expected a non-zero quaternion",
    [MB_SINGULAR] = "model: singular joint-space inertia (a massless body or chain with no inertia)",
    [MB_BAD_XFB] = "xfb: contains NaN or inf",
    [MB_ZERO_QUAT_FB] = "xfb/q: a quaternion has zero norm; expected a non-zero quaternion",
    [MB_NO_MEMORY] = "out of memory for a worker thread's workspace",
    [MB_BAD_CONTROL] = "controller: returned NaN or inf",
    [MB_BAD_V] = "v: contains NaN or inf",
    [MB_BAD_Z] = "z: the contact states contain NaN or inf",
    [MB_CALLBACK_FAILED] = "a Python function called from the compiled loop raised",
    [MB_CONTACT_LCP] = "contact='hard': the contact LCP (engine/lcp.c, Dantzig pivoting on J M^-1 J^T) found no "
                       "impulses at this step, even regularised (a degenerate contact set): try a smaller dt or "
                       "a larger cfm (mb.HardContact(model, cfm=...))",
    [MB_CONTACT_STIFF] = "compliant contact: the step's implicit contact system (M + h J^T G J, the law's stiffness "
                         "and damping linearised over the step) cannot be solved to working precision, though M "
                         "alone can: the contact terms outweigh the bodies' inertia by some 13 orders (a stiffness far "
                         "too large for the bodies it presses, an impact too fast for the step, or a run already "
                         "blowing up); try a smaller dt, a softer contact, or contact='hard'",
    [MB_SOFT_LIMITS] = "limits='soft': the soft stops' LCP (engine/lcp.c on J M^-1 J^T + R, MuJoCo's soft limits) "
                       "found no forces at this state (its load or the joints' speeds not finite: a run blowing up); "
                       "try a smaller dt, or limits='hard'",
    [MB_OVERFLOW] = "the inputs are finite but too large for double precision: the algorithm overflowed or lost "
                    "every digit on the way (e.g. bodies 1e100 m from the origin)",
};

int mb_pivot_status(const double *a, int n)
{
    for (int k = 0; k < n; k++)
        if (!(a[k] - a[k] == 0.0))  /* inf − inf and NaN − NaN are NaN */
            return MB_OVERFLOW;
    return MB_SINGULAR;
}

/* The body of this thread's last MB_SINGULAR (body −1: none).  Batches run on worker threads and
 * the message is built on the caller's: py_batch.c carries a worker's record in its chunk and puts
 * it on the caller's thread (mb_singular_take / mb_singular_put). */
static _Thread_local mb_singular_body last_singular = {-1, ""};

int mb_singular_at(const mb_model *m, int body)
{
    last_singular.body = body;
    last_singular.name[0] = '\0';
    if (m && m->body_names && body >= 0 && body < m->nb && m->body_names[body])
        snprintf(last_singular.name, sizeof last_singular.name, "%s", m->body_names[body]);
    return MB_SINGULAR;
}

mb_singular_body mb_singular_take(void)
{
    const mb_singular_body s = last_singular;
    last_singular.body = -1;
    last_singular.name[0] = '\0';
    return s;
}

void mb_singular_put(const mb_singular_body *s)
{
    last_singular = *s;
}

const char *mb_status_message(int status)
{
    if (status <= 0 || status >= MB_N_STATUS)
        return "kernel failed with an unknown status";
    if (status == MB_SINGULAR) {
        const mb_singular_body s = mb_singular_take();
        if (s.body >= 0) {
            static _Thread_local char message[400];
            char who[160];
            if (s.name[0])
                snprintf(who, sizeof who, "'%s' (model.body_names[%d])", s.name, s.body);
            else
                snprintf(who, sizeof who, "%d (model.body_names[%d])", s.body, s.body);
            snprintf(message, sizeof message,
                     "model: singular joint-space inertia: the articulated inertia at the joint of body %s "
                     "is singular; the body and all it carries have no inertia about the joint's motion "
                     "(a massless body or chain), and forward dynamics needs M⁻¹", who);
            return message;
        }
    }
    return MESSAGES[status];
}
