"""Grammatical cues of a clause (English, Chinese, mixed): question, request, greeting, hypothetical, who
speaks and who the clause is about, and secrets.

These are the few signals of form that the statement classifier (:mod:`memoryboard.llm.statement_model`)
takes beside the encoder's vector, and that the chat path's cheap filter uses before any model
(``ltm.write.extraction.should_skip_extraction``). They name grammatical words (pronouns, particles,
request forms), never the topics people talk about: what a clause is about is the encoder's business.

Nothing here imports Django.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# --- questions ---------------------------------------------------------------------------------------

_QUESTION_MARK = re.compile(r"[?？]")
# Sentence-final particles that make a question: 吗 么 嘛 呢 (吧 is asked or suggested: a cue of its own).
_ZH_QUESTION_END = re.compile(r"(?:吗|么|嘛|呢)[啊呀哈嘞]?\W*$")
_ZH_SUGGESTION_END = re.compile(r"吧[啊呀哈]?\W*$")
_ZH_QUESTION_WORD = re.compile(
    r"什么|啥|怎么|怎样|咋|为什么|为啥|哪[里儿个些种]?|多少|多久|多大|多长|几[个点岁天次号年月]|是否|"
    r"(.)不\1|有没有|能不能|可不可以|要不要|是不是|好不好|对不对"
)
_EN_QUESTION_START = re.compile(
    r"^(?:what|what's|whats|how|how's|why|who|who's|whom|whose|when|where|which|"
    r"is|are|am|was|were|do|does|did|can|could|should|shall|would|will|won't|isn't|aren't|don't|doesn't|"
    r"have|has|any|anyone|anybody)\b",
    re.IGNORECASE,
)

# --- requests and instructions to the assistant ------------------------------------------------------

_EN_REQUEST = re.compile(
    r"^(?:(?:hey|hi|ok|okay|so|and|also|pls|please)\W+)*(?:can|could|would|will|won't)\s+(?:you|u|ya)\b"
    r"|\b(?:please|pls|plz)\b|\b(?:help me|i need you to|i want you to|i'd like you to|let me know|tell me)\b",
    re.IGNORECASE,
)
_ZH_REQUEST = re.compile(r"帮我|帮忙|请你?|麻烦|给我|你帮|你给|替我|能不能帮|可以帮|来[个份点段首]|推荐|劳驾")
_RULE_FOR_LATER = re.compile(
    r"\b(?:from now on|going forward|from here on|for the rest of|in (?:all )?(?:your )?future (?:answers|replies)|"
    r"in every (?:answer|reply)|always (?:answer|reply|respond|use|write)|never (?:use|say|answer|reply))\b"
    r"|以后|今后|从现在(?:开始|起)|接下来|每次回答|你的回答|回答都",
    re.IGNORECASE,
)
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|u|ur)\b|你|您", re.IGNORECASE)

# --- greetings, thanks, acknowledgements ---------------------------------------------------------------

_SMALL_TALK_WORDS = (
    r"(?:"
    r"hi|hello|hey|yo|hiya|heya|morning|evening|good (?:morning|afternoon|evening|night)|bye|goodbye|see you|"
    r"cheers|mate|"
    r"thanks?(?: you)?(?: (?:so|very) much)?|thx|ty|tysm|ok(?:ay)?|k|cool|nice|great|sure|yes|yeah|yep|no|nope|"
    r"got it|i see|sounds good|lol|lmao|haha+|hah|ha|awesome|perfect|alright|understood|fine|nvm|omg|wow|"
    r"there|everyone|all|again|a lot|please|"
    r"你好|您好|嗨|哈喽|早上好|早安|早|中午好|下午好|晚上好|晚安|再见|拜拜|谢谢(?:你|您|啦|了)?|多谢|感谢|"
    r"好的|好吧|好|行吧|行|可以|嗯+|哦+|噢|哈+|呵呵|明白了?|知道了|收到|了解|没问题|不客气|对|是的|不是|没事|在吗"
    r")"
)
# A phrase made only of small-talk words: "ok thanks", "hello there", "好的谢谢".
_SMALL_TALK = re.compile(rf"^{_SMALL_TALK_WORDS}(?:\s*{_SMALL_TALK_WORDS})*[啊呀啦嘛哈～~]*$", re.IGNORECASE)
_PHRASE_SPLIT = re.compile(r"[,，.。!！?？~～、;；:：\s]*[,，.。!！?？~～、;；:：]+[,，.。!！?？~～、;；:：\s]*|\s{2,}")
_NOT_WORDS = re.compile(r"[^\w\s]", re.UNICODE)
SMALL_TALK_MAX_CHARS = 120

# --- hypotheticals ---------------------------------------------------------------------------------------

_HYPOTHETICAL = re.compile(
    r"^(?:\W*(?:lol|haha|ok|so|and|but)\W+)*(?:if|suppose|supposing|imagine|what if|assuming|say)\b"
    r"|\b(?:if i were|if i had|i wish|would have|i'd have)\b"
    r"|^(?:如果|要是|假如|假设|万一|若是|倘若|要不是)|就好了",
    re.IGNORECASE,
)

# --- who speaks, and about whom -------------------------------------------------------------------------

_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|im|i've|ive|i'd|i'll|me|my|mine|myself|we|we're|we've|our|ours|us)\b|我|咱|俺|本人",
    re.IGNORECASE,
)
# The words naming the person in the third person (a support note's, an API's, a question about their memory).
_USER_WORDS_EN = "user|customer|client|account holder|member|patient|caller"
_USER_WORDS_ZH = "用户|客户|顾客|会员|患者|来电人"
# The person described by someone else: "The user …", "Customer …", 用户…, 客户….
_THIRD_PERSON_USER = re.compile(
    r"^(?:\W*(?:profile note|note|ticket|system note|crm|update)\W+)?"
    rf"(?:the |this |our )?(?:{_USER_WORDS_EN})(?:'s)?\b"
    rf"|^(?:该|此|这位)?(?:{_USER_WORDS_ZH})",
    re.IGNORECASE,
)
# Who else a first-person clause may be about: "my X" is the speaker's own when X is a thing of theirs
# ("my birthday", "my flat": about the user) and someone else when X is a person or an animal ("my sister",
# 我妈, 我家猫). Those are a closed class of words, the one list of nouns here (no topic's vocabulary).
# Words before the subject that say nothing of whom ("side note: my sister …", "ha my partner …").
_EN_FILLER = re.compile(r"^(?:(?:so|and|but|oh|also|well|btw|anyway|ugh|lol|ok|okay|tbh|honestly|yeah|fyi|ha|haha|hah|"
                        r"omg|side ?note|fun fact|guess what|quick update|update|news|ps|p\.s\.)\W+)+", re.IGNORECASE)
# Said to say it was said before, before whoever the statement is about: "as I said, my wife …", "like I told
# you, my son …", 我说过我女儿…, 跟你讲过的，我妈…: the "I" of the saying is not the statement's subject.
_SAID_OPENER = re.compile(
    r"^(?:(?:as|like) (?:i(?:'ve| have)? (?:said|mentioned|told you)|you know|mentioned)|(?:i )?told you)"
    r"(?: (?:before|already|earlier))?\W+"
    r"|^我?(?:之前|以前|上次|早就)?(?:跟你|和你|给你)?(?:说|說|讲|講|提)[过過](?:的|了|吧|啦)?[，,：:\s]*",
    re.IGNORECASE)
# Said of the person by someone else, the person's own words reported: "The user mentioned that his brother …",
# 用户说她妈妈…: what follows is read as the person's.
_REPORTED = re.compile(
    rf"^(?:the |this )?(?:{_USER_WORDS_EN})\s+(?:mentioned|mentions|said|says|reported|reports|noted|notes|shared|"
    r"explained|told (?:me|us|the agent))\s+(?:that\s+)?(?P<own>his|her|their)?\b"
    rf"|^(?:该|此|这位)?(?:{_USER_WORDS_ZH})(?:说|表示|提到|反映|称)[，,:：]?\s*(?P<own_zh>他的|她的|他|她)?",
    re.IGNORECASE)
_EN_RELATIONS = (
    r"mum|mom|mother|dad|father|parents?|husband|hubby|wife|wifey|partner|spouse|boyfriend|girlfriend|fianc[eé]e?|ex|"
    r"son|daughter|kids?|child|children|baby|twins|brother|sister|siblings?|grand(?:ma|pa|mother|father|son|"
    r"daughter|parents?|kids?)|nan|nana|granny|aunt|uncle|cousin|nephew|niece|in-laws?|friends?|bff|"
    r"flatmate|roommate|housemate|mate|pal|buddy|neighbou?r|landlord|landlady|boss|manager|colleague|coworker|co-worker|"
    r"team|teacher|doctor|therapist|dog|puppy|cat|kitten|pets?|horse|rabbit|bunny|hamster|parrot|bird|fish|tortoise|turtle"
)
_EN_POSSESSED = re.compile(
    rf"^(?:my|our|me(?!\s+and\b)|the user's|user's|the customer's|customer's)\s+(?:[\w-]+\s+){{0,2}}?"
    rf"(?P<holder>{_EN_RELATIONS})s?\b",
    re.IGNORECASE)
_ZH_RELATIONS = (
    "老爸|老妈|爸爸|妈妈|爸妈|爸|妈|父亲|母亲|父母|爹|娘|老公|老婆|丈夫|妻子|媳妇|(?<=我)先生|(?<=我)太太|爱人|对象|男朋友|女朋友|男友|女友|未婚夫|未婚妻|"
    "儿子|女儿|闺女|孩子|小孩|娃|宝宝|老大|老二|哥哥|姐姐|弟弟|妹妹|哥|姐|弟|妹|爷爷|奶奶|外公|外婆|姥姥|姥爷|孙子|孙女|"
    "老板|领导|上司|同事|朋友|室友|邻居|房东|导师|老师|闺蜜|兄弟|舅舅|姑姑|阿姨|叔叔|表哥|表姐|堂哥|堂姐|"
    "狗狗|狗|猫咪|猫|宠物|兔子|仓鼠|鹦鹉|鱼"
)
_ZH_POSSESSED = re.compile(
    rf"^(?:(?:我们家的?|我家的?|咱家的?|我的|我们的|用户的|客户的|用户家的?)[^\s，。,的]{{0,3}}?|我)(?P<holder>{_ZH_RELATIONS})")
_RELATIONS_NAMED = re.compile(rf"\b(?:{_EN_RELATIONS})s?\b|{_ZH_RELATIONS}|隔壁|配偶|家人|亲戚", re.IGNORECASE)


def relations_named(text: str) -> frozenset[str]:
    """The people (and pets) of the person's life a statement names anywhere ("my son's best friend" →
    son, friend; 隔壁, 配偶): whose fact it is may be one of them, not the person's."""
    return frozenset(person_word(m.group(0)) for m in _RELATIONS_NAMED.finditer(text or ""))


