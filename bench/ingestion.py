"""Ingestion throughput through the real path against the raw encoder on the same sentences.

End to end = parse the analyst-bench files, stage each document with
``documents.services.document_stage`` (which queues ``embed_document`` on
commit), and wait until a real Celery worker (prefork, -c 1, as ``make run``
starts it) has made every document ready in PostgreSQL. The worker is warm
(model loaded by a warm-up document) before the clock starts; its cold start
is reported apart. Baseline = one ``encode`` call over all the same sentences
in this process (the same model class and batch size as the worker).
Repetitions alternate baseline and end to end, so drift on a shared machine
hits both; the ratio is taken per repetition and its median reported.

Writes: a worker encodes the documents it claimed in waves of
``INGEST_WAVE_SENTENCES`` and makes each wave live on its write-behind thread
while the next one encodes (documents/services/write_behind.py); each
repetition also runs end to end through a worker with the setting at 0 (encode
the whole group, then make it live, as before), the two alternating.

Where the time goes: the encoder called one document at a time, as
``document_embed`` did before it encoded queued documents together
(``INGEST_ENCODE_SENTENCES``); the same documents, in every repetition, through a worker whose
embedder only looks vectors up (no encoding), which with the encoder's time gives the serial
ceiling (encode, then do the rest: what end to end reaches when nothing overlaps); idle time
between tasks from the worker's log; and in-process ``document_embed`` with each service step
and each part of the swap-in timed. (A shorter broker polling interval was measured here and
dropped: bench/README.md, "Measured and dropped".)
"""

from __future__ import annotations

from pathlib import Path

from bench.common import Stopwatch, log, median, print_table, ratio, setup_django, write_result
from bench.corpus import analyst_bench_sample, load_documents
from bench.ingestion_parts import (
    STEPS,
    SWAP_IN_PARTS,
    embed_in_process,
    encode_per_document,
    ingest_through_worker,
)

TARGET = 0.85


def through_worker(broker: Path, root: Path, n: int, label: str, **worker_options) -> dict:
    # kombu's file-system transport looks for new messages once per polling interval, and with
    # prefetch 1 a worker takes at most one message per look: the idle time between tasks shows it.
    """A fresh worker, warmed up (model loaded) on two documents, then the timed ingestion."""
    from bench.worker import Worker, task_gaps

    warm_root = analyst_bench_sample(400)
    warm_n = sum(len(texts) for _, _, texts in load_documents(warm_root))
    with Worker(broker, name=label, **worker_options) as worker:
        warm = ingest_through_worker(warm_root, warm_n, f"{label}-warm-up")
        result = ingest_through_worker(root, n, label)
    gaps = task_gaps(worker.log_path, skip=2)  # the two warm-up documents come first
    return {
        **result,
        "worker_start_seconds": worker.start_seconds,
        "warm_up_seconds": warm["seconds"],
        **gaps,
    }


def run(args) -> dict:
    setup_django()
    from django.conf import settings

    from bench.worker import load_lookup, private_broker, save_vectors
    from qa.pipeline.search.embedding import SentenceTransformerEmbedder

    quick = args.quick
    every = args.sample_every or (20 if quick else 1)
    repeats = args.repeat or (2 if quick else 3)
    root = analyst_bench_sample(every)
    documents = load_documents(root)
    texts = [t for _, _, doc_texts in documents for t in doc_texts]
    n = len(texts)
    configured = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("polling_interval", 1.0)
    log(
        f"ingestion: {len(documents)} documents, {n} sentences, {repeats} repetitions; broker polling "
        f"{configured}s"
    )

    with Stopwatch() as load:
        embedder = SentenceTransformerEmbedder(
            settings.QA_EMBEDDING_MODEL or None, batch_size=settings.QA_EMBEDDING_BATCH_SIZE
        )
    embedder.encode(texts[:64])  # first-call set-up is not throughput

    broker = private_broker()
    runs = {"encoder": [], "encoder_per_document": [], "as_configured": [], "one_wave": [], "lookup": []}
    lookup_file = None
    for rep in range(repeats):
        with Stopwatch() as enc:
            vectors = embedder.encode(texts)
        runs["encoder"].append({"seconds": enc.seconds, "sentences_per_s": n / enc.seconds})
        if lookup_file is None:
            lookup_file = save_vectors(broker / "vectors.npz", texts, vectors)
        with Stopwatch() as per_document:
            encode_per_document(embedder, documents)
        runs["encoder_per_document"].append({"seconds": per_document.seconds})
        log(f"rep {rep}: encoder {n / enc.seconds:.1f} sent/s")
        # Alternated within the repetition, so neither write path always runs later.
        variants = [("as_configured", {}), ("one_wave", {"environment": {"INGEST_WAVE_SENTENCES": "0"}})]
        for key, options in variants if rep % 2 == 0 else variants[::-1]:
            runs[key].append(through_worker(broker, root, n, f"{key}-{rep}", **options))
            log(f"rep {rep}: end to end, {key}: {runs[key][-1]['sentences_per_s']:.1f} sent/s")
        # Everything the worker does but encode, in this repetition: with the encoder's time it
        # bounds end to end when nothing overlaps (the ceiling below).
        runs["lookup"].append(through_worker(broker, root, n, f"lookup-{rep}", vectors=lookup_file))

    lookup = load_lookup(lookup_file)
    in_process = {"copy": [embed_in_process(root, lookup, f"inproc-{i}") for i in range(3)]}

    ratios = {
        key: [
            ratio(e["sentences_per_s"], b["sentences_per_s"])
            for e, b in zip(runs[key], runs["encoder"], strict=True)
        ]
        for key in ("as_configured", "one_wave")
    }
    # The ratio end to end would reach if the worker encoded as fast as the encoder alone and then
    # did the rest (staging, hand-over, swap-in) without overlapping the two.
    ceiling = [
        ratio(b["seconds"], b["seconds"] + w["seconds"])
        for b, w in zip(runs["encoder"], runs["lookup"], strict=True)
    ]
    result = {
        "documents": len(documents),
        "sentences": n,
        "repeats": repeats,
        "sample_every": every,
        "polling_interval": configured,
        **runs,
        "ratios": ratios,
        "ratio_median": {k: median(v) for k, v in ratios.items()},
        "target": TARGET,
        "serial_ceiling": ceiling,
        "serial_ceiling_median": median(ceiling),
        "in_process_lookup": in_process,
        "model_load_seconds": load.seconds,
    }
    report(result)
    write_result("ingestion", result, quick=quick)
    return result


