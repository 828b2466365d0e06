"""Corpora, their documents, and the sentences and chunks that answers cite.

Every ingestion step writes under a unique key ((corpus, external_id),
(document, ordinal), (document, first_ordinal, last_ordinal)), so running a
step twice cannot duplicate rows.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from pgvector.django import HnswIndex, VectorField

from groundedqa_site.jobs import LeasedJob

# The size of the vector columns of Sentence, Chunk and Document: the one place it is written. They
# hold the vectors of the site's model (QA_EMBEDDING_MODEL, all-MiniLM-L6-v2 by default), which must
# produce it; a corpus embedded with another model keeps its vectors in StoredVector instead.
EMBEDDING_DIM = 384
# Dimensions StoredVector has an HNSW index for (migration 0007); other sizes are searched exactly.
INDEXED_DIMENSIONS = (384, 512, 768, 1024)


class Team(models.Model):
    """Analysts who share corpora. Only members read a team's corpora; each member has a role."""

    name = models.CharField(max_length=200, unique=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="teams", blank=True
    )

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    """What a member may do in a team; each role may also do everything the roles before it may."""

    VIEWER = "viewer"  # asks questions, reads the team's corpora, answers and metrics
    ANNOTATOR = "annotator"  # also reviews answers and annotates the questions assigned to them
    REVIEWER = "reviewer"  # also edits gold cases and benchmarks, creates annotation tasks, adjudicates
    ADMIN = "admin"  # also manages the team's corpora, uploads, members and presets


# The order of the roles: a check for one role passes for every role at or above it.
ROLE_ORDER: tuple[str, ...] = (Role.VIEWER, Role.ANNOTATOR, Role.REVIEWER, Role.ADMIN)


class Membership(models.Model):
    """A user's membership of a team, with their role.

    The table is the one Team.members used before it had roles (migration
    team_membership_roles): rows keep their ids. A membership made without a role
    (``team.members.add(user)``) is an annotator's: reading, asking, reviewing
    answers and annotating, but neither gold nor corpora.
    """

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)

    class Meta:
        db_table = "documents_team_members"
        unique_together = [("team", "user")]
        ordering = ["team_id", "user_id"]

    def __str__(self) -> str:
        return f"{self.user_id} in {self.team_id}: {self.role}"


class Corpus(models.Model):
    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="corpora")
    # Goes up in the transaction that makes a document's content live or deletes
    # one; questions record the version they read (qa/adapters.py).
    version = models.BigIntegerField(default=0)
    # The embedding model its vectors are made with; None: the site's model, vectors in the columns.
    # Changes only in the transaction that ends a re-embedding (documents/embedding_spaces.py).
    embedding_space = models.ForeignKey(
        "EmbeddingSpace", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "corpora"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Document(LeasedJob):
    class Status(models.TextChoices):
        QUEUED = "queued"
        PARSING = "parsing"
        EMBEDDING = "embedding"
        READY = "ready"
        FAILED = "failed"

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="documents")
    external_id = models.CharField(max_length=500)
    title = models.CharField(max_length=500)
    source = models.CharField(max_length=200, blank=True)
    url = models.URLField(max_length=1000, blank=True)
    published = models.DateField(null=True, blank=True)
    filename = models.CharField(max_length=500, blank=True)
    # Text and hash of the version whose sentences are stored (the live version).
    text = models.TextField(blank=True)
    content_hash = models.CharField(max_length=64, blank=True)
    # A newer version waits here until its sentences and embeddings are ready;
    # the swap into the fields above happens in one transaction.
    pending_text = models.TextField(blank=True)
    pending_hash = models.CharField(max_length=64, blank=True)
    pending_sentences = models.JSONField(default=list, blank=True)
    # Mean of the sentence vectors, for document-level dense retrieval.
    embedding = VectorField(dimensions=EMBEDDING_DIM, null=True, blank=True)
    # Staged by a bulk import: embedded on the "ingestion-bulk" queue, so an analyst's
    # upload (the "ingestion" queue, its own worker) never waits behind it.
    bulk = models.BooleanField(default=False)
    # The corpus version at which the live content above was swapped in.
    ready_version = models.BigIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.PositiveSmallIntegerField(default=0)  # percent of the current stage
    error = models.TextField(blank=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["corpus", "external_id"], name="document_unique_external_id"),
        ]
        indexes = [models.Index(fields=["corpus", "status"])]
        ordering = ["external_id"]

    def __str__(self) -> str:
        return self.external_id


