"""Which documents of the tuning suite chunks inside sections cut differently from plain windows.

    PYTHONPATH=. GROUNDEDQA_SHARED_DATA=../shared/data .venv/bin/python -m bench.section_chunks   # ~1 min

Chunks stay inside a section (``qa.pipeline.search.chunking.section_windows``). A document without
sections is one run, so its chunks are the plain sentence windows and no answer on it can change:
this counts, per set, the documents whose chunks do change. Where none do, that set's figures are
the same with and without the change by construction; ``python -m bench.genre [--part heldout]
[--chunks-across-sections]`` measures the sets where they do. Writes
bench/results/section_chunks.json.
"""

from __future__ import annotations

import json

from bench.common import REPO
from qa.pipeline.search.chunking import section_windows, sentence_windows

RESULTS = REPO / "bench" / "results" / "section_chunks.json"


def changed(documents) -> dict[str, int]:
    """How many of ``documents`` (parsed, with sentence sections) chunk differently inside sections."""
    differ = 0
    for document in documents:
        sections = [getattr(s, "section", "") for s in document.sentences]
        differ += section_windows(sections) != sentence_windows(len(sections))
    return {"documents": len(documents), "chunked_differently": differ}


def main() -> None:
    from bench.genre import load_documents
    from bench.reply_rules import squad_paragraphs
    from bench.retrieval_quality import DATA, analyst_bench, clapnq
    from review.benchmark_files import read_mtrag_un

    sets = {
        "genre (tuning)": load_documents("tuning"),
        "genre (held-out)": load_documents("heldout"),
        "CLAPNQ-dev": clapnq()[0],
        "squad2 (the 4 seeded articles)": [document for _, document, _ in squad_paragraphs(4)],
        "analyst-bench (all 787)": analyst_bench()[0],
    }
    for collection, plan in read_mtrag_un(DATA / "mtrag-un").items():
        sets[f"MTRAG-UN {collection}"] = plan.documents
    results = {name: changed(documents) for name, documents in sets.items()}
    for name, counts in results.items():
        print(
            f"{name}: {counts['chunked_differently']} of {counts['documents']} documents chunked differently"
        )
    RESULTS.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
