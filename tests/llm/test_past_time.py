"""A statement tells of a past time ("used to", 以前, "back in uni"), not of being somewhere again ("I'm back in the
office"): another value told of a past time is history beside what holds now (ltm.write.reconcile_offline)."""

from __future__ import annotations

import pytest

from memoryboard.llm.attributes import tells_of_a_past_time


@pytest.mark.parametrize("text", [
    "I used to live in Adelaide.", "我以前住在上海。", "Back in uni I lived in Leeds.", "back in 2019 I was a nurse",
    "小时候我住在农村", "when I was a kid we had a dog",
])
def test_a_past_time(text):
    assert tells_of_a_past_time(text)


@pytest.mark.parametrize("text", [
    "I'm back in the office full time.", "We're back in Leeds, closer to family.", "moved back in with my parents",
    "I live in Perth.", "I work at Google now.",
])
def test_being_somewhere_again_or_now_is_no_past_time(text):
    assert not tells_of_a_past_time(text)