class Sentence(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="sentences")
    ordinal = models.PositiveIntegerField()
    label = models.CharField(max_length=32)  # "S7" where the source names it, else ordinal + 1
    text = models.TextField()
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    # The sentence's place in its document's structure (documents/parsing/structure.py): its block's
    # role (qa.pipeline.core.roles: answers never quote a heading, title or question), the headings above
    # it joined by " > ", and its page where the format has pages.
    role = models.CharField(max_length=16, default="paragraph")
    section = models.TextField(blank=True, default="")
    page = models.PositiveIntegerField(null=True, blank=True)
    # Null when the corpus is embedded with another model than the site's (StoredVector).
    embedding = VectorField(dimensions=EMBEDDING_DIM, null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["document", "ordinal"], name="sentence_unique_ordinal"),
        ]
        indexes = [
            HnswIndex(
                name="sentence_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            )
        ]
        ordering = ["document_id", "ordinal"]

    def __str__(self) -> str:
        return f"{self.document_id}:{self.label}"


class Chunk(models.Model):
    """A window of consecutive sentences (N=8, overlap 2 by default)."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    first_ordinal = models.PositiveIntegerField()
    last_ordinal = models.PositiveIntegerField()
    text = models.TextField()
    embedding = VectorField(dimensions=EMBEDDING_DIM, null=True)  # as Sentence.embedding

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["document", "first_ordinal", "last_ordinal"], name="chunk_unique_window"
            ),
        ]
        indexes = [
            HnswIndex(
                name="chunk_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            )
        ]
        ordering = ["document_id", "first_ordinal"]

    def __str__(self) -> str:
        return f"{self.document_id}:{self.first_ordinal}-{self.last_ordinal}"


class LexicalUnit(models.IntegerChoices):
    """The retrieval units BM25 ranks; the pipeline's names are their labels."""

    DOCUMENT = 0, "document"
    CHUNK = 1, "chunk"
    SENTENCE = 2, "sentence"


class EmbeddingSpace(LeasedJob):
    """One embedding model's vectors of one corpus, and the job that embeds the corpus with it.

    A re-embedding creates a space (queued), a worker fills its vectors
    document by document (running, with progress) while questions keep reading
    the corpus's current space, and one transaction then makes it the corpus's
    space and moves the corpus version (active); the space it replaced is
    retired, its vectors kept for questions still reading the older version
    until the next re-embedding. A question reads the space active at its
    corpus version (``activated_version``), so it never mixes two models.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        ACTIVE = "active"
        RETIRED = "retired"
        FAILED = "failed"

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="embedding_spaces")
    model = models.CharField(max_length=500)  # the name or path, as given
    dimension = models.PositiveIntegerField()
    # The site's own model (QA_EMBEDDING_MODEL): its vectors live in the Sentence/Chunk/Document
    # columns and their HNSW indexes; any other model's in StoredVector.
    in_columns = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.PositiveSmallIntegerField(default=0)  # percent of the corpus's documents
    documents_done = models.PositiveIntegerField(default=0)
    documents_total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    activated_version = models.BigIntegerField(null=True, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["corpus", "activated_version"])]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.corpus_id}: {self.model} ({self.dimension}, {self.status})"


class StoredVector(models.Model):
    """A vector of a sentence, chunk or document made by a space's model other than the site's.

    One untyped ``vector`` column holds every dimension; migration 0007 adds a
    partial HNSW index on ``embedding::vector(N) WHERE dimension = N`` for each
    of INDEXED_DIMENSIONS, which dense search uses by asking the same
    expression (qa/adapters.py). Rows go with their document: replaced or
    deleted content removes them (documents/services/ingestion.py).
    """

    space = models.ForeignKey(EmbeddingSpace, on_delete=models.CASCADE, related_name="+")
    unit = models.PositiveSmallIntegerField(choices=LexicalUnit.choices)
    item = models.BigIntegerField()  # pk of the Sentence / Chunk / Document
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    dimension = models.PositiveIntegerField()
    embedding = VectorField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["space", "unit", "item"], name="stored_vector_unique_item"),
        ]

    def __str__(self) -> str:
        return f"{LexicalUnit(self.unit).label} {self.item} in space {self.space_id}"


class Posting(models.Model):
    """How often a term occurs in one live unit: BM25's inverted index, in PostgreSQL.

    Written in the transaction that makes a document's content live and removed
    in the one that deletes or replaces it (documents/lexical.py), so a new
    document is searchable as soon as it is ready. ``ready_version`` and
    ``length`` repeat the document's version and the unit's token count, so a
    query reads nothing but the postings of its terms.
    """

    pk = models.CompositePrimaryKey("corpus_id", "unit", "term", "item")
    # No database constraints: checking two foreign keys for each of the thousands of rows a
    # document writes cost a third of the write (bench/README.md, search in the database).
    # lexical.unindex_document removes a document's rows before it is deleted or replaced, and
    # deleting a corpus cascades here through the ORM.
    corpus = models.ForeignKey(
        Corpus, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    unit = models.PositiveSmallIntegerField(choices=LexicalUnit.choices)
    term = models.TextField()
    item = models.BigIntegerField()  # pk of the Sentence / Chunk / Document
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    ready_version = models.BigIntegerField()
    tf = models.IntegerField()
    length = models.IntegerField()

    def __str__(self) -> str:
        return f"{self.term} in {LexicalUnit(self.unit).label} {self.item}"


class TermStat(models.Model):
    """Number of live units of a corpus containing a term (BM25's document frequency)."""

    pk = models.CompositePrimaryKey("corpus_id", "unit", "term")
    corpus = models.ForeignKey(
        Corpus, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    unit = models.PositiveSmallIntegerField(choices=LexicalUnit.choices)
    term = models.TextField()
    df = models.IntegerField()

    def __str__(self) -> str:
        return f"{self.term}: {self.df} {LexicalUnit(self.unit).label}s"


class LexicalTotals(models.Model):
    """One live document's contribution to a unit's unit count and token count (BM25's N and avgdl).

    Units without a single indexed token count too, as they do in rank-bm25.
    """

    pk = models.CompositePrimaryKey("document_id", "unit")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    unit = models.PositiveSmallIntegerField(choices=LexicalUnit.choices)
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="+")
    ready_version = models.BigIntegerField()
    units = models.IntegerField()
    tokens = models.BigIntegerField()

    def __str__(self) -> str:
        return f"{self.document_id}: {self.units} {LexicalUnit(self.unit).label}s, {self.tokens} tokens"
