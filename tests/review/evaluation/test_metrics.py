import pytest

from review.evaluation import metrics as m

# --- retrieval -------------------------------------------------------------


def test_gold_rank_is_one_based_position_of_best_gold_document():
    assert m.gold_document_rank(["x", "g2", "g1"], {"g1", "g2"}) == 2
    assert m.gold_document_rank(["x", "y"], {"g"}) is None
    assert m.gold_document_rank([], {"g"}) is None


def test_recall_at_k_counts_a_hit_for_any_gold_document_within_k():
    retrieved = ["a", "b", "c", "d", "e", "g2"]
    assert m.recall_at_k(retrieved, {"g1", "g2"}, 5) == 0.0  # g2 is 6th
    assert m.recall_at_k(retrieved, {"g1", "g2"}, 6) == 1.0
    assert m.recall_at_k(["g1"], {"g1", "g2"}, 1) == 1.0


def test_repeated_documents_collapse_to_their_first_position():
    # Chunk hits: a, a, b, a, g -> document ranking a, b, g, so g is rank 3.
    # Counting raw positions would put it 5th and miss it at k=3.
    chunks = ["a", "a", "b", "a", "g"]
    assert m.gold_document_rank(chunks, {"g"}) == 3
    assert m.recall_at_k(chunks, {"g"}, 3) == 1.0
    assert m.recall_at_k(chunks, {"g"}, 2) == 0.0
    assert m.reciprocal_rank(chunks, {"g"}) == pytest.approx(1 / 3)


def test_gold_document_retrieved_twice_keeps_its_first_rank():
    # g at positions 2 and 4 -> rank 2, RR = 1/2
    assert m.reciprocal_rank(["a", "g", "b", "g"], {"g"}) == 0.5


def test_recall_at_k_rejects_nonpositive_k():
    with pytest.raises(ValueError):
        m.recall_at_k(["g"], {"g"}, 0)


def test_reciprocal_rank_without_a_hit_is_zero():
    assert m.reciprocal_rank(["a", "b"], {"g"}) == 0.0


# --- citations -------------------------------------------------------------


def test_citation_prf_hand_computed():
    # cited {S1, S2, S3}, gold {S2, S3, S4, S5}: hits 2
    # P = 2/3, R = 2/4, F1 = 2 * (2/3)(1/2) / (2/3 + 1/2) = (2/3) / (7/6) = 4/7
    scores = m.citation_prf(["S1", "S2", "S3"], ["S2", "S3", "S4", "S5"])
    assert scores.precision == pytest.approx(2 / 3)
    assert scores.recall == pytest.approx(1 / 2)
    assert scores.f1 == pytest.approx(4 / 7)


def test_duplicate_citations_count_once():
    # cited {S1, S2} after dedupe, gold {S1}: P = 1/2, R = 1, F1 = 2/3.
    # Counting the repeats would give P = 3/4.
    scores = m.citation_prf(["S1", "S1", "S1", "S2"], ["S1"])
    assert scores.precision == pytest.approx(1 / 2)
    assert scores.f1 == pytest.approx(2 / 3)


def test_citing_nothing_against_gold_evidence_scores_zero():
    assert m.citation_prf([], ["S1"]) == m.PRF(0.0, 0.0, 0.0)


def test_no_gold_evidence_leaves_the_case_out():
    assert m.citation_prf(["S1"], []) is None
    assert m.citation_prf([], []) is None


def test_disjoint_citations_score_zero_f1():
    assert m.citation_prf(["S9"], ["S1"]) == m.PRF(0.0, 0.0, 0.0)


# --- EvidenceScore ---------------------------------------------------------


def test_evidence_words_are_lowercased_whitespace_tokens_with_punctuation_kept():
    assert m.evidence_words(["The sultan, Qaboos.", "the SULTAN"]) == {
        "the",
        "sultan,",
        "qaboos.",
        "sultan",
    }


def test_evidence_score_hand_computed():
    # gold words {the, cat, sat, down}       (4)
    # cited words {the, cat, ran}            -> overlap {the, cat} = 2 -> 2/4
    assert m.evidence_score(["The cat ran"], ["The cat sat down"]) == 0.5


def test_evidence_score_is_set_based_and_ignores_repetition():
    # gold {a, b}; cited "b b b" -> {b}: 1/2
    assert m.evidence_score(["b b b"], ["a b"]) == 0.5


def test_evidence_score_punctuation_makes_words_differ():
    # gold {oman,} vs cited {oman}: no overlap, as in the report's scorer
    assert m.evidence_score(["Oman"], ["Oman,"]) == 0.0


def test_evidence_score_without_gold_words_rewards_citing_nothing():
    assert m.evidence_score([], []) == 1.0
    assert m.evidence_score(["anything"], []) == 0.0


def test_evidence_score_with_gold_words_and_no_citations_is_zero():
    assert m.evidence_score([], ["some gold sentence"]) == 0.0


def test_combined_is_none_without_a_judge_score():
    assert m.combined_score(None, 1.0) is None


