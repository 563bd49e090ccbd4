"""The time a question or a statement names (English and Chinese), and when an item was said."""

from __future__ import annotations

import datetime as dt

import pytest

from memoryboard.ltm.search.time_expressions import EPOCH, item_day, query_window, stated_time, text_day

ASKED = dt.date(2023, 6, 15)


def _dates(window):
    def day(n):
        return None if n is None else EPOCH + dt.timedelta(days=n)

    return day(window.start), day(window.end)


@pytest.mark.parametrize("question, start, end", [
    ("What did she do last May?", "2023-05-01", "2023-06-01"),
    ("what did she do in May?", "2023-05-01", "2023-06-01"),
    ("What happened last October?", "2022-10-01", "2022-11-01"),  # the latest October before now
    ("What did Tom do in March 2023?", "2023-03-01", "2023-04-01"),
    ("news from September of 2022", "2022-09-01", "2022-10-01"),
    ("What did he do in 2022?", "2022-01-01", "2023-01-01"),
    ("What did Maya do last month?", "2023-05-01", "2023-06-01"),
    ("anything this month?", "2023-06-01", "2023-07-01"),
    ("What did Maya do last year?", "2022-01-01", "2023-01-01"),
    ("plans this year", "2023-01-01", "2024-01-01"),
    ("what happened yesterday", "2023-06-14", "2023-06-15"),
    ("what did we talk about last week", "2023-06-05", "2023-06-12"),
    ("three months ago", "2023-03-01", "2023-04-01"),
    ("on 2023-05-12", "2023-05-12", "2023-05-13"),
    ("她上个月做了什么？", "2023-05-01", "2023-06-01"),
    ("李娜2023年2月做了什么？", "2023-02-01", "2023-03-01"),
    ("张伟2022年做了哪些事？", "2022-01-01", "2023-01-01"),
    ("他去年都做了什么？", "2022-01-01", "2023-01-01"),
    ("前年的事", "2021-01-01", "2022-01-01"),
    ("今年有什么计划", "2023-01-01", "2024-01-01"),
    ("五月份她去了哪里", "2023-05-01", "2023-06-01"),
    ("三个月前发生了什么", "2023-03-01", "2023-04-01"),
    ("2023年5月12日那天", "2023-05-12", "2023-05-13"),
    ("这个月忙吗", "2023-06-01", "2023-07-01"),
])
def test_a_window_of_days(question, start, end):
    window = query_window(question, ASKED)
    assert window is not None and not window.anchor
    assert _dates(window) == (dt.date.fromisoformat(start), dt.date.fromisoformat(end))


@pytest.mark.parametrize("question, anchor, before", [
    ("What did Maya do before she moved?", "she moved", True),
    ("What has Maya done since she moved?", "she moved", False),
    ("What did Tom do after he got the job?", "he got the job", False),
    ("张伟搬家之前做了什么？", "张伟搬家", True),
    ("她搬家以后做了什么？", "她搬家", False),
])
def test_before_and_after_an_event(question, anchor, before):
    window = query_window(question, ASKED)
    assert (window.anchor, window.before, window.start, window.end) == (anchor, before, None, None)


@pytest.mark.parametrize("question", [
    "Which city did Maya visit for a week?", "When did Maya adopt Biscuit?",
    "How do they keep fit before the office?",  # a place, not an event
    "刘芳之前尝试过什么饮食方式？",  # 之前 as "previously"
    "周婷什么时候开始学钢琴的？", "", "Java 11 or 17?",
])
def test_no_time(question):
    assert query_window(question, ASKED) is None


def test_the_day_of_an_item():
    created = dt.datetime(2024, 1, 2, 10, 0, tzinfo=dt.UTC)
    day = (dt.date(2023, 5, 28) - EPOCH).days
    assert item_day({"content": "x", "validFrom": "2023-05-28T00:00:00Z"}, created) == day  # validFrom first
    assert item_day({"content": "[2023-05-28] Maya: we moved!"}, created) == day  # then a raw turn's date
    assert item_day({"content": "Maya moved"}, created) == (created.date() - EPOCH).days  # then created_at
    assert item_day({"content": "Maya moved"}) != item_day({"content": "Maya moved"})  # NaN: unknown
    assert text_day("[2023-02-30] bad date") is None and text_day("no date") is None
    for text in ("[1:56 pm on 28 May, 2023] Caroline: hi", "[May 28, 2023] Tom: hi", "[2023年5月28日] 李娜：你好",
                 "[2023/5/28 14:03] x", "2023-05-28 Maya: hi"):
        assert text_day(text) == day, text
    assert text_day("I met her on 28 May, 2023") is None  # a date inside the text is not when it was said


# When a statement became true (the reconcile step's validFrom), said on a Friday.
SAID = dt.datetime(2026, 12, 4, 15, 30, tzinfo=dt.UTC)


@pytest.mark.parametrize("text,day", [
    ("I moved to Berlin last month", "2026-11-01"),
    ("我上个月搬到北京了", "2026-11-01"),
    ("yesterday I started at Google", "2026-12-03"),
    ("我昨天入职了腾讯", "2026-12-03"),
    ("I switched jobs last year", "2025-01-01"),
    ("去年我转行了", "2025-01-01"),
    ("I moved here 3 months ago", "2026-09-04"),
    ("我三个月前搬到北京", "2026-09-04"),
    ("I have lived in Paris since 2019", "2019-01-01"),
    ("last week I quit my job", "2026-11-23"),
    # Forms only one of the two former readers knew, now read the same for statements and questions.
    ("I moved to Lisbon in May", "2026-05-01"),
    ("I joined Siemens in March 2025", "2025-03-01"),
    ("我2024年5月搬到了深圳", "2024-05-01"),
    ("I quit the day before yesterday", "2026-12-02"),
    ("我前天辞职了", "2026-12-02"),
    ("I started a new job today", "2026-12-04"),
    ("I moved out two weeks ago", "2026-11-20"),
    ("我两个星期前搬家了", "2026-11-20"),
    ("我100天前开始学日语", "2026-08-26"),
    ("I sold my car ten years ago", "2016-12-04"),
])
def test_stated_time(text, day):
    moment = stated_time(text, now=SAID)
    assert moment.date().isoformat() == day and moment.tzinfo == SAID.tzinfo and moment.hour == 0


@pytest.mark.parametrize("text", ["I live in Berlin", "I will move to Oslo in 2031", "我住在北京"])
def test_no_stated_time(text):
    assert stated_time(text, now=SAID) is None


@pytest.mark.parametrize("question, start, end", [
    ("what did I do the day before yesterday", "2023-06-13", "2023-06-14"),
    ("前天聊了什么", "2023-06-13", "2023-06-14"),
    ("anything new today?", "2023-06-15", "2023-06-16"),
    ("two weeks ago", "2023-05-29", "2023-06-05"),
    ("我两个星期前说了什么", "2023-05-29", "2023-06-05"),
])
def test_a_window_of_days_read_like_a_statement(question, start, end):
    window = query_window(question, ASKED)
    assert _dates(window) == (dt.date.fromisoformat(start), dt.date.fromisoformat(end))
