"""The one scoring function: tokens, the keyword score, weights, decay and the minimum relevance."""

from __future__ import annotations

import numpy as np
import pytest

from memoryboard.ltm.search import ranking
from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.search.retrieval import memory_rank, namespace_scope
from memoryboard.ltm.store.selectors import memory_queryset_for
from memoryboard.models import LongTermMemory


def test_tokens_serve_english_and_chinese():
    # Stems without stop words; every CJK character and every pair of neighbours.
    assert ranking.tokenize("The user IS volunteering at 后端开发!") == [
        "后", "端", "开", "发", "后端", "端开", "开发", "volunt"]
    assert ranking.tokenize("Volunteers volunteered") == ["volunt", "volunt"]
    assert ranking.tokenize("茶") == ["茶"]
    assert ranking.tokenize("") == []


def test_the_words_naming_the_person_are_no_keyword():
    # A question names "the user" and so does every item written in the third person: the word matched only those
    # items, and "User is a product manager" came first for "What medication is the user on?".
    assert ranking.tokenize("What medication is the user on?") == ["medic"]
    assert ranking.tokenize("Customers' clients") == []
    assert ranking.tokenize("用户在吃药") == ["在", "吃", "药", "在吃", "吃药"]
    index = ranking.KeywordIndex(["User is a product manager at a fintech startup", "I'm on insulin now"])
    assert not index.scores("What medication is the user on?").any()


def test_keyword_score_is_the_share_of_the_query_matched():
    index = ranking.KeywordIndex(["User is a Java backend developer", "用户喜欢喝绿茶", "likes hiking"])
    java = index.scores("java developer")
    assert java[0] == pytest.approx(1.0) and java[1] == 0 and java[2] == 0
    assert index.scores("绿茶")[1] > 0.5
    partial = index.scores("java astronaut")[0]  # half the query, and a token no item has
    assert 0 < partial < 1
    assert not index.scores("astronaut").any()
    assert ranking.KeywordIndex([]).scores("java").shape == (0,)


def test_type_weight_and_decay_order_equal_matches():
    parts = ranking.score(
        cosine=np.array([0.5, 0.5, 0.5], np.float32), keyword=np.zeros(3, np.float32),
        types=ranking.type_weights(["EPISODE", "FACT", "FACT"]),
        relevance_scores=np.array([1.0, 1.0, 0.2], np.float32), model_name="use-multilingual-v3",
    )
    assert parts.final[1] > parts.final[2] and parts.final[1] > parts.final[0]  # FACT over EPISODE, fresh over decayed
    assert parts.match[0] == parts.match[1] == parts.match[2]  # relatedness is not weighted
    assert parts.relevance[0] == parts.relevance[1] == parts.relevance[2]  # nor the minimum's measure
    # A fully decayed item loses PRIOR_WEIGHT * (1 - DECAY_FLOOR) standard deviations.
    decayed = ranking.score(cosine=np.array([0.5, 0.5], np.float32), keyword=np.zeros(2, np.float32),
                            types=np.ones(2, np.float32), relevance_scores=np.array([1.0, 0.0], np.float32),
                            model_name="use-multilingual-v3")
    assert decayed.final[0] - decayed.final[1] == pytest.approx(ranking.PRIOR_WEIGHT * (1 - ranking.DECAY_FLOOR))
    assert parts.parts(1).final == pytest.approx(float(parts.final[1]))


def test_the_query_vector_is_the_query_embedded_as_asked():
    class Recorder:
        name, dim = "rec", 2

        def __init__(self):
            self.calls = []

        def embed(self, texts):
            self.calls.append(list(texts))
            return np.array([[0.6, 0.8]] * len(texts), np.float32)

    embedder = Recorder()
    assert ranking.query_vector(embedder, "does the user like tea?").tolist() == pytest.approx([0.6, 0.8])
    assert embedder.calls == [["does the user like tea?"]]  # one text, one call


