"""The one ranking of long-term memory search, and its constants (see docs/retrieval.md § The ranking).

Every search (an end user's, staff's, the agent's session-start retrieval, the ``memory_search`` tool)
embeds its query with :func:`query_vector` and ranks its candidates here::

    cosine     = cos(e(query), item)
    centrality = cos(item, mean of the scope's item vectors) - its mean over the scope         (per scope)
    semantic   = z-score over the scope of (cosine - CENTRALITY_WEIGHT * centrality)           (per query)
    keyword    = min(1, BM25(query, item) / BM25 of a plain match of the query)                  (0..1)
    keyword_z  = (keyword - its mean over the scope) / max(its spread, KEYWORD_MIN_SPREAD)
    match      = (1 - KEYWORD_WEIGHT) * semantic + KEYWORD_WEIGHT * keyword_z
    time       = 1 if the item is dated inside the time the query names ("last May", 上个月), else 0
    type       = TYPE_WEIGHTS[item type]                                   FACT 1.0 ... EPISODE 0.97
    decay      = DECAY_FLOOR + (1 - DECAY_FLOOR) * clip(relevance_score, 0, 1)
    redundancy = the highest cosine of the item with an item ranked above it (the first DIVERSITY_POOL)
    someone_else = 1 for an item about someone of the person's ("my wife …", 我女儿…: ``llm.cues.tells_of_someone_else``)
                 among the first DIVERSITY_POOL related ones when the query asks about the person ("the user", 用户,
                 and no one of theirs: ``llm.cues.asks_about_the_user``), else 0
    final      = match + TIME_WEIGHT * time - PRIOR_WEIGHT * (1 - type * decay) - SUBJECT_WEIGHT * someone_else
                 - DIVERSITY_WEIGHT * redundancy

    relevance  = SEMANTIC_SCALE * max(0, (cosine' - floor) / (ceiling - floor)) + (1 - SEMANTIC_SCALE) * gate * keyword
                 + ATTRIBUTE_WEIGHT * attribute'
    cosine'    = cosine, or for the CLAUSE_POOL items ranked first below the agent's minimum with a keyword or an
                 attribute term, the higher of it and the best cosine of one of the item's clauses (offline
                 embedders: ltm.search.retrieval; ``cosine`` itself, and the order, stay the whole text's)
    attribute' = attribute, or for those items the higher of it and the best attribute term of one of their clauses
    gate       = clip((max keyword over the scope - KEYWORD_GATE) / (1 - KEYWORD_GATE), 0, 1)
                                                                  floor, ceiling = COSINE_RANGE[model]
    attribute  = max over attributes A the query is about (about(A) > 0) of
                 about(A) * clip((cos(item, A) - i0) / (i1 - i0), 0, 1)
                 * clip(1 - (max over attributes B of cos(item, B) - cos(item, A)) / ATTRIBUTE_MARGIN, 0, 1)
                 A: an attribute's direction (llm.attributes: prototype sentences of where one lives, one's
                 job, pets, diet, …)                            (q0, q1), (i0, i1) = ATTRIBUTE_RANGE[model]
                 cos(item, A): the highest of the item's cosines with A and the attributes of its family
                 (llm.attributes.FAMILIES: one's job and one's employer)
                 (0 beyond the ATTRIBUTE_POOL items nearest A)
    about(A)   = clip((cos(e(query), A) - q0) / (q1 - q0), 0, 1), and for the attribute whose questions the query is
                 nearest (llm.attributes.QUESTIONS: "What does the user do?", 用户住在哪里？) the higher of that and
                 clip((its best cosine with them - a0) / (a1 - a0), 0, 1)          (a0, a1) = QUESTION_RANGE[model]

The order is by ``final`` (:func:`rank_order`, equal ``final`` by the centred cosine, then by id), the
first ``DIVERSITY_POOL`` items given to :func:`diversify` (maximal marginal relevance: an item much like
one ranked above it gives way). Of the items given, one flagged in conflict with an older one above it (the
reconcile step was unsure) goes just above it when it is at least as near the attribute asked about, or both are
nearest one attribute (:func:`newer_in_conflict_first`). ``semantic``, ``keyword_z``, ``match`` and ``final`` are in
standard deviations of the scope for this query: they order, they say nothing across queries. ``relevance``
says how related an item is on a fixed scale (0 unrelated, 1 a close paraphrase; not capped): the agent
is given an item only when its ``relevance`` reaches ``MIN_RELEVANCE`` (session-start injection, the
``memory_search`` tool), and it is the "相关度" of the memory block. A search someone asks for (the end
user's API and page) returns the k best without it: with no shared word, a paraphrase's evidence is as
related as an unrelated question's best item (docs/retrieval.md § The minimum relevance).

Why z-scores: a cosine's scale differs by scope and by query (one user's items about one person are all
close to a question naming her), and BM25's by the query's words; each normalised per query, the weights
mean the same everywhere. A keyword score that a few items share has a huge z-score (one item of 52
matching one word: 7 standard deviations); ``KEYWORD_MIN_SPREAD`` (a tenth of a plain match) keeps a
match of one common word from outweighing the meaning (the bilingual set's recall@1 0.65 → 0.80).

The centrality is how much an item resembles every item of its scope, more than the scope's items do on
average: a short turn of small talk ("[2023-05-14] Maya: Hey! How has your week been?") is close to
every question that names Maya and to little else; taking part of its centrality off the cosine lets the
turn that answers come first. It is computed once per scope (kept with its vectors); it is 0 in a scope
of fewer than ``CENTRALITY_MIN_ITEMS`` items and for candidates taken from the HNSW index (they are the
query's neighbours, not a scope).

The attribute term lets a question about an attribute of the person reach the statement of it when
they share no word and their cosine is low ("What is the user's job?" and "I'm a solicitor now": 0.05):
both are near that attribute's prototypes. It counts only when the query is clearly about one (an
unrelated question's nearest attribute is far: "what's the weather like" 0.21), and only in ``relevance``:
it decides what the agent is given, not the order. An item counts by how near A is to its own nearest
attribute: a short statement ("I'm a solicitor now") is near many. Models not in ``ATTRIBUTE_RANGE`` have
none (the hashing embedder's nearness is shared letters, not meaning).

Keyword tokens and BM25: ``ltm.search.keywords`` (stems, CJK characters and pairs; k1 0.9, b 0.25).
Time (:func:`time_matches`, ``ltm.search.time_expressions``): the window a query names (a year, a month, a
day, "last month", 去年, "before she moved") and each item's day (``validFrom``, a date at the start of
a raw turn, else ``created_at``).

Constants chosen on the development conversations (``tests/data/dev/conversations.json``) with
``benchmarks/ranking_dev.py``; the blind set is only reported (``manage.py memory_eval``).

Nothing here imports Django.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

import numpy as np

from memoryboard.llm.attributes import attribute_space, one_family
from memoryboard.ltm.search.keywords import KeywordIndex, tokenize

__all__ = ["KeywordIndex", "tokenize"]

# --- the constants (documented in docs/retrieval.md; change them there too) -------------------------

# The keyword part's weight in ``match`` (the semantic part has the rest), both in standard deviations.
KEYWORD_WEIGHT = 0.3
# The least spread of the keyword shares over a scope that their z-score divides by.
KEYWORD_MIN_SPREAD = 0.15
# How much of an item's centrality (its cosine with the mean of its scope's vectors, centred on the
# scope) is taken off its cosine with the query.
CENTRALITY_WEIGHT = 0.4
# The least items a scope needs for a centrality: the mean of fewer is the content of those few items (in
# a 9-item scope, the one item about family came before the move asked about: the updates suite).
CENTRALITY_MIN_ITEMS = 20
# What an item dated inside the time a question asks about gains, in standard deviations.
TIME_WEIGHT = 2.0
# What an item loses per unit of (1 - type weight * decay), in standard deviations: a fully decayed
# item (decay 0.5) loses 1, an EPISODE 0.06.
PRIOR_WEIGHT = 2.0
# Maximal marginal relevance over the first DIVERSITY_POOL items: what an item loses per unit of its
# highest cosine with an item ranked above it.
DIVERSITY_WEIGHT = 1.5
DIVERSITY_POOL = 30
# What a fact about someone else of the person's ("my husband is a paramedic", 我女儿对花生过敏) loses among the first
# DIVERSITY_POOL related items when the question is about the person ("What does the user do for work?"), in
# standard deviations. Chosen on the development updates set: current first 0.938 → 0.944 at 2, 3 and 5 alike
# (the least kept); 0.5 and 1 moved nothing.
SUBJECT_WEIGHT = 2.0
# ``relevance``: the semantic part's share, and the least keyword share of the scope's best item from
# which keywords count (the gate opens linearly from it to a full match).
SEMANTIC_SCALE = 0.7
KEYWORD_GATE = 0.3
# Per embedding model, the cosine that unrelated texts typically reach (floor) and the one that a
# close paraphrase reaches (ceiling): ``relevance`` maps that range to 0..1. Measured on the bilingual
# set (tests/data/bilingual_eval.json): with USE, unrelated queries' best item 0.11-0.29 (median 0.20),
# the expected item's median 0.41. Models not listed use DEFAULT_COSINE_RANGE.
COSINE_RANGE = {
    "use-multilingual-v3": (0.11, 0.635),
    "hashing-ngram-384": (0.1, 0.6),
}
DEFAULT_COSINE_RANGE = (0.1, 0.7)
# The attribute term of ``relevance``, per embedding model: the query's cosine to its nearest attribute's
# prototype direction from which the question counts as about it to where it fully does (q0, q1), and the
# item's cosine to that direction likewise (i0, i1). Chosen on the development updates set
# (tests/data/dev/updates.json) against 30 questions about nothing of a person: with USE their nearest
# attribute's cosine is 0.12-0.30 but for two near a topic (how to cook a dish: food 0.34; translating into
# French: language 0.44; they reach some food or language items), an attribute question's 0.25-0.54.
ATTRIBUTE_RANGE = {
    "use-multilingual-v3": ((0.30, 0.35), (0.20, 0.30)),
}
ATTRIBUTE_WEIGHT = 0.1
# A question counts as about the attribute whose questions (``llm.attributes.QUESTIONS``) it is nearest, from this
# cosine with the nearest of them to where it fully does, per embedding model: "What does the user do?" is near
# no attribute's statements (a phone 0.27, a job 0.23), and 0.86 from "What does the user do for work?". Chosen on
# the development updates set (current first 0.920 → 0.938 from 0.6 to 0.7, the same; the highest kept); of 20
# questions about nothing of a person, the nearest is 0.58 from one ("What's a good name for a puppy?": pets).
QUESTION_RANGE = {
    "use-multilingual-v3": (0.70, 0.80),
}
# An item counts fully when the query's attribute is its own nearest, not at all when that is
# ATTRIBUTE_MARGIN nearer than the query's ("My name's Priya": name 0.58, pet 0.40, to "what pet").
ATTRIBUTE_MARGIN = 0.2
# The items nearest the query's attribute compared with every attribute (the rest get no term).
ATTRIBUTE_POOL = 256
TYPE_WEIGHTS = {"FACT": 1.0, "PREFERENCE": 0.99, "PROCEDURE": 0.98, "EPISODE": 0.97}
DEFAULT_TYPE_WEIGHT = 0.98
# A fully decayed item keeps this share of its prior (decay orders, the cleanup job archives).
DECAY_FLOOR = 0.5
# The candidates below the agent's minimum, ranked first, sharing a word or the attribute with the query, whose
# clauses are each compared with the query: such an item's ``relevance`` takes its best clause's cosine when that
# is higher than its whole text's (the development updates set gives the same figures with 2, 3, 5 and 10, held
# out by writer 2 and 5 too: the fewest, each clause read is embedded unless the encoder remembers it).
CLAUSE_POOL = 2
# The least ``relevance`` an item needs to be given to the agent (with USE and no keyword: a cosine of
# 0.1625; with the hashing embedder 0.15). Searches someone asks for rank without it.
MIN_RELEVANCE = 0.07

# --- the query vector ---------------------------------------------------------------------------


def query_vector(embedder, query: str) -> np.ndarray:
    """The query's unit vector (its embedding: the query as it is asked; a mix with the embedding of its
    content words alone, what searches used until the blind set said it did not pay, is gone)."""
    return np.asarray(embedder.embed([query])[0], dtype=np.float32)


# --- the score -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreParts:
    """The parts of one item's score (explanations, receipts): see the module docstring."""

    cosine: float
    centrality: float
    semantic: float
    keyword: float
    keyword_z: float
    gate: float
    match: float
    relevance: float
    attribute: float
    time: float
    type_weight: float
    decay: float
    redundancy: float
    someone_else: float
    final: float

    def as_dict(self) -> dict[str, float]:
        # Fields read directly: ``dataclasses.asdict`` deep-copies each value, and a receipt writes
        # 50 of these per agent turn (0.81 → 0.32 ms of CPU; benchmarks/README.md § Proxy CPU per request).
        return {name: round(float(getattr(self, name)), 4) for name in self.__dataclass_fields__}


