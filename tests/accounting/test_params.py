"""The k-RR parameter object: every field against its definition in 50-digit arithmetic (mpmath)."""

from __future__ import annotations

import math

import mpmath
import pytest

from shuffledp.accounting.params import Direction, KrrParams


def _definitions(eps0: float, k: int) -> dict:
    mpmath.mp.dps = 50
    e = mpmath.exp(mpmath.mpf(eps0))
    den = e + k - 1
    q, p = 1 / den, e / den
    values = {
        "log_den": den,
        "log_beta": e - 1,
        "log_p": p,
        "log_q": q,
        "log_1mp": (k - 1) * q,
        "log_1mq": (e + k - 2) * q,
        "log_gamma": k * q,
        "log_1mgamma": (e - 1) * q,
        "log_2q": 2 * q,
        "log_1m2q": (e + k - 3) * q,
        "log_alpha": e / (e + 1),
        "log_1malpha": 1 / (e + 1),
    }  # complements written out: 1 - x loses digits
    if k > 2:
        values.update(
            log_rest=(k - 2) * q, log_rho=mpmath.mpf(k - 2) / (e + k - 3), log_1mrho=(e - 1) / (e + k - 3)
        )
    return {name: float(mpmath.log(value)) for name, value in values.items()}


@pytest.mark.parametrize(
    "eps0,k",
    [(1e-8, 2), (0.01, 2), (0.49, 408), (1.0, 3), (2.0, 10), (4.0, 4), (30.0, 5), (300.0, 2), (800.0, 10**9)],
)
def test_fields_match_their_definitions(eps0, k):
    params = KrrParams.of(eps0, k)
    for name, expected in _definitions(eps0, k).items():
        assert math.isclose(getattr(params, name), expected, rel_tol=1e-14, abs_tol=1e-14), name
    if k == 2:  # no third value: rho = 0 (log -inf), 1 - p - q = 0
        assert params.log_rho == -math.inf and params.log_1mrho == 0.0 and params.log_rest == -math.inf


def test_one_object_per_setting():
    assert KrrParams.of(1.5, 7) is KrrParams.of(1.5, 7)
    with pytest.raises(AttributeError):
        KrrParams.of(1.5, 7).log_q = 0.0  # frozen


@pytest.mark.parametrize(
    "eps0,k",
    [(1e-8, 2), (0.01, 2), (0.49, 408), (1.0, 3), (2.0, 10), (4.0, 4), (30.0, 5), (300.0, 2), (800.0, 10**9)],
)
def test_derived_quantities_match_their_definitions(eps0, k):
    """The quantities views read in a floating-point form of their own (derived in KrrParams only)."""
    params = KrrParams.of(eps0, k)
    mpmath.mp.dps = 50
    e = mpmath.exp(mpmath.mpf(eps0))
    expected = {
        "log_den2": e + k - 2,
        "log_kappa2": (k - 1) / (e + k - 2),
        "log_inverse_kappa2": (e + k - 2) / (k - 1),
        "log_gamma_e0": k * e / (e + k - 1),
        "log_ppq": (e + 1) / (e + k - 1),
        "log_p_minus_q": (e - 1) / (e + k - 1),
    }
    for name, value in expected.items():
        assert math.isclose(getattr(params, name), float(mpmath.log(value)), rel_tol=1e-14, abs_tol=1e-14), (
            name
        )
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    forms = [params.probabilities] + ([params.quotient_probabilities] if eps0 < 709 else [])
    for got_p, got_q in forms:
        assert math.isclose(got_p, float(p), rel_tol=1e-14) and math.isclose(got_q, float(q), rel_tol=1e-14)
    if k >= 3:
        log_pi2, log_1mpi2 = params.third_value_logs
        assert math.isclose(log_pi2, float(mpmath.log(e / (e + k - 3))), rel_tol=1e-14, abs_tol=1e-14)
        if k > 3:
            assert math.isclose(
                log_1mpi2, float(mpmath.log((k - 3) / (e + k - 3))), rel_tol=1e-14, abs_tol=1e-14
            )
        else:
            assert log_1mpi2 == -math.inf
    else:
        with pytest.raises(ValueError, match="`k` must be >= 3"):
            _ = params.third_value_logs


@pytest.mark.parametrize("eps0", [1e-12, 0.01, 0.5, 1.0, 4.0, 11.0, 20.0, 32.0, 50.0, 300.0])
@pytest.mark.parametrize("k", [2, 3, 10, 1000, 10**6])
def test_every_probability_and_complement_keeps_its_digits(eps0, k):
    """Relative accuracy of each log (not absolute: a log near 0 with an absolute error of 1e-16 eps0 is multiplied
    by the n - 1 users). Complements formed as differences of logs of size eps0 would lose them: log(1 - 2q),
    log(1 - q), log(1 - gamma), log(1 - rho), log p at large eps0 up to 100 % off (eps0 = 32), log gamma 1e-8 off at
    small eps0; 400-digit reference values (a log of 1 - e^-300 needs them)."""
    params = KrrParams.of(eps0, k)
    mpmath.mp.dps = 400
    e = mpmath.exp(mpmath.mpf(eps0))
    den = e + k - 1
    expected = {
        "log_p": e / den,
        "log_q": 1 / den,
        "log_1mp": (k - 1) / den,
        "log_1mq": (e + k - 2) / den,
        "log_gamma": k / den,
        "log_1mgamma": (e - 1) / den,
        "log_2q": 2 / den,
        "log_1m2q": (e + k - 3) / den,
        "log_ppq": (e + 1) / den,
    }
    if k > 2:
        expected.update(
            {"log_rest": (k - 2) / den, "log_rho": (k - 2) / (e + k - 3), "log_1mrho": (e - 1) / (e + k - 3)}
        )
    for name, value in expected.items():
        exact = mpmath.log(value)
        got = getattr(params, name)
        # a few ulps of the logs it is formed from (of size eps0, or ~30 for log(e^eps0 - 1) at eps0 = 1e-12)
        assert abs(mpmath.mpf(got) - exact) <= 2e-16 * (40 + eps0) * abs(exact) + 1e-300, (
            name,
            got,
            float(exact),
        )
    mpmath.mp.dps = 15


# ---------------------------------------------------------------------------------------- Direction


@pytest.mark.parametrize(
    "text, member",
    [("forward", Direction.REMOVE), ("reverse", Direction.ADD), ("both", Direction.BOTH)],
)
def test_direction_parses_the_command_line_strings(text, member):
    assert Direction.parse(text) is member
    assert Direction.parse(member) is member
    assert member == text and str(member) == text  # code still holding the strings reads the same


@pytest.mark.parametrize("bad", ["up", "REMOVE", "x0|x1", None, 1])
def test_direction_refuses_other_values_in_one_line(bad):
    with pytest.raises(ValueError, match=r"^`direction` must be one of 'forward', 'reverse', 'both'; got "):
        Direction.parse(bad)
