"""What each built-in preset is for and what it costs, grouped the way a user chooses one.

The ask form's preset menu, the presets page and the `presets` command show these lines; the
full configuration stays in qa.pipeline.config.presets. Speeds are the ones measured on a 2-core CPU
machine (docs/benchmarks.md): extractive answering takes about 0.2 s a question; a local 1.5B
LLM needs ~15 s for a 1,200-token prompt, a hosted one a few seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

from qa.pipeline.config.presets import PRESET_NAMES, PRESETS


@dataclass(frozen=True)
class PresetSummary:
    name: str
    use: str  # what it is for, in one line
    cost: str  # what it needs and how fast it is, in a few words
    needs_llm: bool


@dataclass(frozen=True)
class PresetGroup:
    title: str
    blurb: str
    presets: tuple[PresetSummary, ...]


_NO_LLM_FAST = "no LLM · fast (~0.2 s answering)"
# Without QA_LLM_PROVIDER these run the extractive answer and embedding citations instead, and the
# trace lists each substitute: a user comparing them should know the numbers are not the report's.
_LLM = "needs an LLM (else substitutes, listed in the trace) · the LLM's speed"
_LLM_RERANK = "needs an LLM and a cross-encoder (else substitutes) · the LLM's speed"

PRESET_GROUPS: tuple[PresetGroup, ...] = (
    PresetGroup(
        title="Recommended · no LLM needed",
        blurb="Answers built from the source sentences themselves, each cited; refuses when the corpus "
        "does not support an answer.",
        presets=(
            PresetSummary(
                "default",
                "Best measured retrieval and citations: use it unless a row below fits.",
                _NO_LLM_FAST,
                False,
            ),
            PresetSummary(
                "agentic",
                "Questions that ask several things at once: each part answered and cited.",
                "no LLM · slower (one run per part)",
                False,
            ),
        ),
    ),
    PresetGroup(
        title="Needs an LLM key",
        blurb="Set QA_LLM_PROVIDER (docs/configuration.md); without it they fall back to default's parts.",
        presets=(
            PresetSummary(
                "pairwise",
                "default with the LLM re-ordering the top 5 passages pair by pair.",
                "needs an LLM · slowest (10 LLM calls a question)",
                True,
            ),
            PresetSummary(
                "careful",
                "default, refusing more surely: the LLM judges whether the top passages answer.",
                "needs an LLM (else default's signals) · 2 short LLM calls a question",
                True,
            ),
        ),
    ),
    PresetGroup(
        title="For experiments: the published report's configurations",
        blurb="Reproduce the report's baseline and extensions 1-6 (docs/benchmarks.md).",
        presets=(
            PresetSummary(
                "bm25",
                "The report's baseline: BM25 documents, overlapping sentences quoted.",
                "no LLM · fast",
                False,
            ),
            PresetSummary(
                "llm-only", "The LLM answers from its own knowledge: nothing retrieved or cited.", _LLM, True
            ),
            PresetSummary("rag", "Extension 1: the top BM25 document as the LLM's context.", _LLM, True),
            PresetSummary(
                "rerank", "Extension 2: BM25 documents reranked by a cross-encoder.", _LLM_RERANK, True
            ),
            PresetSummary(
                "llm-cite", "Extension 3: as rerank, the LLM picks the citations.", _LLM_RERANK, True
            ),
            PresetSummary(
                "hybrid", "Extension 4: BM25 and dense documents fused, then reranked.", _LLM_RERANK, True
            ),
            PresetSummary("chunk", "Extension 5: hybrid search over 8-sentence chunks.", _LLM_RERANK, True),
            PresetSummary(
                "verify",
                "Extension 6: the LLM checks its answer and retries up to 3 times.",
                _LLM_RERANK + " (up to 3 answers)",
                True,
            ),
        ),
    ),
    PresetGroup(
        title="For experiments: the policy-RAG study's configurations",
        blurb="Reproduce the study's three set-ups.",
        presets=(
            PresetSummary("vanilla", "The LLM alone, nothing retrieved (as llm-only).", _LLM, True),
            PresetSummary("basic", "The 3 nearest chunks are the LLM's context.", _LLM, True),
            PresetSummary(
                "advanced", "10 dense chunks reranked by a cross-encoder down to 3.", _LLM_RERANK, True
            ),
        ),
    ),
    PresetGroup(
        title="For experiments: default with parts switched off",
        blurb="Measure what the follow-up rewrite and the answerability check each add.",
        presets=(
            PresetSummary("flow-none", "No follow-up rewrite, no answerability check.", _NO_LLM_FAST, False),
            PresetSummary(
                "flow-rewrite", "Follow-ups rewritten; no answerability check.", _NO_LLM_FAST, False
            ),
            PresetSummary(
                "flow-answerability",
                "Answerability check; follow-ups searched as asked.",
                _NO_LLM_FAST,
                False,
            ),
            PresetSummary(
                "flow-rewrite-answerability",
                "Both on: the same as default under another name.",
                _NO_LLM_FAST,
                False,
            ),
        ),
    ),
)

SUMMARIES: dict[str, PresetSummary] = {s.name: s for group in PRESET_GROUPS for s in group.presets}


def groups() -> tuple[PresetGroup, ...]:
    """PRESET_GROUPS, plus any built-in preset they do not name yet, so none is ever missing from a menu."""
    unlisted = tuple(
        PresetSummary(name, PRESETS[name].description, "see its description", False)
        for name in PRESET_NAMES
        if name not in SUMMARIES
    )
    if not unlisted:
        return PRESET_GROUPS
    return (*PRESET_GROUPS, PresetGroup("Other", "Not yet described here.", unlisted))


def option_label(name: str) -> str:
    """The preset menu's text for a built-in preset: its name and what it costs."""
    summary = SUMMARIES.get(name)
    return f"{name} · {summary.cost.split(' (')[0]}" if summary else name
