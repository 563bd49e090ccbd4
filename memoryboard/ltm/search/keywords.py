"""Keyword tokens and the BM25 index of a scope, changed in place by the rows that changed.

Tokens (:func:`tokenize`): lower-cased words of letters and digits without English stop words (``bm25s``'s
list), reduced to their Snowball stem (PyStemmer: "volunteered", "volunteering" → "volunt"); in runs of
CJK characters every character and every pair of neighbours ("搬到北京" → 搬 到 北 京 搬到 到北 北京). No
dictionary to load, and a Chinese query meets a Chinese text whatever the segmentation: on the
development conversations, BM25 alone over Chinese turns 0.44 with bigrams only, 0.47 with jieba's words,
0.59 with characters and bigrams (docs/retrieval.md § How the ranking was chosen).

BM25 is Lucene's (``idf = ln(1 + (n - df + 0.5) / (df + 0.5))``, ``tf / (tf + k1 · (1 - b + b · dl / avgdl))``),
with ``BM25_K1`` 0.9 and a low length normalisation ``BM25_B`` 0.25: a raw turn of chat is long or short
for reasons that say nothing about what it holds. Scores are computed at query time from the postings,
so a changed scope changes only its counts: :meth:`KeywordIndex.changed` returns a new index in which the
rows removed no longer count and the rows added do, in the scope's new order, sharing what did not
change. Added rows go to a small delta beside the main postings, folded into them when the delta
reaches a quarter of the main part or a quarter of the rows are dead. Each row's score is the same sum,
in the same order, of the same numbers as in an index built from scratch over the same texts: the
results of a changed scope and of a cold one are equal, not close (``tests/ltm/test_scope_changes.py``).

An index is never changed once made (searches in other threads may be reading it); what its successors
share with it is append-only (the vocabulary and the rows' terms) and read only below its own sizes.

Nothing here imports Django.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS

BM25_K1 = 0.9
BM25_B = 0.25
# The delta (rows added since the last fold) is folded into the main postings once it holds this share
# of theirs, or once this share of the rows are dead (removed or replaced).
FOLD_SHARE = 0.25
# Bytes counted per vocabulary entry (a dict slot, a short str and an int).
VOCABULARY_BYTES = 120

_CJK = "\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(f"[{_CJK}]+|(?:(?![{_CJK}])\\w)+")
_CJK_RUN = re.compile(f"[{_CJK}]")
# The words that name the person a memory is about ("the user", "the customer", 用户, 客户): a question names them
# and so do the items written in the third person, so they match every such item and tell none apart.
PERSON_WORDS = frozenset({"user", "users", "customer", "customers", "client", "clients"})
STOPWORDS = frozenset(STOPWORDS_EN_PLUS) | PERSON_WORDS
_ZH_PERSON = re.compile("用户|客户")

# PyStemmer's objects are not thread-safe: one per thread (gunicorn's gthread workers).
_local = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


def tokenize(text: str) -> list[str]:
    """Keyword tokens of a text: stems of its words (no English stop words), CJK characters and pairs.

    Example:
        >>> tokenize("The user volunteers at 后端开发")
        ['后', '端', '开', '发', '后端', '端开', '开发', 'volunt']
    """
    tokens: list[str] = []
    words: list[str] = []
    for run in _TOKEN.findall(_ZH_PERSON.sub(" ", (text or "").lower())):
        if _CJK_RUN.match(run):
            tokens.extend(run)
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
        elif run not in STOPWORDS and run != "_":
            words.append(run)
    if words:
        tokens.extend(_stemmer().stemWords(words))
    return tokens


def _row_terms(tokens: list[str], vocabulary: dict[str, int]) -> dict[int, int]:
    """A row's distinct term ids (new tokens added to ``vocabulary``) and their counts."""
    counts: dict[int, int] = {}
    for token in tokens:
        term = vocabulary.setdefault(token, len(vocabulary))
        counts[term] = counts.get(term, 0) + 1
    return counts


