"""What the paper claims, item by item: its tables, its figures (with the sentence each figure is
cited for) and the map from the FPS 2023 numbering to the arXiv 2022 numbering.

Room: constants only (no reading, no judging). Every quotation is the paper's own words; the report
cites them beside our measured readings.
"""

from __future__ import annotations

from dataclasses import dataclass

PAPER_TABLES = {
    "II": "Table II: δ of prior bounds and of eq. (6), n = 100 and n = 1,000, ε0 = 0.49",
    "IV": "Table IV: tight δ for various ε (varying ε0, n, k)",
    "V": "Table V: individual-specific utility W̄, synthetic data, ε = ε0 = 4, k = 15",
    "VI": "Table VI: individual-specific utility W̄, Gowalla San Francisco and Paris, ε = ε0 = 4",
}


@dataclass(frozen=True)
class FigureSpec:
    number: int
    stage: str
    title: str
    claim: str  # the paper's words (arXiv version), quoted


FIGURES = {
    1: FigureSpec(
        1,
        "accounting",
        "δ over (ε, ε0)",
        "Fig. 1 caption: \u201cThe figure shows the trend that we would expect: δ increases as ε0 increases "
        "and decreases as ε increases.\u201d",
    ),
    2: FigureSpec(
        2,
        "utility",
        "TV distance vs n, synthetic data (k = 15, ε = 4)",
        "\u201cWe observe that the utility for shuffle+INV shows better utility than shuffle model with k-RR, "
        "and the utility for the shuffle+INV is slightly worse than the central model\u201d (Sec. V-C).",
    ),
    3: FigureSpec(
        3,
        "data",
        "Gowalla check-ins and cell counts, San Francisco and Paris",
        "\u201cWe use 123,108 check-in locations from Gowalla dataset in San Francisco and 10,260 check-ins "
        "in Paris.\u201d (Sec. V-D)",
    ),
    4: FigureSpec(
        4,
        "utility",
        "Heat maps: original, Gaussian and shuffle+INV estimates, San Francisco",
        "\u201cAs we see from the heatmaps in Figure 4 and Figure 5, when the value of ε is 4, both Gaussian "
        "mechanism and shuffle+INV generate results very close to the original distribution.\u201d",
    ),
    5: FigureSpec(
        5,
        "utility",
        "Heat maps: original, Gaussian and shuffle+INV estimates, Paris",
        "Same sentence as Figure 4 (\u201cboth Gaussian mechanism and shuffle+INV generate results very close "
        "to the original distribution\u201d).",
    ),
    6: FigureSpec(
        6,
        "utility",
        "TV distance vs n over 10 runs, San Francisco (n = 10,000 ... 100,000)",
        "\u201cThe results exhibit that shuffle model, M, gives worse utility than the central model N, and "
        "shuffle+INV shows better utility than shuffle. [...] shuffle+INV is slightly closer or comparable "
        "with the Gaussian mechanism especially when the value of n is small (n = 10,000) and privacy level "
        "is low (ε = 6).\u201d",
    ),
    7: FigureSpec(
        7,
        "utility",
        "TV distance vs n over 10 runs, Paris (n = 1,000 ... 10,000)",
        "\u201cwe observe a consistency with the existing work in the trend of the Gaussian mechanism having a "
        "better utility than the shuffle model across all settings. However, when the number of samples is "
        "small and the privacy level is low, the utilities of the shuffle model and the central model are "
        "comparable.\u201d",
    ),
}


#: FPS 2023 numbering -> arXiv 2022 numbering, as far as the FPS preview text (appendices, footnotes,
#: references) shows. Columns: FPS item, arXiv item, what in the FPS text establishes the match.
FPS_TO_ARXIV = [
    (
        "Theorem 1",
        "Theorem IV.1",
        "FPS Appendix A is titled \u201cProof of Theorem 1\u201d and carries the arXiv appendix's proof of Theorem IV.1",
    ),
    (
        "Definition 11 (μ, τ)",
        "Definition IV.2",
        "FPS eq. (8) ends \u201c[μ and τ are as in Definition 11]\u201d where arXiv eq. (12) cites Definition IV.2",
    ),
    (
        "Result 1",
        "Result 1 (Lemma 5 of Sommer et al.)",
        "both versions apply \u201cResult 1\u201d to obtain δ(ε)",
    ),
    ("Remark 1", "Remark 1", "FPS Appendix B: \u201cby Remark 1\u201d, same sentence as arXiv Sec. V-A"),
    (
        "eq. (8): P[M_x0(x0) = s]",
        "eqs. (11)-(12)",
        "FPS shows the derivation as one display ending in κ3/(n−n_x0) Σ μ(s,r) τ_r",
    ),
    ("eq. (9): P[M_x0(x1) = s]", "eq. (13)", "same derivation"),
    ("eq. (10): δ(ε) from Result 1", "eq. (14)", "same statement"),
    (
        "eq. (11): v_s",
        "eq. (15)",
        "same expression, including the (s−r)·C(n−1−n_x0, s−1−r) term of the printed v_s",
    ),
    ("eq. (12): E(π̂) = π", "eq. (7)", "FPS Appendix B \u201cTheoretical outline\u201d"),
    ("eq. (13): W(M) = d(nπ̂, nπ)", "eq. (8)", "FPS Appendix B"),
    ("eq. (14): W(N) = d(H_N, nπ)", "eq. (9)", "FPS Appendix B"),
    ("eq. (15): δ̂ = max over x", "eq. (10)", "FPS Appendix B"),
    ("Appendix A", "Appendix (proof of Theorem IV.1)", "same proof"),
    (
        "Appendix B \u201cTheoretical outline\u201d",
        "Sec. V-A \u201cTheoretical outline\u201d (second half)",
        "same text from \u201cIn M, we extend the idea of ADP\u201d to eq. (10)",
    ),
    (
        "Fig. 3 (San Francisco and Paris, community level)",
        "Figures 6 and 7",
        "FPS: \u201cas seen in the experimental results with location data from San Francisco and Paris in Fig. 3\u201d; arXiv: \u201c... in Figures 6 and 7\u201d",
    ),
    (
        "footnotes 1, 2, 3",
        "footnotes 5, 6, 7",
        "identical footnote texts (inverse of k-RR; δ from Result 1; TV distance)",
    ),
    (
        "references [1]-[15]",
        "[27], [20], [10], [7], [5], [9], [16], [4], [3], [11], [12], [32], [8], [24], [6]",
        "matched by author and title; the FPS list has no counterpart of arXiv [29] (simplex projection), [30] (diffprivlib) or [31] (Cho et al.)",
    ),
]


#: what the FPS preview does not show (stated in the report, not guessed)
FPS_NOT_VISIBLE = (
    "The FPS preview contains only the abstract, footnotes, references and appendices A-B. The numbering "
    "of its Tables (the arXiv Tables II, IV, V, VI), of Figures 1-2 and 4-5 (arXiv numbering), of its "
    "section headings and of Definitions other than Definition 11 cannot be read from it, and the FPS "
    "statement of Theorem 1 itself is not shown (only its proof)."
)