def test_combined_hand_computed():
    # 0.5 * 4/5 + 0.5 * 0.5 = 0.4 + 0.25
    assert m.combined_score(4, 0.5) == pytest.approx(0.65)


# --- answer text -----------------------------------------------------------


def test_normalize_answer_drops_case_punctuation_articles_and_typographic_quotes():
    assert m.normalize_answer("The  Sultan’s reforms, an (overview)!") == "sultans reforms overview"


def test_answer_token_f1_hand_computed():
    # pred tokens: [cat, sat, on, mat]  (articles dropped)
    # ref tokens:  [cat, sat, on, red, mat, today]
    # common 4 -> P = 4/4, R = 4/6, F1 = 2 * 1 * (2/3) / (5/3) = 0.8
    assert m.answer_token_f1("The cat sat on the mat.", "A cat sat on the red mat today") == (
        pytest.approx(0.8)
    )


def test_answer_token_f1_counts_repeated_tokens_by_multiplicity():
    # pred [x, x, y], ref [x, y]: common = min(2,1) + min(1,1) = 2
    # P = 2/3, R = 1, F1 = 0.8
    assert m.answer_token_f1("x x y", "x y") == pytest.approx(0.8)


def test_answer_token_f1_empty_sides():
    assert m.answer_token_f1("", "") == 1.0
    assert m.answer_token_f1("", "something") == 0.0
    assert m.answer_token_f1("the a", "answer") == 0.0  # only articles -> no tokens


def test_rouge_l_hand_computed():
    # pred [a, b, c, d], ref [a, c, e, d]: LCS = a, c, d = 3
    # P = 3/4, R = 3/4, F = 0.75
    assert m.rouge_l("a b c d", "a c e d") == pytest.approx(0.75)


def test_rouge_l_is_order_sensitive_where_token_f1_is_not():
    # reversed: LCS of [x, y, z] and [z, y, x] is 1 -> P = R = 1/3
    assert m.rouge_l("x y z", "z y x") == pytest.approx(1 / 3)
    assert m.answer_token_f1("x y z", "z y x") == 1.0


def test_rouge_l_uses_lowercase_alphanumeric_tokens():
    assert m.rouge_l("Oman's GDP, 2011!", "oman s gdp 2011") == 1.0


def test_rouge_l_empty_sides():
    assert m.rouge_l("", "") == 1.0
    assert m.rouge_l("...", "words") == 0.0


def test_longest_common_subsequence():
    assert m.longest_common_subsequence(list("ABCBDAB"), list("BDCABA")) == 4
    assert m.longest_common_subsequence([], ["a"]) == 0


# --- answerability ---------------------------------------------------------


def test_refusal_scores_hand_computed():
    # (refused, answerable):
    #   TP: refused unanswerable x2; FP: refused answerable x1;
    #   FN: answered unanswerable x1; TN: answered answerable x1
    # P = 2/3, R = 2/3, F1 = 4 / (4 + 1 + 1) = 2/3
    outcomes = [(True, False), (True, False), (True, True), (False, False), (False, True)]
    scores = m.refusal_scores(outcomes)
    assert scores.precision == pytest.approx(2 / 3)
    assert scores.recall == pytest.approx(2 / 3)
    assert scores.f1 == pytest.approx(2 / 3)


def test_never_refusing_with_unanswerable_cases_has_no_precision_and_zero_recall():
    scores = m.refusal_scores([(False, False), (False, True)])
    assert scores == m.RefusalScores(precision=None, recall=0.0, f1=0.0)


def test_refusing_when_everything_is_answerable_has_no_recall_and_zero_precision():
    scores = m.refusal_scores([(True, True), (False, True)])
    assert scores == m.RefusalScores(precision=0.0, recall=None, f1=0.0)


def test_refusal_scores_with_nothing_to_measure_are_none():
    assert m.refusal_scores([(False, True)]) == m.RefusalScores(None, None, None)
    assert m.refusal_scores([]) == m.RefusalScores(None, None, None)


def test_jafs_per_case():
    assert m.jafs(refused=True, answerable=False, support_score=None) == 1.0
    assert m.jafs(refused=False, answerable=True, support_score=0.75) == 0.75
    assert m.jafs(refused=True, answerable=True, support_score=1.0) == 0.0
    assert m.jafs(refused=False, answerable=False, support_score=1.0) == 0.0
    assert m.jafs(refused=False, answerable=True, support_score=None) is None


# --- averaging -------------------------------------------------------------


def test_means():
    assert m.mean_or_none([]) is None
    assert m.mean_or_none([1.0, 0.0]) == 0.5
    assert m.strict_mean([1.0, None]) is None
    assert m.strict_mean([]) is None
    assert m.strict_mean([2.0, 4.0]) == 3.0
    assert m.median_or_none([3.0, 1.0, 100.0]) == 3.0
    assert m.median_or_none([]) is None


def test_unique_in_order_keeps_first_occurrence():
    assert m.unique_in_order(["b", "a", "b", "c", "a"]) == ("b", "a", "c")
