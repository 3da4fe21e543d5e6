"""CModel checks the tables it is given where they enter C (issue 36): a Model always builds
consistent ones, but a hand-built CModel with a wrong joint size or a wrong dof_parent must be
refused with the table named, never read past its arrays by the kernels."""
import numpy as np
import pytest

import multibody as mb
from multibody.core import CModel


def tables(model):
    I = model.I  # noqa: E741
    inertia10 = np.column_stack([I[:, 5, 5], I[:, 2, 4], I[:, 0, 5], I[:, 1, 3], I[:, 0, 0], I[:, 0, 1],
                                 I[:, 0, 2], I[:, 1, 1], I[:, 1, 2], I[:, 2, 2]])
    return [np.array(model.parent), np.array(model.jtype), np.array(model.q_start), np.array(model.nq_joint),
            np.array(model.v_start), np.array(model.nv_joint), model.tree_rotation, model.tree_translation,
            model.jaxis, model.jpitch, inertia10, np.ascontiguousarray(model.S, dtype=float), model.armature,
            np.array(model.dof_parent), np.concatenate([np.zeros(3), model.gravity])]


def test_consistent_tables_build():
    c = CModel(*tables(mb.models.double_pendulum()))
    assert c.sizes == (2, 2, 2)


def test_joint_size_that_disagrees_with_its_type_is_refused():
    t = tables(mb.models.double_pendulum())
    t[1] = np.array([1, 5])          # the second joint claims to be free (nq 7) with nq_joint 1
    with pytest.raises(ValueError, match=r"body 1's joint \(type 5\) has nq 7 and nv 6, but the tables say "
                                         r"nq_joint 1 and nv_joint 1"):
        CModel(*t)


@pytest.mark.parametrize("bad", [[-1, 5], [-1, 1], [0, 0], [1, -1]])
def test_wrong_dof_parent_is_refused(bad):
    t = tables(mb.models.double_pendulum())
    t[13] = np.array(bad)
    with pytest.raises(ValueError, match=r"CModel: dof_parent\[\d\] is -?\d+, expected -?\d+"):
        CModel(*t)


def test_branching_floating_tree_passes_the_check():
    model = mb.models.load("starleth") if hasattr(mb.models, "load") else mb.models.starleth()
    c = CModel(*tables(model))
    assert c.sizes == (model.nb, model.nq, model.nv)
