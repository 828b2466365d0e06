"""BM25 in PostgreSQL: the postings written with a document's live content, and the ranking query.

Scores equal rank-bm25's ``BM25Okapi`` over the corpus's live units at the
version asked for (qa.pipeline.search.bm25 states the formula; tests/documents/
test_lexical.py compares both). Nothing is precomputed that depends on the
rest of the corpus: N, the average length and each query term's document
frequency are counted at query time among the units live at that version, so
a document that turns ready is searchable by the next query, with no rebuild,
and a question that recorded an older version is ranked as that version was.
The one statistic that needs the whole vocabulary, the mean idf that floors a
term found in more than half of the units, is read from ``TermStat`` (kept
current in the same transactions as the postings) when the version asked for
is the current one, and counted from the postings otherwise; it is needed only
when a query term is that frequent.

Writes happen inside the caller's transaction, which holds the corpus row
locked (documents.services.next_corpus_version), so two writers of one
corpus never interleave their TermStat updates.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from django.db import connection

from documents.models import LexicalUnit
from qa.pipeline.reading.dates import DocumentScope
from qa.pipeline.search.bm25 import EPSILON, K1, B, tokenize

UNIT_OF_NAME = {unit.label: unit.value for unit in LexicalUnit}


def index_document(
    *,
    corpus_id: int,
    document_id: int,
    ready_version: int,
    sentences: Sequence[tuple[int, str]],
    chunks: Sequence[tuple[int, int, int]],
) -> None:
    """Postings, document frequencies and totals of a document's units, now live.

    ``sentences``: (pk, text) in ordinal order; ``chunks``: (pk, first ordinal,
    last ordinal). A chunk's and the document's text are their sentences joined
    by spaces, so their tokens are the sentences' tokens, in order.
    """
    tokens = [tokenize(text) for _, text in sentences]
    units: list[tuple[int, int, list[str]]] = [
        (LexicalUnit.DOCUMENT, document_id, [t for own in tokens for t in own])
    ]
    units += [
        (LexicalUnit.CHUNK, pk, [t for own in tokens[first : last + 1] for t in own])
        for pk, first, last in chunks
    ]
    units += [(LexicalUnit.SENTENCE, pk, own) for (pk, _), own in zip(sentences, tokens, strict=True)]

    totals: dict[int, list[int]] = {unit.value: [0, 0] for unit in LexicalUnit}
    lines = []
    for unit, item, own in units:
        totals[unit][0] += 1
        totals[unit][1] += len(own)
        # Tokens are runs of letters and digits (qa.pipeline.search.bm25), so they hold nothing COPY's
        # text format would escape; one formatted block costs a fraction of a write_row per posting.
        head = f"{corpus_id}\t{int(unit)}\t"
        middle, tail = f"\t{item}\t{document_id}\t{ready_version}\t", f"\t{len(own)}\n"
        lines += [f"{head}{term}{middle}{tf}{tail}" for term, tf in Counter(own).items()]
    with connection.cursor() as cursor:
        with cursor.copy(
            "COPY documents_posting (corpus_id, unit, term, item, document_id, ready_version, tf, length)"
            " FROM STDIN"
        ) as copy:
            copy.write("".join(lines))
        # Each posting just written adds one unit to its term's document frequency. Counted from
        # them where they lie, so no term list travels back; keys in one order for every writer.
        cursor.execute(
            "INSERT INTO documents_termstat (corpus_id, unit, term, df)"
            " SELECT corpus_id, unit, term, count(*) FROM documents_posting WHERE document_id = %s"
            " GROUP BY corpus_id, unit, term ORDER BY corpus_id, unit, term"
            " ON CONFLICT (corpus_id, unit, term) DO UPDATE SET df = documents_termstat.df + EXCLUDED.df",
            [document_id],
        )
        cursor.execute(
            "INSERT INTO documents_lexicaltotals (document_id, unit, corpus_id, ready_version, units, tokens)"
            " SELECT %s, u, %s, %s, n, t FROM unnest(%s::int2[], %s::int[], %s::int8[]) AS x(u, n, t)",
            [
                document_id,
                corpus_id,
                ready_version,
                list(totals),
                [n for n, _ in totals.values()],
                [length for _, length in totals.values()],
            ],
        )


def unindex_document(*, corpus_id: int, document_id: int) -> None:
    """Take a document's live units out of the index (before it is deleted or replaced)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE documents_termstat AS s SET df = s.df - c.n"
            " FROM (SELECT unit, term, count(*) AS n FROM documents_posting"
            "       WHERE document_id = %s GROUP BY unit, term) AS c"
            " WHERE s.corpus_id = %s AND s.unit = c.unit AND s.term = c.term"
            " RETURNING s.unit, s.term, s.df",
            [document_id, corpus_id],
        )
        gone = [(unit, term) for unit, term, df in cursor.fetchall() if df <= 0]
        if gone:
            cursor.execute(
                "DELETE FROM documents_termstat WHERE corpus_id = %s"
                " AND (unit, term) IN (SELECT * FROM unnest(%s::int2[], %s::text[]))",
                [corpus_id, [u for u, _ in gone], [t for _, t in gone]],
            )
        cursor.execute("DELETE FROM documents_posting WHERE document_id = %s", [document_id])
        cursor.execute("DELETE FROM documents_lexicaltotals WHERE document_id = %s", [document_id])


