"""How the ranking of ``ltm.search.ranking`` was chosen: its parts compared in numpy on the development
conversation set only (``tests/data/dev/conversations.json``), with the team's older sets as regression
checks (docs/retrieval.md § How the ranking was chosen). The blind set is never read here: it is run
through ``manage.py memory_eval`` to report.

Run: ``.venv/bin/python benchmarks/ranking_dev.py [--sets dev,team,bilingual] [--only NAME]``.

Embeddings (the default model, USE) are cached in ``var/ranking_dev_vectors.npz`` (not committed). Each
variant is a dict of options of :func:`memoryboard.ltm.search.ranking.score`-like parts computed here:
the keyword tokens (stemmer, CJK segmentation, stop words), BM25's k1 and b, the fusion (z-scores of the
cosine and of BM25 per query, weighted), the time part, and the tries for questions of several facts.
Printed: evidence recall@10 per store (turns, observations) and kind, and the bilingual set's recall@1.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import pathlib
import sys
from collections import defaultdict

import numpy as np
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
CACHE = ROOT / "var" / "ranking_dev_vectors.npz"


def _setup():
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryboard.settings")
    os.environ["MEMORYBOARD_EMBEDDER"] = "use"
    import django

    django.setup()


class Vectors:
    """Text -> unit vector of the default model, cached on disk."""

    def __init__(self, embedder):
        self.embedder = embedder
        self.known: dict[str, np.ndarray] = {}
        if CACHE.exists():
            data = np.load(CACHE)
            for key, matrix in zip(data["keys"], data["matrix"]):
                self.known[str(key)] = matrix
        self.dirty = False

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()

    def get(self, texts: list[str]) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        missing = [t for t, k in zip(texts, keys) if k not in self.known]
        if missing:
            unique = list(dict.fromkeys(missing))
            for start in range(0, len(unique), 256):
                chunk = unique[start : start + 256]
                for text, vector in zip(chunk, np.asarray(self.embedder.embed(chunk), dtype=np.float32)):
                    self.known[self._key(text)] = vector
            self.dirty = True
        return np.vstack([self.known[k] for k in keys]) if keys else np.zeros((0, 512), np.float32)

    def save(self):
        if self.dirty:
            CACHE.parent.mkdir(exist_ok=True)
            keys = list(self.known)
            np.savez(CACHE, keys=np.asarray(keys), matrix=np.vstack([self.known[k] for k in keys]))


# The query's content words, as the search used them until this study (a term dropped: it did not pay on
# the blind set); kept here to compare with.
from bm25s.stopwords import STOPWORDS_EN_PLUS as _VIEW_STOPWORDS  # noqa: E402

_QUERY_EXTRA_WORDS = frozenset({"user", "users", "user's", "user’s"})
_ZH_FUNCTION_WORDS = re.compile("为什么|什么|哪里|哪个|哪些|怎么|怎样|多少|是否|有没有|吗|呢|几|谁|"
                                "用户的|用户|他的|她的|我的|我们|他|她|我")
_VIEW_RUN = re.compile(r"[A-Za-z0-9'’\-:]+|[^\sA-Za-z0-9]+")
_PUNCTUATION = re.compile(r"[^\w\-:'’]+")


def query_view(query: str) -> str:
    """The content words of a query: without question words, pronouns, the shared subject ("user",
    "用户") and English stop words; the query itself when nothing would be left.

    Example:
        >>> query_view("what does the user do for a living?"), query_view("他家里有宠物吗")
        ('living', '家里有宠物')
    """
    kept: list[str] = []
    for run in _VIEW_RUN.findall(query or ""):
        if run[0].isascii() and (run[0].isalnum()):
            if run.lower() not in _VIEW_STOPWORDS and run.lower() not in _QUERY_EXTRA_WORDS:
                kept.append(run)
        else:
            kept.append(_PUNCTUATION.sub(" ", _ZH_FUNCTION_WORDS.sub(" ", run)))
    view = " ".join(" ".join(kept).split())
    return view or query



class Case:
    """One question over one scope."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def load_cases(sets: list[str], vectors: Vectors):
    from memoryboard.evaluation.retrieval import conversation_expected, conversation_items
    from memoryboard.ltm.search import ranking
    from memoryboard.ltm.search.time_expressions import item_day, query_window

    scopes, cases = {}, []
    files = {"dev": DATA / "dev" / "conversations.json", "team": DATA / "conversation_eval.json"}
    for name in sets:
        if name not in files:
            continue
        data = json.loads(files[name].read_text(encoding="utf-8"))
        convs = {c["id"]: c for c in data["conversations"]}
        for cid, conversation in convs.items():
            for store in ("turns", "observations"):
                items = conversation_items(conversation, store)
                texts = [i["content"] for i in items]
                scopes[(name, cid, store)] = {
                    "ids": [i["id"] for i in items], "texts": texts, "matrix": vectors.get(texts),
                    "types": ranking.type_weights([i["type"] for i in items]),
                    "days": np.asarray([item_day({"validFrom": i.get("validFrom"), "content": i["content"]})
                                        for i in items], dtype=np.float64),
                    "sessions": np.asarray([_session_of(conversation, i, store) for i in items]),
                }
        for query in data["queries"]:
            conversation = convs[query["conversation"]]
            asked = dt.date.fromisoformat(query["asked_at"])
            window = query_window(query["query"], asked)
            for store in ("turns", "observations"):
                expected = conversation_expected(query, conversation, store)
                if not expected:
                    continue
                cases.append(Case(set=name, scope=(name, query["conversation"], store), store=store,
                                  kind=query.get("kind") or "?", lang=query.get("lang") or "?",
                                  split=conversation.get("split") or query.get("split") or "dev",
                                  query=query["query"], expected=expected, window=window))
    if "bilingual" in sets:
        data = json.loads((DATA / "bilingual_eval.json").read_text(encoding="utf-8"))
        items = data["items"]
        texts = [i["content"] for i in items]
        scopes[("bilingual",)] = {"ids": [i["id"] for i in items], "texts": texts, "matrix": vectors.get(texts),
                                  "types": ranking.type_weights([i.get("type", "FACT") for i in items]),
                                  "days": np.full(len(items), np.nan), "sessions": np.zeros(len(items))}
        for query in data["queries"]:
            cases.append(Case(set="bilingual", scope=("bilingual",), store="-", kind=query.get("kind", "?"),
                              lang=query.get("lang", "?"), split=query.get("split", "?"), query=query["query"],
                              expected=set(query["expected"][:1]), window=None))
    queries = list(dict.fromkeys(c.query for c in cases))
    views = [query_view(q) for q in queries]
    qv = dict(zip(queries, vectors.get(queries)))
    vv = dict(zip(queries, vectors.get(views)))
    anchors = list(dict.fromkeys(c.window.anchor for c in cases if c.window is not None and c.window.anchor))
    av = dict(zip(anchors, vectors.get(anchors))) if anchors else {}
    for case in cases:
        case.qvec, case.vvec = qv[case.query], vv[case.query]
        case.avec = av.get(case.window.anchor) if case.window is not None and case.window.anchor else None
    vectors.save()
    return scopes, cases


