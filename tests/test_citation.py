"""CITATION.cff is valid YAML with the Citation File Format's required keys and current version."""

from pathlib import Path

import yaml

import shuffledp

CITATION = Path(__file__).resolve().parents[1] / "CITATION.cff"


def test_citation_has_required_keys_and_current_version():
    citation = yaml.safe_load(CITATION.read_text(encoding="utf-8"))
    # required by CFF 1.2.0: cff-version, message, title, authors
    assert citation["cff-version"] == "1.2.0"
    assert citation["message"] and citation["title"] and citation["authors"]
    assert str(citation["version"]) == shuffledp.__version__


def test_citation_references_the_paper_and_the_data():
    references = yaml.safe_load(CITATION.read_text(encoding="utf-8"))["references"]
    assert any(r.get("doi") == "10.1007/978-3-031-57537-2_27" for r in references)  # FPS 2023 (paper 002)
    assert any("2205.08858" in str(r.get("url", "")) for r in references)  # arXiv version (paper 004)
    assert any(r.get("url") == "https://snap.stanford.edu/data/loc-gowalla.html" for r in references)
    for reference in references:
        assert reference["type"] and reference["title"] and reference["authors"]
