"""What a statement about a person is about (its attribute) and how it relates in time to an earlier one:
the offline reconcile step's signals (``ltm.write.reconcile_offline``).

- The attribute: the encoder's cosine to a handful of prototype sentences per attribute (where one lives,
  one's job, employer, name, partner, pets, diet, health, phone or car, languages, sport, school, income,
  plans, …), each written in English and Chinese; the encoder puts other words and the other language
  near them. Nothing is matched by words.
- The grammatical cues of change ("now", "no longer", "switched", 现在, 不再, 改, 换), of addition ("also",
  "too", "another", 也, 还) and of continuation ("still", "as I said", 还是, 一直): closed classes of
  function words and aspect markers, the same for every attribute.

numpy only; nothing here imports Django.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence

import numpy as np

# Prototype sentences per attribute: a few phrasings, English and Chinese, first and third person. The
# example values are in braces: the other words are the attribute's (:func:`attribute_words`).
PROTOTYPES: dict[str, tuple[str, ...]] = {
    "residence": ("I live in this city.", "I moved to a new city.", "The user lives in a town.", "我住在这个城市。",
                  "我搬家到了另一个城市。"),
    "job": ("I work as a {teacher}.", "My job is {software engineer}.", "The user works as a {nurse}.", "我的职业是{医生}。",
            "我是一名{工程师}。"),
    "employer": ("I work at a company.", "I joined a new company.", "The user is employed by a {bank}.",
                 "我在一家公司上班。", "我跳槽到了另一家公司。"),
    "name": ("My name is {Alex}.", "Call me {Sam}.", "The user's name is {Li}.", "我叫{小王}。", "叫我{小李}。"),
    "partner": ("I am married to my wife.", "I have a girlfriend.", "The user is single.", "我有男朋友了。",
                "我结婚了。"),
    "pet": ("I have a dog called {Max}.", "My cat is named {Luna}.", "The user has a pet {rabbit}.", "我养了一只猫。",
            "我的狗叫{旺财}。"),
    "children": ("I have a son and a daughter.", "The user has {two kids}.", "我有一个女儿。"),
    "diet": ("I am {vegetarian}.", "I don't eat meat.", "The user is {vegan}.", "我吃素。", "我不吃肉。"),
    "allergy": ("I am allergic to {peanuts}.", "The user has a food allergy.", "我对{花生}过敏。"),
    "health": ("I wear {glasses}.", "I have {diabetes}.", "The user has a bad back.", "我有{高血压}。", "我戴眼镜。"),
    "phone": ("I use an {iPhone}.", "My phone is a {Samsung}.", "The user has an {Android} phone.", "我用的是{华为}手机。"),
    "car": ("I drive a {Toyota}.", "My car is a {Tesla}.", "The user drives a car.", "我开的是一辆{大众}。"),
    "computer": ("I use a {MacBook} laptop.", "My computer runs {Windows}.", "我用的是{联想}笔记本电脑。"),
    "language": ("I am learning {Spanish}.", "I speak {French}.", "The user studies {Japanese}.", "我在学{日语}。",
                 "我会说{英语}。"),
    "sport": ("I play {tennis} every week.", "I go {running}.", "The user does {yoga}.", "我每周打{羽毛球}。", "我喜欢{跑步}。"),
    "hobby": ("I play the {guitar}.", "My hobby is {painting}.", "The user collects {stamps}.", "我的爱好是{画画}。"),
    "study": ("I study {computer science} at university.", "I am a student at school.", "The user is in college.",
              "我在读大学。", "我的专业是{计算机}。"),
    "income": ("My salary is {50k} a year.", "I earn {5000} a month.", "The user's income is high.", "我月薪{一万}。"),
    "food": ("My favourite food is {pizza}.", "I love {sushi}.", "The user likes {spicy food}.", "我最喜欢吃{火锅}。"),
    "drink": ("I drink {coffee} every morning.", "My favourite drink is {tea}.", "我每天喝{咖啡}。"),
    "routine": ("I get up at {6} every day.", "I go to bed late.", "The user works night shifts.", "我每天早上{六点}起床。"),
    "work_mode": ("I work from home.", "I work remotely.", "The user commutes to the office.", "我在家办公。"),
    "plan": ("I am planning a trip next month.", "I plan to go abroad.", "The user will travel to {Japan}.",
             "我打算下个月去旅行。"),
    "origin": ("I was born in this country.", "My hometown is a small village.", "The user is from {Canada}.",
               "我老家是{东北}的。"),
    "preference": ("I prefer {short answers}.", "I like {detailed explanations}.", "我喜欢简短的回答。"),
    "tool": ("I use {Vim} as my editor.", "I program in {Python}.", "The user codes in {Java}.", "我用{Python}写代码。"),
}

# Questions about each attribute, English and Chinese, as one asks them of a person's memory: a question is far
# from the statements that answer it ("What does the user do?" is nearer a phone, 0.27, than a job, 0.23: "user"),
# near another question about the same attribute. Only the search reads them (``ltm.search.ranking``).
QUESTIONS: dict[str, tuple[str, ...]] = {
    "residence": ("Where does the user live?", "Which city is the user in?", "用户住在哪里？", "用户现在在哪个城市？",
                  "Where is the user based?", "用户家在哪？"),
    "job": ("What does the user do?", "What is the user's job?", "用户是做什么的？", "用户做什么工作？",
            "What does the user do for a living?", "用户的工作是什么？"),
    "employer": ("Where does the user work?", "Which company does the user work for?", "用户在哪家公司上班？",
                 "Who does the user work for?", "用户在哪里工作？"),
    "name": ("What is the user's name?", "What should the user be called?", "用户叫什么名字？", "怎么称呼用户？"),
    "partner": ("Is the user married?", "Who is the user's partner?", "用户有对象吗？", "Does the user have a partner?",
                "用户结婚了吗？"),
    "pet": ("Does the user have pets?", "What is the user's dog called?", "用户养了什么宠物？",
            "What pets does the user have?", "用户的猫叫什么？"),
    "children": ("Does the user have children?", "How old is the user's son?", "用户有几个孩子？",
                 "How many kids does the user have?", "用户的孩子多大了？"),
    "diet": ("Does the user eat meat?", "What does the user not eat?", "用户吃素吗？",
             "What are the user's dietary restrictions?", "用户有什么忌口？"),
    "allergy": ("What is the user allergic to?", "Does the user have any allergies?", "用户对什么过敏？"),
    "health": ("Does the user have any health conditions?", "What medication does the user take?", "用户身体有什么问题？",
               "What medical conditions does the user have?", "用户有什么病？"),
    "phone": ("What phone does the user have?", "用户用什么手机？"),
    "car": ("What car does the user drive?", "用户开什么车？"),
    "computer": ("What computer does the user use?", "用户用什么电脑？"),
    "language": ("What languages does the user speak?", "Which language is the user learning?", "用户在学什么语言？",
                 "用户会说什么语言？"),
    "sport": ("What sport does the user play?", "How does the user exercise?", "用户做什么运动？", "用户平时锻炼吗？"),
    "hobby": ("What are the user's hobbies?", "What does the user do for fun?", "用户有什么爱好？", "用户业余时间喜欢做什么？"),
    "study": ("What does the user study?", "Where does the user go to school?", "用户在哪里上学？",
              "What is the user studying?", "用户学什么专业？"),
    "income": ("How much does the user earn?", "What is the user's salary?", "用户工资多少？"),
    "food": ("What is the user's favourite food?", "What food does the user like?", "用户喜欢吃什么？"),
    "drink": ("What does the user drink?", "Does the user drink coffee?", "用户每天喝什么？"),
    "routine": ("When does the user get up?", "What is the user's daily routine?", "用户几点睡觉？",
                "What is the user's schedule?", "用户的作息是怎样的？"),
    "work_mode": ("Does the user work from home?", "What hours does the user work?", "用户在家办公吗？"),
    "plan": ("What is the user planning?", "Where is the user travelling next?", "用户打算做什么？",
             "What are the user's plans?", "用户有什么计划？"),
    "origin": ("Where is the user from?", "Where did the user grow up?", "用户老家是哪里的？",
               "What is the user's hometown?", "用户是哪里人？"),
    "preference": ("How does the user like answers?", "What format does the user prefer?", "用户喜欢什么样的回答？"),
    "tool": ("What programming language does the user use?", "Which editor does the user use?", "用户用什么写代码？"),
}

# Attributes a person has several values of at once (pets, languages, sports, allergies, …): another value
# said without a cue of an end is one more, not a replacement. The others have one value at a time.
MANY_VALUED = frozenset({"pet", "children", "allergy", "health", "language", "sport", "hobby", "food", "plan",
                         "preference", "tool"})
# Of those, the ones a person gains one more of (animals, children, allergies): a value said with "now" is one
# more. Between the others one also switches ("mainly Python now" after Java; "now I do pilates"): "now" may end one.
GAINED = frozenset({"pet", "children", "allergy"})

# Attributes one change moves together: a new job may be said as a new employer; the end of one's studies
# (an end, not a "now") as the first job. (Not where one lives and comes from: a move keeps one's home town.)
FAMILIES = ({"job", "employer"},)
ENDED_FAMILIES = ({"study", "job", "employer"},)


def one_family(a: str, b: str, *, ended: bool = False) -> bool:
    """``a`` and ``b`` are the same attribute or of one family (:data:`FAMILIES`; with ``ended``, said as an
    end, :data:`ENDED_FAMILIES` too)."""
    families = FAMILIES + ENDED_FAMILIES if ended else FAMILIES
    return a == b or any(a in family and b in family for family in families)


# Attributes that do not change "now": where one comes from (a statement of now near it is where one lives).
FIXED = frozenset({"origin"})

# --- the cues -----------------------------------------------------------------------------------------

# "left" as a verb ("I left Google", "she left"), not as a side ("left-handed", "on the left", "my left leg").
_LEFT_AS_VERB = r"(?<!the )(?<!my )(?<!his )(?<!her )(?<!our )(?<!your )(?<!their )(?<!on )(?<!to )left(?![-‐])"
# An end or a switch of a value (a promotion, a transfer, an amount cut to another: promoted, 调至, 升为, 减至).
ENDS = re.compile(
    r"\b(?:no longer|not anymore|any ?more|no more|stopped|quit|" + _LEFT_AS_VERB
    + r"|switched|changed|moved|relocated|instead|"
    r"(?<!are )(?<!is )(?<!am )(?<!be )(?<!get )(?<!got )used to|gave up|traded|sold|cancelled|canceled|retired|"
    r"replaced|correction|lapsed|lapse|is history|'s history|upgraded|downgraded|promoted|demoted|transferred|reassigned|converted|swapped|got rid of|ended|"
    r"broke up|split up|split|separated|divorced|passed away|died|graduated|not\b.{1,30}\bbut|"
    r"(?:reduced|increased|cut|dropped|bumped|raised|lowered)(?: (?:down|up|it))? to|"
    r"(?:took|taken|taking) (?:me|him|her|them) off|(?:came|come|coming) off|"
    r"from\b.{1,40}\bto|gone(?!\s+(?:to|for|with|through|by|on|into|back|home|out|off|up|down|away|over|in)\b)"
    r"|(?:['’]s|\bis|\bare|\b(?:got|signed|tapering|weaned)) off(?!\s+(?:to|school|work|sick)\b)|(?<!day )(?<!days )(?<!time )off(?=\s*!))\b"
    r"|不再|不.{1,6}了|没再|再也不|改|换|搬|转|跳槽|离职|辞职|辞了|离开|退了|停了|卖了|更正|毕业|分手|离婚|去世|结束|戒|从.{1,15}(?:到|成)|退回|送回|送走|送人"
    r"|(?<!空)调[到至去]|升[为任职]|降[为到至]|[减涨增]至|[减涨]到|升级|降级",
    re.IGNORECASE,
)
# A change denied ("没搬", "不想换", "haven't moved", "didn't change"): the value continues, nothing ended.
_NO_CHANGE = (
    r"(?:没|没有|不想|不打算|不会|不用|不准备|别|懒得)(?:再)?(?:换|搬|转|改|变|动|离职|辞职|跳槽)"
    r"|\b(?:haven'?t|have not|hasn'?t|has not|didn'?t|did not|not|never|won'?t|no plans? to|not planning to)"
    r"\s+(?:\w+\s+)?(?:move|moved|moving|change|changed|changing|switch|switched|switching|leave|left|leaving|quit)\b"
)
# What the assistant is asked to change ("拿铁帮我换成燕麦奶的"), and carrying a thing (搬个冰箱, 搬东西): no value
# of the person's ends (nor is one said to continue).
_NO_END = r"(?:帮我|幫我|给我|給我)(?:把.{0,8}?)?(?:换|換|改)|搬(?:个|一个|了个|些|东西|東西)"
# A change only planned, wished or supposed ("我们打算明年搬到昆山", "如果公司搬深圳", "thinking of moving to Leeds"):
# nothing has ended yet.
_NOT_YET = (r"(?:打算|计划|考虑|可能|如果|要是|假如|想)[^，。,.!！?？]{0,8}?(?:搬|换|換|转|轉|改|跳槽|离职|辞职)"
            r"|\b(?:planning|plan|thinking (?:of|about)|considering|might|may|if|want) (?:to )?[^.,;!?]{0,15}?"
            r"\b(?:move|moving|switch|switching|change|changing|leave|leaving|quit|quitting)\b")
_NOT_AN_END_RE = re.compile(_NO_CHANGE + "|" + _NO_END + "|" + _NOT_YET, re.IGNORECASE)
# Once only, what holds otherwise unchanged ("booked with Ben this once, will return to Amy", "just this order",
# 就这一次, 下周照旧, 主订阅不变): an exception, not a change.
_JUST_ONCE = re.compile(
    r"\b(?:(?:just |only )?this once|just (?:for )?this (?:time|order|one|week)|one-off|(?:will|to) (?:return|go back) to|"
    r"(?:preference|plan|subscription|order|booking)s? (?:is |are |remains? )?unchanged)\b"
    r"|就这一次|就這一次|就这次|仅此一次|僅此一次|仅限(?:本|这|這)[单單次]|下[次周月][^，。,.!！]{0,8}(?:照旧|恢复|照舊|恢復)"
    r"|主[^，。,.]{0,4}不变",
    re.IGNORECASE,
)


def tells_of_one_time(text: str) -> bool:
    """The statement tells of an exception, once only, what holds otherwise unchanged ("this once", 就这一次)."""
    return bool(_JUST_ONCE.search(text or ""))


# An end said only as a past time ("I used to smoke"): of the value it names, not of another.
_USED_TO = re.compile(r"(?<!are )(?<!is )(?<!am )(?<!be )(?<!get )(?<!got )\bused to\b", re.IGNORECASE)
# What holds now ("now", "went vegan", 现在, a final 了): a change only of an attribute already shared.
NOW = re.compile(r"\b(?:now|nowadays|these days|currently|new|became|become|went|turned|going forward|from today)\b"
                  r"|现在|如今|目前|已经|新|成了|变成|今后|往后|(?:^|(?<=[，,。!！]))以后(?![，,。!！]|$)|从今(?:天)?(?:起|开始)|了[，。！!~\s]|了$", re.IGNORECASE)
# Adds to what is known: also, too, another, 也, 还 (not 还是 / 还在: those continue; not 还没 / 还挺 / 还要: "yet",
# "quite", "still have to"; not "too" before a word: "too tired" says how much).
_ADDITION = re.compile(
    r"\b(?:also|as well|another|both|in addition|plus|besides|on top of)\b|\btoo\b(?!\s+(?!lol|haha|btw|now|though|tbh)[a-z])"
    r"|也|(?<!还)还(?![是在有记没不挺行好算要得])|另外|又|再",
    re.IGNORECASE,
)
# Continues what was said: still, as usual; 还是, 依然, 一直 (of its own clause: "in Bristol now, still unpacking")
# and, of the whole message, said before: as I said, 说过. Not "again": "single again", "eating meat again"
# return to an earlier value.
_STILL = (r"\b(?:still|as usual|as always|as before|continue|continuing|keep on)\b|继续|还是|依然|仍|一直|照样|照旧|照例|还在|老样子|"
          + _NO_CHANGE)
# Said before: "as I said", "like I've mentioned", "I told you already", "remember", 说过, 講過 (any script, any verb of
# saying: 说/說/讲/講/提), 你记得, 跟上次一样. A reported "the user mentioned …" is not one.
_SAID_BEFORE = (r"\b(?:(?:as|like) i(?:'ve| have)? (?:said|mentioned|told you)|as mentioned|told you (?:before|already)|"
                r"as you know|you know already|remember|already told|the usual|same as (?:before|last time|always|usual))\b"
                # Said again, as a note reports it ("Customer restated: …", "asked again for …", 用户再次提到…).
                r"|\b(?:as i told(?=\s*[,.;:!]|\s*$)|restated|reiterated|(?:mentioned|said|asked|requested|noted|stated|"
                r"confirmed|flagged) again|as (?:noted|stated) (?:before|previously|earlier))\b"
                r"|再次(?:提到|提及|要求|表示|强调|确认|说明)|重申|又提到|之前有(?:跟你|和你|同你|同您|跟您)?[说說讲講提]"
                r"|[说說讲講提][过過]|还记得|你记得|记得(?:吧|的|嘛)|你記得|記得(?:㗎|嘛)|你知(?:道)?(?:啦|的|吧)|你懂的|跟上次一样|和上次一样|老规矩")
_CONTINUATION = re.compile(_STILL + "|" + _SAID_BEFORE, re.IGNORECASE)
_SAID_BEFORE_RE = re.compile(_SAID_BEFORE, re.IGNORECASE)

# Tells of a past time, not of a change ("used to", "back in uni", "when I was a kid", 以前, 小时候, 读书的时候).
_PAST = re.compile(
    r"\b(?:used to|back in|back when|when i was|in my \w+ days|as a kid|growing up|years ago|once upon)\b"
    r"|以前|之前|小时候|那时候|那会儿|当年|曾经|读书的时候|上学的时候|年轻的时候",
    re.IGNORECASE,
)


# Then and now set against each other ("以前在腾讯，现在在阿里", "I used to hate it, now I love it"): what held
# then ended, what is said after "now" holds.
_THEN_NOW = re.compile(
    r"(?:\bused to\b|\bback then\b|以前|之前|曾经|原来|本来)[^.!?。！？]{0,40}?"
    r"(?P<now>\bnow\b|\bnowadays\b|\bthese days\b|现在|如今|目前)",
    re.IGNORECASE,
)


def ends_value(text: str) -> bool:
    """The statement ends or switches a value ("no longer", "quit", "switched", 不再, 改, 换, 从…到, 以前…现在);
    not where it denies one ("没搬", "haven't moved")."""
    text = _NOT_AN_END_RE.sub(" ", text or "")
    return bool(ENDS.search(text) or _THEN_NOW.search(text))


def end_cues(text: str) -> frozenset[str]:
    """The words that end or switch a value in the statement, lower-cased ("retired", 离婚)."""
    text = _NOT_AN_END_RE.sub(" ", text or "")
    return frozenset(found.group(0).lower() for found in ENDS.finditer(text))


def _ends_besides_used_to(text: str) -> bool:
    """An end cue other than "used to" (``text`` with its denied changes already taken out)."""
    return bool(ENDS.search(_USED_TO.sub(" ", text)))


def ends_only_in_the_past(text: str) -> bool:
    """The statement's only cue of an end is "used to", with no "now" set against it: it tells of a past time
    ("I used to smoke"), which ends only the value it names."""
    text = _NOT_AN_END_RE.sub(" ", text or "")
    return bool(_USED_TO.search(text)) and not _ends_besides_used_to(text) and not _THEN_NOW.search(text)


def then_and_now(text: str) -> tuple[str, str] | None:
    """When the statement's only end is a then set against a now ("以前在腾讯，现在在阿里，还是做后台"): the text
    before its "now" and from it on ("以前在腾讯，", "现在在阿里，还是做后台"); else None."""
    text = _NOT_AN_END_RE.sub(" ", text or "")
    found = _THEN_NOW.search(text)
    if found is None or _ends_besides_used_to(text):
        return None
    return text[: found.start("now")], text[found.start("now"):]


def says_now(text: str) -> bool:
    """The statement says what holds now ("now", "went vegan", 现在, a final 了)."""
    return bool(NOW.search(text or ""))


def has_addition_cue(text: str) -> bool:
    """The statement adds to what is known ("also", "too", "another", 也, 还)."""
    return bool(_ADDITION.search(text or ""))


def has_past_cue(text: str) -> bool:
    """The statement tells of a past time ("used to", "back in uni", 以前, 小时候): a change, or a memory."""
    return bool(_PAST.search(text or ""))


# "back in" of a place one is in again ("I'm back in the office", "we moved back in with my parents"): no past time.
_BACK_AGAIN = re.compile(r"\b(?:i'?m|i am|we'?re|we are|i'?ve been|we'?ve been|be|being|got|get|getting|moved|"
                         r"move|moving)\s+back in\b", re.IGNORECASE)


def tells_of_a_past_time(text: str) -> bool:
    """:func:`has_past_cue`, but for "back in" said of being somewhere again ("I'm back in the office full time")."""
    return has_past_cue(_BACK_AGAIN.sub(" ", text or ""))


def has_continuation_cue(text: str) -> bool:
    """The statement says the same still holds ("still", "as I said", 还是, 一直)."""
    return bool(_CONTINUATION.search(text or ""))


def says_said_before(text: str) -> bool:
    """The message says it was said before ("as I said", "remember", 说过): of all it says, not one clause."""
    return bool(_SAID_BEFORE_RE.search(text or ""))


def prototype_text(sentence: str) -> str:
    """A prototype sentence as encoded (without the braces around its example value)."""
    return sentence.replace("{", "").replace("}", "")


def attribute_words(sentence: str) -> str:
    """A prototype sentence without its example value: the words that say which attribute it is."""
    return re.sub(r"\{[^}]*\}", " ", sentence)


# --- the attribute ------------------------------------------------------------------------------------


class AttributeSpace:
    """The prototypes' vectors in one encoder's space, made once (one encoder call) and shared.

    Args:
        encode: the encoder (texts → unit vectors, one row per text); the vectors given to
            :meth:`scores` come from it too.
    """

    def __init__(self, encode: Callable[[Sequence[str]], np.ndarray]) -> None:
        names, texts = [], []
        for name, sentences in PROTOTYPES.items():
            for sentence in sentences:
                names.append(name)
                texts.append(prototype_text(sentence))
        self.names = tuple(PROTOTYPES)
        asked = [(name, question) for name, questions in QUESTIONS.items() for question in questions]
        vectors = np.asarray(encode(texts + [question for _name, question in asked]), dtype=np.float32)
        index = np.array([self.names.index(n) for n in names])
        # One row per attribute: its prototypes' mean direction, of unit length.
        means = np.vstack([vectors[: len(texts)][index == i].mean(axis=0) for i in range(len(self.names))])
        self.matrix = means / np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-9)
        self.questions = vectors[len(texts):]
        self.question_owners = np.array([self.names.index(name) for name, _question in asked])

    def question_scores(self, vector: np.ndarray) -> np.ndarray:
        """``(attributes,)``: a question's highest cosine with each attribute's questions (:data:`QUESTIONS`)."""
        cosines = self.questions @ np.asarray(vector, dtype=np.float32)
        best = np.full(len(self.names), -1.0, np.float32)
        np.maximum.at(best, self.question_owners, cosines)
        return best

    def scores(self, vectors: np.ndarray) -> np.ndarray:
        """``(n, attributes)``: each vector's cosine to each attribute's prototype direction."""
        return np.asarray(vectors, dtype=np.float32) @ self.matrix.T

    def profiles(self, vectors: np.ndarray, *, scores: np.ndarray | None = None) -> np.ndarray:
        """Each vector's scores over the attributes, centred and of unit length: two statements about the
        same attribute have close profiles even when neither is near one prototype. ``scores``: the
        vectors' :meth:`scores`, when already computed."""
        scores = self.scores(vectors) if scores is None else scores
        scores = scores - scores.mean(axis=1, keepdims=True)
        return scores / np.maximum(np.linalg.norm(scores, axis=1, keepdims=True), 1e-9)

    def attribute(self, vectors: np.ndarray, *, scores: np.ndarray | None = None) -> list[tuple[str, float, float]]:
        """Per vector: its nearest attribute, that cosine, and its margin over the second nearest.
        ``scores``: the vectors' :meth:`scores`, when already computed."""
        scores = self.scores(vectors) if scores is None else scores
        if not len(scores):
            return []
        order = np.argsort(-scores, axis=1)
        rows = np.arange(len(scores))
        best, second = scores[rows, order[:, 0]], scores[rows, order[:, 1]]
        names = self.names
        return [(names[rank], top, margin)
                for rank, top, margin in zip(order[:, 0].tolist(), best.tolist(), (best - second).tolist())]


_spaces: dict[str, AttributeSpace] = {}
_spaces_lock = threading.Lock()


def attribute_space(name: str, encode: Callable[[Sequence[str]], np.ndarray]) -> AttributeSpace:
    """The process's :class:`AttributeSpace` of the encoder named ``name`` (built on first use)."""
    space = _spaces.get(name)
    if space is None:
        with _spaces_lock:
            space = _spaces.get(name)
            if space is None:
                space = _spaces[name] = AttributeSpace(encode)
    return space