def bm25_search(
    *, corpus_id: int, unit: str, query: str, version: int, k: int, scope: DocumentScope | None = None
) -> list[tuple[int, float]]:
    """The k best (unit pk, BM25 score) among the units live at ``version``, best first.

    Only units sharing a term with the query; equal scores in pk order. The
    caller reads in one snapshot (qa.adapters) so the counts below agree.
    ``scope`` keeps only units of documents in it, inside the ranking query,
    so the k returned are the scope's best k; their scores are the ones the
    whole corpus gives them (N, the average length and idf stay corpus-wide).
    """
    terms = tokenize(query)
    if k <= 0 or not terms:
        return []
    code = UNIT_OF_NAME[unit]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(units), 0), coalesce(sum(tokens), 0),"
            " (SELECT version FROM documents_corpus WHERE id = %s)"
            " FROM documents_lexicaltotals WHERE corpus_id = %s AND unit = %s AND ready_version <= %s",
            [corpus_id, corpus_id, code, version],
        )
        n_units, n_tokens, current = cursor.fetchone()
        if not n_units or not n_tokens:
            return []
        params = {
            "k1p1": K1 + 1,
            "k1": K1,
            "b": B,
            "n": float(n_units),
            "avgdl": float(n_tokens) / float(n_units),
            # A repeated query term counts once per repetition, as in rank-bm25.
            "terms": sorted(set(terms)),
            "repeats": [terms.count(t) for t in sorted(set(terms))],
            "corpus": corpus_id,
            "unit": code,
            "version": version,
            "k": k,
            "floor": None,
            **scope_params(scope),
        }
        cursor.execute(_RANKING, params)
        rows = cursor.fetchall()
        if rows and rows[0][2]:
            # A query term is in more than half of the units: its idf is floored at epsilon times
            # the mean idf of the whole vocabulary, read only now that it is needed.
            params["floor"] = EPSILON * _mean_idf(
                cursor, corpus_id, code, int(n_units), version, current=version == current
            )
            cursor.execute(_RANKING, params)
            rows = cursor.fetchall()
        return [(int(item), float(score)) for item, score, _ in rows]


# A question's scope (qa.pipeline.reading.dates.DocumentScope) over documents_document AS d; its
# parameters are scope_params'. Dense search (qa.adapters) applies the same conditions.
SCOPE_CONDITIONS = (
    " AND (cardinality(%(sources)s::text[]) = 0 OR d.source = ANY(%(sources)s::text[]))"
    " AND (NOT %(dated)s OR d.published IS NOT NULL)"
    " AND (%(published_from)s::date IS NULL OR d.published >= %(published_from)s::date)"
    " AND (%(published_to)s::date IS NULL OR d.published <= %(published_to)s::date)"
)

