"""The offline chat model: deterministic, no network (the default when no endpoint is configured)."""

from __future__ import annotations

import re
from typing import Any

from memoryboard.llm.chat import ChatReply, ToolCall
from memoryboard.llm.extraction import classify_statement

_REMEMBER = re.compile(
    r"(?:\bplease\s+)?\bremember\b(?:\s+that)?\s*[:,]?\s*(?P<en>.*)|(?:请)?(?:帮我)?记住(?:一下)?\s*[:：,，]?\s*(?P<zh>.*)",
    re.IGNORECASE | re.DOTALL,
)
_LTM_BLOCK = re.compile(r"<long_term_memory>(.*?)</long_term_memory>", re.DOTALL)
_LTM_ITEM = re.compile(r"^\s*\d+\.\s", re.MULTILINE)
_HAS_CJK = re.compile(r"[\u4e00-\u9fff]")


def _text(content: Any) -> str:
    """Message content as text (OpenAI content parts are joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _tool_names(tools: list[dict] | None) -> dict[str, dict]:
    names = {}
    for tool in tools or []:
        function = tool.get("function", tool) if isinstance(tool, dict) else {}
        if isinstance(function, dict) and function.get("name"):
            names[function["name"]] = function
    return names


class OfflineChatModel:
    """A deterministic stand-in that needs no network.

    With the ``memory_save`` tool offered and a last user message asking to remember something
    ("remember …", "记住…"), it calls the tool with that content; once the tool has answered, or
    otherwise, it replies that it runs offline and how many long-term memories its system prompt holds.
    """

    name = "offline"
    is_offline = True

    def complete(self, messages: list[dict], *, tools: list[dict] | None = None) -> ChatReply:
        last_user_index = max((i for i, m in enumerate(messages) if str(m.get("role", "")).lower() == "user"),
                              default=None)
        user_text = _text(messages[last_user_index].get("content")).strip() if last_user_index is not None else ""
        answered_by_tool = last_user_index is not None and any(
            str(m.get("role", "")).lower() == "tool" for m in messages[last_user_index + 1 :]
        )
        chinese = bool(_HAS_CJK.search(user_text))

        offered = _tool_names(tools)
        if "memory_save" in offered and not answered_by_tool:
            content = self._to_remember(user_text)
            if content:
                arguments: dict[str, Any] = {"content": content}
                properties = (offered["memory_save"].get("parameters") or {}).get("properties") or {}
                if "type" in properties:
                    arguments["type"] = self._memory_type(content)
                return ChatReply(content="", tool_calls=[ToolCall(id="offline_call_0", name="memory_save",
                                                                  arguments=arguments)])
        if answered_by_tool:
            return ChatReply(content="好的，我记住了。（离线模式）" if chinese else "OK, I will remember that. (offline mode)")

        memories = self._memory_count(messages)
        if chinese:
            reply = "（离线模式）我正在离线运行，没有连接大语言模型。"
            if memories is not None:
                reply += f"我有关于你的 {memories} 条长期记忆。"
        else:
            reply = "(offline mode) I am running offline, without a language model."
            if memories is not None:
                reply += f" I have {memories} long-term memories about you."
        return ChatReply(content=reply)

    @staticmethod
    def _to_remember(text: str) -> str:
        if text.rstrip().endswith(("?", "？", "吗")):
            return ""  # "do you remember …?" asks, it does not tell
        match = _REMEMBER.search(text)
        if not match:
            return ""
        rest = (match.group("en") if match.group("en") is not None else match.group("zh") or "").strip()
        return rest.rstrip("。.!！ ") or text

    @staticmethod
    def _memory_type(content: str) -> str:
        return classify_statement(content) or "FACT"

    @staticmethod
    def _memory_count(messages: list[dict]) -> int | None:
        for message in messages:
            if str(message.get("role", "")).lower() != "system":
                continue
            block = _LTM_BLOCK.search(_text(message.get("content")))
            if block:
                return len(_LTM_ITEM.findall(block.group(1)))
        return None

    def __repr__(self) -> str:
        return "OfflineChatModel()"