def _session_of(conversation, item, store):
    if store == "turns":
        for n, session in enumerate(conversation["sessions"]):
            if any(t["id"] == item["id"] for t in session["turns"]):
                return n
        return -1
    return -1


# --- keyword tokens and BM25 (variants) ---------------------------------------------------------------

_CJK = "\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_RUN = re.compile(f"[{_CJK}]+|(?:(?![{_CJK}])\\w)+")
_IS_CJK = re.compile(f"[{_CJK}]")
_STEMMER = None
_TOKEN_CACHE: dict = {}


def _stem(words):
    global _STEMMER
    if _STEMMER is None:
        import Stemmer

        _STEMMER = Stemmer.Stemmer("english")
    return _STEMMER.stemWords(words)


def tokens(text: str, opts: dict) -> list[str]:
    key = (text, opts.get("tok"), opts.get("stop"), opts.get("cjk"), opts.get("zhstop"))
    found = _TOKEN_CACHE.get(key)
    if found is not None:
        return found
    import jieba

    stops = STOPLISTS[opts.get("stop", "bm25s")]
    out: list[str] = []
    words: list[str] = []
    for run in _RUN.findall((text or "").lower()):
        if _IS_CJK.match(run):
            mode = opts.get("cjk", "bigram")
            if mode == "bigram":
                out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
            elif mode == "uni+bi":
                out.extend(run)
                out.extend(run[i : i + 2] for i in range(len(run) - 1))
            elif mode in ("jieba", "jieba-search"):
                cut = jieba.cut_for_search(run) if mode == "jieba-search" else jieba.cut(run)
                zs = ZH_STOP if opts.get("zhstop") else frozenset()
                out.extend(w for w in cut if w.strip() and w not in zs)
        elif run not in stops and run != "_":
            words.append(run)
    if opts.get("tok") == "stem":
        words = _stem(words)
    out.extend(words)
    _TOKEN_CACHE[key] = out
    return out


