"""First-person slot statements (English and Chinese), for the offline reconcile rules.

A *slot* is one thing a person has one value of at a time (where they live, their job, their name,
their favourite drink) or a like/dislike of one thing. Two statements about the same single-valued
slot with different values are an update; statements about different slots (where one lives vs
where one works) are compatible. When a statement says it became true ("last month", "上个月") is read
by ``ltm.search.time_expressions.stated_time``.

Nothing here imports Django.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

# Single-valued slots: a different value replaces the old one.
RESIDENCE, WORKPLACE, JOB, NAME = "residence", "workplace", "job", "name"
PREFERRED = "preferred:"  # + category: the one preferred drink, language, editor, …
LIKES = "likes:"  # + object: multi-valued, compared by polarity only


@dataclass(frozen=True)
class Slot:
    """One slot statement: ``key`` (``residence``, ``job``, ``preferred:drink``, ``likes:tea``, …), the
    normalised ``value`` and whether it is asserted (``positive``) or denied (no longer, 不再)."""

    key: str
    value: str
    positive: bool = True


# --- categories of preferred things -----------------------------------------------------------------

_CATEGORIES: dict[str, tuple[str, ...]] = {
    "drink": ("green tea", "black tea", "milk tea", "tea", "coffee", "latte", "espresso", "cappuccino",
              "water", "juice", "beer", "wine", "milk", "cola", "soda", "matcha", "oolong",
              "绿茶", "红茶", "奶茶", "乌龙茶", "茶", "咖啡", "拿铁", "水", "果汁", "啤酒", "红酒", "牛奶", "可乐", "抹茶"),
    "language": ("python", "java", "rust", "golang", "go", "javascript", "typescript", "kotlin", "swift", "ruby",
                 "php", "scala", "c++", "c#", "haskell", "elixir", "perl", "julia"),
    "editor": ("vim", "neovim", "emacs", "vs code", "vscode", "pycharm", "intellij", "sublime", "cursor"),
    "os": ("linux", "windows", "macos", "mac", "ubuntu", "debian", "fedora", "arch"),
    "browser": ("firefox", "chrome", "safari", "edge"),
    "sport": ("running", "swimming", "cycling", "tennis", "football", "basketball", "yoga", "climbing",
              "跑步", "游泳", "骑行", "网球", "足球", "篮球", "瑜伽", "攀岩"),
}
_CATEGORY_WORDS = {
    "drink": "drink", "beverage": "drink", "饮料": "drink", "饮品": "drink",
    "language": "language", "programming language": "language", "编程语言": "language", "语言": "language",
    "editor": "editor", "编辑器": "editor", "ide": "editor",
    "os": "os", "operating system": "os", "操作系统": "os",
    "browser": "browser", "浏览器": "browser", "sport": "sport", "运动": "sport",
    "food": "food", "dish": "food", "食物": "food", "菜": "food",
    "color": "color", "colour": "color", "颜色": "color",
    "city": "city", "城市": "city", "book": "book", "书": "book", "movie": "movie", "film": "movie", "电影": "movie",
    "music": "music", "音乐": "music", "fruit": "fruit", "水果": "fruit", "band": "band", "game": "game", "游戏": "game",
}


def category_of(thing: str) -> str | None:
    """The category of a liked or preferred thing (``drink``, ``language``, …), or None."""
    value = normalize_value(thing)
    for category, words in _CATEGORIES.items():
        for word in words:
            if _is_cjk(word):
                if value == word or value.endswith(word):
                    return category
            elif re.search(rf"(?<![\w+#]){re.escape(word)}(?![\w+#])", value):
                return category
    return None


# --- normalisation -----------------------------------------------------------------------------------

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CONTRACTIONS = (
    (r"\bi'm\b", "i am"), (r"\bim\b", "i am"), (r"\bi've\b", "i have"), (r"\bdon't\b", "do not"),
    (r"\bdoesn't\b", "does not"), (r"\bi'd\b", "i would"), (r"\bcan't\b", "cannot"), (r"’", "'"),
)
_EN_FILLERS = re.compile(
    r"\b(?:actually|now|currently|presently|still|just|recently|really|also|these days|at the moment|"
    r"anymore|any more|nowadays|full[- ]time|officially)\b")
_VALUE_EDGE = re.compile(r"^(?:the|a|an|my|to|in|at|as)\s+|\s+(?:now|too|as well|then)$")
_ZH_VALUE_EDGE = re.compile(r"^(?:一名|一个|一位|个|名|了)|(?:了|啦|呢|呀|的|去了|来了|住|生活|工作|上班)$")


def _is_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def normalize_value(value: str) -> str:
    """A slot value as compared: case-folded, single spaces, no articles or edge particles."""
    text = unicodedata.normalize("NFKC", value or "").casefold().strip(" \t.,;:!?。，；：！？、\"'“”")
    text = " ".join(text.split())
    for _ in range(3):
        text = _VALUE_EDGE.sub("", text).strip()
        text = _ZH_VALUE_EDGE.sub("", text).strip()
    return text


def _english(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    for pattern, replacement in _CONTRACTIONS:
        text = re.sub(pattern, replacement, text)
    return " ".join(_EN_FILLERS.sub(" ", text).split())


# --- patterns ------------------------------------------------------------------------------------

# An English value runs to the end of its clause: punctuation, a conjunction or a time phrase.
_V = (r"(?P<v>[^,.;!?()]+?)(?=\s+(?:since|for|from|last|this|and|but|with|because|after|before|as of|in|at|"
      r"in \d{4}|(?:a|one|two|three|\d+) (?:days?|weeks?|months?|years?) ago|these days|anymore|any more|"
      r"instead|now|so|which|where|who)\b|\s*[,.;!?()]|\s*$)")
_ROLE_NOUNS = (
    r"developer|engineer|programmer|designer|teacher|professor|doctor|nurse|manager|student|scientist|"
    r"analyst|consultant|writer|lawyer|accountant|architect|researcher|artist|chef|translator|"
    r"journalist|photographer|pilot|dentist|pharmacist|founder|intern|freelancer|administrator|admin|"
    r"sre|devops|tester|editor|marketer|salesperson|cook|driver|farmer|musician|officer|specialist|"
    r"coordinator|director|lead|entrepreneur|economist|mechanic|electrician|librarian|physicist|chemist"
)
_ZH_ROLE_NOUNS = (
    r"工程师|开发者|开发人员|开发|程序员|设计师|老师|教师|教授|医生|护士|经理|学生|科学家|分析师|顾问|作家|律师|"
    r"会计|架构师|研究员|艺术家|厨师|翻译|记者|摄影师|飞行员|牙医|药剂师|创始人|实习生|运维|测试|编辑|产品经理|"
    r"运营|销售|司机|农民|音乐人|公务员|主管|总监|创业者|研究生|博士生|本科生"
)
_ZH_V = r"(?P<v>[^，。,.!！?？;；、\s]+?)"
_ZH_END = r"(?=[，。,.!！?？;；、\s]|了|啦|$)"

_EN_RULES: tuple[tuple[str, bool, re.Pattern[str]], ...] = tuple(
    (key, positive, re.compile(pattern)) for key, positive, pattern in (
        (RESIDENCE, False, r"\bi (?:do not|no longer|never) (?:live|reside|stay) in " + _V),
        (RESIDENCE, True, r"\b(?:i|and|but) (?:live|have lived|am living|reside|stay|am staying) in " + _V),
        (RESIDENCE, True, r"\bi (?:have |had |just |recently )?(?:moved|relocated|am moving|moved back|"
                          r"am relocating) (?:back |over |house )?to " + _V),
        (RESIDENCE, True, r"\bi am (?:based|living) (?:in|out of) " + _V),
        (RESIDENCE, True, r"\bmy (?:home|house|apartment|flat) is in " + _V),
        (RESIDENCE, True, r"\bi am (?:a|an) (?P<v>[a-z ]+?) resident\b"),
        (WORKPLACE, False, r"\bi (?:do not|no longer) work (?:at|for) " + _V),
        (WORKPLACE, True, r"\b(?:i|and|but) (?:work|am working|am employed|have been working) (?:at|for) " + _V),
        (WORKPLACE, True, r"\bi (?:have )?(?:joined|started (?:a new job )?at) " + _V),
        (WORKPLACE, True, r"\bi am employed by " + _V),
        (JOB, True, r"\b(?:i|and|but) (?:work|am working) as (?:a |an )?" + _V),
        (JOB, True, r"\bi (?:have )?(?:became|become|am becoming|retrained as|changed careers? to) (?:a |an )?" + _V),
        (JOB, True, rf"\bi am (?:a |an )(?P<v>[\w+# .-]{{0,40}}?\b(?:{_ROLE_NOUNS})s?)\b"),
        (JOB, True, r"\bmy (?:job|profession|occupation|role) is (?:a |an )?" + _V),
        (NAME, True, r"\bmy (?:first |full )?name is (?P<v>[\w .'-]+?)(?=\s*[,.;!?]|\s+(?:and|but|now)\b|\s*$)"),
        (NAME, True, r"\b(?:please )?call me (?P<v>[\w'-]+(?: [\w'-]+)?)(?=\s*[,.;!?]|\s+(?:and|but|from)\b|\s*$)"),
        (NAME, True, r"\bi (?:am called|go by|changed my name to) (?P<v>[\w'-]+(?: [\w'-]+)?)"),
    )
)
# likes / prefers / no longer / switched to: handled in :func:`_english_preferences`.
_EN_FAVOURITE = re.compile(r"\bmy (?:favou?rite|preferred) (?P<c>[a-z ]+?)(?: right(?: now)?| now| at the moment| these days)? "
                           r"(?:is|are|has become|became) " + _V)
_EN_PREFER = re.compile(r"\bi (?:now |much |really )?prefer (?:to (?:drink|use|eat|code in|write|play) )?"
                        r"(?P<v>[^,.;!?()]+?)(?=\s+(?:over|to|rather than|instead of|for|when|because|these days|"
                        r"now)\b|\s*[,.;!?()]|\s*$)")
_EN_SWITCH = re.compile(r"\bi (?:have )?(?:switched|moved|changed|converted|migrated|went) "
                        r"(?:over )?(?:from (?P<old>[^,.;!?]+?) )?to " + _V)
_EN_USE = re.compile(r"\bi (?:mostly |mainly |usually |only )?(?:drink|use|code in|program in|write) "
                     r"(?P<v>[^,.;!?()]+?)(?=\s+(?:every|each|daily|at|for|in the|when|because|now|these days|"
                     r"most)\b|\s*[,.;!?()]|\s*$)")
_EN_LIKE_NEG = re.compile(r"\bi (?:no longer|do not|don't|stopped|quit|gave up|have stopped|have quit|"
                          r"have given up|hate|dislike|cannot stand)(?: (?:like|love|enjoy|drink|drinking|"
                          r"eat|eating|use|using|liking|loving|playing|play))? " + _V)
_EN_LIKE = re.compile(r"\bi (?:really |also |still |now )?(?:like|love|enjoy|adore)(?: to)? " + _V)
_EN_QUIT = re.compile(r"\bi (?:quit|left|have left) (?P<v>[^,.;!?()]+?)(?=\s*[,.;!?()]|\s+(?:and|but|now|last)\b|\s*$)")

_ZH_RULES: tuple[tuple[str, bool, re.Pattern[str]], ...] = tuple(
    (key, positive, re.compile(pattern)) for key, positive, pattern in (
        (RESIDENCE, False, r"我(?:已经|现在)?(?:不再|不)住在" + _ZH_V + _ZH_END),
        (RESIDENCE, True, r"我(?:现在|目前|一直|仍然|还)?(?:住在|居住在|定居在|生活在|住)" + _ZH_V + r"(?=[，。,.!！?？;；、\s]|了|啦|$|的)"),
        (RESIDENCE, True, r"我(?:已经|刚|刚刚|最近|上个月|去年|上周)?(?:搬到|搬去|搬家到|搬回|迁居到|移居到|搬来)了?" + _ZH_V + _ZH_END),
        (WORKPLACE, False, r"我(?:已经)?(?:不再|不)在" + _ZH_V + r"(?:工作|上班)"),
        (WORKPLACE, True, r"我(?:现在|目前)?在(?P<v>[^，。,.!！?？;；、\s在]+?)(?:工作|上班|任职)"),
        (WORKPLACE, True, r"我(?:已经)?(?:入职|加入)了?" + _ZH_V + _ZH_END),
        (JOB, True, rf"我(?:现在|目前)?是(?:一名|一个|一位|个|名)?(?P<v>[^，。,.!！?？;；、\s是]*?(?:{_ZH_ROLE_NOUNS}))"),
        (JOB, True, r"我(?:已经|现在)?转行(?:做|当|成为|去做|成了|去当)?了?(?:一名|一个|一位)?" + _ZH_V + _ZH_END),
        (JOB, True, r"我(?:的)?(?:职业|工作)是(?:一名|一个)?" + _ZH_V + _ZH_END),
        (JOB, True, r"我(?:现在)?(?:做|当)(?:一名|一个|一位)?(?P<v>[^，。,.!！?？;；、\s]*?(?:" + _ZH_ROLE_NOUNS + r"))"),
        (NAME, True, r"我(?:的名字)?叫" + _ZH_V + _ZH_END),
        (NAME, True, r"我的名字是" + _ZH_V + _ZH_END),
        (NAME, True, r"我(?:已经)?改名(?:叫|为)" + _ZH_V + _ZH_END),
    )
)
# An adverb before 是 is not part of the category ("我最喜欢的菜系还是泰国菜": 菜系, still 泰国菜).
_ZH_FAVOURITE = re.compile(r"我最(?:喜欢|爱)的(?P<c>[^，。,.!！?？是]{1,8}?)(?:还|仍然|依然|也|一直|现在|目前|已经|其实)?是"
                           + _ZH_V + _ZH_END)
_ZH_LIKE_NEG = re.compile(r"我(?:已经|现在)?(?:不再|不|再也不|戒了|讨厌|不太)(?:喜欢|爱|喝|吃|用)?" + _ZH_V
                          + r"(?:了|啦)?(?=[，。,.!！?？;；、\s]|$)")
_ZH_LIKE = re.compile(r"我(?:很|非常|比较|特别|最|也|还是|一直)?(?:喜欢|爱|热爱)" + _ZH_V + _ZH_END)
_ZH_PREFER = re.compile(r"我(?:现在|更|比较)?(?:偏好|更喜欢|更爱|改喝|改用|换成|换用|改成|改吃|转用|爱用|常用|平时用|平时喝)了?"
                        + _ZH_V + _ZH_END)
_ZH_QUIT = re.compile(r"我(?:已经)?(?:辞职离开|离开|离职离开)了?" + _ZH_V + _ZH_END)
# Times and adverbs between the subject and the verb ("我去年转行", "我上个月入职了"): the stated time is read
# by ``time_expressions.stated_time``, the slot without them.
_ZH_TIME = re.compile(r"(?<=我)(?:(?:去年|今年|前年|上个月|上月|这个月|本月|上周|上个星期|上星期|这周|昨天|前天|今天|"
                      r"最近|刚刚|刚|已经|现在|目前|终于|也|还是|仍然|依然|依旧|仍|一直|还|(?:\d+|[一两二三四五六七八九十半])个?(?:天|周|星期|月|年)(?:以)?前))+")
_ZH_VERB_PREFIX = re.compile(r"^(?:喝|吃|用|玩|看|听|写|做)")
_EN_VERB_PREFIX = re.compile(r"^(?:drinking|eating|using|playing|watching|reading|writing|coding in|doing|to drink|"
                             r"to eat|to use|to play|drink|eat|use|play)\s+")


def _thing(value: str) -> str:
    value = normalize_value(value)
    value = _EN_VERB_PREFIX.sub("", value)
    if _is_cjk(value):
        value = _ZH_VERB_PREFIX.sub("", value)
    return normalize_value(value)


def _category_key(word: str) -> str:
    word = normalize_value(word)
    return _CATEGORY_WORDS.get(word, word)


def _like_slots(thing: str, positive: bool, *, preferred: bool = False) -> list[Slot]:
    thing = _thing(thing)
    if not thing:
        return []
    category = category_of(thing)
    slots = [Slot(LIKES + thing, "", positive)]
    if category and (preferred or not positive):
        slots.append(Slot(PREFERRED + category, thing, positive))
    return slots


def statement_slots(text: str) -> list[Slot]:
    """The slot statements found in ``text`` (English and Chinese), in no particular order.

    Example:
        >>> statement_slots("Actually I moved to Berlin last month, I live in Berlin now.")
        [Slot(key='residence', value='berlin', positive=True)]
    """
    return list(_slots(text or ""))


def forget_slot_texts() -> None:
    """Empty this process's cache of the texts read by :func:`statement_slots` (on a user's erase)."""
    _slots.cache_clear()


@lru_cache(maxsize=8192)  # a user's items are compared again at each save
def _slots(text: str) -> tuple[Slot, ...]:
    found: dict[tuple[str, str, bool], Slot] = {}

    def add(slot: Slot) -> None:
        if slot.key and (slot.value or slot.key.startswith(LIKES)):
            found.setdefault((slot.key, slot.value, slot.positive), slot)

    english = _english(text or "")
    taken: list[tuple[int, int]] = []
    for key, positive, pattern in _EN_RULES:
        for match in pattern.finditer(english):
            if any(s <= match.start() < e for s, e in taken):
                continue
            value = normalize_value(_EN_FILLERS.sub(" ", match.group("v")))
            if value:
                taken.append(match.span())
                add(Slot(key, value, positive))
    for match in _EN_FAVOURITE.finditer(english):
        add(Slot(PREFERRED + _category_key(match.group("c")), _thing(match.group("v"))))
    for match in _EN_SWITCH.finditer(english):
        if any(s <= match.start() < e for s, e in taken):  # "moved to Berlin" is a residence
            continue
        new = _thing(match.group("v"))
        if match.group("old"):
            for slot in _like_slots(match.group("old"), False):
                add(slot)
        for slot in _like_slots(new, True, preferred=True):
            add(slot)
    for match in _EN_PREFER.finditer(english):
        for slot in _like_slots(match.group("v"), True, preferred=True):
            add(slot)
    negated: list[tuple[int, int]] = []
    for match in _EN_LIKE_NEG.finditer(english):
        thing = match.group("v")
        if re.match(r"(?:live|work)\b", _thing(thing)):
            continue
        negated.append(match.span())
        for slot in _like_slots(thing, False):
            add(slot)
    for match in _EN_QUIT.finditer(english):
        for slot in _like_slots(match.group("v"), False):
            add(slot)
    for match in _EN_USE.finditer(english):
        if any(s <= match.start() < e for s, e in negated):
            continue
        thing = _thing(match.group("v"))
        if category_of(thing):
            for slot in _like_slots(thing, True, preferred=True):
                add(slot)
    for match in _EN_LIKE.finditer(english):
        if any(s <= match.start() < e for s, e in negated) or re.search(r"\bno longer\s*$|\bnot\s*$",
                                                                         english[: match.start() + 2]):
            continue
        for slot in _like_slots(match.group("v"), True):
            add(slot)

    zh = _ZH_TIME.sub("", unicodedata.normalize("NFKC", text or ""))
    zh_taken: list[tuple[int, int]] = []
    for key, positive, pattern in _ZH_RULES:
        for match in pattern.finditer(zh):
            if any(s <= match.start() < e for s, e in zh_taken):
                continue
            value = normalize_value(match.group("v"))
            if value and _is_cjk(value) or value and key == NAME:
                zh_taken.append(match.span())
                add(Slot(key, value, positive))
    for match in _ZH_FAVOURITE.finditer(zh):
        add(Slot(PREFERRED + _category_key(match.group("c")), _thing(match.group("v"))))
    zh_negated: list[tuple[int, int]] = []
    for match in _ZH_LIKE_NEG.finditer(zh):
        thing = _thing(match.group("v"))
        if thing.startswith(("住", "在")) or any(s <= match.start() < e for s, e in zh_taken):
            continue
        zh_negated.append(match.span())
        for slot in _like_slots(thing, False):
            add(slot)
    for match in _ZH_PREFER.finditer(zh):
        for slot in _like_slots(match.group("v"), True, preferred=True):
            add(slot)
    for match in _ZH_LIKE.finditer(zh):
        if any(s <= match.start() < e for s, e in zh_negated) or zh[max(0, match.start() - 0): match.start() + 3].find("不") >= 0:
            continue
        if re.search("最(?:喜欢|爱)的", zh[match.start(): match.end() + 1]):
            continue
        for slot in _like_slots(match.group("v"), True):
            add(slot)
    return tuple(found.values())


# Phrases that say the new statement changes something, used when no slot is recognised.
_CHANGE_MARKERS = re.compile(
    r"\b(?:no longer|not anymore|any ?more|stopped|quit|switched|changed|moved|instead|used to|gave up|"
    r"now)\b|不再|不.{0,6}了|改成|换成|改用|改喝|转行|搬到|搬去|戒了|以前|现在",
    re.IGNORECASE,
)


def has_change_marker(text: str) -> bool:
    """Whether ``text`` says something changed ("no longer", "switched", "不再", "改成", …)."""
    return bool(_CHANGE_MARKERS.search(text or ""))


# --- the offline decision --------------------------------------------------------------------------

_SPACES = re.compile(r"\s+")
_EDGE_PUNCT = "。.!！?？;；,，:： \t\n"


def normalize_statement(text: str) -> str:
    """A statement as the repeat test compares it: case-folded, single spaces, no end punctuation."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", str(text or ""))).strip(_EDGE_PUNCT).casefold()