# The words of the closed class above that name one person of one's life, in either language: "mum", "妈妈" and
# "母亲" are one mother, "闺女" and "女儿" one daughter (a word not here names its own). Singular, as person_word
# reads them ("kids" → "kid").
_ONE_PERSON = {
    "mother": "mum mom mother 妈妈 妈 母亲 娘 老妈", "father": "dad father 爸爸 爸 父亲 爹 老爸",
    "parents": "parent 爸妈 父母", "husband": "husband hubby 老公 丈夫 先生", "wife": "wife wifey 老婆 妻子 媳妇 太太",
    "partner": "partner spouse 爱人 对象 配偶", "boyfriend": "boyfriend 男朋友 男友", "girlfriend": "girlfriend 女朋友 女友",
    "fiance": "fiance fiancé fiancee fiancée 未婚夫 未婚妻", "son": "son 儿子", "daughter": "daughter 女儿 闺女",
    "child": "kid child children 孩子 小孩 娃", "baby": "baby 宝宝", "brother": "brother 哥哥 弟弟 哥 弟",
    "sister": "sister 姐姐 妹妹 姐 妹", "grandmother": "grandma grandmother nan nana granny 奶奶 外婆 姥姥",
    "grandfather": "grandpa grandfather 爷爷 外公 姥爷", "friend": "friend bff mate pal buddy 朋友 闺蜜",
    "roommate": "flatmate roommate housemate 室友", "neighbour": "neighbour neighbor 邻居", "boss": "boss 老板 领导 上司",
    "colleague": "colleague coworker co-worker 同事", "landlord": "landlord landlady 房东", "teacher": "teacher 老师",
    "dog": "dog 狗狗 狗", "cat": "cat 猫咪 猫", "pet": "pet 宠物", "rabbit": "rabbit bunny 兔子",
}
_PERSON_OF = {word: name for name, words in _ONE_PERSON.items() for word in words.split()}