class _Rows:
    """Every row's terms, flat and append-only (CSR: ``start``, ``terms``, ``counts``), and the
    vocabulary, shared by the successive indexes of one scope. An index reads only the rows and terms
    below its own sizes, so a successor appending (in place, or into larger copies) never disturbs it."""

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        self.start = np.zeros(1, np.int64)
        self.terms = np.zeros(0, np.int32)
        self.counts = np.zeros(0, np.int32)
        self.rows = 0
        self.postings = 0
        self.lock = threading.Lock()  # one writer at a time

    def append(self, rows: list[dict[int, int]]) -> None:
        """Add rows (under ``lock``); the arrays grow by copies, at least doubling."""
        need_rows = self.rows + len(rows) + 1
        need = self.postings + sum(len(row) for row in rows)
        if need_rows > len(self.start):
            start = np.zeros(max(need_rows, 2 * len(self.start)), np.int64)
            start[: self.rows + 1] = self.start[: self.rows + 1]
            self.start = start
        if need > len(self.terms):
            size = max(need, 2 * len(self.terms))
            terms, counts = np.zeros(size, np.int32), np.zeros(size, np.int32)
            terms[: self.postings], counts[: self.postings] = self.terms[: self.postings], self.counts[: self.postings]
            self.terms, self.counts = terms, counts
        at = self.postings
        for row in rows:
            end = at + len(row)
            self.terms[at:end] = np.fromiter(row.keys(), np.int32, len(row))
            self.counts[at:end] = np.fromiter(row.values(), np.int32, len(row))
            self.rows += 1
            self.start[self.rows] = at = end
        self.postings = at

    def copy_below(self, rows: int, terms: int) -> _Rows:
        """A private copy of the first ``rows`` rows and ``terms`` terms."""
        other = _Rows()
        other.vocabulary = {token: term for token, term in self.vocabulary.items() if term < terms}
        other.rows, other.postings = rows, int(self.start[rows])
        other.start = self.start[: rows + 1].copy()
        other.terms, other.counts = self.terms[: other.postings].copy(), self.counts[: other.postings].copy()
        return other


def _postings(rows: _Rows, count: int, live: np.ndarray, size: int):
    """Term-major postings of the live rows among the first ``count``: (start per term, rows, counts)."""
    end = int(rows.start[count])
    owner = np.repeat(np.arange(count, dtype=np.int32), np.diff(rows.start[: count + 1]))
    keep = live[owner]
    term_ids = rows.terms[:end][keep]
    order = np.argsort(term_ids, kind="stable")
    begin = np.zeros(size + 1, np.int64)
    np.cumsum(np.bincount(term_ids, minlength=size), out=begin[1:])
    return begin, owner[keep][order], rows.counts[:end][keep][order]


