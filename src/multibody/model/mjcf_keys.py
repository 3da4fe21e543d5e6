"""MJCF keyframes: ``<keyframe><key name time qpos qvel act ctrl>`` → :class:`~multibody.model.model.Keyframe`.

MuJoCo's compiler has already read the keys (``mjModel.key_*``); this module turns each into a
Keyframe in this library's conventions and holds the file to its sizes.  q is MuJoCo's qpos (the
loader keeps MuJoCo's joint order and quaternion order).  A free joint's velocity is converted
from MuJoCo's qvel [v (world); ω (body)] into ours [ω; v (body)], as
:func:`multibody.mjcf.from_mujoco_state` does.  ``act`` and ``ctrl`` are kept as written (in
MuJoCo's actuator order).  Mocap poses (``mpos``, ``mquat``) are not kept: mocap bodies are frames
of the fixed base here.

Sizes: MuJoCo refuses a key longer than the model and pads a shorter one.  A short key is almost
always a key written for another version of the model, so it is refused here too, naming the key,
its line and both sizes; a long one gets its line added to MuJoCo's message (:func:`key_line`).
"""
from __future__ import annotations

import re

import numpy as np

from .model import Keyframe, Keyframes


def _rotation(quat) -> np.ndarray:
    w, x, y, z = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def read_keyframes(mj, label, elements, error) -> Keyframes:
    """The compiled model's keys as Keyframes.  ``elements``: the <key> elements with their lines
    (``mjcf._section_children``), or None when the text is not at hand (an mjModel given directly);
    ``error``: the exception class to raise (MJCFError)."""
    import mujoco
    sizes = {"qpos": mj.nq, "qvel": mj.nv, "act": mj.na, "ctrl": mj.nu, "mpos": 3 * mj.nmocap,
             "mquat": 4 * mj.nmocap}
    if elements is not None and len(elements) == mj.nkey:
        for k, (where, el) in enumerate(elements):
            for attr, n in sizes.items():
                text = el.get(attr)
                if text is None:
                    continue
                got = len(text.split())
                if got != n:
                    name = el.get("name")
                    what = repr(name) if name else f"#{k}"
                    raise error(f"{label}: <key> {what} ({where}): {attr} has {got} number(s), the model has "
                                f"{n} ({'nq' if attr == 'qpos' else 'nv' if attr == 'qvel' else attr + ' size'}); "
                                "a key must give all of them (MuJoCo pads a short one silently)")
    free = [(int(mj.jnt_qposadr[j]), int(mj.jnt_dofadr[j])) for j in range(mj.njnt)
            if mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
    keys = []
    for k in range(mj.nkey):
        q, qd = np.array(mj.key_qpos[k], float), np.array(mj.key_qvel[k], float)
        for qs, vs in free:   # MuJoCo [v (world); ω (body)] → ours [ω; v (body)]
            v_world, om = qd[vs:vs + 3].copy(), qd[vs + 3:vs + 6].copy()
            qd[vs:vs + 3], qd[vs + 3:vs + 6] = om, _rotation(q[qs + 3:qs + 7]).T @ v_world
        name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_KEY, k) or ""
        keys.append(Keyframe(name, float(mj.key_time[k]), q, qd, np.array(mj.key_act[k], float),
                             np.array(mj.key_ctrl[k], float)))
    return Keyframes(keys)


def key_line(message, elements) -> str:
    """", line N" for the <key> a MuJoCo compiler message names ("keyframe 'home'" or "keyframe 3"),
    or "" when the message names none or the key is not found."""
    m = re.search(r"keyframe (?:'([^']*)'|(\d+))", message)
    if not m:
        return ""
    for k, (where, el) in enumerate(elements):
        by_name = m.group(1) is not None and el.get("name") == m.group(1)
        if by_name or (m.group(2) is not None and k == int(m.group(2))):
            return f" (<key> at {where})"
    return ""