def _parts(cosine, keyword):
    count = len(cosine)
    return ranking.score(cosine=np.array(cosine, np.float32), keyword=np.array(keyword, np.float32),
                         types=np.ones(count, np.float32), relevance_scores=np.ones(count, np.float32),
                         model_name="use-multilingual-v3")


def test_both_parts_count_in_standard_deviations_of_the_scope():
    scores = _parts([0.2, 0.3, 0.4, 0.5], [0.0, 0.0, 0.0, 0.0])
    assert scores.semantic.mean() == pytest.approx(0, abs=1e-6) and scores.semantic.std() == pytest.approx(1)
    assert not scores.keyword_z.any()  # no item holds a query word
    # The same order whatever the scale of the scope's cosines (one user's items about one person are
    # all close to a question naming her).
    shifted = _parts([0.52, 0.53, 0.54, 0.55], [0.0, 0.0, 0.0, 0.0])
    assert shifted.match == pytest.approx(scores.match, abs=1e-4)
    mixed = _parts([0.2, 0.3, 0.4, 0.5], [1.0, 0.0, 0.0, 0.0])
    z = (1.0 - 0.25) / max(np.std([1.0, 0, 0, 0]), ranking.KEYWORD_MIN_SPREAD)
    assert mixed.keyword_z[0] == pytest.approx(z, rel=1e-5)
    assert mixed.match[0] == pytest.approx((1 - ranking.KEYWORD_WEIGHT) * scores.semantic[0]
                                           + ranking.KEYWORD_WEIGHT * z, rel=1e-5)


def test_one_matching_word_in_a_large_scope_does_not_outweigh_the_meaning():
    # One item of 52 shares one word: a plain z-score would put it 7 standard deviations up.
    keyword = np.zeros(52, np.float32)
    keyword[0] = 0.3
    cosine = np.linspace(0.1, 0.3, 52).astype(np.float32)
    scores = _parts(cosine, keyword)
    assert scores.keyword_z[0] <= 0.3 / ranking.KEYWORD_MIN_SPREAD
    assert ranking.rank_order(scores)[0] == 51  # the closest in meaning still comes first


def test_keywords_count_for_relevance_only_when_the_scope_holds_the_query_words():
    weak = _parts([0.0, 0.0, 0.0], [0.1, 0.2, ranking.KEYWORD_GATE - 0.01])  # no item holds more than the gate
    assert weak.keyword.tolist() == pytest.approx([0.1, 0.2, ranking.KEYWORD_GATE - 0.01])  # shown as matched
    assert not weak.relevance.any() and not weak.gate.any()
    full = _parts([0.0, 0.0], [0.2, 1.0])  # one item holds the whole query: every share counts
    assert full.gate.tolist() == [1.0, 1.0]
    scale = 1 - ranking.SEMANTIC_SCALE
    assert full.relevance.tolist() == pytest.approx([0.2 * scale, scale])
    half = _parts([0.0, 0.0], [0.5, (1 + ranking.KEYWORD_GATE) / 2])  # the gate opens linearly
    assert half.gate[0] == pytest.approx(0.5) and half.relevance[0] == pytest.approx(0.5 * 0.5 * scale)