# One pass over the query terms' postings: their document frequencies (hence idf) and the
# scores come from the same rows. "floored" says whether a term's raw idf was negative, in
# which case the caller runs it again with %(floor)s set (NULL contributes nothing meanwhile).
_RANKING = (
    """
WITH q AS (SELECT * FROM unnest(%(terms)s::text[], %(repeats)s::int[]) AS q(term, repeats)),
hits AS MATERIALIZED (
    SELECT p.item, p.document_id, p.term, p.tf, p.length FROM q JOIN documents_posting AS p
      ON p.corpus_id = %(corpus)s AND p.unit = %(unit)s AND p.term = q.term
    WHERE p.ready_version <= %(version)s
),
idf AS (
    SELECT term, ln(%(n)s::float8 - count(*) + 0.5) - ln(count(*)::float8 + 0.5) AS raw
    FROM hits GROUP BY term
),
weight AS (
    SELECT idf.term, q.repeats * CASE WHEN idf.raw < 0 THEN %(floor)s::float8 ELSE idf.raw END AS w
    FROM idf JOIN q ON q.term = idf.term
)
SELECT h.item,
       sum(weight.w * h.tf * %(k1p1)s::float8
           / (h.tf + %(k1)s::float8 * (1 - %(b)s::float8 + %(b)s::float8 * h.length / %(avgdl)s::float8)))
         AS score,
       (SELECT bool_or(raw < 0) FROM idf) AS floored
FROM hits AS h JOIN weight ON weight.term = h.term
WHERE NOT %(scoped)s OR h.document_id IN (
    SELECT d.id FROM documents_document AS d WHERE d.corpus_id = %(corpus)s"""
    + SCOPE_CONDITIONS
    + """
)
GROUP BY h.item
ORDER BY score DESC NULLS LAST, h.item
LIMIT %(k)s
"""
)


def scope_params(scope: DocumentScope | None) -> dict[str, object]:
    return {
        "scoped": bool(scope),
        "sources": list(scope.sources) if scope else [],
        "dated": bool(scope and scope.dated),
        "published_from": scope.published_from if scope else None,
        "published_to": scope.published_to if scope else None,
    }


def _mean_idf(cursor, corpus_id: int, unit: int, n_units: int, version: int, *, current: bool) -> float:
    """The mean raw idf over the vocabulary of the units live at ``version`` (negatives included)."""
    if current:
        source = "SELECT df FROM documents_termstat WHERE corpus_id = %s AND unit = %s"
        params = [corpus_id, unit]
    else:
        source = (
            "SELECT count(*) AS df FROM documents_posting"
            " WHERE corpus_id = %s AND unit = %s AND ready_version <= %s GROUP BY term"
        )
        params = [corpus_id, unit, version]
    cursor.execute(
        f"SELECT sum(ln(%s - df + 0.5) - ln(df + 0.5)), count(*) FROM ({source}) AS v",  # noqa: S608
        [n_units, *params],
    )
    total, vocabulary = cursor.fetchone()
    return float(total) / vocabulary if vocabulary else 0.0


def index_existing_documents() -> int:
    """Index every live document that has no postings yet (the upgrade to this index). Returns the count."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT d.id, d.corpus_id, d.ready_version FROM documents_document AS d"
            " WHERE d.content_hash <> '' AND NOT EXISTS"
            " (SELECT 1 FROM documents_lexicaltotals AS t WHERE t.document_id = d.id) ORDER BY d.id"
        )
        documents = cursor.fetchall()
        for document_id, corpus_id, ready_version in documents:
            cursor.execute(
                "SELECT id, text FROM documents_sentence WHERE document_id = %s ORDER BY ordinal",
                [document_id],
            )
            sentences = cursor.fetchall()
            cursor.execute(
                "SELECT id, first_ordinal, last_ordinal FROM documents_chunk WHERE document_id = %s"
                " ORDER BY first_ordinal",
                [document_id],
            )
            chunks = cursor.fetchall()
            index_document(
                corpus_id=corpus_id,
                document_id=document_id,
                ready_version=ready_version,
                sentences=sentences,
                chunks=chunks,
            )
    return len(documents)
