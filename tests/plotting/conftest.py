"""Figure tests: Agg backend, every figure closed after each test, the shipped utility config."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="session")
def utility_config() -> dict:
    with open(ROOT / "config" / "config.yaml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)["utility"]
