"""The compliant contact law on a contact list, stated in NumPy: the reference the C law
(csrc/sim/scene_contact.c, mb.contact_forces) is tested against to 1e-12.  The same law as
multibody.simulation.contact's ground law, with the ground's z axis replaced by the contact's
normal and its x, y axes by the contact's tangents (mb.contact_forces' notes)."""
import numpy as np

from multibody.kinematics.forward import body_states


def tangents(n):
    e = np.array([0.0, 1.0, 0.0]) if abs(n[0]) > 0.9 else np.array([1.0, 0.0, 0.0])
    t1 = e - (e @ n) * n
    t1 = t1 / np.linalg.norm(t1)
    return t1, np.cross(n, t1)


def point_velocity(st, k, x):
    if k < 0:
        return np.zeros(3)
    R, p, V = st.R[k], st.p[k], st.v[k]
    r = R.T @ (x - p)
    return R @ (V[3:] + np.cross(V[:3], r))


def contact_forces(model, q, qd, contacts, K, D, u):
    st = body_states(model, q, qd)
    n_c = len(contacts)
    f_ext, udot, F, state = np.zeros((model.nb, 6)), np.zeros((n_c, 2)), np.zeros((n_c, 3)), np.zeros(n_c, np.uint8)
    for i in range(n_c):
        ba, bb = int(contacts.body_a[i]), int(contacts.body_b[i])
        mu = contacts.friction[i, 0] if contacts.condim[i] >= 3 else 0.0
        n, x, d = contacts.normal[i], contacts.position[i], contacts.depth[i]
        v = point_velocity(st, bb, x) - point_velocity(st, ba, x)
        t = tangents(n)
        zr = np.sqrt(max(0.0, d))
        fn = zr * (K * d - D * (n @ v))
        ft = np.zeros(2)
        if mu > 0:
            vt = np.array([t[0] @ v, t[1] @ v])
            if not fn > 0:
                udot[i] = -K / D * u[i]
            else:
                ft = -zr * K * u[i] - zr * D * vt
                udot[i] = vt
                cone = np.linalg.norm(ft) / (mu * fn)
                if cone > 1:
                    ft = ft / cone
                    udot[i] = -(ft + zr * K * u[i]) / (zr * D)
                    state[i] = 2
        if not fn > 0:
            state[i] = 0
            continue
        state[i] = state[i] or 1
        f = fn * n + ft[0] * t[0] + ft[1] * t[1]
        F[i] = f
        for k, s in ((bb, 1.0), (ba, -1.0)):
            if k >= 0:
                f_ext[k] += s * np.concatenate([np.cross(x, f), f])
    return f_ext, udot, F, state
