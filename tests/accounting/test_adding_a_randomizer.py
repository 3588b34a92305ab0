"""docs/adding-an-accountant.md ("Adding a randomizer") stays true: a randomizer is one module. A toy
eps0-LDP randomizer defined in a temporary module (no file of the repository is edited) goes into a
setting, gets a delta from the accountants that accept every eps0-LDP randomizer, and is refused by one
that accepts only k-RR.

The accepting accountants' values are checked against an independent fact: the generic clones pair
(feldman-numerical) and Balle et al.'s generic Hoeffding bound depend only on (eps0, n), so the toy
randomizer must get exactly the value they give k-RR at the same eps0.
"""

from __future__ import annotations

import importlib
import sys
import textwrap

import numpy as np
import pytest

from shuffledp.accounting import get_accountant
from shuffledp.accounting.params import ShuffleSetting

TOY = textwrap.dedent('''
    import math
    from dataclasses import dataclass
    from typing import ClassVar

    from shuffledp.accounting.randomizers import GenericBlanket, Randomizer


    @dataclass(frozen=True)
    class ToySubsetRR(Randomizer):
        """Toy: report the input bit with probability e^eps0 / (e^eps0 + 1), else its complement."""

        name: ClassVar[str] = "toy subset RR"
        epsilon_local: float

        @property
        def blanket(self):
            return GenericBlanket(self.epsilon_local)

        @property
        def probabilities(self):
            return 1.0 / (1.0 + math.exp(-self.epsilon_local)), 1.0 / (1.0 + math.exp(self.epsilon_local))
''')

EPSILONS = np.array([0.0, 0.1, 0.5, 0.9, 1.5])


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    (tmp_path / "toy_randomizer_module.py").write_text(TOY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("toy_randomizer_module")
    yield module.ToySubsetRR(epsilon_local=1.0)
    sys.modules.pop("toy_randomizer_module", None)


def test_a_toy_randomizer_is_a_setting(toy):
    setting = ShuffleSetting.of(toy, n_users=500, n_x0=3)
    assert (setting.epsilon_local, setting.k, setting.n_users, setting.n_x0) == (1.0, None, 500, 3)
    assert setting.randomizer is toy
    with pytest.raises(
        ValueError, match=r"^`randomizer` must be k-RR .*got ToySubsetRR\(epsilon_local=1.0\)\.$"
    ):
        _ = setting.krr


@pytest.mark.parametrize("name", ["feldman-numerical", "balle-hoeffding-generic", "balle-bennett-generic"])
def test_generic_accountants_give_the_toy_randomizer_its_delta(toy, name):
    got = get_accountant(name, randomizer=toy, n_users=500).log_delta_for_epsilon(EPSILONS)
    same_eps0 = get_accountant(name, epsilon_local=1.0, n_users=500, k=7).log_delta_for_epsilon(EPSILONS)
    np.testing.assert_array_equal(got, same_eps0)  # these bounds depend on (eps0, n) only
    assert np.all(got <= 0.0) and np.any((got < 0.0) & np.isfinite(got))  # a delta in (0, 1) somewhere


@pytest.mark.parametrize(
    "name,accepted",
    [
        ("clones-krr", "k-RR"),
        ("strong-adversary", "k-RR"),
        ("balle-hoeffding-laplace", "Laplace on \\[0, 1\\]"),
    ],
)
def test_accountants_that_do_not_accept_it_refuse_in_one_line(toy, name, accepted):
    with pytest.raises(ValueError) as caught:
        get_accountant(name, randomizer=toy, n_users=500)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(
        f"`randomizer` must be {accepted.replace(chr(92), '')} for accountant {name!r}; got "
    )
    assert message.endswith("ToySubsetRR(epsilon_local=1.0).")
