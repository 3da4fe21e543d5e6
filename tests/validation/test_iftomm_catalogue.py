"""The IFToMM benchmark models are in the command line's one model table: ``multibody info a04_bricard``."""
import numpy as np
import pytest

import multibody as mb
from multibody.cli import main
from multibody.models.catalogue import build, catalogue

IFTOMM = ["a01_pendulum", "a02_n_four_bar", "a03_andrews", "a04_bricard", "a05_flyball_governor"]


@pytest.mark.parametrize("name", IFTOMM)
def test_info_prints_each_iftomm_model(name, capsys):
    assert main(["info", name]) == 0
    out = capsys.readouterr().out
    model = build(name)
    assert out.startswith(f"{model.name}: {model.nb} bodies, nq = {model.nq}")
    for body in model.body_names:
        assert body in out


def test_iftomm_models_are_listed_and_sized_where_they_take_a_size(capsys):
    assert main(["info", "--list"]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert set(IFTOMM) <= listed and set(IFTOMM) <= set(catalogue())
    assert build("a02_n_four_bar:3").nv == 7 and build("a02_n_four_bar").nv == 81   # N = 3; the specified N = 40
    assert main(["info", "a04_bricard:2"]) == 2                                      # takes no size


def test_catalogue_entries_are_the_constructors_models():
    for name in IFTOMM:
        a, b = build(name), getattr(mb.models, name)()
        q = a.q_default
        np.testing.assert_array_equal(mb.hand_c(a, q, np.zeros(a.nv))[0], mb.hand_c(b, q, np.zeros(b.nv))[0])
        assert len(a.constraints) == len(b.constraints)
    np.testing.assert_array_equal(build("a05_flyball_governor").q_default, [0.0, 0.5, 0.0, 0.0])   # the start
