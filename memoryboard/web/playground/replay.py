"""The playground's replay: a conversation call by call under chosen strategies, with charts and exports.

Everything on the page comes from :func:`memoryboard.strategies.replay.replay` (through
``conversations.context_replay``, as the API's ``POST /api/v1/strategies/replay``); this module only lays
it out: totals (every call the strategy causes, summaries included, billed by the chosen provider cache),
the same-budget ranking of the playground beside them, a tokens-per-call chart and a strip of which messages
each call kept, drawn as SVG; and short links (``ReplayShare``) to a saved configuration.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

import numpy as np
from django.http import HttpResponse, HttpResponseBadRequest, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from memoryboard import conversations
from memoryboard.models import ReplayShare
from memoryboard.playground_traces import ShareTooLong, replay_share_save
from memoryboard.strategies import CONTEXT_STRATEGIES, StrategyConfigError, StrategyError, total_tokens
from memoryboard.strategies.prompt_cache import CACHE_MODELS, CacheModel
from memoryboard.strategies.replay import Price, StrategyReplay
from memoryboard.web.playground.columns import budget_ranking, read_budget
from memoryboard.web.playground.source import bound_form, playground_access, source_of

@dataclass(frozen=True)
class Preset:
    """A model's list prices (US dollars per million tokens) and how its provider caches prompts."""

    price: Price
    cache: str
    min_tokens: int = 1024

    def values(self) -> dict[str, Any]:
        """What the page's fields show for this model when left empty (read by the page's script)."""
        return {"price_input": self.price.input, "price_cached": self.price.cached_input,
                "price_output": self.price.output, "cache_model": self.cache, "cache_min_tokens": self.min_tokens}


# A starting point, edited in the page. Anthropic's cache write price follows from the input price and the
# lifetime (1.25× for 5 minutes, 2× for an hour); DeepSeek's disk cache is priced as the ideal one.
PRICE_PRESETS: dict[str, Preset] = {
    "gpt-4o-mini": Preset(Price(0.15, 0.075, 0.60), "openai"),
    "gpt-4.1": Preset(Price(2.00, 0.50, 8.00), "openai"),
    "claude-sonnet-4": Preset(Price(3.00, 0.30, 15.00), "anthropic", 1024),
    "claude-haiku-4.5": Preset(Price(1.00, 0.10, 5.00), "anthropic", 4096),
    "deepseek-chat": Preset(Price(0.27, 0.07, 1.10), "ideal"),
}
DEFAULT_PRESET = "gpt-4o-mini"
DEFAULT_STRATEGIES = CONTEXT_STRATEGIES
MAX_SIDE_BY_SIDE = 3
DEFAULT_TTL = 300
DEFAULT_GAP = 30.0
MAX_PRICE = 10_000

CHART_WIDTH, CHART_HEIGHT = 420, 140
STRIP_WIDTH, STRIP_ROW = 420, 3
PRICE_FIELDS = (("input", "price_input"), ("cached_input", "price_cached"), ("output", "price_output"),
                ("cache_write", "price_write"))
CACHE_LABELS = {"ideal": gettext_lazy("ideal"), "openai": "OpenAI", "anthropic": "Anthropic"}
CACHE_FIELDS = ("cache_model", "cache_ttl", "cache_min_tokens", "call_gap")
_CACHE_FIELD_OF = {"cache_model": "cache_model", "cache_ttl_seconds": "cache_ttl",
                   "cache_min_tokens": "cache_min_tokens", "seconds_between_calls": "call_gap"}


def _preset(query) -> tuple[str, Preset]:
    name = query.get("model", DEFAULT_PRESET)
    return (name, PRICE_PRESETS[name]) if name in PRICE_PRESETS else (DEFAULT_PRESET, PRICE_PRESETS[DEFAULT_PRESET])


def _price(query, preset: Preset) -> tuple[Price, list[str]]:
    values: dict[str, float | None] = {}
    errors = []
    for key, field in PRICE_FIELDS:
        raw = query.get(field, "").strip()
        if not raw:
            values[key] = getattr(preset.price, key)
            continue
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not 0 <= value < MAX_PRICE:
            errors.append(_("%(field)s: enter a price between 0 and 10000 dollars per million tokens.") % {
                "field": field})
            value = getattr(preset.price, key)
        values[key] = value
    return Price(**values), errors


