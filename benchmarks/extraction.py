"""Benchmark: offline extraction of one chat turn of 10 sentences (the extractor's part of a turn's cost).

Run::

    .venv/bin/python benchmarks/extraction.py                 # 5 runs of 200 turns
    .venv/bin/python benchmarks/extraction.py --runs 1 --turns 20

Each turn is 10 sentences drawn (seeded) from everyday statements, questions and requests in English and
Chinese, with greetings around them, extracted by ``llm.extraction.OfflineExtractor`` as the task does: the
clauses cut, one batched call of the encoder (USE, warmed up, one BLAS thread as in a worker) for all of
them, the cues, the classifier. The encoder's memory of recent texts is emptied before each turn, so every
turn pays its encoding (the reconcile step of the same items later finds their vectors there).

Prints, per run, the p50 and p90 of wall time and the p50 of this process's CPU time per turn, then the
median and spread over the runs, and the load average. No database, nothing written.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from threadpoolctl import threadpool_limits  # noqa: E402

from memoryboard.llm.embeddings import UniversalSentenceEncoder  # noqa: E402
from memoryboard.llm.extraction import OfflineExtractor  # noqa: E402

SENTENCES = [
    "I'm 34 and I live in Porto with my wife.", "I work as a nurse at the city hospital.",
    "We have two kids and a dog called Biscuit.", "Can you help me plan a birthday party?",
    "My daughter turns 7 next month.", "She loves dinosaurs.", "I'm allergic to nuts, so no nut cake.",
    "Our budget is about 200 euros.", "What's a good theme for a party?", "I recently started learning the piano.",
    "My birthday is on March 3rd.", "I go swimming every Tuesday morning.", "the weather is crazy today",
    "if I won the lottery I'd quit my job", "I prefer short answers with examples.", "I don't eat red meat.",
    "我今年三十五岁。", "我养了一只叫豆豆的狗。", "我老婆是老师，我们住在杭州。", "周末一般去爬山。", "帮我写一封邀请函吧？",
    "你觉得哪个方案更好？", "我上个月从腾讯离职了，现在在阿里巴巴上班。", "我对海鲜过敏。", "每天早上六点起来跑步。",
    "今天好热啊。", "我们在攒钱买房。", "我最近在学 Python，主要做 data analysis。",
]


def turn(rng: random.Random) -> str:
    return "Hi! " + " ".join(rng.sample(SENTENCES, 10)) + " Thanks a lot!"


def one_run(extractor: OfflineExtractor, turns: list[str]) -> dict[str, float]:
    walls, cpus = [], []
    for text in turns:
        UniversalSentenceEncoder.recent.clear()
        wall, cpu = time.perf_counter(), time.process_time()
        extractor.extract([{"role": "user", "content": text}])
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    walls.sort()
    return {"p50": statistics.median(walls), "p90": walls[int(len(walls) * 0.9) - 1], "cpu_p50": statistics.median(cpus)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    threadpool_limits(limits=1, user_api="blas")  # as factory.warm_up() sets a worker
    extractor = OfflineExtractor()
    rng = random.Random(args.seed)
    turns = [turn(rng) for _ in range(args.turns)]
    extractor.extract([{"role": "user", "content": turns[0]}])  # load the model and the weights
    clauses = statistics.mean(len(extractor.score([t])[0]) for t in turns)
    print(f"{args.turns} turns of 10 sentences ({clauses:.1f} clauses each on average), load {os.getloadavg()}")
    runs = []
    for index in range(args.runs):
        result = one_run(extractor, turns)
        runs.append(result)
        print(f"run {index + 1}: wall p50 {result['p50']:.2f} ms, p90 {result['p90']:.2f} ms, "
              f"CPU p50 {result['cpu_p50']:.2f} ms")
    for key in ("p50", "p90", "cpu_p50"):
        values = sorted(r[key] for r in runs)
        print(f"{key}: median {statistics.median(values):.2f} ms [{values[0]:.2f}–{values[-1]:.2f}]")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
