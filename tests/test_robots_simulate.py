"""Every URDF that example-robot-data ships, simulated as a new user would: loaded, started mid-range
with a random velocity, run under its own limits, damping and friction with the defaults.

Under ``semi_implicit`` (damping implicit) every robot runs 0.2 s and stays within the limits
simulate enforces; under the default ``rk4`` a robot whose damping the 1 ms step cannot follow is
refused before the run with the message that names the joint and ``semi_implicit``, and every
other one runs.  A few files cannot run as written, each for a reason its error names (5 s in all).  Before
this test, 15 of these files chattered, blew up or ended in "fires forever" at a stop, and four
swung through stops whose lower and upper bounds are both URDF's default 0.
"""
import glob
import os
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.bench.simulate import robots_dir
from multibody.model.model import enforced_position_limits

FILES = sorted(glob.glob(os.path.join(robots_dir(), "*", "**", "*.urdf"), recursive=True))

#: files that cannot run as written, and what their error must say
CANNOT = {
    "ur_description/urdf/ur3.urdf": "missing attribute 'name'",             # a xacro fragment
    "romeo_description/urdf/romeo.urdf": "singular joint-space inertia",      # massless thumb links
    "romeo_description/urdf/romeo_laas_small.urdf": "singular joint-space inertia",
}
#: files that may stop with an error naming the cause: iCub's neck links carry 1e-18 kg·m² (rk4
#: refuses their damping; under semi_implicit a state may throw the massless neck into a stop)
MAY_STOP = {"icub_description/robots/icub.urdf": "neck"}


def start(model, rng):
    q = model.neutral().copy()
    lower, upper = enforced_position_limits(model)
    if model.nq == model.nv:
        both = np.isfinite(lower) & np.isfinite(upper)
        q[both] = 0.5 * (lower[both] + upper[both])
    return q, 0.5 * rng.normal(size=model.nv)


@pytest.mark.parametrize("integrator", ["semi_implicit", "rk4"])
def test_every_example_robot_data_urdf_runs_within_its_limits_or_says_why(integrator):
    assert len(FILES) > 60
    rng = np.random.default_rng(0)
    ran, refused, stopped = [], [], []
    for path in FILES:
        name = os.path.relpath(path, robots_dir())
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = mb.load_urdf(path)
            q0, qd0 = start(model, rng)
            traj = mb.simulate(model, q0, qd0, 0.2, integrator=integrator, on_divergence="raise")
        except ValueError as e:   # URDFError is one
            msg = str(e)
            if name in CANNOT or name in MAY_STOP:
                assert {**CANNOT, **MAY_STOP}[name] in msg, (name, msg)
                stopped.append(name)
            else:
                assert integrator == "rk4" and msg.startswith("damping: ") and "integrator='semi_implicit'" in msg, \
                    (name, msg)
                refused.append(name)
            continue
        assert name not in CANNOT, name
        assert traj.status == "finished" and np.all(np.isfinite(traj.q)) and np.all(np.isfinite(traj.qd)), name
        if model.nq == model.nv:
            lower, upper = enforced_position_limits(model)
            slack = 1e-9 * np.maximum(1.0, np.abs(np.where(np.isfinite(lower), lower, 0.0)))
            assert np.all(traj.q >= lower - slack) and np.all(traj.q <= upper + slack), name
        ran.append(name)
    assert len(ran) + len(refused) + len(stopped) == len(FILES) and len(stopped) <= len(CANNOT) + len(MAY_STOP)
    if integrator == "semi_implicit":
        assert not refused
    else:   # the grippers and fingers of z1, xarm7, tiago, talos, allegro, hextilt, icub_reduced …
        assert 8 <= len(refused) <= 16 and "z1_description/urdf/z1.urdf" in refused
