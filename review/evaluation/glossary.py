"""Every evaluation metric in plain words: the names the pages show and what each measures.

The evaluation pages' tooltips, the glossary page and docs/benchmarks.md's glossary read these
entries, so a metric is named and defined once. Pure data: no Django.
"""

from __future__ import annotations

from dataclasses import dataclass

from review.evaluation import ranking

# Where the report's numbers come from: the runs' "Report" column and the reproduced presets.
REPORT_TITLE = "A Grounded Q&A Assistant for Intelligence Analysts"
REPORT_CITATION = f"Lin, Kumar, Tsai and Ellis, “{REPORT_TITLE}” (December 2025)"


@dataclass(frozen=True)
class MetricTerm:
    key: str  # the run's metric key (or, for a chart, the anchor it is linked by)
    name: str  # as the pages show it
    meaning: str  # what it measures, in plain words
    better: str  # "higher" or "lower"; "" for a chart


@dataclass(frozen=True)
class MetricSection:
    title: str
    terms: tuple[MetricTerm, ...]


# The metrics a run page shows first; the rest are folded below them.
HEADLINE_KEYS: tuple[str, ...] = (
    "recall_at_1",
    "recall_at_5",
    "mrr",
    "citation_f1",
    "refusal_f1",
    "confidence_ece",
)

_HIGHER, _LOWER = "higher", "lower"


def _first(k: int) -> str:
    return "the first document" if k == 1 else f"the first {k} documents"


