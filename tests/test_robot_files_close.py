"""What closes issue 19: a singular model's error names its body (per thread), and the model's own
constraints in fd_gq and linearize."""
from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest

import multibody as mb
from multibody.dynamics import fd_crb


def massless_leaf(names, leaf):
    """romeo's case built by hand: a chain whose body ``leaf`` has no mass and no inertia."""
    b = mb.ModelBuilder("chain")
    parent = None
    for nm in names:
        b.add_body(nm, parent, "Rx", mass=1.0, com=[0, 0, -0.3], inertia=np.eye(3) * 0.1)
        parent = nm
    m = b.build()
    k = names.index(leaf)
    mass, inertia = m.mass.copy(), m.inertia_com.copy()
    mass[k], inertia[k] = 0.0, 0.0
    return dataclasses.replace(m, mass=mass, inertia_com=inertia)


def test_singular_body_is_named_single_and_batched():
    m = massless_leaf(["upper", "lower", "finger"], "finger")
    q = np.zeros(3)
    expected = r"at the joint of body 'finger' \(model.body_names\[2\]\) is singular"
    with pytest.raises(ValueError, match=expected):
        mb.aba(m, q, q, q)
    with pytest.raises(ValueError, match=expected):                 # on worker threads
        mb.aba(m, np.zeros((2000, 3)), np.zeros((2000, 3)), np.zeros((2000, 3)))
    with pytest.raises(ValueError, match=r"^model: singular joint-space inertia \(a massless body"):
        fd_crb(m, q, q, q)                                        # Cholesky: no body located, none named
    assert np.all(np.isfinite(mb.rnea(m, q, q, q)))                  # what needs no M⁻¹ works


def test_two_threads_failing_at_once_keep_their_own_body():
    """The body is handed from the worker threads to the caller's per call, not through one global:
    two callers failing at the same time each name their own body."""
    models = {"alpha": massless_leaf(["a0", "alpha"], "alpha"), "beta": massless_leaf(["b0", "b1", "beta"], "beta")}
    threads_before = mb.get_num_threads()
    mb.set_num_threads(2)
    start = threading.Barrier(2)
    wrong = []

    def fail(name, rounds=40):
        m = models[name]
        Q = np.zeros((600, m.nv))
        start.wait()
        for _ in range(rounds):
            try:
                mb.aba(m, Q, Q, Q)
                wrong.append(f"{name}: no error")
            except ValueError as e:
                if f"body '{name}'" not in str(e):
                    wrong.append(f"{name}: {e}")
            try:
                mb.aba(m, Q[0], Q[0], Q[0])
            except ValueError as e:
                if f"body '{name}'" not in str(e):
                    wrong.append(f"{name} (single): {e}")

    threads = [threading.Thread(target=fail, args=(nm,)) for nm in models]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        mb.set_num_threads(threads_before)
    assert not wrong, wrong[:3]
