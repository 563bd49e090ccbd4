"""The playground's replay: a conversation call by call under chosen strategies, with charts and exports.

Everything on the page comes from :func:`memoryboard.strategies.replay.replay` (through
``conversations.context_replay``, as the API's ``POST /api/v1/strategies/replay``); this module only lays
it out: totals, a tokens-per-call chart and a strip of which messages each call kept, drawn as SVG.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any

from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from memoryboard import conversations
from memoryboard.strategies import CONTEXT_STRATEGIES, StrategyError
from memoryboard.strategies.replay import Price, StrategyReplay
from memoryboard.web.playground import _bound, _source, playground_access

# US dollars per million tokens (input, cached input, output): a starting point, edited in the page.
PRICE_PRESETS: dict[str, Price] = {
    "gpt-4o-mini": Price(0.15, 0.075, 0.60),
    "gpt-4.1": Price(2.00, 0.50, 8.00),
    "claude-sonnet-4": Price(3.00, 0.30, 15.00),
    "deepseek-chat": Price(0.27, 0.07, 1.10),
}
DEFAULT_PRESET = "gpt-4o-mini"
DEFAULT_STRATEGIES = ("SLIDING_WINDOW", "CLEAR_TOOL_RESULTS", "COMPOSITE")
MAX_SIDE_BY_SIDE = 3

CHART_WIDTH, CHART_HEIGHT = 420, 140
STRIP_WIDTH, STRIP_ROW = 420, 3
STATUS_CLASSES = ("kept", "dropped", "summarized", "cleared")


def _price(request) -> tuple[str, Price, str | None]:
    preset = request.GET.get("model", DEFAULT_PRESET)
    base = PRICE_PRESETS.get(preset, PRICE_PRESETS[DEFAULT_PRESET])
    values = {}
    for key, field in (("input", "price_input"), ("cached_input", "price_cached"), ("output", "price_output")):
        raw = request.GET.get(field, "").strip()
        if not raw:
            values[key] = getattr(base, key)
            continue
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not 0 <= value < 10_000:
            return preset, base, _("%(field)s: enter a price between 0 and 10000 dollars per million tokens.") % {
                "field": field}
        values[key] = value
    return preset, Price(**values), None


def _chosen(request) -> list[str]:
    chosen = [name for name in request.GET.getlist("strategy") if name in CONTEXT_STRATEGIES]
    return chosen or list(DEFAULT_STRATEGIES)


@dataclass
class Bar:
    x: float
    width: float
    sent_y: float
    sent_h: float
    cached_y: float
    cached_h: float
    title: str


def chart(replayed: StrategyReplay, top: int) -> list[Bar]:
    """One bar per call: tokens sent, with the cached part drawn over it; on a common scale ``top``."""
    calls = replayed.calls
    if not calls or top <= 0:
        return []
    width = CHART_WIDTH / len(calls)
    bars = []
    for i, c in enumerate(calls):
        sent_h = CHART_HEIGHT * c.sent_tokens / top
        cached_h = CHART_HEIGHT * c.cached_tokens / top
        bars.append(Bar(
            x=round(i * width, 2), width=round(max(width - (1 if width > 3 else 0), 0.5), 2),
            sent_y=round(CHART_HEIGHT - sent_h, 2), sent_h=round(sent_h, 2),
            cached_y=round(CHART_HEIGHT - cached_h, 2), cached_h=round(cached_h, 2),
            title=_("call %(n)s: %(sent)s tokens sent, %(cached)s cached") % {
                "n": c.call, "sent": c.sent_tokens, "cached": c.cached_tokens},
        ))
    return bars


def strip(replayed: StrategyReplay, total: int) -> list[dict[str, Any]]:
    """Rows = calls, columns = the conversation's messages: runs of one status as one rectangle each."""
    if not replayed.calls or not total:
        return []
    scale = STRIP_WIDTH / total
    rects = []
    for row, c in enumerate(replayed.calls):
        status = {}
        for name in STATUS_CLASSES:
            for index in getattr(c, name):
                status[index] = name
        start, current = 0, None
        for index in range(c.upto + 1):
            value = status.get(index, "dropped") if index < c.upto else None
            if value != current:
                if current is not None:
                    rects.append({"x": round(start * scale, 2), "y": row * STRIP_ROW,
                                  "w": round((index - start) * scale, 2), "cls": current})
                start, current = index, value
    return rects


def _rows_csv(results: list[StrategyReplay]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    keys = ["call", "upto", "sent_tokens", "cached_tokens", "output_tokens", "sent_messages", "kept", "dropped",
            "summarized", "cleared", "summary_calls", "fallback"]
    writer.writerow(["strategy", *keys])
    for r in results:
        for c in r.calls:
            row = c.to_dict()
            writer.writerow([r.name, *(row[k] if row[k] is not None else "" for k in keys)])
    return out.getvalue()


@playground_access
@require_GET
def replay_view(request):
    """``?conversation=`` or ``?trace=`` (as the playground), ``strategy=`` (repeated), each strategy's
    parameters as in the playground, ``model=`` and ``price_*=``; ``export=json|csv`` downloads the figures."""
    source = _source(request)
    chosen = _chosen(request)
    preset, price, price_error = _price(request)
    ctx: dict[str, Any] = {
        "source": source, "chosen": chosen, "all_strategies": CONTEXT_STRATEGIES, "presets": PRICE_PRESETS,
        "preset": preset, "price": price, "price_error": price_error, "errors": [],
        "chart_width": CHART_WIDTH, "chart_height": CHART_HEIGHT, "strip_width": STRIP_WIDTH,
        "max_side_by_side": MAX_SIDE_BY_SIDE,
    }
    if source is None:
        return render(request, "web/playground_replay.html", ctx)
    forms = {name: _bound(request, "context", name) for name in chosen}
    strategies = []
    for name, form in forms.items():
        if form.is_bound and not form.is_valid():
            ctx["errors"].append(f"{name}: {form.first_error()}")
            continue
        strategies.append((name, form.params()))
    results: list[StrategyReplay] = []
    if strategies:
        try:
            results = conversations.context_replay(source.messages, strategies)
        except StrategyError as exc:
            ctx["errors"].append(str(exc))
    export = request.GET.get("export")
    if export == "json" and results:
        body = {"calls": len(results[0].calls), "price": price.__dict__,
                "strategies": [r.to_dict(price) for r in results]}
        response = HttpResponse(json.dumps(body, ensure_ascii=False, indent=2), content_type="application/json")
        response["Content-Disposition"] = 'attachment; filename="replay.json"'
        return response
    if export == "csv" and results:
        response = HttpResponse(_rows_csv(results), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="replay.csv"'
        return response
    top = max((c.sent_tokens for r in results for c in r.calls), default=0)
    total = len(source.messages)
    cheapest = min(results, key=lambda r: r.cost(price)) if results else None
    ctx.update(
        message_count=total,
        call_count=len(results[0].calls) if results else 0,
        top=top,
        forms=forms,
        columns=[{"result": r, "totals": r.totals, "cost": r.cost(price), "bars": chart(r, top),
                  "strip": strip(r, total), "strip_height": max(STRIP_ROW, len(r.calls) * STRIP_ROW),
                  "cheapest": r is cheapest} for r in results],
        query=request.GET.urlencode(),
        playground_url=reverse("playground") + "?" + request.GET.urlencode(),
    )
    return render(request, "web/playground_replay.html", ctx)
