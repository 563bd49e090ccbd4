from __future__ import annotations

from memoryboard.strategies import Message, Role, SummarizerError


def msg_with_tokens(tokens: int, role: Role = Role.USER, label: str = "x") -> Message:
    """A message whose estimated tokens are exactly ``tokens`` (len / 2.5 + 4)."""
    length = (tokens - 4) * 5 // 2
    assert length / 2.5 + 4 == tokens
    return Message(role, (label * length)[:length])


def numbered(n: int, start: int = 1, *, ids: bool = False) -> list[Message]:
    return [Message(Role.USER if i % 2 else Role.ASSISTANT, str(i), i if ids else None) for i in range(start, start + n)]


class RecordingSummarizer:
    name = "recording"
    is_offline = True

    def __init__(self, answer: str = "SUMMARY") -> None:
        self.answer = answer
        self.calls: list[tuple[str, str]] = []

    def summarize(self, text: str, *, instruction: str) -> str:
        self.calls.append((text, instruction))
        return self.answer


class FailingSummarizer:
    name = "failing"
    is_offline = False

    def __init__(self, exc: Exception | None = None) -> None:
        self.exc = exc or SummarizerError("timeout")
        self.calls = 0

    def summarize(self, text: str, *, instruction: str) -> str:
        self.calls += 1
        raise self.exc


def replay_conversation(turns: int = 6, *, final_reply: bool = False) -> list[dict]:
    """A system prompt and ``turns`` exchanges whose token counts are whole numbers, for the replay's
    hand-computed cases: every user text is 10 characters (8 tokens: 10 / 2.5 + 4), every reply 20 (12
    tokens); the last question is unanswered unless ``final_reply``."""
    messages = [{"role": "system", "content": "S" * 10}]
    for n in range(1, turns + 1):
        messages.append({"role": "user", "content": f"U{n}".ljust(10, ".")})
        if n < turns or final_reply:
            messages.append({"role": "assistant", "content": f"A{n}".ljust(20, ".")})
    return messages