def person_word(word: str) -> str:
    """A word naming a person of one's life as compared: case-folded, singular ("my sons" and "my son" name
    one person; "boss" stays "boss"), one word for each person the closed class names in either language ("mum",
    "妈妈" → "mother")."""
    word = word.casefold()
    word = word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
    return _PERSON_OF.get(word, word)


# Someone who acts for the person (a doctor, a boss, a landlord): what they do to the person is the person's fact
# ("my doctor took me off metformin", "my landlord put my rent up", 我的老板让我下个月去上海出差), not theirs.
_SERVES = re.compile(r"doctor|therapist|teacher|boss|manager|landlord|landlady|老板|领导|上司|房东|导师|老师",
                     re.IGNORECASE)
_THE_USER_AFTER = re.compile(r"\b(?:me|my|i|i'm|i've)\b|我", re.IGNORECASE)


USER, OTHER, NOBODY = "user", "other", "none"


@dataclass(frozen=True)
class Subject:
    """Who a statement is about: ``kind`` ``"user"`` (the speaker, or the user named in the third person),
    ``"other"`` (someone or something of theirs: ``holder`` names it, "sister", "妈", "cat"), or ``"none"``
    (no person: the world, a request)."""

    kind: str
    holder: str = ""


def statement_subject(text: str) -> Subject:
    """Who ``text`` is about, by its grammatical subject (English and Chinese).

    "I live in Graz", "我在腾讯工作", "The user moved to Ghent", "用户是护士" → user; "my sister lives in Rome",
    "我妈退休了", "我家猫叫土豆" → other (holder "sister", "妈", "猫"); "the trains are on strike" → none.
    A sentence without a subject ("moved to Lyon last month", 搬家了) is the speaker's: chat drops the "I".

    Example:
        >>> statement_subject("my sister lives in Rome")
        Subject(kind='other', holder='sister')
    """
    clean = _EN_FILLER.sub("", _SAID_OPENER.sub("", _EN_FILLER.sub("", (text or "").strip())))
    reported = _REPORTED.match(clean)
    if reported and (reported.group("own") or reported.group("own_zh")):  # "his brother" of the person: "my brother"
        clean = ("my " if reported.group("own") else "我的") + clean[reported.end():].lstrip()
    match = _EN_POSSESSED.match(clean) or _ZH_POSSESSED.match(clean)
    if match and not (_SERVES.fullmatch(match.group("holder")) and _THE_USER_AFTER.search(clean, match.end())):
        return Subject(OTHER, person_word(match.group("holder")))
    if _THIRD_PERSON_USER.search(clean) or _FIRST_PERSON.search(clean):
        return Subject(USER)
    if re.match(r"^(?:the|a|an|this|that|these|those|it|there|he|she|they|his|her|their)\b", clean, re.IGNORECASE) \
            or re.match(r"^(?:他|她|它|他们|她们|这|那|今天|听说|据说)", clean):
        return Subject(NOBODY)
    return Subject(USER)


