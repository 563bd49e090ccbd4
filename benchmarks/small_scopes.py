"""Ranking quality on small scopes, as end users have them: the bilingual set's queries over random
sub-scopes of its items (the expected item plus ``size - 1`` others).

Run: ``.venv/bin/python benchmarks/small_scopes.py [--sizes 10,30] [--draws 15]``.
Prints, per scope size, the share of draws where the expected item is ranked first
and returned (its relevance at least ``MIN_RELEVANCE``) and the share where it is returned at all. Scores
with ``ltm.search.ranking`` directly (the one scoring function, BM25 over the sub-scope; no centrality, no
diversity), in numpy: no database. Figures in docs/retrieval.md.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
EVAL_SET = ROOT / "tests" / "data" / "bilingual_eval.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,30", help="scope sizes; 0 is the whole set")
    parser.add_argument("--draws", type=int, default=15, help="random sub-scopes per query and size")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryboard.settings")
    os.environ["MEMORYBOARD_EMBEDDER"] = "use"
    import django

    django.setup()
    from memoryboard.llm.factory import get_embedder, warm_up
    from memoryboard.ltm.search import ranking

    warm_up()
    embedder = get_embedder()
    data = json.loads(EVAL_SET.read_text(encoding="utf-8"))
    items, queries = data["items"], data["queries"]
    position = {item["id"]: i for i, item in enumerate(items)}
    texts = [item["content"] for item in items]
    types = ranking.type_weights([item.get("type") or "FACT" for item in items])
    matrix = np.asarray(embedder.embed(texts), dtype=np.float32)
    whole = np.asarray(embedder.embed([q["query"] for q in queries]), dtype=np.float32)

    for size in (int(s) for s in args.sizes.split(",")):
        rng = np.random.default_rng(args.seed)
        first = returned = draws = 0
        for i, query in enumerate(queries):
            expected = [position[e] for e in query["expected"]]
            others = [k for k in range(len(items)) if k not in expected]
            for _ in range(args.draws if size else 1):
                scope = (sorted({expected[0], *rng.choice(others, size - 1, replace=False).tolist()})
                         if size else list(range(len(items))))
                sub, sub_texts = matrix[scope], [texts[k] for k in scope]
                qvec = whole[i]
                scores = ranking.score(
                    cosine=sub @ qvec, keyword=ranking.KeywordIndex(sub_texts).scores(query["query"]),
                    types=types[scope], relevance_scores=np.ones(len(scope), dtype=np.float32),
                    model_name=embedder.name)
                best = int(ranking.rank_order(scores)[0])
                draws += 1
                first += scope[best] in expected and scores.relevance[best] >= ranking.MIN_RELEVANCE
                returned += any(scores.relevance[scope.index(e)] >= ranking.MIN_RELEVANCE
                                for e in expected if e in scope)
        print(f"scope {size or 'all':>4} items: first and returned "
              f"{first / draws:.3f}, returned {returned / draws:.3f} ({draws} draws)", flush=True)


if __name__ == "__main__":
    main()
