"""Complete translation: no user-visible English on a Chinese page, and no stored code shown raw.

Three nets, each catching what the others cannot:

1. **Templates, statically.** Every template's text outside ``{% translate %}``/``{% blocktranslate %}``,
   variables and tags, and its user-visible attributes (title, placeholder, aria-label, alt, data-confirm,
   button values), must hold no English word. Catches a literal a developer forgot to wrap, on any page,
   whatever the data.
2. **Python, statically.** Flash messages and admin messages are passed through gettext (no bare string or
   f-string), and every choice label, model field name and form label/help text has a Chinese translation.
3. **Pages, rendered.** Every page of each role (dashboard, user pages, admin lists with filters, item pages,
   confirmations, error pages, forms with errors), rendered in Simplified Chinese over data of every type,
   source and state, shows no English word and no stored code (``FACT``, ``agent_tool``, ``user_deleted``…)
   outside the data itself. Catches strings built in Python and codes shown raw.

The allowed English is listed below (product and protocol names, the seeded data); anything else found is
a string to wrap and translate (append it to ``locale/zh_Hans/LC_MESSAGES/django.po``, then
``manage.py compilemessages -l zh_Hans``).
"""

from __future__ import annotations

import ast
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.test import Client
from django.urls import NoReverseMatch, reverse
from django.utils import translation

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "templates"
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
# A word: two or more letters, not part of an identifier, a path or a number.
WORD = re.compile(r"(?<![\w/.:#@&=?%-])[A-Za-z][A-Za-z]+(?:'[a-z]+)?(?![\w/.:@=(-])")

# Names that stay as they are in Chinese UIs (products, protocols, formats, units).
ALLOWED = {
    "memoryboard", "API", "REST", "OpenAPI", "JSON", "LLM", "Token", "token", "ID", "id", "URL", "OpenAI",
    "HTTP", "CSV", "htmx", "Swagger", "Chat", "SVG", "Django", "BM", "MCP", "Python", "ReAct", "UTC",
    "English",  # the language menu names each language in its own script
    "Anthropic",  # the other message format the strategies read (issue 11)
    "LangChain",  # named with Anthropic where a strategy parameter matches theirs
}
# Strategy names are the API's own names (``POST /api/v1/strategies/context/{name}/apply``).
STRATEGY_NAMES = {"TRIM", "SUMMARIZE", "SLIDING_WINDOW", "COMPOSITE", "CLEAR_TOOL_RESULTS", "DELETE", "FILTER"}


def _codes() -> set[str]:
    """Stored codes that a page must show by their label (those that are not plain English words)."""
    from memoryboard.models import ArchivedReason, AuditLog, MemoryAccess, MemoryType, Source
    from memoryboard.models.chat import Role

    codes = set()
    for enum in (ArchivedReason, AuditLog.Action, MemoryAccess.Kind, MemoryType, Source, Role):
        codes.update(str(v) for v in enum.values)
    return codes


# --- 1. templates, statically ------------------------------------------------------------------------


VISIBLE_ATTRS = ("title", "placeholder", "aria-label", "alt", "data-confirm")
TEMPLATE_NOISE = [
    re.compile(r"{%\s*comment\s*%}.*?{%\s*endcomment\s*%}", re.S),
    re.compile(r"{#.*?#}", re.S),
    re.compile(r"{%\s*blocktranslate\b.*?{%\s*endblocktranslate\s*%}", re.S),
    re.compile(r"{%\s*blocktrans\b.*?{%\s*endblocktrans\s*%}", re.S),
    re.compile(r"<script\b.*?</script>", re.S | re.I),
    re.compile(r"<style\b.*?</style>", re.S | re.I),
    re.compile(r"<code\b.*?</code>", re.S | re.I),
    re.compile(r"{{.*?}}", re.S),
    re.compile(r"{%.*?%}", re.S),
]


def _template_texts(source: str) -> list[str]:
    """What a template shows literally: text between tags and the visible attributes."""
    for pattern in TEMPLATE_NOISE:
        source = pattern.sub(" ", source)
    texts = []
    for attr in VISIBLE_ATTRS:
        texts += re.findall(rf'\s{attr}="([^"]*)"', source)
    texts += re.findall(r'<input[^>]*type="(?:submit|button)"[^>]*value="([^"]*)"', source)
    texts += re.sub(r"<[^>]*>", "\n", source).splitlines()
    return [t.strip() for t in texts if t.strip()]


def _english(text: str, allowed: set[str] = frozenset()) -> list[str]:
    return [w for w in WORD.findall(text) if w not in ALLOWED and w not in allowed]