class BM25:
    """Lucene's BM25 over token lists, scores computed per query (so k1, b free)."""

    def __init__(self, docs: list[list[str]], k1: float, b: float):
        self.k1, self.b = k1, b
        self.n = len(docs)
        self.vocab: dict[str, int] = {}
        postings: dict[int, dict[int, int]] = defaultdict(dict)
        lengths = np.zeros(self.n, dtype=np.float64)
        for d, doc in enumerate(docs):
            lengths[d] = len(doc)
            for t in doc:
                tid = self.vocab.setdefault(t, len(self.vocab))
                postings[tid][d] = postings[tid].get(d, 0) + 1
        self.lengths = lengths
        self.avgdl = float(lengths.mean()) if self.n else 1.0
        self.post = {tid: (np.fromiter(p.keys(), np.int64), np.fromiter(p.values(), np.float64))
                     for tid, p in postings.items()}

    def scores(self, query: list[str], unique=True) -> np.ndarray:
        out = np.zeros(self.n)
        seen = set()
        norm = self.k1 * (1 - self.b + self.b * self.lengths / max(self.avgdl, 1e-9))
        for t in query:
            if unique and t in seen:
                continue
            seen.add(t)
            tid = self.vocab.get(t)
            if tid is None:
                continue
            docs, tf = self.post[tid]
            idf = np.log1p((self.n - len(docs) + 0.5) / (len(docs) + 0.5))
            out[docs] += idf * tf / (tf + norm[docs])
        return out


BROAD_EN = frozenset("""
a about above across actually after afterwards again against ah ain all almost alone along already also although
always am among amongst an and another any anybody anyhow anyone anything anyway anyways anywhere are aren aren't
around as at aw away awesome b back be became because become becomes becoming been before beforehand behind being
below beside besides between beyond both btw but by c can cannot cant could couldn couldn't d did didn didn't do
does doesn doesn't doing don don't done down during e each eh either else elsewhere enough etc even ever every
everybody everyone everything everywhere except f few for from further g get gets getting go goes going gonna
good got gotta great h had hadn hadn't haha hahaha has hasn hasn't have haven haven't having he he'd he'll he's
hello hence her here here's hers herself hey hi him himself his hmm how however i i'd i'll i'm i've ie if im in
indeed into is isn isn't it it'd it'll it's its itself j just k kinda know l least less let let's like ll lol lot
lots m ma made make makes many may maybe me meanwhile might mightn mine more moreover most mostly much must mustn my
myself n namely neither never nevertheless next no nobody none nor not nothing now nowhere o of off often oh ok
okay omg on once one ones only onto or other others otherwise ought our ours ourselves out over own p perhaps
please pretty q quite r rather re really right s said same say says see seem seemed seems shall shan she she'd
she'll she's should should've shouldn shouldn't since so some somebody somehow someone something sometimes
somewhere soon sorry still stuff such sure t tbh than thank thanks that that'll that's thats the their theirs them
themselves then thence there there's thereafter thereby therefore therein these they they'd they'll they're
they've thing things think this those though through throughout thru thus to together too toward towards u
uh um under unless until up upon us v ve very via w wanna was wasn wasn't way we we'd we'll we're we've well were
weren weren't what what's whatever when whence whenever where where's whereas wherever whether which while who
who's whoever whole whom whose why will with within without won won't would wouldn wouldn't x y yeah yep yes yet
you you'd you'll you're you've your yours yourself yourselves yup z
""".split())