class KeywordIndex:
    """BM25 over the texts of one scope, in the scope's order (see the module docstring)."""

    def __init__(self, texts: Sequence[str] = ()) -> None:
        rows = _Rows()
        rows.append([_row_terms(tokenize(text), rows.vocabulary) for text in texts])
        count = rows.rows
        self._rows = rows
        self._slots = count  # rows of ``_rows`` this index reads
        self._terms = len(rows.vocabulary)
        self._position = np.arange(count, dtype=np.int64)  # per slot: its row in the scope, -1 when dead
        self._length = np.zeros(count, np.float64)
        np.add.at(self._length, np.repeat(np.arange(count), np.diff(rows.start[: count + 1])),
                  rows.counts[: rows.postings].astype(np.float64))
        self._df = np.bincount(rows.terms[: rows.postings], minlength=self._terms).astype(np.int64)
        self.size = count
        self._total = float(self._length.sum())
        self._main = _postings(rows, count, np.ones(count, dtype=bool), self._terms)
        self._delta: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._delta_postings = 0
        self._dead = 0

    def changed(self, *, old_to_new: np.ndarray, size: int, added: Sequence[tuple[int, str]]) -> KeywordIndex:
        """A new index for the scope after a change: ``old_to_new`` gives each of this index's rows its
        row in the new scope (-1: removed or replaced), ``added`` the new scope's other rows
        ``(row, text)``; ``size`` is the new scope's row count."""
        other = object.__new__(KeywordIndex)
        other.__dict__.update(self.__dict__)
        alive = self._position >= 0
        position = np.full(self._slots, -1, np.int64)
        position[alive] = np.asarray(old_to_new, np.int64)[self._position[alive]]
        gone = np.flatnonzero(alive & (position < 0))
        df = self._df.copy()
        rows = self._rows
        with rows.lock:
            if rows.rows != self._slots or len(rows.vocabulary) != self._terms:
                # A successor of this index was made already (two searches updating the same scope at
                # once): continue from a private copy of what this index reads.
                rows = rows.copy_below(self._slots, self._terms)
            for slot in gone.tolist():
                df[rows.terms[rows.start[slot] : rows.start[slot + 1]]] -= 1
            new = [_row_terms(tokenize(text), rows.vocabulary) for _row, text in added]
            rows.append(new)
            terms = len(rows.vocabulary)
        if terms > len(df):
            df = np.concatenate([df, np.zeros(terms - len(df), np.int64)])
        lengths = np.asarray([float(sum(row.values())) for row in new], dtype=np.float64)
        delta = dict(self._delta)
        for slot, row in enumerate(new, start=self._slots):
            for term, count in row.items():
                df[term] += 1
                entry = (np.asarray([slot], np.int32), np.asarray([count], np.int32))
                found = delta.get(term)
                delta[term] = entry if found is None else (np.concatenate([found[0], entry[0]]),
                                                           np.concatenate([found[1], entry[1]]))
        other._rows = rows
        other._position = np.concatenate([position, np.asarray([row for row, _text in added], np.int64)])
        other._length = np.concatenate([self._length, lengths])
        other._df = df
        other._slots = self._slots + len(new)
        other._terms = terms
        other.size = int(size)
        other._total = self._total - float(self._length[gone].sum()) + float(lengths.sum())
        other._dead = self._dead + len(gone)
        other._delta = delta
        other._delta_postings = self._delta_postings + sum(len(row) for row in new)
        if (other._delta_postings > FOLD_SHARE * max(len(self._main[1]), 64)
                or other._dead > FOLD_SHARE * max(other._slots, 64)):
            other._main = _postings(rows, other._slots, other._position >= 0, terms)
            other._delta, other._delta_postings, other._dead = {}, 0, 0
        return other

    def _query_terms(self, query: str) -> tuple[list[int], int]:
        """The distinct query tokens some row holds, as term ids, and the count of the others."""
        tokens = list(dict.fromkeys(tokenize(query)))
        vocabulary = self._rows.vocabulary
        known = []
        for token in tokens:
            term = vocabulary.get(token)
            if term is not None and term < self._terms and self._df[term] > 0:
                known.append(term)
        return known, len(tokens) - len(known)

    def _idf(self, df):
        return np.log1p((self.size - df + 0.5) / (df + 0.5))

    def raw_scores(self, query: str) -> np.ndarray:
        """Each row's BM25 score for ``query`` (Lucene's, without the constant ``k1 + 1``), in scope order."""
        out = np.zeros(self.size, dtype=np.float64)
        known, _unknown = self._query_terms(query)
        if not known:
            return out
        avgdl = self._total / self.size
        begin, owners, counts = self._main
        main_terms = len(begin) - 1
        for term in known:
            idf = float(self._idf(float(self._df[term])))
            parts = []
            if term < main_terms and begin[term + 1] > begin[term]:
                parts.append((owners[begin[term] : begin[term + 1]], counts[begin[term] : begin[term + 1]]))
            if term in self._delta:
                parts.append(self._delta[term])
            for slots, tf in parts:
                position = self._position[slots]
                alive = position >= 0
                slots, position = slots[alive], position[alive]
                tf = tf[alive].astype(np.float64)
                norm = BM25_K1 * (1.0 - BM25_B + BM25_B * self._length[slots] / avgdl)
                out[position] += idf * tf / (tf + norm)
        return out

    def scores(self, query: str) -> np.ndarray:
        """Each row's BM25 score divided by a plain match's (0..1): the share of the query it matches.

        A plain match holds each query token once at the average length: ``idf / (1 + k1)`` each; a
        token no row holds counts with the highest idf."""
        known, unknown = self._query_terms(query)
        if not known:
            return np.zeros(self.size, dtype=np.float32)
        best = (float(self._idf(self._df[known].astype(np.float64)).sum())
                + float(self._idf(0.0)) * unknown) / (1.0 + BM25_K1)
        return np.clip(self.raw_scores(query) / best, 0.0, 1.0).astype(np.float32)

    @property
    def nbytes(self) -> int:
        """The index's arrays (the rows' terms counted whole: the newest index of a scope holds them)."""
        shared = self._rows
        own = self._position.nbytes + self._length.nbytes + self._df.nbytes + sum(p.nbytes for p in self._main)
        return int(own + shared.start.nbytes + shared.terms.nbytes + shared.counts.nbytes
                   + VOCABULARY_BYTES * len(shared.vocabulary))