def report(result: dict) -> None:
    n, runs, ratios, in_process = (
        result["sentences"],
        result,
        result["ratios"],
        result["in_process_lookup"],
    )
    configured, lookup = result["polling_interval"], result["lookup"]
    base = median([r["sentences_per_s"] for r in runs["encoder"]])
    base_s = median([r["seconds"] for r in runs["encoder"]])

    def row(label, seconds, value_ratio=None, idle=float("nan")):
        rate = n / seconds
        return (label, seconds, rate, ratio(rate, base) if value_ratio is None else value_ratio, idle)

    def idle(key):
        return median([r["idle_seconds"] for r in runs[key]])

    def seconds(values):
        return median([r["seconds"] for r in values])

    nan = float("nan")
    rows = [
        ("encoder, one call over all sentences (baseline)", base_s, base, 1.0, nan),
        row(
            "encoder, one document per call (before INGEST_ENCODE_SENTENCES)",
            seconds(runs["encoder_per_document"]),
        ),
        row(
            f"end to end, broker polling {configured}s (as configured)",
            seconds(runs["as_configured"]),
            median(ratios["as_configured"]),
            idle("as_configured"),
        ),
        row(
            "end to end, INGEST_WAVE_SENTENCES=0 (before write-behind)",
            seconds(runs["one_wave"]),
            median(ratios["one_wave"]),
            idle("one_wave"),
        ),
        (
            "  of which parse + stage (main process)",
            median([r["stage_seconds"] for r in runs["as_configured"]]),
            nan,
            nan,
            nan,
        ),
        row(
            f"worker, looked-up vectors (no encoding), polling {configured}s",
            seconds(lookup),
            idle=median([r["idle_seconds"] for r in lookup]),
        ),
        (
            "serial ceiling: encoder, then the worker's other work, nothing overlapped",
            nan,
            nan,
            result["serial_ceiling_median"],
            nan,
        ),
        row("in process document_embed, looked-up vectors", seconds(in_process["copy"])),
        (
            "  of which _swap_in",
            median([r["steps"]["_swap_in"] for r in in_process["copy"]]),
            nan,
            nan,
            nan,
        ),
    ]
    print_table(
        f"Ingestion, {result['documents']} documents / {n:,} sentences (median of {result['repeats']}; "
        f"ratio = sentences/s over the encoder's, per repetition; target end to end >= {TARGET})",
        ["path", "seconds", "sentences/s", "ratio", "worker idle s"],
        rows,
    )
    runs = in_process["copy"]
    print_table(
        "Where document_embed spends its time besides encoding, in process with looked-up vectors "
        "(median of the runs; share = seconds / baseline encode seconds; worker CPU = the calling "
        "thread's, PostgreSQL CPU = its backend's; indented: parts of the swap-in)",
        ["step", "seconds", "share", "worker CPU s", "PostgreSQL CPU s"],
        [
            (
                f"  {SWAP_IN_PARTS[name]}" if name in SWAP_IN_PARTS else name.strip("_"),
                median([r["steps"].get(name, 0.0) for r in runs]),
                ratio(median([r["steps"].get(name, 0.0) for r in runs]), base_s),
                median([r.get("steps_cpu", {}).get(name, float("nan")) for r in runs]),
                median([r.get("steps_db_cpu", {}).get(name, float("nan")) for r in runs]),
            )
            for _, name in STEPS
        ],
    )
    verdicts(result)


def verdicts(result: dict) -> None:
    first = result["as_configured"][0]
    print(
        f"\nmodel load {result['model_load_seconds']:.1f}s in process; a worker process starts in "
        f"{first['worker_start_seconds']:.1f}s "
        f"and its first two documents (model load included) take {first['warm_up_seconds']:.1f}s"
    )
    ceiling = result["serial_ceiling"]
    print(
        f"serial ceiling = encoder / (encoder + worker without encoding) = {median(ceiling):.3f} "
        f"(per repetition {[round(v, 3) for v in ceiling]}): end to end beats it only where the "
        "swap-in overlaps encoding on a core the encoder leaves free"
    )
    for key, values in result["ratios"].items():
        verdict = "meets" if median(values) >= TARGET else "misses"
        print(
            f"{key}: end to end / encoder = {median(values):.3f} (per repetition "
            f"{[round(v, 3) for v in values]}): {verdict} the {TARGET} target"
        )