def test_templates_have_no_untranslated_text():
    found = {}
    for path in sorted(TEMPLATES.rglob("*.html")):
        words = [w for text in _template_texts(path.read_text(encoding="utf-8")) for w in _english(text)]
        if words:
            found[str(path.relative_to(ROOT))] = sorted(set(words))
    assert found == {}, "wrap these in {% translate %} and translate them:\n" + "\n".join(
        f"{k}: {v}" for k, v in found.items())


def test_the_template_check_sees_a_forgotten_string():
    """The check itself: bare text and a bare attribute are found; translated text, variables, data are not."""
    source = (
        '<h1>{% translate "Users" %}</h1><p>Nothing here</p><input placeholder="Find people">'
        '{% blocktranslate %}Used {{ n }} times{% endblocktranslate %}<td>{{ item.content }}</td>'
        '<a href="{% url \'home\' %}" class="button primary">memoryboard</a>'
    )
    words = [w for t in _template_texts(source) for w in _english(t)]
    assert sorted(words) == ["Find", "Nothing", "here", "people"]


# --- 2. Python, statically ---------------------------------------------------------------------------


MESSAGE_CALLS = {"success", "error", "warning", "info", "add_message", "message_user", "debug"}


def _bare_messages(path: Path) -> list[str]:
    """Calls like ``flash.success(request, "text")`` or ``self.message_user(request, f"…")``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        owner_name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
        if node.func.attr not in MESSAGE_CALLS or owner_name not in {"messages", "flash", "self", "modeladmin"}:
            continue
        args = node.args[1:2] if node.func.attr != "add_message" else node.args[2:3]
        for arg in args:
            if isinstance(arg, ast.JoinedStr) or (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_flash_and_admin_messages_go_through_gettext():
    found = [hit for path in sorted((ROOT / "memoryboard").rglob("*.py")) for hit in _bare_messages(path)]
    assert found == [], "wrap these messages in gettext: " + ", ".join(found)


def test_every_choice_field_name_and_form_label_is_translated():
    from django.apps import apps
    from django.db import models

    from memoryboard.web import forms as web_forms

    missing = []
    with translation.override("zh-hans"):
        for model in apps.get_app_config("memoryboard").get_models():
            for name in (model._meta.verbose_name, model._meta.verbose_name_plural):
                if not CJK.search(str(name)):
                    missing.append(f"{model.__name__}: {name}")
            for field in model._meta.get_fields():
                if isinstance(field, models.Field) and field.choices:
                    missing += [f"{model.__name__}.{field.name}: {label}" for _v, label in field.choices
                                if not CJK.search(str(label))]
        for name in dir(web_forms):
            form = getattr(web_forms, name)
            if not (isinstance(form, type) and hasattr(form, "base_fields")):
                continue
            for fname, field in form.base_fields.items():
                for text in (field.label, field.help_text):
                    if text and not CJK.search(str(text)):
                        missing.append(f"{name}.{fname}: {text}")
                for _value, label in getattr(field, "choices", None) or []:
                    if isinstance(label, str | type(translation.gettext_lazy(""))) and _english(str(label)) \
                            and not CJK.search(str(label)):
                        missing.append(f"{name}.{fname} choice: {label}")
    assert missing == [], "translate these:\n" + "\n".join(missing)


# --- 3. pages, rendered ------------------------------------------------------------------------------


class VisibleText(HTMLParser):
    """Text a person sees: not scripts, styles, code or JSON blocks, textareas (data), nor the language menu."""

    HIDDEN = {"script", "style", "pre", "code", "textarea", "svg", "option-lang", "data"}
    # Elements whose text is data (a message's content in the playground), not interface.
    DATA_CLASSES = {"msg-content", "msg-full"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.texts: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        if tag == "form" and "lang" in classes:
            tag = "option-lang"
        elif classes & self.DATA_CLASSES:
            tag = "data"
        if tag not in ("input", "br", "img", "meta", "link", "hr", "col", "source", "wbr"):
            self.stack.append(tag)
        if self.hidden:
            return
        for attr in ("title", "placeholder", "aria-label", "alt", "data-confirm"):
            if attrs.get(attr):
                self.texts.append(attrs[attr])
        if tag == "input" and attrs.get("type") in ("submit", "button") and attrs.get("value"):
            self.texts.append(attrs["value"])

    def handle_endtag(self, tag):
        if tag == "form" and "option-lang" in self.stack:
            tag = "option-lang"
        elif self.stack and self.stack[-1] == "data" and tag != "data":
            tag = "data"
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    @property
    def hidden(self) -> bool:
        return any(t in self.HIDDEN for t in self.stack)

    def handle_data(self, data):
        if not self.hidden and data.strip():
            self.texts.append(data.strip())


def visible_texts(html: str) -> list[str]:
    parser = VisibleText()
    parser.feed(html.replace("<wbr>", ""))  # a line-break opportunity inside a word (CLEAR_TOOL_<wbr>RESULTS)
    return parser.texts


DATA_TEXTS = {
    "alice", "bob", "root", "sam-support", "dev", "chat", "coder", "conv-1", "Bob", "Builder",
}


@pytest.fixture
def world(superuser, support_user, alice, bob, developer, make_memory):
    """Data of every type, source and state, a conversation, accesses, audit entries; Chinese content."""
    from memoryboard.ltm.store.items import memory_set_paused
    from memoryboard.models import ArchivedReason, ChatMessage, MemoryAccess

    bob.first_name, bob.last_name = "Bob", "Builder"
    bob.save()
    items = {}
    for i, (mtype, source) in enumerate([("FACT", "auto_extract"), ("PREFERENCE", "agent_tool"),
                                         ("PROCEDURE", "manual"), ("EPISODE", "agent_tool")]):
        items[mtype] = make_memory(alice, f"爱丽丝的第 {i} 条记忆", memory_type=mtype, source=source)
    items["decay"] = make_memory(alice, "衰减归档的记忆", archived_reason=ArchivedReason.DECAY)
    items["over"] = make_memory(alice, "超出上限的记忆", archived_reason=ArchivedReason.OVER_LIMIT)
    items["staff"] = make_memory(alice, "客服归档的记忆", archived_reason=ArchivedReason.STAFF)
    items["deleted"] = make_memory(alice, "用户删除的记忆", archived_reason=ArchivedReason.USER_DELETED)
    items["bob"] = make_memory(bob, "鲍勃的记忆", agent="coder")
    memory_set_paused(memory=items["EPISODE"], actor=support_user, paused=True)
    for i, role in enumerate(["SYSTEM", "USER", "ASSISTANT", "TOOL", "USER"]):
        ChatMessage.objects.create(conversation_id="conv-1", agent_id="chat", user_id=str(alice.pk), role=role,
                                   content=f"第 {i} 条消息")
    for kind in ("retrieval", "tool_search", "injection"):
        MemoryAccess.objects.create(memory_id=items["FACT"].pk, agent_id="chat", conversation_id="conv-1",
                                    kind=kind, relevance=0.5)
    from memoryboard.models import RetrievalReceipt

    items["receipt"] = RetrievalReceipt.objects.create(
        agent_id="chat", user_id=str(alice.pk), conversation_id="conv-1", kind="injection", query="记忆",
        k=5, model_name="hashing-ngram-384", min_relevance=0.2, index="exact",
        counts={"returned": 1, "below_threshold": 1},
        candidates=[{"id": items["FACT"].pk, "outcome": "returned", "semantic": 0.8, "final": 0.7},
                    {"id": items["PREFERENCE"].pk, "outcome": "below_threshold", "semantic": 0.1, "final": 0.1}])
    # An item paused, then purged: its pause entry keeps no text, and the item is gone (support reads what
    # it was, never its id). The admin's own log of a change by support (its recent actions, the history).
    from django.contrib.admin.models import CHANGE, LogEntry
    from django.contrib.contenttypes.models import ContentType

    from memoryboard.ltm.write.staff import memory_purge_many
    from memoryboard.models import AuditLog, LongTermMemory

    gone = make_memory(alice, "将被彻底清除的记忆")
    memory_set_paused(memory=gone, actor=support_user, paused=True)
    purged_entry = AuditLog.objects.filter(object_id=gone.pk, action=AuditLog.Action.PAUSE).get()
    memory_purge_many(memories=[gone], actor=superuser)
    for user in (support_user, superuser):
        LogEntry.objects.create(user=user, content_type=ContentType.objects.get_for_model(LongTermMemory),
                                object_id=items["FACT"].pk, object_repr=items["FACT"].pk, action_flag=CHANGE,
                                change_message='[{"changed": {"fields": ["content"]}}]')
    # A conversation under a generated id (a UUID, as the proxy makes them) with a tool call and its result.
    tool_conversation = "4f1c2b7e-9a0d-4c3b-8e21-5d6f7a8b9c0e"
    ChatMessage.objects.create(conversation_id=tool_conversation, agent_id="chat", user_id=str(alice.pk),
                               role="USER", content="查一下我的笔记")
    ChatMessage.objects.create(
        conversation_id=tool_conversation, agent_id="chat", user_id=str(alice.pk), role="ASSISTANT", content="",
        metadata={"tool_calls": [{"id": "call_1", "type": "function",
                                  "function": {"name": "lookup_notes", "arguments": "{}"}}]})
    tool_row = ChatMessage.objects.create(
        conversation_id=tool_conversation, agent_id="chat", user_id=str(alice.pk), role="TOOL",
        content='{"笔记": ["周一丢了卡"], "数量": 1}', metadata={"tool_call_id": "call_1"})
    return {"items": items, "alice": alice, "bob": bob, "purged_entry": purged_entry, "tool_row": tool_row,
            "tool_conversation": tool_conversation}


BAD_INPUT_QUERY = "?q=&k=abc"


def _pages(world) -> list[tuple[str, str, str, dict | None]]:
    """(role fixture, url, method, post data) of every page to check."""
    from memoryboard.models import AuditLog

    items, alice, bob = world["items"], world["alice"], world["bob"]
    fact = items["FACT"]
    admin_list = reverse("admin:memoryboard_longtermmemory_changelist")
    entry = AuditLog.objects.filter(object_id=items["EPISODE"].pk).first()
    pages = [
        (None, reverse("login"), "get", None),
        (None, reverse("login"), "post", {"username": "nobody", "password": "wrong"}),
        ("alice", reverse("home"), "get", None),
        ("alice", reverse("my-memories"), "get", None),
        ("alice", reverse("my-memories") + "?q=记忆", "get", None),
        ("alice", reverse("my-memories-detail", args=[fact.pk]), "get", None),
        ("alice", reverse("my-memories-detail", args=[items["EPISODE"].pk]), "get", None),
        ("alice", reverse("my-memories-delete-all"), "get", None),
        ("alice", reverse("my-memories-export-page"), "get", None),
        ("alice", reverse("my-data-erase"), "get", None),
        ("alice", "/no/such/page/", "get", None),
        ("alice", reverse("playground"), "get", None),  # 403 for an end user
        ("superuser", reverse("home"), "get", None),
        ("superuser", reverse("people") + "?q=bob", "get", None),
        ("superuser", reverse("people") + "?q=nobody-at-all", "get", None),
        ("superuser", reverse("person", args=[alice.pk]), "get", None),
        ("superuser", reverse("person", args=[bob.pk]), "get", None),
        ("superuser", reverse("person-erase", args=[alice.pk]), "get", None),
        ("superuser", reverse("person", args=[alice.pk]) + "?state=archived&agent=chat", "get", None),
        ("superuser", reverse("person", args=["9999"]), "get", None),
        ("superuser", reverse("person-item-history", args=[alice.pk, items["staff"].pk]), "get", None),
        ("superuser", reverse("person-item-revert", args=[alice.pk, fact.pk]), "post", {"version": "1"}),
        ("superuser", reverse("person-item-archive", args=[alice.pk, fact.pk]), "post", {"note": "客户要求"}),
        ("superuser", reverse("admin:index"), "get", None),
        ("superuser", reverse("admin:app_list", args=["memoryboard"]), "get", None),
        ("superuser", admin_list, "get", None),
        ("superuser", admin_list + "?state=archived", "get", None),
        ("superuser", admin_list + "?user=bob", "get", None),
        ("superuser", admin_list + "?q=记忆", "get", None),
        ("superuser", reverse("admin:memoryboard_longtermmemory_change", args=[fact.pk]), "get", None),
        ("superuser", reverse("admin:memoryboard_longtermmemory_change", args=[items["staff"].pk]), "get", None),
        ("superuser", reverse("admin:memoryboard_longtermmemory_add"), "get", None),
        ("superuser", reverse("admin:memoryboard_longtermmemory_meaning") + "?q=记忆", "get", None),
        ("superuser", reverse("admin:memoryboard_longtermmemory_meaning") + BAD_INPUT_QUERY, "get", None),
        ("superuser", admin_list, "post", {"action": "archive_selected", "index": 0, "select_across": 0,
                                           "_selected_action": [fact.pk, items["PREFERENCE"].pk]}),
        ("superuser", reverse("admin:memoryboard_chatmessage_changelist"), "get", None),
        ("superuser", reverse("admin:memoryboard_chatmessage_changelist") + "?conversation_id=conv-1", "get",
         None),
        ("superuser", reverse("admin:memoryboard_chatmessage_changelist") + "?conversation_id="
         + world["tool_conversation"], "get", None),
        ("superuser", reverse("admin:memoryboard_chatmessage_change", args=[world["tool_row"].pk]), "get", None),
        ("superuser", reverse("admin:memoryboard_chatmessage_history", args=[world["tool_row"].pk]), "get", None),
        ("superuser", reverse("admin:memoryboard_longtermmemory_history", args=[fact.pk]), "get", None),
        ("superuser", reverse("admin:memoryboard_auditlog_change", args=[world["purged_entry"].pk]), "get", None),
        ("superuser", reverse("admin:memoryboard_auditlog_changelist") + "?action=purge", "get", None),
        ("superuser", reverse("admin:memoryboard_auditlog_changelist"), "get", None),
        ("superuser", reverse("admin:memoryboard_auditlog_changelist") + "?subject_user=alice", "get", None),
        ("superuser", reverse("admin:memoryboard_auditlog_change", args=[entry.pk]), "get", None),
        ("superuser", reverse("admin:memoryboard_retrievalreceipt_changelist"), "get", None),
        ("superuser", reverse("admin:memoryboard_retrievalreceipt_change", args=[items["receipt"].pk]), "get", None),
        ("developer", reverse("playground"), "get", None),
        ("developer", reverse("playground") + "?conversation=conv-1", "get", None),
        # Support staff use the playground too: conversations named in words (the list holds a UUID one),
        # and a loaded conversation's context window in words: its tools as a list, its memories without ids.
        ("superuser", reverse("playground"), "get", None),
        ("superuser", reverse("playground") + "?conversation=conv-1", "get", None),
        ("superuser", reverse("playground") + "?conversation=" + world["tool_conversation"], "get", None),
        ("developer", reverse("playground"), "post", {"messages_json": json.dumps([
            {"role": "system", "content": "系统提示"}, {"role": "user", "content": "你好"},
            {"role": "assistant", "content": "你好！"}, {"role": "user", "content": "再见"}])}),
    ]
    # Pages that other branches add (end users' edit and conversation pages): checked once they exist.
    for role, name, args in [("alice", "my-memories-edit", [fact.pk]), ("alice", "my-conversation", ["conv-1"]),
                             ("alice", "my-conversation", [world["tool_conversation"]])]:
        try:
            pages.append((role, reverse(name, args=args), "get", None))
        except NoReverseMatch:
            pass
    return pages


def _problems(html: str, data: set[str], codes: set[str], *, context: bool = False) -> list[str]:
    """English words and raw codes in the visible text (with the text they are in, if ``context``)."""
    problems = []
    for text in visible_texts(html):
        if text in data:
            continue
        words = _english(text, allowed=data | STRATEGY_NAMES)
        words += [f"code:{c}" for c in re.findall(r"[A-Za-z_]+", text) if c in codes and c not in words]
        problems += [f"{w} in {text[:50]!r}" if context else w for w in words]
    return problems


def test_every_page_is_chinese_and_shows_no_raw_code(request, world, settings):
    from django.conf import settings as django_settings

    from memoryboard.web.forms import agent_choices

    settings.LANGUAGE_CODE = "zh-hans"
    data = set(DATA_TEXTS) | {str(item.pk) for item in world["items"].values()} | {"hashing-ngram-384"}
    data |= {word for _agent, name in agent_choices() for word in WORD.findall(str(name))}  # agents.yaml names
    codes = _codes()
    clients: dict[str | None, Client] = {}
    found = {}
    try:
        for role, url, method, post in _pages(world):
            client = clients.get(role)
            if client is None:
                client = clients[role] = Client()
                if role:
                    client.force_login(request.getfixturevalue(role))
            response = client.post(url, post, follow=True) if method == "post" else client.get(url)
            if response.status_code == 405:  # a POST-only address: its page is checked where it is shown
                continue
            # A form page given bad input answers 400 with the form and its errors, translated too.
            allowed = (400,) if url.endswith(BAD_INPUT_QUERY) else (200, 403, 404)
            assert response.status_code in allowed, (url, response.status_code)
            html = response.content.decode()
            assert django_settings.LANGUAGE_CODE == "zh-hans"
            problems = _problems(html, data, codes, context=True)
            if problems:
                found[f"{role} {method.upper()} {url}"] = sorted(set(problems))
    finally:
        translation.deactivate()
    assert found == {}, "English or raw codes on Chinese pages:\n" + "\n".join(f"{k}: {v}" for k, v in found.items())


def test_the_page_check_sees_english_and_raw_codes():
    html = ('<html><body><h1>标题</h1><p>Nothing here</p><td>FACT</td><td>user_deleted</td>'
            '<pre>{"type": "FACT"}</pre><form class="lang"><option>English</option></form>'
            '<span title="Bulk action">批量</span><td>alice</td></body></html>')
    assert sorted(_problems(html, {"alice"}, _codes())) == sorted(
        ["Nothing", "here", "FACT", "code:user_deleted", "Bulk", "action"])