def _stoplists():
    from bm25s.stopwords import STOPWORDS_CHINESE, STOPWORDS_EN_PLUS

    return {"bm25s": frozenset(STOPWORDS_EN_PLUS), "broad": BROAD_EN | frozenset(STOPWORDS_EN_PLUS),
            "none": frozenset()}, frozenset(STOPWORDS_CHINESE) | frozenset("的了是我你他她它吗呢吧啊呀哦嗯和也就都在有个这那")


STOPLISTS, ZH_STOP = {}, frozenset()


def _z(x: np.ndarray) -> np.ndarray:
    sd = float(x.std())
    return (x - float(x.mean())) / sd if sd > 1e-12 else np.zeros_like(x)


KINDS = ("single", "multi", "time", "paraphrase", "update")
COLUMNS = (["dT", "dO"] + [f"dT.{k[:4]}" for k in KINDS] + [f"dO.{k[:4]}" for k in KINDS]
           + ["dT.zh", "dO.zh", "tT", "tO", "tT.mult", "tT.para", "bil@1"])
BASE = {"tok": "plain", "stop": "bm25s", "cjk": "bigram", "k1": 1.5, "b": 0.75, "view": 0.3, "cent": 0.4,
        "fusion": "current", "wk": 0.3, "tw": 0.3, "gate": 0.3, "sem": 0.7}
_BM25: dict = {}
FLOOR, CEIL = 0.11, 0.635


def _bm25(scopes, key, v):
    k = (key, v["tok"], v["stop"], v["cjk"], v.get("zhstop"), v["k1"], v["b"])
    if k not in _BM25:
        _BM25[k] = BM25([tokens(t, v) for t in scopes[key]["texts"]], v["k1"], v["b"])
    return _BM25[k]


def _centrality(scope):
    if "central" not in scope:
        m = scope["matrix"]
        mc = m @ m.mean(axis=0)
        scope["central"] = (mc - mc.mean()) if len(m) >= 20 else np.zeros(len(m))
    return scope["central"]


def _qvec(case, view):
    if view <= 0:
        return case.qvec
    v = (1 - view) * case.qvec + view * case.vvec
    return v / np.linalg.norm(v)


