"""The reconcile judge: a chat model decides how a new statement relates to a few stored ones.

It is asked for its reasoning before its verdict (a judge that answers first is wrong far more often:
Graphiti #1666), and sees only the candidates, never the whole memory.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memoryboard.llm.errors import LLMError
from memoryboard.llm.openai_client import clean_model_value

if TYPE_CHECKING:
    from memoryboard.llm.chat import ChatModel

VERDICTS = ("same", "update", "new", "conflict")

JUDGE_PROMPT = """\
You keep one person's long-term memory true over time. A NEW statement about the user arrives; below it
are a few STORED statements that are currently believed true. Decide how the new statement relates to them.

Verdicts:
- "same": the new statement says what a stored one already says (a repeat or a paraphrase).
- "update": the new statement replaces stored ones about the same thing with a new value (moved, changed
  job, new name, no longer likes, switched to). Name every replaced statement.
- "new": nothing stored says anything about this, or only compatible things (where one lives vs where one
  works, liking tea vs liking coffee are compatible). Related is not the same as contradicted.
- "conflict": they contradict and you cannot tell which is true now, or a stored statement says more than
  the new one replaces. Name the statements in conflict.

First think step by step in "reasoning" (which stored statements are about the same thing, and whether
the new one changes or repeats them), THEN give the verdict. Answer with ONLY this JSON object:
{"reasoning": "...", "verdict": "same" | "update" | "new" | "conflict", "target_ids": ["<stored id>", ...]}
"target_ids" is empty for "new" and names at least one stored id otherwise.
"""


@dataclass(frozen=True)
class JudgeVerdict:
    verdict: str
    target_ids: list[str]
    reasoning: str
    model: str


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def parse_verdict(text: str, *, candidate_ids: list[str], model: str = "") -> JudgeVerdict:
    """Read the judge's JSON answer.

    Raises:
        LLMError: ``"malformed response"`` when it is not the JSON asked for, names an unknown verdict, or
            names ids that were not candidates (or none where one is needed).
    """
    text = (text or "").strip()
    fenced = _FENCE.search(text)
    options = [fenced.group(1).strip()] if fenced else []
    options.append(text)
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        options.append(text[start : end + 1])
    data: Any = None
    for option in options:
        try:
            data = json.loads(option)
            break
        except ValueError:
            continue
    if not isinstance(data, dict):
        raise LLMError("malformed response", "the judge's answer is not a JSON object")
    data = clean_model_value(data)
    verdict = str(data.get("verdict") or "").strip().lower()
    if verdict not in VERDICTS:
        raise LLMError("malformed response", f"the judge's verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    raw_targets = data.get("target_ids") or []
    if not isinstance(raw_targets, list):
        raise LLMError("malformed response", "the judge's target_ids is not a list")
    targets = [str(t) for t in raw_targets]
    unknown = [t for t in targets if t not in candidate_ids]
    if unknown:
        raise LLMError("malformed response", f"the judge named ids that were not candidates: {unknown[:3]}")
    if verdict == "new":
        targets = []
    elif not targets:
        raise LLMError("malformed response", f"the judge's verdict {verdict!r} names no stored statement")
    reasoning = str(data.get("reasoning") or "").strip()
    return JudgeVerdict(verdict=verdict, target_ids=list(dict.fromkeys(targets)), reasoning=reasoning, model=model)


def judge_statement(*, chat_model: ChatModel, statement: str, candidates: list[dict], today: str) -> JudgeVerdict:
    """Ask ``chat_model`` how ``statement`` relates to ``candidates`` (``{"id", "content", "valid_from"}``).

    Raises:
        LLMError: the call failed, or its answer is not the JSON asked for.
    """
    stored = "\n".join(
        json.dumps({"id": c["id"], "statement": c["content"], "true_since": c.get("valid_from")}, ensure_ascii=False)
        for c in candidates
    )
    reply = chat_model.complete([
        {"role": "system", "content": JUDGE_PROMPT},
        {"role": "user", "content": f"Today: {today}\nNEW: {json.dumps(statement, ensure_ascii=False)}\n"
                                    f"STORED (one JSON object per line):\n{stored}"},
    ])
    return parse_verdict(reply.content, candidate_ids=[c["id"] for c in candidates],
                         model=str(getattr(chat_model, "name", "")))