def _cache(query, preset: Preset) -> tuple[CacheModel, list[str]]:
    """The cache model of the page's fields (empty: the model's own), and errors naming the field."""
    kind = query.get("cache_model", "").strip() or preset.cache
    values: dict[str, Any] = {"kind": kind, "ttl_seconds": DEFAULT_TTL, "min_tokens": preset.min_tokens,
                              "seconds_between_calls": DEFAULT_GAP}
    errors = []
    for key, field, cast in (("ttl_seconds", "cache_ttl", int), ("min_tokens", "cache_min_tokens", int),
                             ("seconds_between_calls", "call_gap", float)):
        raw = query.get(field, "").strip()
        if raw:
            try:
                values[key] = cast(raw)
            except ValueError:
                errors.append(_("%(field)s: enter a number.") % {"field": field})
    try:
        return CacheModel(**values), errors
    except StrategyConfigError as exc:
        errors.append(f"{_CACHE_FIELD_OF.get(exc.field, exc.field)}: {exc.message}")
        return CacheModel(preset.cache, min_tokens=preset.min_tokens), errors


def _chosen(query) -> list[str]:
    chosen = [name for name in query.getlist("strategy") if name in CONTEXT_STRATEGIES]
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


def _rows_csv(results: list[StrategyReplay], price: Price) -> str:
    """One line per model call, the summary calls among them (``kind``), each with its cost."""
    out = io.StringIO()
    writer = csv.writer(out)
    keys = ["kind", "call", "upto", "at", "sent_tokens", "cached_tokens", "cache_read_tokens", "cache_write_tokens",
            "uncached_tokens", "output_tokens", "sent_messages", "kept", "dropped", "summarized", "cleared",
            "summary_calls", "lost_turns", "fallback"]
    writer.writerow(["strategy", *keys, "cost"])
    for r in results:
        for c in r.rows:
            row = c.to_dict()
            writer.writerow([r.name, *(row[k] if row[k] is not None else "" for k in keys),
                             f"{c.cost(price, r.cache):.9f}"])
    return out.getvalue()