SECTIONS: tuple[MetricSection, ...] = (
    MetricSection(
        "Finding the right document",
        (
            MetricTerm(
                "recall_at_1",
                "Recall@1",
                "Share of questions whose gold document is the first document retrieved.",
                _HIGHER,
            ),
            MetricTerm(
                "recall_at_5",
                "Recall@5",
                "Share of questions whose gold document is among the first 5 documents retrieved.",
                _HIGHER,
            ),
            MetricTerm(
                "mrr",
                "MRR",
                "Mean reciprocal rank: 1 when the gold document comes first, 1/2 when second, 1/3 when third "
                "… 0 when it is not retrieved, averaged over the questions.",
                _HIGHER,
            ),
            *(
                MetricTerm(
                    f"precision_at_{k}",
                    f"P@{k}",
                    f"Of {_first(k)} retrieved, the share that are gold documents.",
                    _HIGHER,
                )
                for k in ranking.RANK_CUTOFFS
            ),
            *(
                MetricTerm(
                    f"gold_recall_at_{k}",
                    f"Recall@{k} (share of gold documents)",
                    f"Of a question's gold documents (some have several), the share among {_first(k)} "
                    "retrieved.",
                    _HIGHER,
                )
                for k in ranking.RANK_CUTOFFS
            ),
            *(
                MetricTerm(
                    f"hit_at_{k}",
                    f"Hit@{k}",
                    f"Share of questions with a gold document among {_first(k)} retrieved.",
                    _HIGHER,
                )
                for k in ranking.RANK_CUTOFFS
            ),
            MetricTerm(
                "map_at_10",
                "MAP@10",
                "Mean average precision over the first 10 documents: rewards putting every gold document "
                "early, not just the first.",
                _HIGHER,
            ),
            MetricTerm(
                "ndcg_at_10",
                "nDCG@10",
                "Normalised discounted cumulative gain over the first 10 documents: 1 when the gold "
                "documents fill the top places, less the lower they sit.",
                _HIGHER,
            ),
        ),
    ),
    MetricSection(
        "Citing the right sentences",
        (
            MetricTerm(
                "citation_precision",
                "Citation precision",
                "Of the sentences an answer cites, the share that are gold evidence sentences.",
                _HIGHER,
            ),
            MetricTerm(
                "citation_recall",
                "Citation recall",
                "Of the gold evidence sentences, the share the answer cites.",
                _HIGHER,
            ),
            MetricTerm(
                "citation_f1",
                "Citation F1",
                "Citation precision and recall in one number (their harmonic mean), per question, averaged "
                "over the questions that have gold evidence; citing nothing scores 0.",
                _HIGHER,
            ),
            MetricTerm(
                "evidence_score",
                "Evidence score",
                "The report's EvidenceScore: the share of the gold evidence's words that the cited sentences "
                "contain.",
                _HIGHER,
            ),
        ),
    ),
    MetricSection(
        "The answer's words",
        (
            MetricTerm(
                "answer_token_f1",
                "Answer token F1",
                "Word overlap between the answer and the reference answer (precision and recall of words, "
                "as in SQuAD), ignoring case, punctuation and articles.",
                _HIGHER,
            ),
            MetricTerm(
                "rouge_l",
                "ROUGE-L",
                "How much of the reference answer appears in the answer in the same order (longest common "
                "subsequence of words).",
                _HIGHER,
            ),
            MetricTerm(
                "exact_match",
                "Exact match (refusal = null answer)",
                "Share of answers equal to the reference after normalising; refusing an unanswerable "
                "question counts as a match.",
                _HIGHER,
            ),
            MetricTerm(
                "answer_score",
                "Answer score (judge, 1–5)",
                "An LLM judge's grade of the answer against the question's rubric; blank when no judge ran.",
                _HIGHER,
            ),
            MetricTerm(
                "combined",
                "Combined",
                "The report's headline score: half the judge's grade (out of 5), half the evidence score; "
                "blank without a judge.",
                _HIGHER,
            ),
        ),
    ),
    MetricSection(
        "Refusing when the corpus has no answer",
        (
            MetricTerm(
                "refusal_precision",
                "Refusal precision",
                "Of the questions refused, the share that were truly unanswerable.",
                _HIGHER,
            ),
            MetricTerm(
                "refusal_recall",
                "Refusal recall",
                "Of the unanswerable questions, the share refused.",
                _HIGHER,
            ),
            MetricTerm(
                "refusal_f1",
                "Refusal F1",
                "Refusal precision and recall in one number: high only when the system refuses the "
                "unanswerable questions and answers the others.",
                _HIGHER,
            ),
            MetricTerm(
                "jafs",
                "JAFS",
                "Joint answerability-faithfulness score: 1 for refusing an unanswerable question, the "
                "answer's verified support for answering an answerable one, 0 for refusing an answerable "
                "one or answering an unanswerable one.",
                _HIGHER,
            ),
            *(
                MetricTerm(
                    f"{kind}_{measure}",
                    f"{kind.capitalize()} class {label}",
                    f"{label.capitalize() if label != 'F1' else 'F1'} of the {kind} class, treating a "
                    "refusal as predicting “unanswerable”.",
                    _HIGHER,
                )
                for kind in ("answerable", "unanswerable")
                for measure, label in (("precision", "precision"), ("recall", "recall"), ("f1", "F1"))
            ),
        ),
    ),
    MetricSection(
        "Confidence and selective answering",
        (
            MetricTerm(
                "confidence_ece",
                "Confidence ECE",
                "Expected calibration error: how far the stated confidence is from how often answers are "
                "right (0.05 means answers shown at 80% are right about 75-85% of the time). 0 is perfect.",
                _LOWER,
            ),
            MetricTerm(
                "risk_coverage",
                "Risk-coverage curve",
                "For each confidence threshold, the share of questions shown as answers (coverage) and the "
                "share of those that are right: raising the threshold shows fewer answers, and usually more "
                "of them are right.",
                "",
            ),
        ),
    ),
    MetricSection(
        "Speed",
        (
            MetricTerm(
                "latency",
                "Stage latency",
                "Seconds a stage of the pipeline (retrieval, reranking, answering, citations, "
                "verification …) took for one question; the run shows each stage's median and its spread.",
                _LOWER,
            ),
        ),
    ),
)

TERMS: dict[str, MetricTerm] = {term.key: term for section in SECTIONS for term in section.terms}


def name_of(key: str) -> str:
    """The name the pages show for a metric key (the key itself for one not defined here)."""
    term = TERMS.get(key)
    return term.name if term else key


def meaning_of(key: str) -> str:
    term = TERMS.get(key)
    return term.meaning if term else ""
