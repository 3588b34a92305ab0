"""Epsilon at a fixed delta across accountants and the worst-case bracket table
(shuffledp.experiments.guarantees): every point kept with an honest status, values equal to the
accountants called directly, and the statuses consistent with independent evaluations of delta."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from shuffledp.accounting import get_accountant
from shuffledp.accounting.bracket import bracket
from shuffledp.accounting.worst_case.k4.own_hits import MAX_USERS_OWN_HITS
from shuffledp.config import ConfigError
from shuffledp.experiments.accounting import n_x0_from_rule
from shuffledp.experiments.guarantees import (
    BRACKET_COLUMNS,
    COMPARISON_COLUMNS,
    ERROR,
    GUARANTEE,
    LOWER_BOUND,
    NO_AMPLIFICATION,
    OK,
    ONE_DATASET,
    UNREACHABLE,
    ZERO,
    bracket_combine,
    bracket_frame,
    bracket_markdown,
    bracket_points,
    check_worst_case_config,
    epsilon_at_delta,
    epsilon_comparison_frame,
    role_of,
)

#: tiny n, so that strong-adversary and balle-blanket cannot reach delta and biswas-printed meets it at eps 0
SECTION = {
    "delta": 1e-3,
    "k": 5,
    "against_n": {"epsilon_local": 1.0, "n_users": [20, 60]},
    "against_epsilon_local": {"n_users": 40, "epsilon_local": [0.5, 2.0]},
    "n_x0": {"rule": "fraction", "value": 0.8},
    "accountants": [
        "strong-adversary",
        "weak-adversary",
        "worst-case-lower",
        "balle-blanket",
        "balle-bennett-krr",
        "biswas-printed",
        "biswas-exact",
    ],
}
POINTS = [(20, 1.0), (60, 1.0), (40, 0.5), (40, 2.0)]


@pytest.fixture(scope="module")
def comparison():
    return epsilon_comparison_frame(SECTION)


# ---------------------------------------------------------------- epsilon_at_delta on stand-in accountants
class _Stub:
    """An accountant whose epsilon_for_delta and delta at large epsilon are given."""

    def __init__(self, epsilon=None, error=None, log_delta_large=-np.inf, error_large=None):
        self.epsilon, self.error, self.log_delta_large, self.error_large = (
            epsilon,
            error,
            log_delta_large,
            error_large,
        )

    def epsilon_for_delta(self, delta):
        if self.error is not None:
            raise ValueError(self.error)
        return self.epsilon

    def log_delta_for_epsilon(self, epsilons):
        if self.error_large is not None:
            raise ValueError(self.error_large)
        return np.full(np.shape(epsilons), self.log_delta_large)


@pytest.mark.parametrize(
    "stub, epsilon_local, status, epsilon, note",
    [
        (_Stub(epsilon=0.3), 1.0, OK, 0.3, r"^$"),
        (_Stub(epsilon=0.0), 1.0, ZERO, 0.0, r"delta\(0\) <= 0\.001: epsilon = 0 already meets the target"),
        (
            _Stub(epsilon=1.0 - 1e-9),
            1.0,
            NO_AMPLIFICATION,
            1.0 - 1e-9,
            r"only at epsilon >= eps0 = 1: no better",
        ),
        (_Stub(epsilon=1.7), 1.0, NO_AMPLIFICATION, 1.7, r"only at epsilon >= eps0 = 1"),
        (
            _Stub(error="no epsilon <= 1e6 reaches it", log_delta_large=math.log(0.5)),
            1.0,
            UNREACHABLE,
            math.inf,
            r"no epsilon reaches delta = 0\.001: delta\(eps = 1000\) = 0\.5 still exceeds it \(no epsilon <= 1e6",
        ),
        # the search failed but delta is below the target at large epsilon: not "unreachable", an error
        (
            _Stub(error="`n_users` too large", log_delta_large=-np.inf),
            1.0,
            ERROR,
            math.nan,
            r"^`n_users` too large$",
        ),
        (
            _Stub(error="first", error_large="second"),
            1.0,
            ERROR,
            math.nan,
            r"first \(delta at eps = 1000 not computable either: second\)",
        ),
    ],
)
def test_epsilon_at_delta_statuses(stub, epsilon_local, status, epsilon, note):
    value, got_status, got_note = epsilon_at_delta(stub, delta=1e-3, epsilon_local=epsilon_local)
    assert got_status == status
    assert value == epsilon or (math.isnan(value) and math.isnan(epsilon))
    assert re.search(note, got_note), got_note


def test_roles():
    assert role_of("upper bound", False) == GUARANTEE
    assert role_of("lower bound", False) == LOWER_BOUND
    assert role_of("exact", True) == role_of("as printed", True) == ONE_DATASET
    assert role_of("asymptotic rate", False) == "not a bound"


# ---------------------------------------------------------------- the comparison frame on real accountants
def test_every_accountant_and_point_has_one_row(comparison):
    assert list(comparison.columns) == COMPARISON_COLUMNS
    assert len(comparison) == len(SECTION["accountants"]) * len(POINTS)  # nothing dropped
    keys = comparison[["accountant", "n_users", "epsilon_local"]].apply(tuple, axis=1)
    assert keys.is_unique
    assert set(comparison["panel"]) == {"against n", "against eps0"}
    assert (comparison.loc[comparison["panel"] == "against eps0", "n_users"] == 40).all()


def test_values_equal_the_accountants_called_directly(comparison):
    for row in comparison[comparison["status"].isin([OK, NO_AMPLIFICATION, ZERO])].itertuples():
        options = {"n_x0": int(row.n_x0)} if not pd.isna(row.n_x0) else {}
        direct = get_accountant(
            row.accountant, epsilon_local=row.epsilon_local, n_users=row.n_users, k=row.k, **options
        ).epsilon_for_delta(row.delta)
        assert row.epsilon == direct, row


def test_n_x0_only_for_the_per_dataset_accountants(comparison):
    per_dataset = comparison["role"] == ONE_DATASET
    assert set(comparison.loc[per_dataset, "accountant"]) == {"biswas-printed", "biswas-exact"}
    assert comparison.loc[~per_dataset, "n_x0"].isna().all()
    for row in comparison[per_dataset].itertuples():
        assert row.n_x0 == n_x0_from_rule(SECTION["n_x0"], row.n_users)
        assert row.n_x0_rule == "n_x0 = round(0.8 n), at most n - 1"


def test_statuses_agree_with_delta_evaluated_independently(comparison):
    """Each status is checked against the accountant's delta at the reported epsilon (or at 1000):
    an epsilon meets the target; "unreachable" has delta above it even at epsilon = 1000."""
    for row in comparison.itertuples():
        options = {"n_x0": int(row.n_x0)} if not pd.isna(row.n_x0) else {}
        accountant = get_accountant(
            row.accountant, epsilon_local=row.epsilon_local, n_users=row.n_users, k=row.k, **options
        )
        if row.status == UNREACHABLE:
            assert math.isinf(row.epsilon)
            assert accountant.delta_for_epsilon([1000.0])[0] > row.delta, row
        elif row.status in (OK, NO_AMPLIFICATION, ZERO):
            assert accountant.delta_for_epsilon([row.epsilon])[0] <= row.delta * (1 + 1e-9), row
            assert (row.status == ZERO) == (row.epsilon == 0.0)
            assert (row.status == NO_AMPLIFICATION) == (row.epsilon >= row.epsilon_local * (1 - 1e-6))
        else:
            pytest.fail(f"unexpected status {row.status!r}: {row.note}")
    # the tiny setting does contain points that cannot reach delta (the reason it was chosen)
    assert (comparison["status"] == UNREACHABLE).any()


def test_guarantees_are_never_below_the_lower_bound(comparison):
    drawn = comparison[comparison["status"].isin([OK, NO_AMPLIFICATION])]
    lower = drawn[drawn["role"] == LOWER_BOUND].set_index(["n_users", "epsilon_local"])["epsilon"]
    guarantees = drawn[drawn["role"] == GUARANTEE]
    assert len(lower) == len(POINTS)
    for row in guarantees.itertuples():
        assert row.epsilon >= lower[(row.n_users, row.epsilon_local)] * (1 - 1e-9), row


def test_a_refused_setting_is_a_row_with_the_message():
    section = dict(
        SECTION,
        accountants=["erlingsson", "weak-adversary"],
        against_n={"epsilon_local": 1.0, "n_users": [20]},
        against_epsilon_local={"n_users": 20, "epsilon_local": [1.0]},
    )

    def factory(name, **options):
        if name == "erlingsson":
            raise ValueError("`n_users` must be >= 1000 for this stand-in; got 20.")
        return get_accountant(name, **options)

    frame = epsilon_comparison_frame(section, factory=factory)
    refused = frame[frame["accountant"] == "erlingsson"]
    assert len(refused) == 2 and (refused["status"] == ERROR).all() and refused["epsilon"].isna().all()
    assert refused["note"].str.contains("must be >= 1000").all()


# ---------------------------------------------------------------- config checks
def test_check_worst_case_config_messages():
    accounting = {"epsilon_comparison": dict(SECTION), "bracket": {}}
    check_worst_case_config(accounting)
    bad = {"epsilon_comparison": dict(SECTION, accountants=["weak-adversary", "nope"])}
    with pytest.raises(
        ConfigError,
        match=r"`accounting.epsilon_comparison.accountants` must name registered accountants \(.*\); got 'nope'\.",
    ):
        check_worst_case_config(bad)
    bad = {"epsilon_comparison": dict(SECTION, n_x0={"rule": "fixed", "value": 20})}
    with pytest.raises(
        ConfigError,
        match=r"`accounting.epsilon_comparison.n_x0.value` must be an integer in \[0, 19\] "
        r"\(n - 1 for the smallest n = 20\); got 20\. Use rule 'fraction'",
    ):
        check_worst_case_config(bad)
    bad = {"epsilon_comparison": dict(SECTION, n_x0={"rule": "fraction", "value": 1.5})}
    with pytest.raises(
        ConfigError,
        match=r"`accounting.epsilon_comparison.n_x0.value` must be in \[0, 1\] for rule 'fraction'; got 1\.5\.",
    ):
        check_worst_case_config(bad)


# ---------------------------------------------------------------- bracket
BRACKET = {"n_users": [30, 80], "k": [2, 4], "epsilon_local": [1.0], "delta": [1e-3, 1e-5]}


@pytest.fixture(scope="module")
def bracket_in_one_job():
    """``bracket_frame(BRACKET)``, computed once for the tests that compare other paths with it (read only)."""
    return bracket_frame(BRACKET)


def test_bracket_frame_equals_bracket_called_directly(bracket_in_one_job):
    frame = bracket_in_one_job
    assert list(frame.columns) == BRACKET_COLUMNS
    assert len(frame) == 2 * 2 * 1 * 2
    for (n, k, eps0), group in frame.groupby(["n_users", "k", "epsilon_local"]):
        direct = bracket(epsilon_local=eps0, n_users=n, k=k, deltas=BRACKET["delta"])
        assert group["eps_lower"].tolist() == [r["eps_lower"] for r in direct]
        assert group["eps_upper"].tolist() == [r["eps_upper"] for r in direct]
    assert (frame["eps_lower"] <= frame["eps_upper"]).all()  # the lower bound never exceeds the guarantee
    np.testing.assert_allclose(frame["ratio"], frame["eps_upper"] / frame["eps_lower"], rtol=1e-15)
    assert (frame["upper"] == "worst-case-upper").all() and (frame["lower"] == "worst-case-lower").all()


@pytest.mark.parametrize(
    "lower, upper, status",
    [
        (0.4, 0.41, "ok"),
        (2.0, 2.0, "both at eps0: no amplification at this delta, the ratio 1 says nothing about tightness"),
        (
            1.99,
            1.995,
            "both within 1% of eps0: almost no amplification, a ratio near 1 says little about tightness",
        ),
        (1.97, 1.995, "ok"),
        (1.5, 2.0, "upper at eps0: the guarantee gives no amplification at this delta"),
        (0.0, 0.1, "lower bound is 0"),
    ],
)
def test_bracket_status_flags_trivial_and_undefined_ratios(lower, upper, status):
    def stub(*, epsilon_local, n_users, k, deltas):
        ratio = upper / lower if lower > 0 else math.inf
        return [
            {"delta": d, "eps_lower": lower, "eps_upper": upper, "ratio": ratio, "lower": "lo", "upper": "hi"}
            for d in deltas
        ]

    frame = bracket_frame(
        {"n_users": [10], "k": [3], "epsilon_local": [2.0], "delta": [1e-6]}, bracket_function=stub
    )
    assert frame["status"].tolist() == [status]
    text = bracket_markdown(frame)
    assert text.count("\n| ") == 2  # header and one row
    assert ("| inf |" in text) == (lower == 0.0)


def test_bracket_markdown_shows_small_widths():
    frame = pd.DataFrame(
        [
            {
                "n_users": 1000,
                "k": 10,
                "epsilon_local": 1.0,
                "delta": 1e-6,
                "eps_lower": 0.0800946,
                "eps_upper": 0.080161,
                "ratio": 0.080161 / 0.0800946,
                "status": "ok",
                "lower": "lo",
                "upper": "hi",
            }
        ]
    )
    line = bracket_markdown(frame).splitlines()[-1]
    assert line == f"| 1,000 | 10 | 1 | 1e-06 | 0.080095 | 0.080161 | {0.080161 / 0.0800946:.5f} | ok |"


def test_bracket_frame_uses_the_configured_upper_end(bracket_in_one_job):
    # worst-case-upper: the certified max over every dataset for k = 2, the own-value-hit maximum for k >= 4 at
    # n <= MAX_USERS_OWN_HITS (never above the weak adversary), weak-adversary's value for k >= 4 above it.
    # worst-case-upper is the default upper end, so configuring it is the module's frame (the same call of
    # ``bracket``); weak-adversary configured is what shows the configuration is read
    frame = bracket_in_one_job
    weak = bracket_frame({**BRACKET, "upper": "weak-adversary"})
    assert (frame["upper"] == "worst-case-upper").all() and (weak["upper"] == "weak-adversary").all()
    two, four = frame["k"] == 2, frame["k"] == 4
    small = four & (frame["n_users"] <= MAX_USERS_OWN_HITS)
    for rows in (two, small):
        assert (frame.loc[rows, "eps_upper"] <= weak.loc[rows, "eps_upper"] * (1 + 1e-9)).all()
        assert (frame.loc[rows, "eps_upper"] < weak.loc[rows, "eps_upper"]).any()  # tighter
    # above it the same curve as weak-adversary's (to the bit); the epsilons agree within the searches'
    # tolerance (1e-9), worst-case-upper's search starting from the lower end (accounting.bracket)
    above = four & ~small
    np.testing.assert_allclose(frame.loc[above, "eps_upper"], weak.loc[above, "eps_upper"], rtol=1e-9)
    for n_users, eps in zip(frame.loc[above, "n_users"], frame.loc[above, "eps_upper"]):
        curves = [
            get_accountant(name, epsilon_local=1.0, n_users=int(n_users), k=4).log_delta_for_epsilon([eps])[0]
            for name in ("worst-case-upper", "weak-adversary")
        ]
        assert curves[0] == curves[1]
    assert (frame["eps_lower"] <= frame["eps_upper"]).all()
    assert "valid upper bound (`worst-case-upper`" in bracket_markdown(frame)


def test_bracket_frame_adds_the_extra_settings_after_the_product():
    """Single settings (the large-eps0 ends, n up to 1e14) follow the product, once each."""
    calls = []

    def stub(*, epsilon_local, n_users, k, deltas):
        calls.append((n_users, k, epsilon_local))
        return [
            {"delta": d, "eps_lower": 0.5, "eps_upper": 0.5, "ratio": 1.0, "lower": "lo", "upper": "hi"}
            for d in deltas
        ]

    section = {
        "n_users": [10, 100],
        "k": [3],
        "epsilon_local": [2.0],
        "delta": [1e-6],
        "extra": [
            {"n_users": 10**14, "k": 10, "epsilon_local": 25.0},
            {"n_users": 10, "k": 3, "epsilon_local": 2.0},
        ],
    }
    frame = bracket_frame(section, bracket_function=stub)
    assert calls == [(10, 3, 2.0), (100, 3, 2.0), (10**14, 10, 25.0)]
    assert frame["n_users"].tolist() == [10, 100, 10**14]


def _stub_bracket(*, epsilon_local, n_users, k, deltas, **_):
    """A cheap bracket whose values name their setting (so an order mix-up shows)."""
    return [
        {
            "delta": d,
            "eps_lower": epsilon_local / (1.0 + n_users * k * d),
            "eps_upper": epsilon_local / (1.0 + 0.5 * n_users * k * d) / 3.0,
            "ratio": 1.0 / 3.0 + n_users / 7.0,
            "lower": "worst-case-lower",
            "upper": "worst-case-upper",
        }
        for d in deltas
    ]


SHARDED = {
    "n_users": [2, 10, 1000],
    "k": [2, 3, 10],
    "epsilon_local": [1.0, 4.0],
    "delta": [1e-6, 1e-9],
    "extra": [
        {"n_users": 100000000, "k": 10, "epsilon_local": 15.0},
        {"n_users": 10, "k": 3, "epsilon_local": 1.0},
    ],
}


def _through_csv(frame):
    import io

    return pd.read_csv(io.StringIO(frame.to_csv(index=False)))


@pytest.mark.parametrize("shards", [1, 2, 4, 19])
def test_bracket_shards_combine_to_the_one_job_frame_bit_for_bit(shards):
    whole = bracket_frame(SHARDED, bracket_function=_stub_bracket)
    section = {**SHARDED, "shards": shards}
    parts = [bracket_frame(section, bracket_function=_stub_bracket, shard=s) for s in range(shards)]
    assert sum(len(part) for part in parts) == len(whole) == (3 * 3 * 2 + 1) * 2  # the duplicate extra once
    combined = bracket_combine(section, [_through_csv(part) for part in reversed(parts)])
    assert combined.to_csv(index=False) == whole.to_csv(index=False)
    assert bracket_markdown(combined) == bracket_markdown(whole)
    assert [tuple(row) for row in whole[["n_users", "k", "epsilon_local"]].drop_duplicates().to_numpy()] == (
        bracket_points(SHARDED)
    )


def test_bracket_shards_with_the_real_accountants_give_the_same_bits(bracket_in_one_job):
    section = {**BRACKET, "shards": 3}
    combined = bracket_combine(section, [_through_csv(bracket_frame(section, shard=s)) for s in range(3)])
    assert combined.to_csv(index=False) == bracket_in_one_job.to_csv(index=False)


def test_bracket_combine_refuses_a_missing_or_repeated_shard():
    section = {**SHARDED, "shards": 2}
    first = bracket_frame(section, bracket_function=_stub_bracket, shard=0)
    with pytest.raises(ValueError, match="every bracket setting once"):
        bracket_combine(section, [first])
    with pytest.raises(ValueError, match="every bracket setting once"):
        second = bracket_frame(section, bracket_function=_stub_bracket, shard=1)
        bracket_combine(section, [first, second, first])


def test_bracket_frame_refuses_a_shard_out_of_range():
    with pytest.raises(ValueError, match=r"`shard` must be in 0\.\.1"):
        bracket_frame({**SHARDED, "shards": 2}, bracket_function=_stub_bracket, shard=2)
