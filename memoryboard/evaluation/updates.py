"""The ``updates`` suite of ``manage.py memory_eval``: memories that change over time.

A set of scenarios (tests/data/updates_eval.json, English and Chinese), each a few statements said
some days apart, saved through the reconcile step (``ltm.write.reconcile.memory_save_reconciled``, the path
of every write), then asked about with the one search (``retrieval.memory_rank``, as an agent's
retrieval). Each scenario has a namespace of its own with a few unrelated background items; everything
is written in a transaction that is rolled back: nothing stays. The clock is the set's ``now`` and the
models are local, so the figures are deterministic for one embedder.

Figures, per split (``dev``, ``test``):

- ``current_first``: the first result is the item of the statement that should be current;
- ``stale_as_current``: a superseded statement is among the results (k=5);
- ``collateral_supersede``: a compatible item (background, or a look-alike's) was superseded;
- ``duplicates``: current items beyond the expected count after repeats and paraphrases;
- ``when``: the first result's ``valid_from`` is the stated or message day; ``as_of``: searched as of a
  past date, the first result is what was believed then;
- ``expiry``: a statement next to an expired item is decided as expected (an expired item is not current).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any
from unittest import mock

from django.db import transaction
from django.utils.dateparse import parse_datetime

from memoryboard.llm.extraction import classify_statement
from memoryboard.llm.factory import get_chat_model, get_embedder, is_online
from memoryboard.ltm.search.retrieval import memory_rank, namespace_scope
from memoryboard.ltm.write.reconcile import memory_save_reconciled, shared_embedder
from memoryboard.models import LongTermMemory
from memoryboard.models.namespaces import build_namespace

SPLITS = ("dev", "test")
EVAL_AGENT = "memory-eval"
RESULTS_K = 5


class UpdatesEvalError(ValueError):
    pass


class _Rollback(Exception):
    pass


def validate_updates_set(data: Any) -> None:
    """Raise :class:`UpdatesEvalError` naming the first place at fault."""
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), list) or not data["scenarios"]:
        raise UpdatesEvalError("scenarios: must be a non-empty list")
    if parse_datetime(str(data.get("now") or "")) is None:
        raise UpdatesEvalError("now: must be an ISO 8601 date and time")
    for i, scenario in enumerate(data["scenarios"]):
        if "split" in scenario and scenario["split"] not in SPLITS:
            raise UpdatesEvalError(f"scenarios[{i}].split: must be dev or test")
        steps = scenario.get("steps")
        if not isinstance(steps, list) or not steps or not all(isinstance(s.get("say"), str) for s in steps):
            raise UpdatesEvalError(f"scenarios[{i}].steps: must be a non-empty list of {{say, days_ago}}")


def _rate(values: list[bool]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def updates_evaluate(*, data: dict, split: str | None = None, embedder=None, name: str = "dev") -> dict[str, Any]:
    """Run the scenarios of ``split`` (both when None) and return the figures per split and the failures.

    Args:
        data: the set (see the module docstring).
        split: ``dev``, ``test`` or None for both.
        embedder: default the configured one.
        name: the split of scenarios that name none (the sets of tests/data/dev and tests/data/blind).
    """
    now = parse_datetime(data["now"])
    embedder = shared_embedder(embedder or get_embedder())
    scenarios = [{**s, "split": s.get("split") or name} for s in data["scenarios"]]
    chosen = [s for s in scenarios if split is None or s["split"] == split]
    figures: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    failures: dict[str, list[str]] = defaultdict(list)
    decisions: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    trace: list[tuple] = []  # (scenario, step, decision, reason): read on the development set only

    def note(part: str, scenario: dict, ok: bool, metric: str, *, counted: bool = True) -> None:
        if counted:
            figures[part][metric].append(ok)
        if not ok:
            failures[metric].append(scenario["id"])

    def save(namespace, text: str, *, days_ago: float, expires_at: datetime | None = None):
        said = now - timedelta(days=days_ago)
        return memory_save_reconciled(
            namespace=namespace, content=text, memory_type=classify_statement(text) or "FACT",
            agent_id=EVAL_AGENT, source="manual", observed_at=said, expires_at=expires_at, embedder=embedder,
        )

    try:
        with mock.patch("django.utils.timezone.now", return_value=now), transaction.atomic():
            for scenario in chosen:
                part = scenario["split"]
                namespace = build_namespace(agent_namespace=EVAL_AGENT, user_id=f"eval-{scenario['id']}")
                background = [save(namespace, b["say"], days_ago=500).memory.pk for b in data.get("background", [])]
                ids, results = [], []
                for step in scenario["steps"]:
                    expires = None
                    if step.get("expires_days_ago") is not None:
                        expires = now - timedelta(days=step["expires_days_ago"])
                    elif step.get("expires_in_days") is not None:
                        expires = now + timedelta(days=step["expires_in_days"])
                    result = save(namespace, step["say"], days_ago=float(step.get("days_ago", 0)), expires_at=expires)
                    decisions[part][result.decision.verdict] += 1
                    trace.append((scenario["id"], len(results), result.decision.verdict, result.decision.reason))
                    ids.append(result.memory.pk)
                    results.append(result)
                rows = {m.pk: m for m in LongTermMemory.objects.filter(pk__in=set(ids) | set(background))}
                keep = set(background) | {ids[i] for i in scenario.get("compatible") or []}
                if scenario.get("current") is not None:
                    keep.add(ids[scenario["current"]])
                collateral = any(rows[pk].archived_reason == "superseded" for pk in keep if pk in rows)
                note(part, scenario, not collateral, "collateral_supersede_free")
                if scenario.get("expect_current_rows") is not None:
                    live = sum(1 for pk in set(ids) if not rows[pk].archived)
                    extra = max(0, live - scenario["expect_current_rows"])
                    figures[part]["duplicates"].append(extra)
                    if extra:
                        failures["duplicates"].append(scenario["id"])
                if scenario.get("decision"):
                    note(part, scenario, results[-1].decision.verdict == scenario["decision"], "expiry")
                query = scenario.get("query")
                if not query:
                    continue
                found = memory_rank(queryset=namespace_scope(namespace), query=query, k=RESULTS_K, embedder=embedder,
                                    user_id=namespace.user_id).results
                first = found[0].memory if found else None
                current = ids[scenario["current"]] if scenario.get("current") is not None else None
                stale = {ids[i] for i in scenario.get("stale") or [] if i != scenario.get("current")}
                # The new statement taken for a repeat of a stale one ("same"): its step's item is the stale
                # item, whose old text is what a search returns; a miss, whatever ranks first.
                absorbed = current in stale
                if current is not None:
                    ok = first is not None and first.pk == current and not absorbed
                    note(part, scenario, ok, "current_first")
                    if scenario.get("slot", True):
                        figures[part]["current_first_slot"].append(ok)
                if scenario.get("stale"):
                    note(part, scenario, not absorbed and not any(item.memory.pk in stale - {current} for item in found),
                         "stale_free")
                if scenario.get("when"):
                    day = first.valid_from.date().isoformat() if first is not None else None
                    note(part, scenario, first is not None and first.pk == current and day == scenario["when"], "when")
                if scenario.get("as_of"):
                    as_of = parse_datetime(scenario["as_of"]["date"] + "T00:00:00Z")
                    # As the API's search with ``as_of`` asks it (memory_search: the k best, no agent minimum).
                    then = memory_rank(queryset=namespace_scope(namespace), query=query, k=RESULTS_K, embedder=embedder,
                                       user_id=namespace.user_id, as_of=as_of, min_relevance=0.0).results
                    expected = ids[scenario["as_of"]["current"]]
                    note(part, scenario, bool(then) and then[0].memory.pk == expected, "as_of")
            raise _Rollback
    except _Rollback:
        pass

    report: dict[str, Any] = {"model": embedder.name,
                              "judge": f"llm:{get_chat_model().name}" if is_online() else "rules (offline)",
                              "scenarios": len(chosen), "splits": {}}
    for part in dict.fromkeys([*SPLITS, *(s["split"] for s in chosen)]):
        if part not in figures:
            continue
        f = figures[part]
        report["splits"][part] = {
            "scenarios": sum(1 for s in chosen if s["split"] == part),
            "current_first": _rate(f["current_first"]),
            "current_first_slot": _rate(f["current_first_slot"]),
            "stale_as_current": None if not f["stale_free"] else round(1 - _rate(f["stale_free"]), 4),
            "collateral_supersede": round(1 - _rate(f["collateral_supersede_free"]), 4),
            "duplicates": int(sum(f["duplicates"])),
            "when": _rate(f["when"]),
            "as_of": _rate(f["as_of"]),
            "expiry": _rate(f["expiry"]),
            "counts": {"current_first": len(f["current_first"]), "stale": len(f["stale_free"]),
                       "when": len(f["when"]), "as_of": len(f["as_of"]), "expiry": len(f["expiry"])},
            "decisions": dict(decisions[part]),
        }
    report["failures"] = {metric: ids for metric, ids in failures.items()}
    report["trace"] = trace
    return report
