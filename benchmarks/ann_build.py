"""HNSW build speed, same run: memoryboard's index (``ltm.search.ann``'s parameters, usearch) against FAISS's
``IndexHNSWFlat`` on the same clustered random 512-d vectors, both on every core.

Run: ``.venv/bin/python benchmarks/ann_build.py [--n 200000] [--runs 3] [--ef-add 64,128]`` (FAISS comes with
requirements-bench.txt). Prints vectors per second of each build and the ratio, per run and the medians;
only the in-memory build is timed (``benchmarks/retrieval_staff.py`` times ``ann_rebuild`` from the
database). FAISS is built with M = 16 as ours, at its default efConstruction (40) and at each of ours.
``--ef-add`` builds ours at other ``EXPANSION_ADD`` values too (default: the configured one).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
DIM = 512


def clustered(n: int, seed: int = 5) -> np.ndarray:
    """Vectors as ``retrieval_staff.py`` seeds them (its ``_vectors``), around 1,000 centres."""
    from benchmarks.retrieval_staff import _vectors

    rng = np.random.default_rng(seed)
    return _vectors(rng, n, rng.standard_normal((1_000, DIM), dtype=np.float32))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ef-add", default="", help="EXPANSION_ADD values of ours to build (default: ltm.search.ann's)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryboard.settings")
    import django

    django.setup()
    import faiss

    from memoryboard.ltm.search import ann

    vectors = clustered(args.n)
    keys = np.arange(args.n, dtype=np.uint64)
    efs = [int(e) for e in args.ef_add.split(",")] if args.ef_add else [ann.EXPANSION_ADD]
    print(f"{args.n:,} vectors, {os.cpu_count()} cores; ours: usearch {ann.STORED_DTYPE}, M {ann.CONNECTIVITY}, "
          f"ef_add {efs}", flush=True)

    def ours(ef_add: int) -> float:
        configured, ann.EXPANSION_ADD = ann.EXPANSION_ADD, ef_add
        try:
            index = ann._new_index(DIM)
        finally:
            ann.EXPANSION_ADD = configured
        start = time.perf_counter()
        index.add(keys, vectors, threads=0)
        return args.n / (time.perf_counter() - start)

    def flat(ef_construction: int) -> float:
        index = faiss.IndexHNSWFlat(DIM, ann.CONNECTIVITY, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = ef_construction
        start = time.perf_counter()
        index.add(vectors)
        return args.n / (time.perf_counter() - start)

    faiss_efs = sorted({40, *efs})  # FAISS's default efConstruction, and ours
    names = [f"ours ef_add {ef}" for ef in efs] + [f"FAISS efConstruction {ef}" for ef in faiss_efs]
    rows = []
    for run in range(1, args.runs + 1):
        row = [ours(ef) for ef in efs] + [flat(ef) for ef in faiss_efs]
        rows.append(row)
        print(f"run {run}: " + "; ".join(f"{name} {rate:,.0f}/s" for name, rate in zip(names, row)), flush=True)
    med = [statistics.median(column) for column in zip(*rows)]
    faiss_at = dict(zip(faiss_efs, med[len(efs):]))
    print("median: " + "; ".join(f"{name} {rate:,.0f}/s" for name, rate in zip(names, med)))
    for ef, rate in zip(efs, med):
        print(f"ours ef_add {ef} / FAISS at the same efConstruction: {rate / faiss_at[ef]:.2f}; "
              f"/ FAISS at its default (40): {rate / faiss_at[40]:.2f}")

if __name__ == "__main__":
    main()
