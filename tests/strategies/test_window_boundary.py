"""SLIDING_WINDOW's fast unit-boundary check agrees with the exact walk, on valid and malformed traces."""

from hypothesis import given, settings, strategies as st
from memoryboard.strategies import read_conversation
from memoryboard.strategies.context import _first_unit_boundary, _walk_unit_boundary
from tests.strategies.traces import openai_trace, anthropic_trace

@settings(max_examples=400, deadline=None)
@given(trace=st.one_of(openai_trace(), anthropic_trace()), cut=st.integers(0, 60), drop=st.integers(0, 60))
def test_fast_equals_walk(trace, cut, drop):
    msgs = read_conversation(trace).messages
    # a malformed variant: drop one message
    if drop < len(msgs) and drop % 3 == 0:
        msgs = msgs[:drop] + msgs[drop + 1:]
    tail = msgs[min(cut, len(msgs)):]
    assert _first_unit_boundary(tail) == _walk_unit_boundary(tail)
