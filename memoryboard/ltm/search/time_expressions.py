"""Time expressions (English and Chinese): the one reader of the times that queries and statements name.

:func:`query_window` reads the time a query asks about as a window of days: a year ("in 2023",
"2023年"), a month ("May 2023", "last May", "2023年5月", "5月"), a day ("2023-05-12",
"2023年5月12日"), or relative to ``now`` ("last month", "this year", "last week", "yesterday", "today",
"3 months ago", 上个月, 这个月, 去年, 今年, 前年, 上周, 昨天, 前天, 今天, 三个月前). "before …" / "after …" /
"since …" (之前, 以前, 以后, 之后) name an event instead: the window is open on one side and its
``anchor`` is the words of the event, which the search resolves to the date of the item that best
matches them (``ltm.search.retrieval``).

:func:`stated_time` reads the same expressions in a statement ("I moved to Berlin last month", 我上个月
搬到北京了) as when it became true (the reconcile step's ``validFrom``): the start of the window, or for a
count back ("3 months ago", 三个月前) the day it names.

:func:`item_day` is when an item was said or became true: its ``validFrom`` (value_json), else a date
at the start of its text (a raw turn, "[2023-05-12] Maya: …"), else its ``created_at``.

Days are counted from 1970-01-01 (floats, so a missing day is NaN in a numpy array). No library: the
ones that parse such expressions are either heavy (dateparser: hundreds of locale tables, parses
anything as a date) or unmaintained (parsedatetime, ctparse) and none reads 上个月 and "last month" to
a window; the forms above are what questions about memories and first-person statements use
(docs/retrieval.md § Time).

Nothing here imports Django.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

EPOCH = dt.date(1970, 1, 1)

_MONTHS = {name: i for i, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
     ("november", "nov"), ("december", "dec")], start=1) for name in names}
_MONTH_WORD = r"(january|february|march|april|may|june|july|august|september|october|november|december|" \
              r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)"
_ZH_NUMBERS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
               "十一": 11, "十二": 12}
_ZH_NUMBER = r"(\d{1,2}|十一|十二|[一二两三四五六七八九十])"
_ZH_COUNT = r"(\d+|十一|十二|[一二两三四五六七八九十])"


@dataclass(frozen=True)
class Window:
    """Days ``start`` (inclusive) to ``end`` (exclusive), either open (``None``); ``anchor``: the
    words of an event the window is before or after (the search resolves it), else ``""``."""

    start: int | None
    end: int | None
    anchor: str = ""
    before: bool = False  # with an anchor: before it (else after it)
    text: str = ""  # the words of the query that named the time

    def contains(self, day: float) -> bool:
        return (self.start is None or day >= self.start) and (self.end is None or day < self.end)


def day_number(date: dt.date) -> int:
    return (date - EPOCH).days


def _month_window(year: int, month: int) -> tuple[int, int]:
    start = dt.date(year, month, 1)
    end = dt.date(year + (month == 12), month % 12 + 1, 1)
    return day_number(start), day_number(end)


def _year_window(year: int) -> tuple[int, int]:
    return day_number(dt.date(year, 1, 1)), day_number(dt.date(year + 1, 1, 1))


def _zh_number(text: str) -> int:
    return int(text) if text.isdigit() else _ZH_NUMBERS[text]


def _last_month_named(month: int, today: dt.date) -> int:
    """The year of the latest ``month`` before this month ("last May", "5月" asked in October: this
    year's; asked in March: last year's)."""
    return today.year if month < today.month else today.year - 1


def _months_back(today: dt.date, count: int) -> tuple[int, int]:
    index = today.year * 12 + today.month - 1 - count
    return index // 12, index % 12 + 1


_EN_PATTERNS: list[tuple[re.Pattern, str]] = [
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), "iso_day"),
    (re.compile(rf"\b{_MONTH_WORD}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I), "month_day_year"),
    (re.compile(rf"\b{_MONTH_WORD}\.?\s+(?:of\s+)?(\d{{4}})\b", re.I), "month_year"),
    (re.compile(rf"\b(?:last|this past)\s+{_MONTH_WORD}\b", re.I), "last_named_month"),
    (re.compile(rf"\bin\s+{_MONTH_WORD}\b", re.I), "last_named_month"),
    (re.compile(r"\b(?:in|during|of|from)\s+((?:19|20)\d{2})\b", re.I), "year"),
    (re.compile(r"\b((?:19|20)\d{2})\b"), "year"),
    (re.compile(r"\blast\s+month\b", re.I), "last_month"),
    (re.compile(r"\bthis\s+month\b", re.I), "this_month"),
    (re.compile(r"\blast\s+year\b", re.I), "last_year"),
    (re.compile(r"\bthis\s+year\b", re.I), "this_year"),
    (re.compile(r"\blast\s+week\b", re.I), "last_week"),
    (re.compile(r"\bthis\s+week\b", re.I), "this_week"),
    (re.compile(r"\b(?:the\s+)?day\s+before\s+yesterday\b", re.I), "day_before_yesterday"),
    (re.compile(r"\byesterday\b", re.I), "yesterday"),
    (re.compile(r"\btoday\b|\bthis\s+morning\b", re.I), "today"),
    (re.compile(r"\b(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten)\s+(day|week|month|year)s?\s+ago\b",
                re.I), "ago"),
]
_ZH_PATTERNS: list[tuple[re.Pattern, str]] = [
    (re.compile(rf"(\d{{4}})年{_ZH_NUMBER}月{_ZH_NUMBER}[日号]"), "zh_day"),
    (re.compile(rf"(\d{{4}})年{_ZH_NUMBER}月(?:份)?"), "zh_month_year"),
    (re.compile(r"(\d{4})年"), "zh_year"),
    (re.compile(r"上个?月"), "last_month"),
    (re.compile(r"(?:这个|本)月"), "this_month"),
    (re.compile(r"前年"), "year_before_last"),
    (re.compile(r"去年"), "last_year"),
    (re.compile(r"今年"), "this_year"),
    (re.compile(r"上(?:个)?(?:周|星期|礼拜)"), "last_week"),
    (re.compile(r"(?:这|本)(?:个)?(?:周|星期|礼拜)"), "this_week"),
    (re.compile(r"昨天"), "yesterday"),
    (re.compile(r"前天"), "day_before_yesterday"),
    (re.compile(r"今天|今早"), "today"),
    (re.compile(rf"{_ZH_COUNT}(天|周|个?星期|个月|年)[以之]?前"), "zh_ago"),
    (re.compile(rf"(?<![\d年]){_ZH_NUMBER}月(?:份)?"), "zh_month"),
]
_WORD_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10}
_UNITS = {"day": "day", "天": "day", "week": "week", "周": "week", "星期": "week", "个星期": "week",
          "month": "month", "个月": "month", "year": "year", "年": "year"}
_EN_RELATIVE = re.compile(r"\b(before|after|since)\s+(.+?)(?:[?.!,;]|$)", re.I)
# 之前 followed by a verb of trying or intending is "previously" ("她之前尝试过…"), not "before …".
_ZH_RELATIVE = re.compile(r"([\u4e00-\u9fff\w]{1,12}?)(之前|以前|以后|之后)(?!尝试|试过|打算|计划|想|说|提|曾|是|在)")
# An English event names something that happened: a verb in the past or -ing form ("she moved",
# "moving", "he got the job"), not a place or a time of day ("before the office", "after lunch").
_EN_EVENT = re.compile(r"\b\w+(?:ed|ing)\b|\b(?:got|went|left|began|took|came|became|had|was|were|met|"
                       r"bought|found|lost|quit|started)\b", re.I)
_ZH_RELATIVE_SKIP = re.compile(r"^(?:\d+|[一二两三四五六七八九十]+)(?:天|周|个星期|个月|年)?$")


def _window_of(kind: str, match: re.Match, today: dt.date) -> tuple[int, int]:
    g = match.groups()
    if kind == "iso_day":
        start = day_number(dt.date(int(g[0]), int(g[1]), int(g[2])))
        return start, start + 1
    if kind == "month_day_year":
        start = day_number(dt.date(int(g[2]), _MONTHS[g[0].lower()], int(g[1])))
        return start, start + 1
    if kind == "month_year":
        return _month_window(int(g[1]), _MONTHS[g[0].lower()])
    if kind == "last_named_month":
        month = _MONTHS[g[0].lower()]
        return _month_window(_last_month_named(month, today), month)
    if kind in ("year", "zh_year"):
        return _year_window(int(g[0]))
    if kind == "zh_month_year":
        return _month_window(int(g[0]), _zh_number(g[1]))
    if kind == "zh_day":
        start = day_number(dt.date(int(g[0]), _zh_number(g[1]), _zh_number(g[2])))
        return start, start + 1
    if kind == "zh_month":
        month = _zh_number(g[0])
        return _month_window(_last_month_named(month, today), month)
    if kind == "last_month":
        return _month_window(*_months_back(today, 1))
    if kind == "this_month":
        return _month_window(today.year, today.month)
    if kind == "last_year":
        return _year_window(today.year - 1)
    if kind == "year_before_last":
        return _year_window(today.year - 2)
    if kind == "this_year":
        return _year_window(today.year)
    monday = today - dt.timedelta(days=today.weekday())
    if kind == "last_week":
        return day_number(monday) - 7, day_number(monday)
    if kind == "this_week":
        return day_number(monday), day_number(today) + 1
    if kind == "yesterday":
        return day_number(today) - 1, day_number(today)
    if kind == "day_before_yesterday":
        return day_number(today) - 2, day_number(today) - 1
    if kind == "today":
        return day_number(today), day_number(today) + 1
    if kind in ("ago", "zh_ago"):
        count, unit = _count_back(kind, match)
        if unit == "day":
            day = day_number(today) - count
            return day, day + 1
        if unit == "week":
            start = day_number(monday) - 7 * count
            return start, start + 7
        if unit == "month":
            return _month_window(*_months_back(today, count))
        return _year_window(today.year - count)
    raise ValueError(kind)


def _count_back(kind: str, match: re.Match) -> tuple[int, str]:
    """``(count, unit)`` of "3 months ago", 三个月前: unit ``day``, ``week``, ``month`` or ``year``."""
    number, unit = match.group(1), match.group(2).lower()
    if number.isdigit():
        count = int(number)
    else:
        count = _WORD_COUNTS[number.lower()] if kind == "ago" else _zh_number(number)
    return count, _UNITS[unit]


def _day_counted_back(kind: str, match: re.Match, today: dt.date) -> int:
    """The day "3 months ago" names: the same day of the month three months back (at most the 28th),
    seven days per week back, the same month and day years back."""
    count, unit = _count_back(kind, match)
    if unit == "day":
        return day_number(today) - count
    if unit == "week":
        return day_number(today) - 7 * count
    if unit == "month":
        year, month = _months_back(today, count)
        return day_number(dt.date(year, month, min(today.day, 28)))
    return day_number(dt.date(today.year - count, today.month, min(today.day, 28)))


def _named_time(text: str, today: dt.date) -> tuple[str, re.Match, int, int] | None:
    """The first time ``text`` names (English patterns first, then Chinese, each in order): its kind,
    match and window of days, else ``None``."""
    for patterns in (_EN_PATTERNS, _ZH_PATTERNS):
        for pattern, kind in patterns:
            match = pattern.search(text)
            if match is None:
                continue
            try:
                start, end = _window_of(kind, match, today)
            except (ValueError, KeyError):
                continue
            return kind, match, start, end
    return None


def query_window(query: str, now: dt.date | dt.datetime) -> Window | None:
    """The time ``query`` asks about (see the module docstring), ``None`` when it names none.

    Examples (asked on 2023-06-15):
        "what did she do last May?" → 2023-05-01 .. 2023-06-01; "她上个月做了什么" → the same;
        "in 2022" / "2022年" → the year; "before she moved" → open start, anchor "she moved".
    """
    today = now.date() if isinstance(now, dt.datetime) else now
    text = query or ""
    named = _named_time(text, today)
    if named is not None:
        _kind, match, start, end = named
        return Window(start, end, text=match.group(0))
    match = _EN_RELATIVE.search(text)
    if match is not None and len(match.group(2).split()) <= 6 and _EN_EVENT.search(match.group(2)):
        return Window(None, None, anchor=match.group(2).strip(), before=match.group(1).lower() == "before",
                      text=match.group(0))
    for match in _ZH_RELATIVE.finditer(text):
        words = match.group(1)
        if _ZH_RELATIVE_SKIP.match(words):
            continue
        return Window(None, None, anchor=words, before=match.group(2) in ("之前", "以前"), text=match.group(0))
    return None



def stated_time(text: str, *, now: dt.datetime) -> dt.datetime | None:
    """When a statement says it became true, relative to ``now`` (the message time), as midnight in
    ``now``'s time zone: the start of the time it names ("last month": the first day of the previous
    month; "since 2019": 1 January 2019; "last week": its Monday), or for a count back the day it names
    ("3 months ago": the same day three months back). ``None`` when it names no time, or one after ``now``.

    Example:
        >>> stated_time("I moved to Berlin last month", now=dt.datetime(2026, 12, 4)).date()
        datetime.date(2026, 11, 1)
    """
    today = now.date()
    named = _named_time(text or "", today)
    if named is None:
        return None
    kind, match, start, _end = named
    day = _day_counted_back(kind, match, today) if kind in ("ago", "zh_ago") else start
    moment = dt.datetime.combine(EPOCH + dt.timedelta(days=day), dt.time(0), tzinfo=now.tzinfo)
    return moment if moment <= now else None

# A date leading a text: "[2023-05-12] …", "[2023/05/12 14:03] …", "[1:56 pm on 8 May, 2023] …",
# "[May 8, 2023] …", "[2023年5月8日] …" (looked for in the bracket, or the first 40 characters).
_DATE_ISO = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")
_DATE_DMY = re.compile(rf"(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH_WORD}\.?,?\s+(\d{{4}})", re.I)
_DATE_MDY = re.compile(rf"{_MONTH_WORD}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})", re.I)
_DATE_ZH = re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})[日号]")


def text_day(text: str) -> int | None:
    """The day of a date leading a text (a raw turn: "[2023-05-12] Maya: …", "[8 May, 2023] …"),
    else ``None``."""
    text = (text or "").lstrip()
    head = text[1 : text.find("]")] if text.startswith("[") and "]" in text[:60] else text[:40]
    for pattern, order in ((_DATE_ISO, "ymd"), (_DATE_ZH, "ymd"), (_DATE_DMY, "dmy"), (_DATE_MDY, "mdy")):
        match = pattern.search(head)
        if match is None or (match.start() > 0 and not text.startswith("[")):
            continue  # outside a bracket, only a date the text starts with
        a, b, c = match.groups()
        try:
            if order == "ymd":
                date = dt.date(int(a), int(b), int(c))
            elif order == "dmy":
                date = dt.date(int(c), _MONTHS[b.lower()], int(a))
            else:
                date = dt.date(int(c), _MONTHS[a.lower()], int(b))
        except (ValueError, KeyError):
            return None
        return day_number(date)
    return None


def _iso_day(value) -> int | None:
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        return day_number(dt.date.fromisoformat(value[:10]))
    except ValueError:
        return None


def item_day(value: dict, created_at=None) -> float:
    """When an item was said or became true, in days (see the module docstring); NaN if unknown."""
    day = _iso_day((value or {}).get("validFrom"))
    if day is None:
        day = text_day(str((value or {}).get("content", "")))
    if day is None and created_at is not None:
        day = _iso_day(created_at if isinstance(created_at, str) else created_at.isoformat())
    return float("nan") if day is None else float(day)