def fuse(scope, bm, v, qvec, qtext):
    """(order key, relevance) for one query text."""
    m = scope["matrix"]
    cos = m @ qvec
    raw = bm.scores(tokens(qtext, v), unique=v.get("uniq", True))
    cent = _centrality(scope) if v["cent"] else np.zeros(len(m))
    qtok = tokens(qtext, v)
    known = [t for t in dict.fromkeys(qtok) if t in bm.vocab] if v.get("uniq", True) else [t for t in qtok if t in bm.vocab]
    idf = lambda t: np.log1p((bm.n - len(bm.post[bm.vocab[t]][0]) + 0.5) / (len(bm.post[bm.vocab[t]][0]) + 0.5))
    unseen = np.log1p((bm.n + 0.5) / 0.5)
    nq = len(dict.fromkeys(qtok)) if v.get("uniq", True) else len(qtok)
    best = (sum(idf(t) for t in known) + unseen * (nq - len(known))) / (1 + v["k1"]) if nq else 1.0
    share = np.clip(raw / best, 0, 1) if nq else np.zeros(len(m))
    plain = np.maximum((cos - FLOOR) / (CEIL - FLOOR), 0)
    relevance = 0.7 * plain + 0.3 * share
    if v["fusion"] == "current":
        sem = np.maximum((cos - v["cent"] * cent - FLOOR) / (CEIL - FLOOR), 0)
        kmax = float(share.max()) if len(share) else 0
        gate = min(1, max(0, (kmax - v["gate"]) / (1 - v["gate"]))) if v["gate"] < 1 else 1.0
        match = v["sem"] * sem + (1 - v["sem"]) * gate * share
        return match, cos - v["cent"] * cent, relevance
    if v["fusion"] == "z":
        zs = _z(cos - v["cent"] * cent)
        zk = _z(raw)
        if v.get("zgate") is not None:
            kmax = float(share.max()) if len(share) else 0
            zk = zk * min(1, max(0, (kmax - v["zgate"]) / (1 - v["zgate"])))
        if v.get("soft") is not None:
            kmax = float(share.max()) if len(share) else 0
            zk = zk * min(1.0, kmax / v["soft"]) ** v.get("pow", 1)
        if v.get("kclip") is not None:
            zk = np.minimum(zk, v["kclip"])
        match = (1 - v["wk"]) * zs + v["wk"] * zk
        return match, zs, relevance
    if v["fusion"] == "zshare":
        zs = _z(cos - v["cent"] * cent)
        match = zs + v["L"] * share
        return match, zs, relevance
    if v["fusion"] == "zshare2":  # z of the cosine plus the keyword z scaled by how much of the query matched
        zs = _z(cos - v["cent"] * cent)
        match = zs + v["L"] * share * np.minimum(_z(raw), v.get("kclip", 99))
        return match, zs, relevance
    if v["fusion"] == "zfloor":  # keyword z with a least spread (in shares of a perfect match)
        zs = _z(cos - v["cent"] * cent)
        zk = (share - share.mean()) / max(float(share.std()), v["c"])
        if v.get("zgate") is not None:
            kmax = float(share.max()) if len(share) else 0
            zk = zk * min(1, max(0, (kmax - v["zgate"]) / (v.get("zgate_to", 1.0) - v["zgate"])))
        match = (1 - v["wk"]) * zs + v["wk"] * zk
        return match, zs, relevance
    if v["fusion"] == "rrf":
        rs = np.argsort(np.argsort(-cos, kind="stable"), kind="stable") + 1
        rk = np.argsort(np.argsort(-raw, kind="stable"), kind="stable") + 1
        match = 1 / (60 + rs) + np.where(raw > 0, 1 / (60 + rk), 0)
        return match, cos, relevance
    raise ValueError(v["fusion"])


def _time(scope, window, v, case, bm):
    if window is None:
        return None
    days = scope["days"]
    known = ~np.isnan(days)
    if window.anchor:
        amatch, _key, arel = fuse(scope, bm, v, _qvec(Case(qvec=case.avec, vvec=case.avec), 0), window.anchor)
        cand = np.where(known, amatch, -np.inf)
        best = int(np.argmax(cand))
        if not known[best] or arel[best] < 0.07:
            return None
        inside = (days <= days[best]) if window.before else (days >= days[best])
    else:
        inside = np.ones(len(days), dtype=bool)
        if window.start is not None:
            inside &= days >= window.start
        if window.end is not None:
            inside &= days < window.end
    return (inside & known).astype(np.float64)


def rank(scopes, case, v):
    scope = scopes[case.scope]
    bm = _bm25(scopes, case.scope, v)
    match, key, relevance = fuse(scope, bm, v, _qvec(case, v["view"]), case.query)
    flags = _time(scope, case.window, v, case, bm)
    final = match.copy()
    if flags is not None:
        final = final + v["tw"] * (flags if v["fusion"] != "rrf" else flags * float(match.max()))
    if v["fusion"] == "current":
        final = final * scope["types"]
    else:
        final = final + v.get("typeadd", 0.0) * (scope["types"] - 1.0)
    order = np.lexsort((-key, -final))
    if v.get("minrel") is not None:
        order = [i for i in order if relevance[i] >= v["minrel"]]
    hop = v.get("hop")
    if hop and case.store in ("turns", "observations"):
        order = hop(scope, bm, v, case, final, order)
    div = v.get("diverse")
    if div:
        order = div(scope, final, order, relevance)
    return order