# The person a question about someone's memory asks about, in the third person: "the user", "customer", 用户, 客户.
_USER_NAMED = re.compile(rf"\b(?:{_USER_WORDS_EN})s?\b|{_USER_WORDS_ZH}", re.IGNORECASE)


def asks_about_the_user(question: str) -> bool:
    """``question`` names the person in the third person and no one of theirs: "What does the user do for work?",
    "用户对什么过敏？"; not "What does the user's wife do?", "Which school does Theo go to?", nor "Which team does the
    user support?" (:func:`relations_named` reads "team" as colleagues)."""
    return bool(_USER_NAMED.search(question or "")) and not relations_named(question)


# The person with someone of theirs: "my wife and I", "me and my brother", 我和老婆, 跟我.
WITH_THE_PERSON = re.compile(r"\band (?:i|me)\b|\b(?:i|me) and\b|和我|跟我|我和|我跟", re.IGNORECASE)


def tells_of_someone_else(text: str) -> bool:
    """``text`` is about someone of the person's and not the person with them: "my husband is a paramedic",
    我女儿对花生过敏; not "My wife and I moved to Leeds" (:func:`statement_subject` reads those as the wife's)."""
    return statement_subject(text).kind == OTHER and not WITH_THE_PERSON.search(text or "")


# --- the cues as one record ------------------------------------------------------------------------------


