"""Provider prompt caches as they bill: worked out by hand per cache model, and properties over random traces."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryboard.strategies import Role, StrategyConfigError
from memoryboard.strategies.prompt_cache import CacheModel, PromptCache
from memoryboard.strategies.replay import Price, replay

from .helpers import RecordingSummarizer, msg_with_tokens

SYSTEM_2000 = msg_with_tokens(2000, Role.SYSTEM, "s")


def _turn(n: int, tokens: int = 10):
    return msg_with_tokens(tokens, Role.USER, f"u{n}"[-1]), msg_with_tokens(tokens, Role.ASSISTANT, "a")


def test_openai_never_caches_a_prompt_under_1024_tokens():
    cache = PromptCache(CacheModel("openai"))
    prompt = (msg_with_tokens(900, Role.SYSTEM),)
    assert cache.call(prompt, 0).read == 0
    again = cache.call(prompt, 1)
    assert (again.read, again.write, again.uncached) == (0, 0, 900)


def test_openai_caches_a_2000_token_prefix_as_1920():
    cache = PromptCache(CacheModel("openai"))
    u1, _ = _turn(1)
    cache.call((SYSTEM_2000, u1), 0)
    other = msg_with_tokens(10, Role.USER, "z")
    use = cache.call((SYSTEM_2000, other), 10)
    assert (use.read, use.write, use.uncached) == (1920, 0, 2010 - 1920)


def test_openai_forgets_a_prefix_left_idle_longer_than_its_ttl():
    cache = PromptCache(CacheModel("openai", ttl_seconds=300))
    u1, a1 = _turn(1)
    cache.call((SYSTEM_2000, u1), 0)
    assert cache.call((SYSTEM_2000, u1, a1), 301).read == 0
    assert cache.call((SYSTEM_2000, u1, a1), 400).read == 1920  # 2030 tokens, written again at 301


def test_anthropic_write_then_read_bills_1_25_then_0_1_of_the_input_price():
    u1, a1 = _turn(1)
    u2 = msg_with_tokens(10, Role.USER, "v")
    cache = PromptCache(CacheModel("anthropic", ttl_seconds=300, min_tokens=1024))
    first = cache.call((SYSTEM_2000, u1), 0)
    assert (first.read, first.write, first.uncached) == (0, 2010, 0)
    second = cache.call((SYSTEM_2000, u1, a1, u2), 60)
    assert (second.read, second.write, second.uncached) == (2010, 20, 0)
    # Through the replay: a 2,000-token system prompt, two calls 30 s apart, $1 per million input tokens.
    messages = [{"role": "system", "content": SYSTEM_2000.content}, {"role": "user", "content": u1.content},
                {"role": "assistant", "content": a1.content}, {"role": "user", "content": u2.content}]
    (result,) = replay(messages, [("trim", {"keep_first": 10, "keep_last": 10})],
                       cache=CacheModel("anthropic", seconds_between_calls=30))
    rows = [row.to_dict() for row in result.calls]
    assert [(r["cache_write_tokens"], r["cache_read_tokens"], r["uncached_tokens"]) for r in rows] == [
        (2010, 0, 0), (20, 2010, 0)]
    price = Price(input=1.0, cached_input=0.1, output=0.0)
    assert result.cost(price) == pytest.approx((2010 * 1.25 + 2010 * 0.1 + 20 * 1.25) / 1e6)
    assert result.to_dict(price)["totals"]["cost"] == pytest.approx((2010 * 1.25 + 2010 * 0.1 + 20 * 1.25) / 1e6)


def test_anthropic_writes_again_after_the_lifetime_and_an_hour_costs_2x():
    u1, a1 = _turn(1)
    u2 = msg_with_tokens(10, Role.USER, "v")
    cache = PromptCache(CacheModel("anthropic", ttl_seconds=300))
    cache.call((SYSTEM_2000, u1), 0)
    late = cache.call((SYSTEM_2000, u1, a1, u2), 301)
    assert (late.read, late.write) == (0, 2030)
    hour = PromptCache(CacheModel("anthropic", ttl_seconds=3600))
    hour.call((SYSTEM_2000, u1), 0)
    assert hour.call((SYSTEM_2000, u1, a1, u2), 301).read == 2010
    assert Price(input=3.0).write_price(CacheModel("anthropic", ttl_seconds=3600)) == 6.0
    assert Price(input=3.0).write_price(CacheModel("anthropic")) == 3.75
    assert Price(input=3.0, cache_write=5.0).write_price(CacheModel("anthropic")) == 5.0


def test_anthropic_caches_nothing_under_the_models_minimum():
    u1, a1 = _turn(1)
    cache = PromptCache(CacheModel("anthropic", min_tokens=4096))
    assert cache.call((SYSTEM_2000, u1), 0).write == 0
    assert cache.call((SYSTEM_2000, u1, a1), 10).read == 0


def test_anthropic_a_cleared_middle_breaks_the_cache_from_there_but_the_system_prompt_stays():
    u1, a1 = _turn(1)
    u2 = msg_with_tokens(10, Role.USER, "v")
    cache = PromptCache(CacheModel("anthropic"))
    cache.call((SYSTEM_2000, u1, a1, u2), 0)
    changed = msg_with_tokens(10, Role.USER, "w")
    use = cache.call((SYSTEM_2000, changed, a1, u2), 10)
    # The system prompt's breakpoint was written with the first call: read; the rest written again.
    assert (use.read, use.write, use.uncached) == (2000, 30, 0)
    small = PromptCache(CacheModel("anthropic"))
    short_system = msg_with_tokens(500, Role.SYSTEM)
    small.call((short_system, SYSTEM_2000, u1), 0)  # two system messages, one breakpoint after both
    assert small.call((short_system, changed, u1), 10).read == 0  # under the minimum at the first message


def test_timestamps_in_the_trace_decide_the_gaps():
    u1, a1 = _turn(1)
    u2 = msg_with_tokens(10, Role.USER, "v")
    messages = [{"role": "system", "content": SYSTEM_2000.content},
                {"role": "user", "content": u1.content, "created_at": "2026-12-01T10:00:00Z"},
                {"role": "assistant", "content": a1.content, "created_at": "2026-12-01T10:00:05Z"},
                {"role": "user", "content": u2.content, "created_at": "2026-12-01T10:10:00Z"}]
    (result,) = replay(messages, [("trim", {"keep_first": 10})], cache=CacheModel("anthropic"))
    assert [c.at for c in result.calls] == [0.0, 600.0] and result.clock == "timestamps"
    assert [c.cache_read_tokens for c in result.calls] == [0, 0]  # ten minutes idle: written again
    (fast,) = replay([{k: v for k, v in m.items() if k != "created_at"} for m in messages],
                     [("trim", {"keep_first": 10})], cache=CacheModel("anthropic", seconds_between_calls=5))
    assert [c.cache_read_tokens for c in fast.calls] == [0, 2010] and fast.clock == "gap"


def test_summary_calls_are_rows_of_their_own_and_in_the_cost():
    messages = [{"role": "system", "content": "You help."}]
    for n in range(12):
        messages += [{"role": "user", "content": f"question {n} " * 5}, {"role": "assistant", "content": f"answer {n} " * 8}]
    summarizer = RecordingSummarizer("SUMMARY " * 20)
    (result,) = replay(messages, [("summarize", {"threshold": 6, "keep_last": 2})], summarizer=summarizer)
    assert len(result.summaries) == len(summarizer.calls) == result.totals["summary_calls"] > 0
    first_text, instruction = summarizer.calls[0]
    expected_in = round((len(instruction) + len(first_text)) / 2.5 + 8)
    assert result.summaries[0].sent_tokens == expected_in
    assert result.summaries[0].output_tokens == round(len("SUMMARY " * 20) / 2.5 + 4)
    price = Price(input=1.0, cached_input=0.1, output=2.0)
    agent_only = sum(c.cost(price, result.cache) for c in result.calls)
    summaries = sum(c.sent_tokens * 1.0 - c.cached_tokens * 0.9 + c.output_tokens * 2.0 for c in result.summaries) / 1e6
    assert result.cost(price) == pytest.approx(agent_only + summaries)
    assert result.cost(price) > agent_only
    body = result.to_dict(price)
    assert len(body["summary_rows"]) == len(result.summaries) and body["summary_rows"][0]["kind"] == "summary"
    assert body["totals"]["cost"] == body["cost"] and body["totals"]["summary_cost"] > 0
    # Under Anthropic's cache a summary is a one-shot request: its breakpoint is on the (short) instruction
    # only, so nothing is written at 1.25× and every summary pays its input in full.
    (billed,) = replay(messages, [("summarize", {"threshold": 6, "keep_last": 2})],
                       summarizer=RecordingSummarizer("SUMMARY " * 20), cache=CacheModel("anthropic", min_tokens=1))
    assert billed.summaries and all(c.cache_write_tokens == 0 or c.cache_write_tokens < 200 for c in billed.summaries)
    assert all(c.uncached_tokens > 0 for c in billed.summaries)


@pytest.mark.parametrize("kwargs, field", [
    ({"kind": "azure"}, "cache_model"),
    ({"kind": "anthropic", "ttl_seconds": 600}, "cache_ttl_seconds"),
    ({"kind": "openai", "ttl_seconds": 0}, "cache_ttl_seconds"),
    ({"min_tokens": 0}, "cache_min_tokens"),
    ({"seconds_between_calls": -1}, "seconds_between_calls"),
])
def test_bad_cache_settings_are_named(kwargs, field):
    with pytest.raises(StrategyConfigError) as error:
        CacheModel(**kwargs)
    assert error.value.field == field


# --- properties over random traces ---------------------------------------------------------------------

_sizes = st.lists(st.integers(min_value=0, max_value=3000), min_size=1, max_size=24)


def _trace(sizes: list[int], tools: bool) -> list[dict]:
    out = [{"role": "system", "content": "S" * 800}]
    for i, size in enumerate(sizes):
        out.append({"role": "user", "content": f"q{i}".ljust(size // 3 + 3, ".")})
        if tools:
            out += [{"role": "assistant", "content": None, "tool_calls": [
                        {"id": f"c{i}", "type": "function", "function": {"name": "look", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": f"c{i}", "content": "r" * size}]
        out.append({"role": "assistant", "content": f"a{i}".ljust(size // 2 + 3, "-")})
    return out


STRATEGIES = [("trim", {"keep_first": 2, "keep_last": 6}), ("sliding_window", {"max_tokens": 2500}),
              ("clear_tool_results", {"trigger_tokens": 1500, "keep": 1}),
              ("summarize", {"threshold": 8, "keep_last": 4})]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=_sizes, tools=st.booleans(), gap=st.sampled_from([1.0, 200.0, 400.0]))
def test_cached_tokens_follow_each_providers_rules(sizes, tools, gap):
    trace = _trace(sizes, tools)
    ideal = replay(trace, STRATEGIES, cache=CacheModel("ideal", seconds_between_calls=gap))
    for result in ideal:
        previous = 0
        for call in result.calls:
            assert call.cached_tokens <= previous and call.cache_write_tokens == 0
            previous = call.sent_tokens
    openai = replay(trace, STRATEGIES, cache=CacheModel("openai", seconds_between_calls=gap))
    for result in openai:
        for call in result.calls + result.summaries:
            assert call.cached_tokens == 0 or (call.cached_tokens >= 1024 and call.cached_tokens % 128 == 0)
            assert 0 <= call.uncached_tokens
    anthropic = replay(trace, STRATEGIES, cache=CacheModel("anthropic", seconds_between_calls=gap))
    for result in anthropic:
        for call in result.calls:
            assert call.cached_tokens + call.cache_write_tokens + call.uncached_tokens == call.sent_tokens
            assert call.uncached_tokens >= 0
            assert call.cache_write_tokens == 0 or call.cached_tokens + call.cache_write_tokens >= 1024
