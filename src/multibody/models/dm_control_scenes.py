"""dm_control's suite scenes varied for the benchmarks and the tests that check the same runs.

They read the suite's files from the ``dm_control`` package (a test dependency): bench/simulate.py's
parts 7 and 9 and tests/test_loop_contact.py build the same sprung quadruped here, so that the tests
never import the benchmarks (tests/test_architecture.py).
"""
from __future__ import annotations

import os
import re
import warnings

from ..kinematics.forward import body_states
from ..model.mjcf import load_mjcf


def sprung_quadruped(folder, frictionless=False):
    """dm_control's quadruped.xml written to ``folder`` with springs in its joints (stiffness 1000 at
    the zero pose), the ball taken out, optionally frictionless toes and floor.

    Returns (path, model, q0): q0 is the default state lowered until the toes touch the floor.
    """
    import dm_control
    suite = os.path.join(os.path.dirname(dm_control.__file__), "suite")
    with open(os.path.join(suite, "quadruped.xml")) as f:
        src = f.read()
    src = src.replace('damping="30" armature=".01"', 'damping="30" armature=".01" stiffness="1000"')
    src = re.sub(r'<body name="ball".*?</body>', "", src, flags=re.S)
    # actuation off in the file itself, so that both simulators read it: set on MuJoCo's compiled model
    # alone, our loader kept the twelve position servos (bias −1000 × tendon length at ctrl 0), which
    # stiffened our legs and stood our base 1.2 cm above MuJoCo's
    src = src.replace('<option timestep=".005"/>', '<option timestep=".005"><flag actuation="disable"/></option>')
    if frictionless:
        src = src.replace('friction="1.5"', 'condim="1"').replace('<geom name="floor" type="plane"',
                                                                  '<geom name="floor" type="plane" condim="1"')
    if not os.path.exists(os.path.join(folder, "common")):
        os.symlink(os.path.join(suite, "common"), os.path.join(folder, "common"))
    path = os.path.join(folder, "quadruped_frictionless.xml" if frictionless else "quadruped.xml")
    with open(path, "w") as f:
        f.write(src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_mjcf(path)
    g, st = model.geoms, body_states(model, model.q_default)
    toes = [k for k in range(len(g)) if g.kind[k] == "sphere" and g.body[k] >= 0]
    q0 = model.q_default.copy()
    q0[2] -= min((st.R[g.body[k]] @ g.translation[k] + st.p[g.body[k]])[2] - g.size[k][0] for k in toes)
    return path, model, q0
