"""A joint's mobility at the model's neutral configuration, (M⁻¹)_jj, and the joints that carry almost no
inertia: a link whose inertia about its joint's axis is a file's placeholder (icub's head, a point mass on
neck_yaw's axis; 1e-18 kg·m²).  No fixed step follows such a joint, and the solves through it (an impact,
an implicit contact step) are rounding: the refusals and failures that meet one name it."""
from __future__ import annotations

import numpy as np

from ..model.model import velocity_names

#: an effective joint inertia below this share of the heaviest joint's is a link without mass (a file's
#: placeholder 1e-18 kg·m²): the refusals and failures it causes say so
MASSLESS = 1e-9


def neutral_inverse_inertia(model):
    """M⁻¹ at the model's neutral configuration, computed once per Model (immutable) and kept on it
    (read-only): the passive laws' step checks read the model's inertia there, per run."""
    out = model.__dict__.get("_neutral_inverse_inertia")
    if out is None:
        from .derivatives import minv
        out = np.array(minv(model, model.neutral()), dtype=float)
        out.setflags(write=False)
        model.__dict__["_neutral_inverse_inertia"] = out
    return out


def massless_note(model, k=None):
    """A message's note that velocity variable ``k`` (None: the lightest) has an effective inertia
    1/(M⁻¹)_kk at the neutral configuration below :data:`MASSLESS` of the heaviest's — a link without inertia
    about the joint's axis (icub's head, a point mass on neck_yaw's axis), which no fixed step follows and
    which makes an impact's solve rounding — else "" (also where M cannot be formed: its own error says why).

    >>> import multibody as mb
    >>> massless_note(mb.models.planar(2))
    ''
    >>> point = ('<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" '
    ...          'ixy="0" ixz="0" iyz="0"/></inertial></link><link name="b"><inertial><mass value="1"/><inertia '
    ...          'ixx="1e-19" iyy="1e-19" izz="1e-19" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="spin" '
    ...          'type="continuous"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint></robot>')
    >>> massless_note(mb.load_urdf(point, floating=True))[:59]
    " — 5.0e-20 of the heaviest joint's, as if nothing with mass"
    """
    try:
        mobility = np.diag(neutral_inverse_inertia(model))
    except ValueError:
        return ""
    if not len(mobility) or not np.all(np.isfinite(mobility)):
        return ""
    k = int(np.argmax(mobility)) if k is None else k
    heaviest = 1.0 / np.min(mobility)
    if 1.0 / mobility[k] >= MASSLESS * heaviest:
        return ""
    return (f" — {1.0 / (heaviest * mobility[k]):.1e} of the heaviest joint's, as if nothing with mass moved with "
            f"it: check the inertias of the links it carries")


def massless_cause(model):
    """The cause a run's failure names where the model has a joint without inertia (:func:`massless_note`,
    the lightest): "the model's joint 'j' has almost no inertia (…)", else "".  No step follows such a
    joint, and the solves through it (an impact, the implicit contact) are rounding.

    >>> import multibody as mb
    >>> massless_cause(mb.models.planar(2))
    ''
    """
    note = massless_note(model)
    if not note:
        return ""
    lightest = velocity_names(model)[int(np.argmax(np.diag(neutral_inverse_inertia(model))))]
    return (f"the model's joint {lightest!r} has almost no inertia (1/(M⁻¹)_jj at the neutral configuration{note}, "
            f"or give the joint an armature: dataclasses.replace(model, armature=...))")
