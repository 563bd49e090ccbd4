"""A message cut into the clauses that may each state one fact (English, Chinese and the two mixed).

Grammar only, no vocabulary: sentences end at ``。！？!?；;…``, a new line, an English full stop before a
space, a spaced dash or an emoji; inside a sentence a clause ends at a comma, a parenthesis, a space
between two Chinese characters (chat Chinese often has no commas), before an English conjunction that
joins clauses (``but``, ``so``, ``because``; ``and`` only when a subject follows: "a mat and a pair of
dumbbells" is one clause). A piece too short to say anything alone ("married" in "I'm 34, married, two
kids") stays with its neighbour. Text quoted to be processed ("Summarise: '…'", 翻译：“…”) is not the
speaker's: quotes of four words (eight Chinese characters) or more are cut out; a short quote (a name)
stays.

Each clause is a :class:`Clause`: its text and where it starts in the message, so neighbours can be
joined again as they were written.

Nothing here imports Django.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CJK_CHARS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK = re.compile(f"[{_CJK_CHARS}]")
_LATIN_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*|\d+(?:[.,:]\d+)*")
# Pictographs and symbols people end a thought with (🐕, 😭, ✌️, 💪).
_EMOJI = "\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F\u200D"

# Quoted text to process: "…", “…”, ‘…’, 「…」, 『…』, and '…' (an apostrophe inside a word does not close it).
_QUOTE = re.compile(
    r"“[^”]*”|\"[^\"]*\"|「[^」]*」|『[^』]*』|‘[^’]*’"
    r"|(?:(?<=^)|(?<=[\s:：(（,，]))'(?:[^']|(?<=\w)'(?=\w))+'(?=$|[\s.,;:!?)）。，！？])"
)
QUOTE_MIN_WORDS = 4

_SENTENCE_END = re.compile(
    rf"[。！？!?；;…\n]+|(?<=\S)\.(?=\s|$)|\s[-–—]+\s|—+|～+|~+(?=\s|$)|\s*[{_EMOJI}]+\s*"
)
# An English full stop after these is not a sentence end ("Dr. Lee", "e.g. tea", "Co. Wicklow").
_ABBREVIATION = re.compile(r"(?:\b(?:dr|mr|mrs|ms|st|co|vs|etc|approx|no|jr|sr|e\.g|i\.e))$", re.IGNORECASE)

# Clause ends inside a sentence: commas (not a thousands separator "2,000"), parentheses, a space between two
# Chinese characters, and English conjunctions that join clauses. Not a colon: "Background: chemistry
# degree", "card on file: 4539 …" are one clause, the label with its value.
_CLAUSE_END = re.compile(
    rf",(?!\d{{3}}(?!\d))\s*|，\s*|\s*[()（）]\s*|(?<=[{_CJK_CHARS}])\s+(?=[{_CJK_CHARS}])"
    r"|\s+(?=(?:but|so|because|bc|cos|cause|though|although|plus)\s)"
    r"|\s+(?=and\s+(?:i|i'm|im|i've|i'd|i'll|we|we're|we've|my|our|he|she|they|he's|she's|they're|it's|"
    r"the user|user|the customer|customer)\b)",
    re.IGNORECASE,
)
# A connective at the start of a clause is not part of what it states.
# (Matched at a position: no "^", which would only match at the start of the whole message.)
_LEADING = re.compile(r"(?:(?:and|but|so|because|bc|cos|cause|though|although|plus|oh|anyway|anyways)\b[\s,]*)+",
                      re.IGNORECASE)
_EDGE = " \t\r\n,，、:：;；.。!！?？…-–—~～()（）\"'“”‘’"

# Below this many words (a Chinese character counting two thirds) a clause says nothing alone.
FRAGMENT_WORDS = 2.0


@dataclass(frozen=True)
class Clause:
    """One clause of a message: ``text`` as written (edges trimmed) and its ``start`` and ``end`` offsets."""

    text: str
    start: int
    end: int
    sentence: int  # index of the sentence it belongs to
    mark: str = ""  # the last clause of a sentence: the punctuation that ended it ("?", "！", "."), else ""


def word_count(text: str) -> float:
    """Latin words and numbers, plus two thirds of a word per Chinese character (a word is 1.5 characters)."""
    cjk = len(_CJK.findall(text))
    return len(_LATIN_WORD.findall(_CJK.sub(" ", text))) + cjk * 2 / 3


def strip_quoted(text: str) -> str:
    """``text`` without the long quoted spans (text given to process), each replaced by a space."""

    def cut(match: re.Match[str]) -> str:
        inner = match.group(0)[1:-1]
        return " " if word_count(inner) >= QUOTE_MIN_WORDS else match.group(0)

    return _QUOTE.sub(cut, text)


def _spans(text: str, pattern: re.Pattern[str], start: int, end: int, *, sentences: bool = False):
    """The pieces of ``text[start:end]`` between the matches of ``pattern``, as (start, end)."""
    pieces = []
    cursor = start
    for match in pattern.finditer(text, start, end):
        if sentences and match.group(0) == "." and _ABBREVIATION.search(text[max(start, match.start() - 6):match.start()]):
            continue
        if match.start() > cursor:
            pieces.append((cursor, match.start()))
        cursor = match.end()
    if cursor < end:
        pieces.append((cursor, end))
    return pieces


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in _EDGE:
        start += 1
    while end > start and text[end - 1] in _EDGE:
        end -= 1
    leading = _LEADING.match(text, start, end)
    if leading and leading.end() < end:
        start = leading.end()
    return start, end


_END_MARK = re.compile(r"[\s\"'”’)）]*([?？!！。.…]+)")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """The sentences of ``text`` as (start, end) offsets, edges trimmed, empty ones left out."""
    out = []
    for start, end in _spans(text, _SENTENCE_END, 0, len(text), sentences=True):
        start, end = _trim(text, start, end)
        if end > start:
            out.append((start, end))
    return out


def split_clauses(text: str) -> list[Clause]:
    """The clauses of a message, in order, long quotes cut out (see the module docstring).

    Example:
        >>> [c.text for c in split_clauses("I'm 34, married, two kids, and we just moved to Porto.")]
        ["I'm 34, married", 'two kids', 'we just moved to Porto']
    """
    text = strip_quoted(text or "")
    clauses: list[Clause] = []
    for index, (s_start, s_end) in enumerate(split_sentences(text)):
        mark = _END_MARK.match(text, s_end)
        pieces = []
        for start, end in _spans(text, _CLAUSE_END, s_start, s_end):
            start, end = _trim(text, start, end)
            if end > start:
                pieces.append([start, end])
        merged: list[list[int]] = []
        for piece in pieces:
            if merged and word_count(text[piece[0]:piece[1]]) < FRAGMENT_WORDS:
                merged[-1][1] = piece[1]  # a fragment stays with the clause before it
            elif merged and word_count(text[merged[-1][0]:merged[-1][1]]) < FRAGMENT_WORDS:
                merged[-1][1] = piece[1]  # and a leading fragment with the one after it
            else:
                merged.append(piece)
        for position, (start, end) in enumerate(merged):
            if text.count("(", start, end) > text.count(")", start, end) and text.startswith(")", end):
                end += 1  # "self-employed (plumber)" keeps its closing parenthesis
            last = position == len(merged) - 1
            clauses.append(Clause(text=text[start:end], start=start, end=end, sentence=index,
                                  mark=mark.group(1) if mark and last else ""))
    return clauses