def repeats_statement(new_norm: str, old_norm: str) -> bool:
    """Whether one normalized statement is the other or holds it whole: by whole words where words are
    spaced ("my name is sam" is not in "my name is samantha"), by characters in unspaced (CJK) text."""
    if not new_norm or not old_norm:
        return False
    if new_norm == old_norm:
        return True
    short, long_ = sorted((new_norm, old_norm), key=len)
    if short not in long_:
        return False
    at = long_.find(short)
    while at >= 0:
        before = long_[at - 1] if at else " "
        after = long_[at + len(short)] if at + len(short) < len(long_) else " "
        if not (before.isalnum() and short[0].isascii()) and not (after.isalnum() and short[-1].isascii()):
            return True
        at = long_.find(short, at + 1)
    return False


def _single_valued(key: str) -> bool:
    return not key.startswith(LIKES)


def compare_slots(new: list[Slot], old: list[Slot]) -> tuple[str, list[str]]:
    """How a new statement's slots relate to a stored one's: ``"changed"`` (same slot, another value or
    the opposite polarity), ``"same"`` (same slot and value), ``"partial"`` (changed, but the stored one
    also holds a single-valued slot the new one does not restate) or ``"none"``; with the reasons."""
    changed, same = [], []
    for n in new:
        for o in old:
            if n.key != o.key:
                continue
            label = n.key.replace(LIKES, "likes ").replace(PREFERRED, "preferred ")
            if not _single_valued(n.key):
                if n.positive != o.positive:
                    changed.append(f"{label}: {'yes' if o.positive else 'no'} → {'yes' if n.positive else 'no'}")
                else:
                    same.append(label)
            elif n.positive and o.positive:
                if n.value != o.value:
                    changed.append(f"{label}: {o.value} → {n.value}")
                else:
                    same.append(label)
            elif n.value == o.value:
                if n.positive != o.positive:
                    changed.append(f"{label}: {'no longer ' if o.positive else ''}{o.value} → "
                                   f"{'no longer ' if not n.positive else ''}{n.value}")
                else:
                    same.append(label)
    if changed:
        restated = {n.key for n in new}
        kept = sorted({o.key for o in old if _single_valued(o.key) and o.positive and o.key not in restated})
        if kept:
            return "partial", changed + [f"the stored statement also says {', '.join(kept)}"]
        return "changed", changed
    if same:
        return "same", same
    return "none", []


