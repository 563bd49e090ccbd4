"""The playground's replay: a conversation call by call under chosen strategies, with charts and exports.

Everything on the page comes from :func:`memoryboard.strategies.replay.replay` (through
``conversations.context_replay``, as the API's ``POST /api/v1/strategies/replay``); this module only lays
it out: totals, a tokens-per-call chart and a strip of which messages each call kept, drawn as SVG.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import numpy as np
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from memoryboard import conversations
from memoryboard.strategies import CONTEXT_STRATEGIES, StrategyError
from memoryboard.strategies.replay import Price, StrategyReplay
from memoryboard.web.playground.source import bound_form, playground_access, source_of

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


STRIP_COLUMNS = 210  # messages are binned into at most this many columns (2 px each)
_STATUS_CODES = {"kept": 1, "cleared": 2, "summarized": 3, "dropped": 4}  # a bin shows its worst status
_CODE_CLASS = {code: name for name, code in _STATUS_CODES.items()}


def chart_svg(replayed: StrategyReplay, top: int) -> str:
    """One bar per call: tokens sent, the cached part drawn over it; on a common scale ``top``.

    Built as one string (numbers and fixed class names only, the titles escaped): a template loop over
    thousands of bars cost more than the replay itself."""
    calls = replayed.calls
    if not calls or top <= 0:
        return ""
    width = CHART_WIDTH / len(calls)
    bar = max(width - (1 if width > 3 else 0), 0.5)
    parts = []
    for i, c in enumerate(calls):
        x = i * width
        sent_h = CHART_HEIGHT * c.sent_tokens / top
        cached_h = CHART_HEIGHT * c.cached_tokens / top
        title = escape(_("call %(n)s: %(sent)s tokens sent, %(cached)s cached") % {
            "n": c.call, "sent": c.sent_tokens, "cached": c.cached_tokens})
        parts.append(
            f'<g><title>{title}</title><rect class="sent" x="{x:.2f}" y="{CHART_HEIGHT - sent_h:.2f}" '
            f'width="{bar:.2f}" height="{sent_h:.2f}"/><rect class="cached" x="{x:.2f}" '
            f'y="{CHART_HEIGHT - cached_h:.2f}" width="{bar:.2f}" height="{cached_h:.2f}"/></g>'
        )
    return mark_safe("".join(parts))


def strip_svg(replayed: StrategyReplay, total: int) -> str:
    """Rows = calls, columns = the conversation's messages (binned to :data:`STRIP_COLUMNS`): one
    rectangle per run of one status in a row. Messages a call had not reached yet are blank."""
    if not replayed.calls or not total:
        return ""
    columns = min(total, STRIP_COLUMNS)
    scale = STRIP_WIDTH / columns
    starts = (np.arange(columns) * total) // columns  # first message of each bin
    parts = []
    for row, c in enumerate(replayed.calls):
        codes = np.zeros(total, dtype=np.int8)
        for name, code in _STATUS_CODES.items():
            indexes = getattr(c, name)
            if indexes:
                codes[np.fromiter(indexes, dtype=np.int64, count=len(indexes))] = code
        binned = np.maximum.reduceat(codes, starts)
        edges = np.flatnonzero(np.diff(binned)) + 1
        bounds = np.concatenate(([0], edges, [columns]))
        y = row * STRIP_ROW
        for a, b in zip(bounds[:-1], bounds[1:]):
            code = int(binned[a])
            if code:
                parts.append(f'<rect class="{_CODE_CLASS[code]}" x="{a * scale:.2f}" y="{y}" '
                             f'width="{(b - a) * scale:.2f}" height="{STRIP_ROW}"/>')
    return mark_safe("".join(parts))


def _rows_csv(results: list[StrategyReplay]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    keys = ["call", "upto", "sent_tokens", "cached_tokens", "output_tokens", "sent_messages", "kept", "dropped",
            "summarized", "cleared", "summary_calls", "lost_turns", "fallback"]
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
    source = source_of(request)
    chosen = _chosen(request)
    preset, price, price_error = _price(request)
    ctx: dict[str, Any] = {
        "source": source, "chosen": chosen, "all_strategies": CONTEXT_STRATEGIES, "presets": PRICE_PRESETS,
        "preset": preset, "price": price, "price_error": price_error, "errors": [],
        "preset_price": PRICE_PRESETS.get(preset, PRICE_PRESETS[DEFAULT_PRESET]),
        "price_given": {key: request.GET.get(key, "") for key in ("price_input", "price_cached", "price_output")},
        "chart_width": CHART_WIDTH, "chart_height": CHART_HEIGHT, "strip_width": STRIP_WIDTH,
        "max_side_by_side": MAX_SIDE_BY_SIDE,
    }
    if source is None:
        return render(request, "web/playground_replay.html", ctx)
    forms = {name: bound_form(request, "context", name) for name in chosen}
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
        message_count=source.message_count,
        call_count=len(results[0].calls) if results else 0,
        top=top,
        forms=forms,
        columns=[{"result": r, "totals": r.totals, "cost": r.cost(price), "chart": chart_svg(r, top),
                  "strip": strip_svg(r, total), "strip_height": max(STRIP_ROW, len(r.calls) * STRIP_ROW),
                  "cheapest": r is cheapest} for r in results],
        query=request.GET.urlencode(),
        playground_url=reverse("playground") + "?" + request.GET.urlencode(),
    )
    return render(request, "web/playground_replay.html", ctx)
