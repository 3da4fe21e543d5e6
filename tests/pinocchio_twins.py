"""A robot of example-robot-data loaded twice, by us and by Pinocchio, from the same URDF (cached):
the frame and converter tests compare the two."""
from __future__ import annotations

import functools
import os
import warnings

import pinocchio as pin

import multibody as mb
from test_urdf_robots import robots_dir


@functools.lru_cache(maxsize=None)
def twin(relative_path: str, floating: bool):
    """(our Model, pin.Model) of ``robots/<relative_path>``; a floating base is a free flyer in both."""
    path = os.path.join(robots_dir(), relative_path)
    share = os.path.dirname(os.path.dirname(robots_dir()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_urdf(path, floating=floating, package_dirs=[share], check_meshes=False)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    return model, pm