def is_question(text: str) -> bool:
    """A question mark or a final question particle (吗 呢 么 嘛): the sure signs. (An opening "is", "did",
    "have" is only a cue for the classifier: chat drops the subject of "did my PGCE this year".)"""
    text = (text or "").strip()
    return bool(_QUESTION_MARK.search(text) or _ZH_QUESTION_END.search(text))


def is_request(text: str) -> bool:
    """A request to the assistant: "can you", "please", "help me", 帮我, 请, 给我, 推荐, …."""
    return bool(_EN_REQUEST.search(text or "") or _ZH_REQUEST.search(text or ""))


def is_small_talk(text: str) -> bool:
    """True when every phrase of ``text`` is a greeting, thanks or acknowledgement (Chinese or English)."""
    text = (text or "").strip()
    if not text or len(text) > SMALL_TALK_MAX_CHARS:
        return False
    phrases = [_NOT_WORDS.sub("", p).strip() for p in _PHRASE_SPLIT.split(text)]
    phrases = [p for p in phrases if p]
    return not phrases or all(_SMALL_TALK.match(p) for p in phrases)


def is_hypothetical(text: str) -> bool:
    """An "if", "suppose", "imagine", 如果, 要是, 假如 clause, or a wish ("I wish", 就好了)."""
    return bool(_HYPOTHETICAL.search((text or "").strip()))


# When and how often: what tells an event (EPISODE) and a habit (PROCEDURE) from a lasting fact.
_POINT_IN_TIME = re.compile(
    r"\b(?:yesterday|today|tonight|this (?:morning|afternoon|evening|week|weekend)|last (?:night|week|weekend|month|"
    r"year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|\d+ (?:days?|weeks?|months?|years?) ago|"
    r"(?:a|one|two|three) (?:days?|weeks?|months?|years?) ago|just now|on (?:monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday))\b|昨天|今天|前天|刚才|刚刚|上周|上个?星期|上个?月|去年|前年|今早|昨晚|周末的时候",
    re.IGNORECASE,
)
_FREQUENCY = re.compile(
    r"\b(?:every|each|always|usually|normally|typically|never|often|daily|weekly|monthly|most (?:days|mornings|"
    r"evenings|nights)|twice|\d+x)\b|每天|每周|每个?月|每年|每次|每逢|总是|一般|通常|平时|经常|习惯|从来不",
    re.IGNORECASE,
)

# The cues the classifier reads, in this order (its weights file records the names).
CUE_NAMES = (
    "question_mark", "question_form", "suggestion_particle", "request", "rule_for_later", "second_person",
    "small_talk", "hypothetical", "first_person", "third_person_user", "possessed", "about_nobody",
    "point_in_time", "frequency", "after_non_statement", "no_person",
)


def names_a_moment(text: str) -> bool:
    """The clause places itself at a point in time ("yesterday", "this weekend", 今天, 上周): an event."""
    return bool(_POINT_IN_TIME.search(text or ""))


def addresses_assistant(text: str) -> bool:
    """A clause that asks, requests, sets a rule for later or speaks to "you": the cues that what follows it
    in the same sentence ("帮我写个文案，文艺一点的", "plan a trip, mostly museums") continues it."""
    text = (text or "").strip()
    return bool(is_request(text) or _QUESTION_MARK.search(text) or _ZH_QUESTION_END.search(text)
                or _EN_QUESTION_START.match(_EN_FILLER.sub("", text)) or _ZH_QUESTION_WORD.search(text)
                or _RULE_FOR_LATER.search(text) or _SECOND_PERSON.search(text) or is_hypothetical(text))