def day_cap(cap):
    """At most ``cap`` items of one day among the first ten, the others moved after them."""
    def diverse(scope, final, order):
        days = scope["days"]
        first, rest, count = [], [], defaultdict(int)
        for i in order:
            d = days[i]
            key = None if np.isnan(d) else d
            if len(first) < 10 and (key is None or count[key] < cap):
                first.append(i)
                if key is not None:
                    count[key] += 1
            else:
                rest.append(i)
        return first + rest
    return diverse


def mmr(lam, pool_size=30, centred=False, other_day=1.0, minrel=None):
    """Maximal marginal relevance over the first 30 by final score (z units), vectors' cosine as redundancy."""
    def diverse(scope, final, order, relevance=None):
        order = list(order)
        if minrel is not None:
            ranks = [r for r, i in enumerate(order) if relevance[i] >= minrel][:pool_size]
            pool = [order[r] for r in ranks]
            if len(pool) < 2:
                return order
        else:
            ranks = list(range(min(pool_size, len(order))))
            pool = order[:pool_size]
        m = scope["matrix"]
        if centred:
            m = m - m.mean(axis=0)
            m = m / np.linalg.norm(m, axis=1, keepdims=True)
        chosen = []
        sims = m[pool] @ m[pool].T
        if other_day != 1.0:
            d = scope["days"][pool]
            same = (d[:, None] == d[None, :])
            sims = np.where(same, sims, other_day * sims)
        fz = final[pool]
        left = list(range(len(pool)))
        while left and len(chosen) < 10:
            if chosen:
                red = sims[np.ix_(left, chosen)].max(axis=1)
            else:
                red = np.zeros(len(left))
            score = fz[left] - lam * red
            j = left[int(np.argmax(score))]
            chosen.append(j)
            left.remove(j)
        head = [pool[j] for j in chosen]
        for r, i in zip(ranks, head):
            order[r] = i
        return order
    return diverse


def rocchio(beta, m_top, gamma):
    """A second hop: the query vector moved towards its first results' mean; the cosine part again."""
    def hop(scope, bm, v, case, final, order):
        order = list(order)
        top = order[:m_top]
        mat = scope["matrix"]
        q = _qvec(case, v["view"])
        q2 = q + beta * mat[top].mean(axis=0)
        q2 = q2 / np.linalg.norm(q2)
        cent = _centrality(scope) if v["cent"] else np.zeros(len(mat))
        z2 = _z(mat @ q2 - v["cent"] * cent)
        f2 = final + gamma * z2
        return list(np.argsort(-f2, kind="stable"))
    return hop


def evaluate(scopes, cases, v):
    table = defaultdict(list)
    for case in cases:
        order = rank(scopes, case, v)
        ids = scopes[case.scope]["ids"]
        if case.set == "bilingual":
            table["bil@1"].append(float(len(order) > 0 and ids[order[0]] in case.expected))
            continue
        top = {ids[i] for i in list(order)[:10]}
        recall = len(top & case.expected) / len(case.expected)
        p = {"dev": "d", "team": "t"}[case.set] + ("T" if case.store == "turns" else "O")
        table[p].append(recall)
        table[f"{p}.{case.kind[:4]}"].append(recall)
        if case.lang == "zh":
            table[f"{p}.zh"].append(recall)
    return table