def _render(request, *, share: ReplayShare | None = None):
    """The page for the configuration in ``request.GET`` (a short link's, when ``share`` is given)."""
    query = request.GET
    source = source_of(request)
    chosen = _chosen(query)
    preset_name, preset = _preset(query)
    price, price_errors = _price(query, preset)
    cache, cache_errors = _cache(query, preset)
    ctx: dict[str, Any] = {
        "source": source, "chosen": chosen, "all_strategies": CONTEXT_STRATEGIES, "presets": PRICE_PRESETS,
        "preset_values": {name: json.dumps(p.values()) for name, p in PRICE_PRESETS.items()},
        "preset": preset_name, "preset_price": preset.price, "price": price, "cache": cache,
        "write_price": price.write_price(cache), "preset_write": preset.price.write_price(cache),
        "preset_cache_label": CACHE_LABELS[preset.cache], "preset_min_tokens": preset.min_tokens,
        "cache_models": [(kind, CACHE_LABELS[kind]) for kind in CACHE_MODELS], "cache_label": CACHE_LABELS[cache.kind],
        "cache_labels_json": json.dumps({kind: str(label) for kind, label in CACHE_LABELS.items()}, ensure_ascii=False),
        "errors": price_errors + cache_errors, "default_ttl": DEFAULT_TTL, "default_gap": DEFAULT_GAP,
        "given": {key: query.get(key, "") for key in [f for _k, f in PRICE_FIELDS] + list(CACHE_FIELDS)},
        "chart_width": CHART_WIDTH, "chart_height": CHART_HEIGHT, "strip_width": STRIP_WIDTH,
        "max_side_by_side": MAX_SIDE_BY_SIDE, "share": share,
        "share_url": request.build_absolute_uri(reverse("playground-replay-shared", args=[share.pk])) if share else "",
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
            results = conversations.context_replay(source.messages, strategies, cache=cache)
        except StrategyError as exc:
            ctx["errors"].append(str(exc))
    status = 400 if ctx["errors"] else 200
    export = query.get("export")
    if export == "json" and results:
        body = {"calls": len(results[0].calls), "price": price.to_dict(cache), "cache_model": cache.to_dict(),
                "strategies": [r.to_dict(price) for r in results]}
        response = HttpResponse(json.dumps(body, ensure_ascii=False, indent=2), content_type="application/json")
        response["Content-Disposition"] = 'attachment; filename="replay.json"'
        return response
    if export == "csv" and results:
        response = HttpResponse(_rows_csv(results, price), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="replay.csv"'
        return response
    top = max((c.sent_tokens for r in results for c in r.calls), default=0)
    total = len(source.messages)
    costs = {id(r): r.cost(price) for r in results}
    cheapest = min(results, key=lambda r: costs[id(r)]) if results else None
    tokens_before = total_tokens(source.messages)
    budget, budget_error = read_budget(request, tokens_before)
    ranking = budget_ranking(request, source.messages, budget) if results and not budget_error else []
    ranks = {row["name"]: row for row in ranking}
    long_query = query.copy()
    long_query.pop("export", None)
    ctx.update(
        message_count=source.message_count,
        call_count=len(results[0].calls) if results else 0,
        top=top,
        forms=forms,
        columns=[{"result": r, "totals": r.totals, "cost": costs[id(r)], "summary_cost": r.summary_cost(price),
                  "chart": chart_svg(r, top), "strip": strip_svg(r, total),
                  "strip_height": max(STRIP_ROW, len(r.calls) * STRIP_ROW),
                  "rows": [(c, c.cost(price, cache)) for c in r.rows],
                  "cheapest": r is cheapest, "rank": ranks.get(r.name)} for r in results],
        budget=budget, budget_error=budget_error, ranking=ranking,
        query=long_query.urlencode(),
        long_url=reverse("playground-replay") + "?" + long_query.urlencode(),
        playground_url=reverse("playground") + "?" + long_query.urlencode(),
        budget_url=reverse("playground") + "?" + _with(long_query, mode="budget", budget=str(budget)),
    )
    return render(request, "web/playground_replay.html", ctx, status=status)


def _with(query, **values) -> str:
    q = query.copy()
    for key, value in values.items():
        q[key] = value
    return q.urlencode()


@playground_access
@require_GET
def replay_view(request):
    """``?conversation=`` or ``?trace=`` (as the playground), ``strategy=`` (repeated; none: all five), each
    strategy's parameters as in the playground, ``model=``, ``price_*=``, ``cache_model=`` (empty: the
    model's), ``cache_ttl=``, ``cache_min_tokens=``, ``call_gap=``; ``export=json|csv`` downloads the figures.
    A bad value answers 400, the page naming the field."""
    return _render(request)


@playground_access
@require_POST
def replay_share_create(request):
    """Keep the configuration in ``query`` (the page's query string) under a short link and open it."""
    pairs = parse_qsl(request.POST.get("query", ""), keep_blank_values=True)
    if not any(key in ("trace", "conversation") for key, _value in pairs):
        return HttpResponseBadRequest(_("query: name the conversation or trace to replay."),
                                      content_type="text/plain; charset=utf-8")
    try:
        share = replay_share_save(pairs=pairs, actor=request.user)
    except ShareTooLong:
        return HttpResponseBadRequest(_("query: too long for a short link."), content_type="text/plain; charset=utf-8")
    return redirect("playground-replay-shared", share.pk, permanent=False)


@playground_access
@require_GET
def replay_shared(request, share_id: str):
    """A short link: the saved configuration's page, computed for whoever opens it (404 if unknown)."""
    share = get_object_or_404(ReplayShare, pk=share_id[:16])
    query = QueryDict(mutable=True)
    for key, value in share.query:
        query.appendlist(key, value)
    request.GET = query
    return _render(request, share=share)