def clause_cues(clause: str, *, sentence_end: str = "", previous: str = "") -> tuple[float, ...]:
    """The values of :data:`CUE_NAMES` for one clause (1.0 or 0.0).

    Args:
        clause: the clause's text.
        sentence_end: for the last clause of a sentence, the punctuation that closed it ("?", "？", "!", …),
            since a clause is cut without it.
        previous: the clause before it in the same sentence ("" for the first).
    """
    text = (clause or "").strip()
    subject = statement_subject(text)
    values = (
        bool(_QUESTION_MARK.search(text) or _QUESTION_MARK.search(sentence_end)),
        bool(_ZH_QUESTION_END.search(text) or _EN_QUESTION_START.match(_EN_FILLER.sub("", text))
             or _ZH_QUESTION_WORD.search(text)),
        bool(_ZH_SUGGESTION_END.search(text)),
        is_request(text),
        bool(_RULE_FOR_LATER.search(text)),
        bool(_SECOND_PERSON.search(text)),
        is_small_talk(text),
        is_hypothetical(text),
        bool(_FIRST_PERSON.search(text)),
        bool(_THIRD_PERSON_USER.search(text)),
        subject.kind == OTHER,
        subject.kind == NOBODY,
        bool(_POINT_IN_TIME.search(text)),
        bool(_FREQUENCY.search(text)),
        bool(previous) and addresses_assistant(previous),
        not (_FIRST_PERSON.search(text) or _THIRD_PERSON_USER.search(text)),
    )
    return tuple(float(v) for v in values)


# --- secrets --------------------------------------------------------------------------------------------

# Kinds, in the words the turn's outcome and the audit use.
PASSWORD, PIN, CARD, KEY, ID_NUMBER = "password", "PIN or code", "card number", "API key", "ID number"

_SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (KEY, re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}|\b(?:ghp|gho|ghs|github_pat|xox[abpr])_[A-Za-z0-9_]{16,}"
                     r"|\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{30,}")),
    (ID_NUMBER, re.compile(r"(?<!\d)\d{17}[\dXx](?![\dA-Za-z])|(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)"
                           r"|(?:身份证号?|护照号?|社保号|\bpassport (?:number|no)|\bssn\b|social security)"
                           r"\s*(?:码|号码)?\s*(?:is|:|：|是|为)?\s*[A-Za-z]?\d{6,}", re.IGNORECASE)),
    (CARD, re.compile(r"(?<!\d)\d{4}(?:[ -]?\d{4}){2,3}(?:[ -]?\d{1,3})?(?!\d)"
                      r"|(?:卡号|card (?:number|no))\s*(?:is|:|：|是|为)?\s*\d[\d -]{7,}", re.IGNORECASE)),
    (PASSWORD, re.compile(
        r"(?:password|passwd|passcode|pwd|login|密码|口令)\s*(?:for [\w .-]{1,20}?\s*)?"
        r"(?:is|was|=|:|：|是|为|就是)?\s*[^\s,，。;；]{4,}", re.IGNORECASE)),
    (PIN, re.compile(
        r"\b(?:pin|cvv|cvc|security code|code|combo|combination)\b\s*(?:for [\w .-]{1,24}?\s*)?"
        r"(?:number\s*)?(?:is|was|=|:|：)?\s*\d{3,8}(?!\d)|(?:PIN码?|验证码)\s*(?:是|为|：|:)?\s*\d{3,8}(?!\d)",
        re.IGNORECASE)),
)
# A long token mixing letters and digits (an access token pasted as is).
_TOKEN = re.compile(r"(?<![\w@.])(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,}(?![\w@])")


def find_secrets(text: str) -> list[str]:
    """The kinds of secret in ``text`` (API keys, ID numbers, card numbers, passwords, PINs and codes), each
    once, in that order; ``[]`` when none. A span is counted under the first kind it matches.

    Example:
        >>> find_secrets("my wifi password is sunflower77")
        ['password']
    """
    text = text or ""
    found: list[str] = []
    taken: list[tuple[int, int]] = []  # an ID number is not a card number too
    for kind, pattern in ((KEY, _TOKEN), *_SECRET_PATTERNS):
        for match in pattern.finditer(text):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            taken.append(match.span())
            if kind not in found:
                found.append(kind)
    return [kind for kind, _pattern in _SECRET_PATTERNS if kind in found]