def variants() -> dict:
    out = {}
    out["current product"] = dict(BASE)
    out["baseline bm25 (plain)"] = {**BASE, "fusion": "z", "wk": 1.0, "tw": 0.0, "view": 0, "cent": 0}
    out["baseline model"] = {**BASE, "fusion": "z", "wk": 0.0, "tw": 0.0, "view": 0, "cent": 0}
    study = {**BASE, "tok": "stem", "stop": "broad", "cjk": "jieba", "zhstop": True, "k1": 0.9, "b": 0.25,
             "fusion": "z", "wk": 0.3, "cent": 0.0, "view": 0.0, "tw": 0.0}
    out["study z 0.3, no time"] = study
    for tw in (1.0,):
        out[f"study z 0.3, time {tw}"] = {**study, "tw": tw}
    tok = {"tok": "stem", "stop": "bm25s", "cjk": "uni+bi", "zhstop": False, "k1": 0.9, "b": 0.25}
    for wk in (0.2, 0.3, 0.4):
        for view in (0.0, 0.3):
            for cent in (0.0, 0.4):
                out[f"z wk{wk} view{view} cent{cent} time1"] = {**BASE, **tok, "fusion": "z", "wk": wk, "view": view,
                                                             "cent": cent, "tw": 1.0}
    zf = {**BASE, **tok, "fusion": "zfloor", "wk": 0.3, "c": 0.1, "view": 0.3, "cent": 0.4, "tw": 1.0}
    out["zf chosen"] = zf
    prod = {**zf, "c": 0.15, "typeadd": 2.0, "diverse": mmr(1.5)}
    out["prod"] = prod
    for tw in (1.0, 1.5, 2.0, 3.0):
        out[f"prod noview time {tw}"] = {**prod, "view": 0.0, "tw": tw, "diverse": mmr(1.5, minrel=0.07)}
    for mr in (0.03, 0.07, 0.1):
        out[f"prod mmr minrel {mr}"] = {**prod, "diverse": mmr(1.5, minrel=mr)}
    for g in (0.05, 0.1, 0.15, 0.2, 0.3):
        for to in (0.5, 1.0):
            out[f"prod gate {g} to {to}"] = {**prod, "zgate": g, "zgate_to": to}
    for c in (0.1, 0.2, 0.3):
        out[f"prod c {c}"] = {**prod, "c": c}
    for ta in (0.0, 2.0, 5.0, 7.5, 15.0):
        for lam in (1.0, 1.5):
            out[f"zf2 typeadd {ta} mmr {lam}"] = {**zf, "typeadd": ta, "diverse": mmr(lam)}
    for wk in (0.2, 0.3, 0.4):
        for c in (0.05, 0.1, 0.15):
            out[f"zf2 wk{wk} c{c} mmr 1.5"] = {**zf, "wk": wk, "c": c, "diverse": mmr(1.5)}
    for cap in (2, 3, 4, 5):
        out[f"zf hop daycap {cap}"] = {**zf, "diverse": day_cap(cap)}
    for lam in (1.0, 1.5, 2.0, 3.0, 4.0):
        for pool in (30,):
            out[f"zf mmr {lam} pool{pool}"] = {**zf, "diverse": mmr(lam, pool)}
        for od in (0.0, 0.5):
            out[f"zf mmr {lam} pool30 otherday{od}"] = {**zf, "diverse": mmr(lam, 30, False, od)}
    for beta in (0.3, 0.6, 1.0):
        for m_top in (1, 3, 5):
            for gamma in (0.3, 0.6, 1.0):
                out[f"zf hop rocchio b{beta} m{m_top} g{gamma}"] = {**zf, "hop": rocchio(beta, m_top, gamma)}
    for view in (0.0, 0.2, 0.3, 0.4):
        for cent in (0.0, 0.2, 0.4, 0.6):
            out[f"zf grid view{view} cent{cent}"] = {**zf, "view": view, "cent": cent}
    for k1 in (0.6, 0.9, 1.2, 1.5):
        for b in (0.1, 0.25, 0.5, 0.75):
            out[f"zf grid k1 {k1} b{b}"] = {**zf, "k1": k1, "b": b}
    for tw in (0.3, 0.5, 1.0, 1.5, 2.0):
        out[f"zf grid time {tw}"] = {**zf, "tw": tw}
    for stop in ("bm25s", "broad", "none"):
        for st in ("plain", "stem"):
            out[f"zf grid {stop} {st}"] = {**zf, "stop": stop, "tok": st}
    for cjk in ():
        for wk in (0.3, 0.4, 0.5):
            for c in (0.05, 0.1, 0.15, 0.2):
                out[f"zfloor {cjk} wk{wk} c{c} view0.3 cent0.4"] = {**BASE, **tok, "cjk": cjk, "fusion": "zfloor",
                    "wk": wk, "c": c, "view": 0.3, "cent": 0.4, "tw": 1.0}
    for cjk in ():
        for L in (0.5, 1.0, 1.5, 2.0, 3.0):
            out[f"zshare {cjk} L{L} view0.3 cent0.4"] = {**BASE, **tok, "cjk": cjk, "fusion": "zshare", "L": L,
                                                      "view": 0.3, "cent": 0.4, "tw": 1.0}
        for L in (0.3, 0.5, 1.0):
            out[f"zshare2 {cjk} L{L} view0.3 cent0.4"] = {**BASE, **tok, "cjk": cjk, "fusion": "zshare2", "L": L,
                                                      "view": 0.3, "cent": 0.4, "tw": 1.0}
    for cjk in ():
        for stop in ("bm25s", "broad"):
            for wk in (0.2, 0.3):
                out[f"zt {cjk} {stop} wk{wk} view0.3 cent0.4"] = {**BASE, **tok, "cjk": cjk, "stop": stop,
                    "zhstop": cjk.startswith("jieba"), "fusion": "z", "wk": wk, "view": 0.3, "cent": 0.4, "tw": 1.0}
    for wk in (0.3, 0.4):
        for soft in (0.3, 0.5, 0.7):
            for powr in (1, 2):
                out[f"zs wk{wk} soft{soft} pow{powr} view0.3 cent0.4"] = {**BASE, **tok, "fusion": "z", "wk": wk,
                    "view": 0.3, "cent": 0.4, "tw": 1.0, "soft": soft, "pow": powr}
    for wk in ():
        for zgate in (0.2, 0.3, 0.5):
            for view in (0.0, 0.3):
                out[f"zg wk{wk} g{zgate} view{view} cent0.4"] = {**BASE, **tok, "fusion": "z", "wk": wk, "view": view,
                                                              "cent": 0.4, "tw": 1.0, "zgate": zgate}
        for kclip in (2.0, 3.0, 5.0):
            out[f"zc wk{wk} clip{kclip} view0.3 cent0.4"] = {**BASE, **tok, "fusion": "z", "wk": wk, "view": 0.3,
                                                          "cent": 0.4, "tw": 1.0, "kclip": kclip}
    for view in ():
        for cent in (0.0, 0.4):
            for gate in (0.3, 1.0):
                out[f"cur newtok view{view} cent{cent} gate{gate}"] = {**BASE, **tok, "view": view, "cent": cent, "gate": gate}
    # tokens alone, in BM25 alone
    for tok in ("plain", "stem"):
        for stop in ("bm25s", "broad"):
            for cjk in ("bigram", "uni+bi", "jieba", "jieba-search"):
                for k1, b in ((1.5, 0.75), (0.9, 0.25)):
                    out[f"bm25 {tok} {stop} {cjk} k{k1} b{b}"] = {**BASE, "tok": tok, "stop": stop, "cjk": cjk,
                        "zhstop": cjk.startswith("jieba"), "k1": k1, "b": b, "fusion": "z", "wk": 1.0, "tw": 0,
                        "view": 0, "cent": 0}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="dev,team,bilingual")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    _setup()
    from memoryboard.llm.factory import get_embedder

    vectors = Vectors(get_embedder())
    scopes, cases = load_cases(args.sets.split(","), vectors)
    print(len(scopes), "scopes", len(cases), "cases", file=sys.stderr)
    global STOPLISTS, ZH_STOP
    STOPLISTS, ZH_STOP = _stoplists()
    header = None
    for name, variant in variants().items():
        if args.only and args.only not in name:
            continue
        table = evaluate(scopes, cases, variant)
        keys = [k for k in COLUMNS if k in table]
        if header is None:
            header = keys
            print(f"{'variant':<46}" + " ".join(f"{k:>10}" for k in keys))
        print(f"{name[:45]:<46}" + " ".join(f"{np.mean(table[k]) if k in table else float('nan'):>10.3f}"
                                            for k in header), flush=True)


if __name__ == "__main__":
    main()