def cosine_range(model_name: str) -> tuple[float, float]:
    return COSINE_RANGE.get(model_name, DEFAULT_COSINE_RANGE)


@dataclass(frozen=True)
class Scores:
    """The score arrays of a scope's items for one query, aligned with the items."""

    cosine: np.ndarray
    centrality: np.ndarray
    semantic: np.ndarray
    keyword: np.ndarray
    keyword_z: np.ndarray
    gate: np.ndarray
    match: np.ndarray
    relevance: np.ndarray
    attribute: np.ndarray
    time: np.ndarray
    type_weight: np.ndarray
    decay: np.ndarray
    redundancy: np.ndarray
    someone_else: np.ndarray
    final: np.ndarray

    def reordered(self, order: np.ndarray) -> Scores:
        return Scores(**{name: getattr(self, name)[order] for name in ScoreParts.__dataclass_fields__})

    def parts(self, i: int) -> ScoreParts:
        return ScoreParts(*(float(getattr(self, name)[i]) for name in ScoreParts.__dataclass_fields__))

    def parts_list(self, count: int) -> list[ScoreParts]:
        """``[parts(0), …, parts(count - 1)]``, the same floats, one ``tolist`` per array (a 5,000-item
        ranking's candidates: 7 ms instead of 12 ms of CPU, the rest is building the frozen dataclasses)."""
        columns = [getattr(self, name)[:count].tolist() for name in ScoreParts.__dataclass_fields__]
        return [ScoreParts(*values) for values in zip(*columns)]