def test_diversity_lets_an_item_unlike_the_ones_above_it_come_up():
    vectors = np.array([[1, 0, 0], [0.99, 0.141, 0], [0, 1, 0]], np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    order, redundancy, final = ranking.diversify(np.array([2.0, 1.9, 1.0], np.float32), vectors)
    assert order.tolist() == [0, 2, 1]  # the near-copy of the first gives way
    assert redundancy[0] == 0 and redundancy[2] == pytest.approx(0.99, abs=1e-3)
    assert final.tolist() == sorted(final.tolist(), reverse=True)
    assert final[2] == pytest.approx(1.9 - ranking.DIVERSITY_WEIGHT * redundancy[2], abs=1e-5)
    far = np.eye(3, dtype=np.float32)  # nothing alike: the order stays
    assert ranking.diversify(np.array([2.0, 1.9, 1.0], np.float32), far)[0].tolist() == [0, 1, 2]


def test_time_adds_to_items_dated_inside_the_window_but_not_to_the_match():
    from memoryboard.ltm.search.time_expressions import Window

    days = np.array([100.0, 130.0, np.nan])
    inside = ranking.time_matches(days, Window(90, 120))
    assert inside.tolist() == [1.0, 0.0, 0.0]  # an item of unknown day is never inside
    parts = ranking.score(cosine=np.full(3, 0.4, np.float32), keyword=np.zeros(3, np.float32),
                          types=np.ones(3, np.float32), relevance_scores=np.ones(3, np.float32),
                          model_name="use-multilingual-v3", time=inside)
    assert parts.final[0] == pytest.approx(parts.match[0] + ranking.TIME_WEIGHT)
    assert parts.final[1] == pytest.approx(parts.match[1]) and parts.match[0] == parts.match[1]
    assert parts.relevance[0] == parts.relevance[1]  # a date never makes an item related
    assert ranking.time_matches(days, None) is None

    def anchor(cosine):  # the event's words scored like a query
        return _parts(cosine, [0.0] * len(cosine))

    # Before an event: the day of the item that best matches the event's words.
    before = ranking.time_matches(days, Window(None, None, anchor="she moved", before=True),
                                  anchor=anchor([0.0, 0.4, 0.6]))
    # The unknown-day item cannot anchor: day 130 does, and its own day is inside ("after the ascent,
    # which summit at dawn?" is told the same day).
    assert before.tolist() == [1.0, 1.0, 0.0]
    after = ranking.time_matches(days, Window(None, None, anchor="she moved", before=False),
                                 anchor=anchor([0.6, 0.4, 0.0]))
    assert after.tolist() == [1.0, 1.0, 0.0]
    assert ranking.time_matches(days, Window(None, None, anchor="x", before=True),
                                anchor=anchor([0.0, 0.05, 0.1])) is None  # nothing related to the event


@pytest.mark.django_db
def test_unrelated_items_are_not_returned_and_the_reasons_are_kept(alice, make_memory):
    java = make_memory(alice, "User is a Java backend developer")
    tea = make_memory(alice, "User likes green tea", memory_type="PREFERENCE")
    found = memory_rank(queryset=memory_queryset_for(alice), query="Java developer", k=10, user_id=str(alice.pk))
    assert [r.memory.pk for r in found.results] == [java.pk]
    outcomes = {c.memory_id: c.outcome for c in found.candidates}
    assert outcomes == {java.pk: "returned", tea.pk: "below_threshold"}
    assert found.results[0].parts.keyword > 0 and found.results[0].parts.final == found.results[0].score


@pytest.mark.django_db
def test_beyond_k_and_paused_are_told_apart(alice, make_memory):
    from memoryboard.models import MemoryFlag

    items = [make_memory(alice, f"User writes Java code, note {i}") for i in range(4)]
    MemoryFlag.objects.create(memory_id=items[0].pk, paused=True)
    found = memory_rank(queryset=namespace_scope(build_namespace(agent_namespace="chat", user_id=str(alice.pk))),
                        query="Java code", k=2, user_id=str(alice.pk))
    summary = found.summary()
    assert summary == {"paused": 1, "returned": 2, "beyond_k": 1}
    assert items[0].pk not in [r.memory.pk for r in found.results]


@pytest.mark.django_db
def test_the_cache_follows_the_candidates(alice, make_memory):
    """A scope's vectors and keyword index are reused only while its items are unchanged."""
    from memoryboard.ltm.write.edits import memory_update
    from memoryboard.ltm.search.vector_cache import scope_cache

    item = make_memory(alice, "User is a Java developer")
    query = dict(queryset=memory_queryset_for(alice), query="Java", k=5, user_id=str(alice.pk))
    assert [r.memory.pk for r in memory_rank(**query).results] == [item.pk]
    assert len(scope_cache) == 1
    memory_update(memory=LongTermMemory.objects.get(pk=item.pk), content="User is a Rust developer", actor=None)
    assert memory_rank(**query).results == []  # the new content, not the cached one
    assert [r.memory.pk for r in memory_rank(**{**query, "query": "Rust"}).results] == [item.pk]


@pytest.mark.django_db
def test_the_search_keeps_the_plain_cosine_of_a_bilingual_scope(alice, make_memory):
    """No language axis is removed from the cosine: in a conversation it is who speaks."""
    from memoryboard.llm.factory import get_embedder

    embedder = get_embedder()
    texts = {}
    for i in range(8):
        for content in (f"User writes Java code, note {i}", f"用户喜欢喝茶，第{i}条"):
            texts[make_memory(alice, content).pk] = content
    qvec = ranking.query_vector(embedder, "Java developer")
    found = memory_rank(queryset=memory_queryset_for(alice), query="Java developer", k=100,
                        user_id=str(alice.pk)).candidates
    for c in found:
        assert c.parts.cosine == pytest.approx(float(embedder.embed([texts[c.memory_id]])[0] @ qvec), abs=1e-4)


@pytest.mark.django_db
def test_a_question_about_a_month_finds_what_was_said_then(alice, make_memory):
    """Raw turns dated by their text, an extracted item by validFrom; "last May" and 上个月 relative to
    when the question is asked."""
    import datetime as dt

    may = make_memory(alice, "[2023-05-12] Maya: We finally adopted a puppy from the shelter!")
    june = make_memory(alice, "[2023-06-20] Maya: Work was hectic, three meetings back to back.")
    item = make_memory(alice, "Maya climbed Mount Tai", memory_type="EPISODE")
    item.value_json["validFrom"] = "2023-05-28T00:00:00Z"
    item.save()
    asked = dt.datetime(2023, 7, 3, tzinfo=dt.UTC)
    for question in ("What did Maya do last May?", "Maya五月做了什么？", "What did Maya do in May 2023?"):
        found = memory_rank(queryset=memory_queryset_for(alice), query=question, k=2, user_id=str(alice.pk),
                            now=asked)
        assert {r.memory.pk for r in found.results} == {may.pk, item.pk}, question
        assert all(r.parts.time == 1.0 for r in found.results)
    found = memory_rank(queryset=memory_queryset_for(alice), query="What did Maya do last month?", k=3,
                        user_id=str(alice.pk), now=asked)
    order = [r.memory.pk for r in found.results]
    assert order.index(june.pk) < order.index(may.pk)  # June's turn lifted over May's
    assert [r.parts.time for r in found.results if r.memory.pk == june.pk] == [1.0]


def _scored(cosine, centrality=None):
    count = len(cosine)
    return ranking.score(cosine=np.array(cosine, np.float32), keyword=np.zeros(count, np.float32),
                         types=np.ones(count, np.float32), relevance_scores=np.ones(count, np.float32),
                         model_name="use-multilingual-v3",
                         centrality=None if centrality is None else np.array(centrality, np.float32))


def test_centrality_orders_items_but_does_not_make_them_relevant():
    # Two items as close to the query; the first is like every item of its scope (small talk): it comes second.
    scores = _scored([0.30, 0.30, 0.15, 0.2], centrality=[0.10, -0.10, -0.20, 0.0])
    assert ranking.rank_order(scores).tolist()[:2] == [1, 0]
    assert scores.relevance[0] == scores.relevance[1]
    # Unlike its scope but not about the query (cosine under 0.1625): it ranks over an item it is less
    # close to than, but its relevance stays under the minimum.
    assert scores.match[2] > scores.match[3] and scores.relevance[2] < ranking.MIN_RELEVANCE
    many = np.resize([0.5, 0.3, 0.1], 3 * ranking.CENTRALITY_MIN_ITEMS)
    assert ranking.centrality(many)[:3].tolist() == pytest.approx([0.2, 0.0, -0.2])
    few = np.resize([0.5, 0.3, 0.1], ranking.CENTRALITY_MIN_ITEMS - 1)
    assert not ranking.centrality(few).any()  # too few items for their mean to be the scope's


def test_rank_order_is_by_final_then_by_the_cosine_net_of_centrality():
    rng = np.random.default_rng(3)
    count = 500
    final = rng.choice([0.0, 0.1, 0.2], size=count).astype(np.float32)  # many ties
    cosine = rng.random(count).astype(np.float32)
    centrality = (rng.random(count).astype(np.float32) - 0.5) / 10
    zeros = np.zeros(count, np.float32)
    scores = ranking.Scores(cosine=cosine, centrality=centrality, semantic=zeros, keyword=zeros, keyword_z=zeros,
                            gate=zeros, match=zeros, relevance=zeros, attribute=zeros, time=zeros, type_weight=zeros,
                            decay=zeros, redundancy=zeros, someone_else=zeros, final=final)
    expected = np.lexsort((-(cosine - ranking.CENTRALITY_WEIGHT * centrality), -final))
    assert ranking.rank_order(scores).tolist() == expected.tolist()


@pytest.mark.django_db
def test_a_scope_centrality_is_kept_with_its_vectors(alice, make_memory):
    from memoryboard.ltm.search.retrieval import scope_cache

    scope_cache.clear()
    texts = [f"User note {i}: {word}" for i, word in enumerate(["tea", "hiking", "Java", "cats"] * 6)]
    for text in texts:
        make_memory(alice, text)
    found = memory_rank(queryset=memory_queryset_for(alice), query="green tea", k=3, user_id=str(alice.pk))
    centrality = [c.parts.centrality for c in found.candidates]
    assert len(centrality) == len(texts) >= ranking.CENTRALITY_MIN_ITEMS
    assert abs(sum(centrality)) < 1e-3 and any(centrality)  # centred on the scope


def test_the_attribute_term_raises_the_relevance_and_leaves_the_order():
    kwargs = dict(cosine=np.array([0.12, 0.12], np.float32), keyword=np.zeros(2, np.float32),
                  types=np.ones(2, np.float32), relevance_scores=np.ones(2, np.float32),
                  model_name="use-multilingual-v3")
    plain = ranking.score(**kwargs)
    lifted = ranking.score(**kwargs, attribute=np.array([1.0, 0.0], np.float32))
    assert plain.relevance[0] < ranking.MIN_RELEVANCE <= lifted.relevance[0]
    assert lifted.relevance[0] - plain.relevance[0] == pytest.approx(ranking.ATTRIBUTE_WEIGHT)
    assert lifted.relevance[1] == plain.relevance[1] and (lifted.final == plain.final).all()
    assert lifted.parts(0).attribute == 1.0


def test_a_model_without_an_attribute_range_has_no_attribute_term():
    class Hashing:
        name = "hashing-ngram-384"

        def embed(self, texts):
            raise AssertionError("no prototype is embedded for a model without an attribute range")

    assert ranking.attribute_affinity(Hashing(), np.ones(4, np.float32), lambda v: v, lambda p: p) is None


@pytest.mark.django_db
def test_a_question_about_the_user_finds_the_item_that_answers_it(alice, make_memory, use_embedder):
    # The demo user's items: "User ..." matched "the user" of every question by keyword, and came first.
    make_memory(alice, "User is a product manager at a fintech startup")
    insulin = make_memory(alice, "My doctor took me off metformin, I'm on insulin now.")
    make_memory(alice, "Learning SQL window functions")
    found = memory_rank(queryset=memory_queryset_for(alice), query="What medication is the user on?", k=3,
                        user_id=str(alice.pk), min_relevance=0.0)
    assert found.results[0].memory.pk == insulin.pk
