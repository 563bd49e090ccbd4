"""How the fusion of ``ltm.search.ranking`` was chosen: fusions of the model's and BM25's scores compared on the
dev split of both evaluation sets, then reported once on test (docs/retrieval.md § Fusion).

Run: ``.venv/bin/python benchmarks/fusion_dev.py [--split dev|test|both]``.

Scores in numpy with the functions of ``ltm.search.ranking`` and ``ltm.search.time_expressions`` (the query vector
with its content words, the language axis of the scope, BM25 with the project's tokens, the time
window of the question): no database, so the search's own figures come from ``manage.py memory_eval``;
this script only compares fusions of the same parts. Printed per fusion: the conversation set's
evidence recall@10 per store (turns, observations) and kind, and the bilingual set's recall@1.

Ranks are by the fusion's score, equal scores by a second key (``ranking.rank_order``: the fusions of
``gated view… centrality…`` give theirs, the others none). The time part's event windows include the
event's day (``ranking.time_matches``). ``--min-match`` applies a minimum to the fusion's relevance (its
match, or for the centrality fusions the match without the centrality, as ``memory_rank`` does).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pathlib
import sys
from collections import defaultdict

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


def _setup():
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryboard.settings")
    os.environ["MEMORYBOARD_EMBEDDER"] = "use"
    import django

    django.setup()


class Scope:
    """One store of one conversation (or the bilingual set): vectors, BM25, axis, days."""

    def __init__(self, embedder, texts, types, days):
        from memoryboard.ltm.search import ranking

        self.texts = texts
        self.matrix = np.asarray(embedder.embed(texts), dtype=np.float32)
        self.keywords = ranking.KeywordIndex(texts)
        self.axis = ranking.language_axis(self.matrix, texts)
        self.components = None if self.axis is None else self.matrix @ self.axis
        self.types = ranking.type_weights(types)
        self.days = np.asarray(days, dtype=np.float64)
        self.centrality = ranking.centrality(self.matrix @ self.matrix.mean(axis=0))


def _parts(embedder, scope: Scope, query: str, model_name: str):
    from memoryboard.ltm.search import ranking

    qvec = ranking.query_vector(embedder, query)
    plain = np.asarray(embedder.embed([query])[0], dtype=np.float32)
    cosine = scope.matrix @ qvec
    if scope.axis is not None:
        qa = float(qvec @ scope.axis)
        norms = np.sqrt(np.maximum((1 - qa * qa) * (1 - scope.components ** 2), 1e-6))
        cosine = (cosine - qa * scope.components) / norms
    floor, ceiling = ranking.cosine_range(model_name)
    semantic = np.maximum((cosine - floor) / (ceiling - floor), 0.0)
    keyword = scope.keywords.scores(query)
    raw = scope.keywords.raw_scores(query)
    noaxis = np.maximum((scope.matrix @ qvec - floor) / (ceiling - floor), 0.0)
    plain_semantic = np.maximum((scope.matrix @ plain - floor) / (ceiling - floor), 0.0)
    view = ranking.query_view(query)
    vview = np.asarray(embedder.embed([view])[0], dtype=np.float32)
    soft = {}
    for vw in (0.0, 0.2, 0.4):
        vec = (1 - vw) * plain + vw * vview
        vec = vec / np.linalg.norm(vec)
        soft[f"soft_v{vw}"] = (scope.matrix @ vec - floor) / (ceiling - floor)  # not clipped
    views = {}
    for vw in (0.0, 0.2, 0.3, 0.4):
        vec = (1 - vw) * plain + vw * vview
        views[f"cos_v{vw}"] = scope.matrix @ (vec / np.linalg.norm(vec))
    return {"semantic": semantic, "keyword": keyword, "raw": raw, "model": scope.matrix @ plain,
            "semantic_noaxis": noaxis, "semantic_plain": plain_semantic, "centrality": scope.centrality,
            "floor": floor, "ceiling": ceiling, **soft, **views}


def _rank_order(values: np.ndarray) -> np.ndarray:
    """1-based ranks of ``values`` (higher first)."""
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.arange(1, len(values) + 1)
    return ranks


def fusions():
    """name -> f(parts) -> match scores."""
    out = {}
    out["current 0.8/0.2 evidence>0.5"] = lambda p: 0.8 * p["semantic"] + 0.2 * np.maximum((p["keyword"] - 0.5) / 0.5, 0)
    for w in (0.3, 0.4, 0.5, 0.6, 0.7):
        out[f"linear sem {w}"] = (lambda w: lambda p: w * p["semantic"] + (1 - w) * p["keyword"])(w)
    for w in (0.3, 0.4, 0.5, 0.6, 0.7):
        def norm(p, w=w):
            kmax = float(p["keyword"].max())
            smax = float(p["semantic"].max())
            k = p["keyword"] / kmax if kmax > 0 else p["keyword"]
            s = p["semantic"] / smax if smax > 0 else p["semantic"]
            return w * s + (1 - w) * k
        out[f"per-query max-norm sem {w}"] = norm
    for w in (0.4, 0.5, 0.6):
        def semabs_kwnorm(p, w=w):
            kmax = float(p["keyword"].max())
            k = p["keyword"] / kmax if kmax > 0 else p["keyword"]
            return w * p["semantic"] + (1 - w) * k * np.minimum(1.0, kmax * 2)
        out[f"sem abs + kw max-norm (damped) {w}"] = semabs_kwnorm
    for k in (10, 30, 60):
        def rrf(p, k=k):
            ranks_s = _rank_order(p["semantic"])
            ranks_k = _rank_order(p["raw"])
            kw = np.where(p["raw"] > 0, 1.0 / (k + ranks_k), 0.0)
            return 1.0 / (k + ranks_s) + kw
        out[f"rrf(semantic, bm25) k={k}"] = rrf
    for variant in ("semantic_noaxis", "semantic_plain"):
        for w in (0.5, 0.6, 0.7, 0.8):
            out[f"linear {variant[9:]} {w}"] = (lambda w, v: lambda p: w * p[v] + (1 - w) * p["keyword"])(w, variant)
    for w in (0.6, 0.7, 0.8):
        for t in (0.3, 0.5):
            out[f"evidence plain {w} t{t}"] = (lambda w, t: lambda p: w * p["semantic_plain"]
                                               + (1 - w) * np.maximum((p["keyword"] - t) / (1 - t), 0))(w, t)
    for v in ("semantic", "semantic_noaxis", "semantic_plain"):
        for w in (0.5, 0.6, 0.7):
            for g in (0.3, 0.5):
                def gated(p, w=w, g=g, v=v):
                    kmax = float(p["keyword"].max())
                    gate = min(1.0, max(0.0, (kmax - g) / (1 - g)))
                    return w * p[v] + (1 - w) * gate * p["keyword"]
                out[f"gated {v[9:] or 'view+axis'} {w} g{g}"] = gated
    for vw in (0.0, 0.2, 0.4):
        for w in (0.6, 0.7):
            def gated_soft(p, w=w, vw=vw):
                kmax = float(p["keyword"].max())
                gate = min(1.0, max(0.0, (kmax - 0.3) / 0.7))
                return w * p[f"soft_v{vw}"] + (1 - w) * gate * p["keyword"]
            out[f"gsoft view{vw} {w}"] = gated_soft
    for w in (0.6, 0.7, 0.8):
        out[f"maxsem {w}"] = (lambda w: lambda p: w * np.maximum(p["semantic"], p["semantic_plain"])
                              + (1 - w) * p["keyword"])(w)
    for vw in (0.0, 0.2, 0.3, 0.4):
        for c in (0.0, 0.2, 0.3, 0.4, 0.5, 0.6):
            for w in (0.6, 0.7, 0.8):
                def central(p, vw=vw, c=c, w=w):
                    cos, floor, ceiling = p[f"cos_v{vw}"], p["floor"], p["ceiling"]
                    kmax = float(p["keyword"].max())
                    evidence = (1 - w) * min(1.0, max(0.0, (kmax - 0.3) / 0.7)) * p["keyword"]
                    adjusted = cos - c * p["centrality"]
                    return {"match": w * np.maximum((adjusted - floor) / (ceiling - floor), 0) + evidence,
                            "key": adjusted,
                            "relevance": w * np.maximum((cos - floor) / (ceiling - floor), 0) + evidence}
                out[f"gated view{vw} centrality{c} {w}"] = central
    out["baseline bm25"] = lambda p: p["raw"]
    out["baseline model"] = lambda p: p["model"]
    for k in (60,):
        def rrf_plain(p, k=k):
            kw = np.where(p["raw"] > 0, 1.0 / (k + _rank_order(p["raw"])), 0.0)
            return 1.0 / (k + _rank_order(p["model"])) + kw
        out[f"baseline rrf(model, bm25) k={k}"] = rrf_plain
    return out


def _time_flags(scope: Scope, window, fused_for_anchor) -> np.ndarray:
    from memoryboard.ltm.search import ranking

    if window is None:
        return np.zeros(len(scope.days))
    if window.anchor:
        if fused_for_anchor is None:
            return np.zeros(len(scope.days))
        best = int(np.argmax(fused_for_anchor))
        day = scope.days[best]
        if np.isnan(day) or fused_for_anchor[best] < ranking.MIN_RELEVANCE:
            return np.zeros(len(scope.days))
        return (scope.days <= day) if window.before else (scope.days >= day)
    start = -np.inf if window.start is None else window.start
    end = np.inf if window.end is None else window.end
    return (scope.days >= start) & (scope.days < end)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="dev", choices=["dev", "test", "both"])
    parser.add_argument("--time-weights", default="0,0.15,0.3,0.5")
    parser.add_argument("--only", default="", help="substring of the fusions to run")
    parser.add_argument("--query-level", action="store_true", help="the minimum applies to the query's best item")
    parser.add_argument("--item-floor", type=float, default=-1.0, help="with --query-level: each item's least match")
    parser.add_argument("--item-relative", type=float, default=-1.0,
                        help="with --query-level: each item's least match as a share of the best item's")
    parser.add_argument("--min-match", default="", help="minimum relevances (on the fusion's match) to compare")
    args = parser.parse_args()
    _setup()
    from memoryboard.llm.factory import get_embedder
    from memoryboard.evaluation.retrieval import conversation_items, conversation_expected
    from memoryboard.ltm.search.time_expressions import item_day, query_window

    embedder = get_embedder()
    splits = ("dev", "test") if args.split == "both" else (args.split,)
    conv = json.loads((DATA / "conversation_eval.json").read_text(encoding="utf-8"))
    bil = json.loads((DATA / "bilingual_eval.json").read_text(encoding="utf-8"))
    cases = []  # (set, store, kind, split, scope, ids, expected, parts, window, anchor_parts)
    for conversation in conv["conversations"]:
        if conversation["split"] not in splits:
            continue
        for store in ("turns", "observations"):
            items = conversation_items(conversation, store)
            ids = [item["id"] for item in items]
            scope = Scope(embedder, [i["content"] for i in items], [i["type"] for i in items],
                          [item_day(i) for i in items])
            for query in conv["queries"]:
                if query["conversation"] != conversation["id"]:
                    continue
                expected = conversation_expected(query, conversation, store)
                asked = dt.date.fromisoformat(query["asked_at"])
                window = query_window(query["query"], asked)
                parts = _parts(embedder, scope, query["query"], embedder.name)
                anchor = _parts(embedder, scope, window.anchor, embedder.name) if window and window.anchor else None
                cases.append(("conv", store, query["kind"], conversation["split"], scope, ids, expected, parts,
                              window, anchor))
    items = bil["items"]
    scope = Scope(embedder, [i["content"] for i in items], [i.get("type", "FACT") for i in items],
                  [float("nan")] * len(items))
    for query in bil["queries"]:
        if query["split"] not in splits:
            continue
        parts = _parts(embedder, scope, query["query"], embedder.name)
        cases.append(("bil", "-", query.get("kind", "?"), query["split"], scope, [i["id"] for i in items],
                      set(query["expected"][:1]), parts, None, None))
    print(f"{len(cases)} query cases on {splits}", file=sys.stderr)
    time_weights = [float(x) for x in args.time_weights.split(",")]
    header = None
    for name, fuse in fusions().items():
        if args.only and args.only not in name:
            continue
        minimums = [None] + [float(x) for x in args.min_match.split(",") if x]
        for tw, minimum in [(tw, m) for tw in time_weights for m in minimums]:
            if name.startswith("baseline") and (tw or minimum is not None):
                continue
            table = defaultdict(list)
            for kind_set, store, kind, split, scope, ids, expected, parts, window, anchor in cases:
                fused = fuse(parts)
                if not isinstance(fused, dict):
                    fused = {"match": fused}
                match = fused["match"].astype(np.float64)
                key = fused.get("key", np.zeros(len(match)))
                relevance = fused.get("relevance", match)
                below = relevance < minimum if minimum is not None else np.zeros(len(match), dtype=bool)
                if args.query_level and minimum is not None:  # the query reaches the minimum: all may come
                    below = np.full(len(match), float(match.max()) < minimum) | (match < args.item_floor)
                    below |= match < args.item_relative * float(match.max())
                if tw:
                    anchored = fuse(anchor) if anchor is not None else None
                    if isinstance(anchored, dict):
                        anchored = anchored["match"]
                    flags = _time_flags(scope, window, anchored)
                    # Rank fusions have no absolute scale: their bonus is a share of the query's best.
                    top = float(match.max()) if name.startswith("rrf") and match.size else 1.0
                    match = match + tw * top * flags
                order = [i for i in np.lexsort((-key, -match)) if not below[i]]
                if kind_set == "bil":
                    table[("bilingual R@1", split)].append(float(bool(order) and ids[order[0]] in expected))
                    continue
                top10 = {ids[i] for i in order[:10]}
                recall = len(top10 & expected) / len(expected)
                table[(f"{store[:4]} {kind[:5]}", split)].append(recall)
                table[(f"{store[:4]} n<10", split)].append(float(len(order) < 10))
                table[(f"{store[:4]} all", split)].append(recall)
            keys = sorted(table)
            if header is None:
                header = keys
                print(f"{'fusion':<44}{'tw':>5} " + " ".join(f"{k[0][:12]:>12}" for k in keys))
                print(f"{'':<49} " + " ".join(f"{k[1]:>12}" for k in keys))
            print(f"{name[:38] + ('' if minimum is None else f' >={minimum}'):<44}{tw:>5} " + " ".join(f"{np.mean(table[k]):>12.3f}" for k in header), flush=True)


if __name__ == "__main__":
    main()