def type_weights(types: Sequence[str]) -> np.ndarray:
    return np.asarray([TYPE_WEIGHTS.get(str(t).upper(), DEFAULT_TYPE_WEIGHT) for t in types], dtype=np.float32)


def zscore(values: np.ndarray, least_spread: float = 0.0) -> np.ndarray:
    """``(values - mean) / max(standard deviation, least_spread)``; 0 everywhere when that is 0."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values.astype(np.float32)
    spread = max(float(values.std()), least_spread)
    if spread <= 1e-12:
        return np.zeros(values.shape, np.float32)
    return ((values - float(values.mean())) / spread).astype(np.float32)


def score(
    *,
    cosine: np.ndarray,
    keyword: np.ndarray,
    types: np.ndarray,
    relevance_scores: np.ndarray,
    model_name: str,
    time: np.ndarray | None = None,
    centrality: np.ndarray | None = None,
    attribute: np.ndarray | None = None,
) -> Scores:
    """The one scoring function (see the module docstring), vectorized over a scope's items; the
    redundancy is 0 until :func:`diversify` orders the first items.

    Args:
        cosine: cosine similarity of each item's vector to the query's.
        keyword: :meth:`KeywordIndex.scores` of each item.
        types: each item's type weight (:func:`type_weights`).
        relevance_scores: each item's decayed ``relevance_score``.
        model_name: the embedding model (its cosine range, for ``relevance``).
        time: 1 for each item dated inside the time the query asks about (:func:`time_matches`), else 0;
            ``None`` when the query names no time.
        centrality: each item's :func:`centrality` in its scope; ``None`` counts as 0 (candidates of the
            HNSW index).
        attribute: each item's :func:`attribute_affinity` with the query; ``None`` counts as 0.
    """
    floor, ceiling = cosine_range(model_name)
    cosine = np.asarray(cosine, dtype=np.float32)
    centrality = np.zeros_like(cosine) if centrality is None else np.asarray(centrality, dtype=np.float32)
    semantic = zscore(cosine - CENTRALITY_WEIGHT * centrality)
    keyword = np.asarray(keyword, dtype=np.float32)
    keyword_z = zscore(keyword, KEYWORD_MIN_SPREAD)
    match = ((1.0 - KEYWORD_WEIGHT) * semantic + KEYWORD_WEIGHT * keyword_z).astype(np.float32)
    best = float(keyword.max()) if keyword.size else 0.0
    gate = np.full(keyword.shape, min(1.0, max(0.0, (best - KEYWORD_GATE) / (1.0 - KEYWORD_GATE))), np.float32)
    plain = np.maximum((cosine - floor) / (ceiling - floor), 0.0)
    attribute = np.zeros_like(cosine) if attribute is None else np.asarray(attribute, dtype=np.float32)
    relevance = (SEMANTIC_SCALE * plain + (1.0 - SEMANTIC_SCALE) * gate * keyword
                 + ATTRIBUTE_WEIGHT * attribute).astype(np.float32)
    time = np.zeros_like(match) if time is None else np.asarray(time, dtype=np.float32)
    types = np.asarray(types, dtype=np.float32)
    decay = DECAY_FLOOR + (1.0 - DECAY_FLOOR) * np.clip(np.asarray(relevance_scores, dtype=np.float32), 0.0, 1.0)
    final = (match + TIME_WEIGHT * time - PRIOR_WEIGHT * (1.0 - types * decay)).astype(np.float32)
    return Scores(cosine=cosine, centrality=centrality, semantic=semantic, keyword=keyword, keyword_z=keyword_z,
                  gate=gate, match=match, relevance=relevance, attribute=attribute, time=time, type_weight=types,
                  decay=decay, redundancy=np.zeros_like(final), someone_else=np.zeros_like(final), final=final)


def about_someone_else(scores: Scores, positions: np.ndarray, others: np.ndarray) -> Scores:
    """``scores`` with the items at ``positions`` whose ``others`` is true (a statement about someone else of the
    person's, when the question is about the person) marked and ``SUBJECT_WEIGHT`` lower in ``final``."""
    someone_else = scores.someone_else.copy()
    someone_else[positions] = np.asarray(others, dtype=np.float32)
    final = (scores.final - SUBJECT_WEIGHT * someone_else).astype(np.float32)
    return replace(scores, someone_else=someone_else, final=final)


def with_clause_cosines(scores: Scores, positions: np.ndarray, clause_cosines: np.ndarray, model_name: str,
                        clause_attributes: np.ndarray | None = None) -> Scores:
    """``scores`` with the items at ``positions`` related by their best clause where it is nearer the query than
    their whole text (``clause_cosines``: each one's best clause's cosine; ``clause_attributes``: each one's best
    clause's :func:`attribute_affinity`, None for a model without one): the semantic and attribute parts of
    ``relevance`` computed again from them; the order (``final``) is left as it is."""
    floor, ceiling = cosine_range(model_name)
    cosine = scores.cosine[positions]
    gain = np.maximum(np.asarray(clause_cosines, dtype=np.float32) - np.maximum(cosine, floor), 0.0)
    relevance = scores.relevance.copy()
    relevance[positions] += SEMANTIC_SCALE * gain / (ceiling - floor)
    if clause_attributes is not None:
        attribute_gain = np.maximum(np.asarray(clause_attributes, dtype=np.float32) - scores.attribute[positions], 0.0)
        relevance[positions] += ATTRIBUTE_WEIGHT * attribute_gain
    return replace(scores, relevance=relevance)


def attribute_affinity(embedder, query: np.ndarray, item_cosines: Callable[[np.ndarray], np.ndarray],
                       item_vectors: Callable[[np.ndarray], np.ndarray]) -> np.ndarray | None:
    """Each item's ``attribute`` term with the query (the module docstring), ``None`` when the query is
    about no attribute clearly enough or the model has no ``ATTRIBUTE_RANGE``.

    Args:
        embedder: the search's embedder (its name; its ``embed`` makes the prototypes' vectors once per
            process, ``llm.attributes.attribute_space``).
        query: the query's unit vector.
        item_cosines: a unit vector -> the items' cosines with it (``ScopeData.cosines``): one product
            over the scope, as for the query.
        item_vectors: positions -> the items' vectors (``ScopeData.vectors``): the ``ATTRIBUTE_POOL``
            nearest the attribute are compared with every attribute (one product).
    """
    bounds = ATTRIBUTE_RANGE.get(embedder.name)
    if bounds is None:
        return None
    (q0, q1), (i0, i1) = bounds
    space = attribute_space(embedder.name, embedder.embed)
    nearness = space.scores(np.asarray(query, dtype=np.float32)[None, :])[0]
    about = np.minimum(1.0, (nearness - q0) / (q1 - q0))
    asked = QUESTION_RANGE.get(embedder.name)
    if asked is not None:
        questions = space.question_scores(query)
        nearest = int(np.argmax(questions))
        about[nearest] = max(about[nearest], min(1.0, (questions[nearest] - asked[0]) / (asked[1] - asked[0])))
    term = None
    products: dict[int, np.ndarray] = {}

    def cosines(attribute: int) -> np.ndarray:  # each attribute's product with the scope once
        if attribute not in products:
            products[attribute] = np.asarray(item_cosines(space.matrix[attribute]), dtype=np.float32)
        return products[attribute]

    # Every attribute the query is about, most first ("what does the user do for a living": how one works 0.32,
    # one's job 0.30, and the job's questions 0.79): an item counts by the one it is nearest to.
    for attribute in np.argsort(-about):
        if about[attribute] <= 0.0:
            break
        # Of one family (one's job and one's employer), the nearest counts: "I'm a concierge at a hotel" is a job.
        near = np.max([cosines(i) for i, name in enumerate(space.names) if one_family(name, space.names[attribute])],
                      axis=0)
        term = np.zeros_like(near) if term is None else term
        pool = np.flatnonzero(near > i0)
        if len(pool) > ATTRIBUTE_POOL:
            pool = pool[np.argpartition(-near[pool], ATTRIBUTE_POOL - 1)[:ATTRIBUTE_POOL]]
        if not len(pool):
            continue
        # How far the attribute is below the item's own nearest one: 0 when it is the nearest.
        below = space.scores(item_vectors(pool)).max(axis=1) - near[pool]
        term[pool] = np.maximum(term[pool], float(about[attribute]) * np.clip((near[pool] - i0) / (i1 - i0), 0.0, 1.0)
                                * np.clip(1.0 - below / ATTRIBUTE_MARGIN, 0.0, 1.0))
    return term


def rank_order(scores: Scores) -> np.ndarray:
    """The items' positions best first: by ``final``, equal ``final`` by the cosine net of the
    centrality, then by position (the scope's order: by id)."""
    # Two stable sorts, the second key first: np.lexsort gives the same order 10-20x slower (1 ms at 5,000).
    by_cosine = np.argsort(-(scores.cosine - CENTRALITY_WEIGHT * scores.centrality), kind="stable")
    return by_cosine[np.argsort(-scores.final[by_cosine], kind="stable")]


def newer_in_conflict_first(items: Sequence[tuple[str, object, Collection[str], float, str | None]]) -> list[int]:
    """The order of ``items`` (best first, each ``(id, when it became true, the ids it is in conflict with, its
    attribute term, its own nearest attribute or None)``) with each item that is in conflict with an older one given
    above it moved just above that older one, when it is at least as near the attribute asked about or both are
    nearest one attribute: until someone reviews the two, the later statement is the likelier to hold now
    ("现在隔天吃半片" after "一天一片50的", both kept by an unsure reconcile). "I grew up in Osaka." (where one comes from)
    stays below "I live in Tokyo." for "Where does the user live?". Positions into ``items``; the same order when
    none moves."""
    by_id = {item[0]: item for item in items}
    order = list(range(len(items)))
    while True:
        place = {items[p][0]: rank for rank, p in enumerate(order)}
        for rank, p in enumerate(order):
            _id, said, rivals, attribute, nearest = items[p]
            older = [place[r] for r in rivals
                     if place.get(r, rank) < rank and _gives_way(by_id[r], said, attribute, nearest)]
            if older:  # each move leaves one fewer such pair in the wrong order: it ends
                order.insert(min(older), order.pop(rank))
                break
        else:
            return order


def _gives_way(older: tuple, said, attribute: float, nearest: str | None) -> bool:
    _id, older_said, _rivals, older_attribute, older_nearest = older
    return older_said < said and (attribute >= older_attribute or nearest is not None and nearest == older_nearest)


def nearest_attributes(embedder, vectors: np.ndarray) -> list[str | None]:
    """Each vector's nearest attribute (``llm.attributes``), or None for every one with a model that has no
    ``ATTRIBUTE_RANGE``."""
    if ATTRIBUTE_RANGE.get(embedder.name) is None or not len(vectors):
        return [None] * len(vectors)
    return [name for name, _cosine, _margin in attribute_space(embedder.name, embedder.embed).attribute(vectors)]


def diversify(final: np.ndarray, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Maximal marginal relevance over a few items in rank order: each next item is the one whose
    ``final`` less ``DIVERSITY_WEIGHT`` times its highest cosine with the items already chosen is best
    (ties: the earlier in rank order).

    Args:
        final: the items' final scores, in rank order.
        vectors: their unit vectors, in the same order.

    Returns:
        The new order (indexes into the inputs), each item's redundancy and its final score less the
        redundancy's cost, both in the new order (the finals do not increase along it).
    """
    count = len(final)
    if count < 2 or DIVERSITY_WEIGHT <= 0:
        return np.arange(count), np.zeros(count, np.float32), np.asarray(final, np.float32)
    similar = np.asarray(vectors, dtype=np.float32) @ np.asarray(vectors, dtype=np.float32).T
    final = np.asarray(final, dtype=np.float64)
    redundancy = np.zeros(count)
    left = np.ones(count, dtype=bool)
    order, kept_redundancy, kept_final = [], [], []
    for _step in range(count):
        value = np.where(left, final - DIVERSITY_WEIGHT * redundancy, -np.inf)
        pick = int(np.argmax(value))
        order.append(pick)
        kept_redundancy.append(redundancy[pick])
        kept_final.append(value[pick])
        left[pick] = False
        redundancy = np.maximum(redundancy, similar[pick])
    return (np.asarray(order), np.asarray(kept_redundancy, np.float32), np.asarray(kept_final, np.float32))


def centrality(mean_cosines: np.ndarray) -> np.ndarray:
    """Each item's centrality from its cosine with the mean of its scope's vectors: centred on the scope
    (the average item's is 0), so that taking it off the cosine leaves a scope's scale as it was; 0 for
    every item of a scope of fewer than ``CENTRALITY_MIN_ITEMS``."""
    mean_cosines = np.asarray(mean_cosines, dtype=np.float32)
    if len(mean_cosines) < CENTRALITY_MIN_ITEMS:
        return np.zeros_like(mean_cosines)
    return (mean_cosines - float(mean_cosines.mean())).astype(np.float32)


def time_matches(days: np.ndarray | None, window, anchor: Scores | None = None) -> np.ndarray | None:
    """1 for each item whose day (``ltm.search.time_expressions.item_day``) is inside ``window``, else 0;
    ``None`` without a window.

    A window relative to an event ("before she moved", 搬家之前) is resolved to the day of the dated
    item whose ``anchor`` score (the event's words scored like a query) is highest, if its relevance
    reaches ``MIN_RELEVANCE``: items of that day and before (or after) it are inside (the day itself is both:
    "the summit at dawn after an exhausting ascent" is told the day of the ascent). Items of unknown day
    never are.
    """
    if window is None or days is None or len(days) == 0:
        return None
    days = np.asarray(days, dtype=np.float64)
    known = ~np.isnan(days)
    if window.anchor:
        if anchor is None:
            return None
        candidates = np.where(known, np.asarray(anchor.match, dtype=np.float64), -np.inf)
        best = int(np.argmax(candidates))
        if not known[best] or anchor.relevance[best] < MIN_RELEVANCE:
            return None
        inside = (days <= days[best]) if window.before else (days >= days[best])
    else:
        inside = np.ones(len(days), dtype=bool)
        if window.start is not None:
            inside &= days >= window.start
        if window.end is not None:
            inside &= days < window.end
    return (inside & known).astype(np.float32)