@dataclass(frozen=True)
class RuleDecision:
    verdict: str  # same, update, new, conflict
    targets: list[str]
    reason: str


def rules_decide(statement: str, candidates: list[tuple[str, str, float]], *,
                 conflict_cosine: float = 0.8) -> RuleDecision:
    """The offline reconcile decision for ``statement`` against ``candidates`` (``(id, content, cosine)``,
    nearest first).

    - a candidate about the same slot with another value (or no longer true) → ``update`` of it;
    - the same statement again (equal or contained, as the memory tools' dedup compared), or the same
      slot and value in other words → ``same``;
    - a changed slot in a candidate that also says more (lives in X and works at Y) → ``conflict``;
    - no slot in common, a change marker ("no longer", "不再") and a candidate very near in meaning
      (cosine ≥ ``conflict_cosine``) → ``conflict``;
    - otherwise ``new``.
    """
    new_slots = statement_slots(statement)
    new_norm = normalize_statement(statement)
    updates, partial, same, reasons = [], [], [], []
    for pk, content, _cosine in candidates:
        relation, why = compare_slots(new_slots, statement_slots(content))
        if relation == "changed":
            updates.append(pk)
            reasons.append(f"{pk}: " + "; ".join(why))
        elif relation == "partial":
            partial.append(pk)
            reasons.append(f"{pk}: " + "; ".join(why))
        elif relation == "same":
            same.append((pk, "same slot: " + ", ".join(why)))
        else:
            old_norm = normalize_statement(content)
            if repeats_statement(new_norm, old_norm):
                same.append((pk, "the same statement" if new_norm == old_norm else "contained in the other"))
    if updates and not same:
        return RuleDecision("update", updates, "rules: " + " | ".join(reasons))
    if same and not updates and not partial:
        pk, why = same[0]
        return RuleDecision("same", [pk], f"rules: repeats {pk} ({why})")
    if partial or (updates and same):
        targets = list(dict.fromkeys(partial + updates + [pk for pk, _ in same]))
        return RuleDecision("conflict", targets, "rules: unsure: " + " | ".join(reasons or ["repeats and changes"]))
    if has_change_marker(statement):
        near = [pk for pk, _content, cosine in candidates if cosine >= conflict_cosine]
        if near:
            return RuleDecision("conflict", near[:1], f"rules: unsure: a change is stated and {near[0]} is near "
                                                      "in meaning, but no slot in common was recognised")
    return RuleDecision("new", [], "rules: no stored statement about the same slot")
