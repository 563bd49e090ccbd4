from __future__ import annotations

import pytest

from memoryboard.strategies import (
    CONTEXT_STRATEGIES,
    MEMORY_STRATEGIES,
    CompositeConfig,
    DeleteConfig,
    FilterRules,
    Role,
    SlidingWindowConfig,
    StrategyConfigError,
    SummarizeConfig,
    TrimConfig,
    apply_context,
    composite,
    context_param_spec,
    memory_param_spec,
    normalize_name,
    parse_params,
    sliding_window,
    trim,
)

from .helpers import numbered


def test_defaults_match_design():
    assert TrimConfig() == TrimConfig(keep_first=2, keep_last=10)
    assert SummarizeConfig() == SummarizeConfig(threshold=20, keep_last=6)
    assert SlidingWindowConfig().max_tokens == 4000
    assert CompositeConfig().steps == ("SUMMARIZE", "SLIDING_WINDOW")
    assert DeleteConfig().keep_latest == 50
    assert FilterRules().keep_roles == {Role.SYSTEM, Role.USER, Role.ASSISTANT}


@pytest.mark.parametrize(
    ("value", "reason"),
    [(-1, ">= 0"), (True, "integer"), (2.0, "integer"), ("3", "integer"), (None, "integer"), (10_000_001, "<=")],
)
def test_bad_counts_name_the_field(value, reason):
    with pytest.raises(StrategyConfigError) as err:
        parse_params("trim", {"keep_first": 1, "keep_last": value})
    assert err.value.field == "keep_last"
    assert reason in err.value.message


def test_function_api_validates_too():
    with pytest.raises(StrategyConfigError) as err:
        trim(numbered(3), keep_first=-2)
    assert err.value.field == "keep_first"
    with pytest.raises(StrategyConfigError) as err:
        sliding_window(numbered(3), max_tokens=0)
    assert err.value.field == "max_tokens"


def test_unknown_key_names_the_field():
    with pytest.raises(StrategyConfigError) as err:
        parse_params("sliding_window", {"max_token": 10})
    assert err.value.field == "max_token"


@pytest.mark.parametrize("name", ["nope", "", None, 3])
def test_unknown_strategy(name):
    with pytest.raises(StrategyConfigError) as err:
        parse_params(name, {})
    assert err.value.field == "name"


def test_params_must_be_an_object():
    with pytest.raises(StrategyConfigError) as err:
        parse_params("trim", [1, 2])
    assert err.value.field == "params"


def test_composite_params():
    cfg = parse_params(
        "composite", {"steps": ["trim", "sliding-window"], "trim": {"keep_last": 4}, "sliding_window": {"max_tokens": 9}}
    )
    assert cfg.steps == ("TRIM", "SLIDING_WINDOW")
    assert cfg.trim == TrimConfig(keep_first=2, keep_last=4)
    assert cfg.sliding_window.max_tokens == 9


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"steps": []}, "steps"),
        ({"steps": "trim"}, "steps"),
        ({"steps": ["trim", "explode"]}, "steps[1]"),
        ({"steps": ["composite"]}, "steps[0]"),
        ({"sliding_window": {"max_tokens": -5}}, "sliding_window.max_tokens"),
        ({"summarize": {"treshold": 5}}, "summarize.treshold"),
        ({"summarize": 5}, "summarize"),
        ({"keep_last": 3}, "keep_last"),
    ],
)
def test_composite_param_errors(params, field):
    with pytest.raises(StrategyConfigError) as err:
        parse_params("COMPOSITE", params)
    assert err.value.field == field


def test_empty_composite_function_api():
    with pytest.raises(StrategyConfigError) as err:
        composite(numbered(3), steps=[])
    assert err.value.field == "steps"


def test_filter_rule_errors():
    with pytest.raises(StrategyConfigError) as err:
        FilterRules(keep_tool="yes")  # type: ignore[arg-type]
    assert err.value.field == "keep_tool"
    with pytest.raises(StrategyConfigError) as err:
        FilterRules(assistant_keywords=("ok", ""))
    assert err.value.field == "assistant_keywords[1]"
    with pytest.raises(StrategyConfigError) as err:
        FilterRules(min_length=-1)
    assert err.value.field == "min_length"


def test_apply_context_accepts_config_objects():
    assert apply_context("trim", numbered(10), TrimConfig(1, 1)).kept == (0, 9)
    with pytest.raises(StrategyConfigError):
        apply_context("trim", numbered(10), SlidingWindowConfig())


def test_normalize_name_and_registry():
    assert CONTEXT_STRATEGIES == ("TRIM", "SUMMARIZE", "SLIDING_WINDOW", "CLEAR_TOOL_RESULTS", "COMPOSITE")
    assert MEMORY_STRATEGIES == ("TRIM", "SUMMARIZE", "DELETE", "FILTER")
    assert normalize_name("sliding-window", "context") == "SLIDING_WINDOW"
    assert normalize_name("filter", "memory") == "FILTER"
    with pytest.raises(StrategyConfigError):
        normalize_name("filter", "context")
    for name in CONTEXT_STRATEGIES:
        assert context_param_spec(name.lower())
    for name in MEMORY_STRATEGIES:
        assert memory_param_spec(name)
    (spec,) = context_param_spec("sliding_window")
    assert (spec.name, spec.type, spec.default, spec.min) == ("max_tokens", "int", 4000, 1)
    assert [p.name for p in context_param_spec("trim")] == ["keep_first", "keep_last"]
    assert context_param_spec("composite")[0].to_dict()["default"] == ["SUMMARIZE", "SLIDING_WINDOW"]


def test_param_spec_defaults_agree_with_configs():
    configs = {"TRIM": TrimConfig(), "SUMMARIZE": SummarizeConfig(), "SLIDING_WINDOW": SlidingWindowConfig()}
    for name, cfg in configs.items():
        for spec in context_param_spec(name):
            assert getattr(cfg, spec.name) == spec.default
    for spec in memory_param_spec("delete"):
        assert getattr(DeleteConfig(), spec.name) == spec.default
