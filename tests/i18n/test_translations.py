"""The UI speaks Simplified Chinese by default and English when the user picks it; the catalog is complete.

The suite's conftest runs every test in English; these tests put the project's default (``zh-hans``) back.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.urls import reverse
from django.utils import translation

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PO = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
MESSAGES = [{"role": "system", "content": "You are helpful."}] + [
    {"role": "user" if i % 2 else "assistant", "content": f"turn {i}: " + "words " * (i % 9 + 3)} for i in range(1, 16)
]


@pytest.fixture(autouse=True)
def _project_default_language(settings):
    """The project's own default (the suite's conftest switches every test to English)."""
    settings.LANGUAGE_CODE = "zh-hans"
    yield
    translation.deactivate()  # LocaleMiddleware leaves the last request's language active in this thread


# --- the catalog -------------------------------------------------------------------------------------------


def _unquote(text: str) -> str:
    return json.loads(text)  # a .po string literal is a JSON string for the escapes gettext writes


def parse_po(path: Path) -> list[dict]:
    """Entries of a .po file: msgctxt, msgid, msgid_plural, msgstr (list), flags; obsolete entries skipped."""
    entries: list[dict] = []
    entry: dict | None = None
    key: tuple | None = None
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        line = line.strip()
        if not line or line.startswith("#~"):
            if entry is not None and "msgid" in entry:
                entries.append(entry)
            entry, key = None, None
            continue
        if entry is None:
            entry = {"flags": set(), "msgstr": {}}
        if line.startswith("#,"):
            entry["flags"].update(flag.strip() for flag in line[2:].split(","))
        elif line.startswith("#"):
            continue
        elif match := re.match(r"^(msgctxt|msgid_plural|msgid|msgstr)(?:\[(\d+)\])?\s+(\".*\")$", line):
            name, index, value = match.groups()
            key = ("msgstr", int(index or 0)) if name == "msgstr" else (name, None)
            if name == "msgstr":
                entry["msgstr"][key[1]] = _unquote(value)
            else:
                entry[name] = _unquote(value)
        else:
            assert line.startswith('"') and key is not None, f"unexpected line in {path.name}: {line!r}"
            if key[0] == "msgstr":
                entry["msgstr"][key[1]] += _unquote(line)
            else:
                entry[key[0]] += _unquote(line)
    return [{**e, "msgstr": [e["msgstr"][i] for i in sorted(e["msgstr"])]} for e in entries]


def _messages() -> list[dict]:
    return [e for e in parse_po(PO) if e["msgid"]]


def test_catalog_files_exist_and_are_tracked():
    assert PO.is_file() and MO.is_file()
    assert django_settings.LOCALE_PATHS and Path(django_settings.LOCALE_PATHS[0]) == ROOT / "locale"
    if shutil.which("git") and (ROOT / ".git").exists():
        ignored = subprocess.run(["git", "check-ignore", "-q", str(MO)], cwd=ROOT, check=False)
        assert ignored.returncode == 1, "the compiled .mo must be committed (fresh machines have no msgfmt)"


def test_every_entry_is_translated_and_none_is_fuzzy():
    header = parse_po(PO)[0]
    assert header["msgid"] == "" and "nplurals=1; plural=0;" in header["msgstr"][0]
    assert "fuzzy" not in header["flags"]
    entries = _messages()
    assert len(entries) > 300
    untranslated = [e["msgid"] for e in entries if not e["msgstr"] or not all(s.strip() for s in e["msgstr"])]
    assert untranslated == []
    assert [e["msgid"] for e in entries if "fuzzy" in e["flags"]] == []
    assert [e["msgid"] for e in entries if e.get("msgid_plural") is not None and len(e["msgstr"]) != 1] == []


def _placeholders(text: str) -> list[str]:
    return sorted(re.findall(r"%\(\w+\)[sd]|\{\w*\}", text))


def test_translations_keep_placeholders():
    for e in _messages():
        source = e["msgid"] if e.get("msgid_plural") is None else e["msgid_plural"]
        for translated in e["msgstr"]:
            if e.get("msgid_plural") is not None:
                # One Chinese form serves both: it may name the count the singular leaves out ("once").
                assert set(_placeholders(translated)) <= set(_placeholders(source)) | set(_placeholders(e["msgid"]))
                assert set(_placeholders(source)) - {"%(n)s", "%(counter)s", "%(count)d", "%(days)s"} <= set(
                    _placeholders(translated)
                ), e["msgid"]
            else:
                assert _placeholders(translated) == _placeholders(source), e["msgid"]


def test_compiled_catalog_matches_the_po():
    """The .mo is not stale: every .po entry comes back translated through Django's gettext."""
    entries = _messages()
    with translation.override("zh-hans"):
        for e in entries:
            context, plural = e.get("msgctxt"), e.get("msgid_plural")
            if plural is not None:
                got = (translation.npgettext(context, e["msgid"], plural, 2) if context
                       else translation.ngettext(e["msgid"], plural, 2))
            else:
                got = translation.pgettext(context, e["msgid"]) if context else translation.gettext(e["msgid"])
            assert got == e["msgstr"][0], f"{e['msgid']!r}: compiled {got!r}, .po {e['msgstr'][0]!r}"
    with translation.override("en"):
        assert translation.gettext("Recently deleted") == "Recently deleted"


def test_strategy_descriptions_from_the_framework_free_registry_are_translated():
    from memoryboard.strategies import registry

    texts = set()
    for infos in (registry._CONTEXT, registry._MEMORY):
        for info in infos.values():
            texts.add(info.description)
            texts.update(param.description for param in info.params)
    from memoryboard.strategies.reasons import REASONS

    texts.update(REASONS.values())
    with translation.override("zh-hans"):
        missing = sorted(text for text in texts if not CJK.search(translation.gettext(text)))
    assert missing == [], "add them to memoryboard/strategy_texts.py, then makemessages and translate"


@pytest.mark.skipif(not shutil.which("xgettext") or not shutil.which("msgmerge"), reason="needs GNU gettext")
def test_po_is_up_to_date_with_the_sources(tmp_path):
    """makemessages on a copy of the sources finds no message the committed .po lacks."""
    for name in ("memoryboard", "templates", "locale"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("manage.py", "agents.yaml"):
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, tmp_path / name)
    subprocess.run(
        [sys.executable, "manage.py", "makemessages", "-l", "zh_Hans", "--no-obsolete", "--ignore=.venv"],
        cwd=tmp_path, check=True, capture_output=True, timeout=300,
    )
    fresh = {(e.get("msgctxt"), e["msgid"]) for e in parse_po(tmp_path / PO.relative_to(ROOT)) if e["msgid"]}
    committed = {(e.get("msgctxt"), e["msgid"]) for e in _messages()}
    assert sorted(fresh - committed) == [], "run makemessages, translate the new entries and compilemessages"


# --- the pages ---------------------------------------------------------------------------------------------


def _html(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def _chinese_outside_language_menu(html: str) -> list[str]:
    """Chinese UI text on a page: not the language menu (it names each language in its own script) nor data."""
    from memoryboard.web.forms import agent_choices

    html = re.sub(r'<form class="lang".*?</form>', "", html, flags=re.S)
    for _agent, name in agent_choices():  # agents.yaml names agents in both languages
        html = html.replace(str(name), "")
    return CJK.findall(html)


def _pick_english(client: Client, next_url: str = "/") -> None:
    """Submit the language switch of base.html, CSRF token included, as a browser does."""
    pattern = re.compile(r'<form class="lang" action="([^"]+)" method="post">(.*?)</form>', re.S)
    form = pattern.search(_html(client.get(next_url)))
    if form is None:  # the admin has its own templates: switch on a dashboard page
        form = pattern.search(_html(client.get(reverse("login"))))
    assert form and form.group(1) == reverse("set_language")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.group(2)).group(1)
    assert 'name="language"' in form.group(2) and 'value="en"' in form.group(2)
    response = client.post(form.group(1), {"csrfmiddlewaretoken": token, "language": "en", "next": next_url})
    assert response.status_code == 302 and response["Location"] == next_url
    assert client.cookies[django_settings.LANGUAGE_COOKIE_NAME].value == "en"


@pytest.fixture
def csrf_client():
    return Client(enforce_csrf_checks=True)


PAGES = {
    # name: (url, user fixture or None, Chinese texts, English texts)
    "login": ("login", None, ["登录", "用户名", "密码"], ["Log in", "Username", "Password"]),
    "home": (
        "home", "superuser",
        ["查看和管理 LLM 智能体记住的内容。", "管理后台", "试验场", "我的记忆", "退出登录", "正在使用离线模型"],
        ["See and manage what your LLM agents remember.", "Admin", "Playground", "My memories", "Log out",
         "Offline models in use"],
    ),
    "playground": (
        "playground", "developer",
        ["策略试验场", "已存储的对话", "运行策略", "消息（JSON）"],
        ["Strategy playground", "Stored conversation", "Run strategies", "Messages (JSON)"],
    ),
    "my-memories": (
        "my-memories", "alice",
        ["我的记忆", "导出我的全部数据（JSON）", "最近删除", "偏好", "记忆开关", "使用我的记忆", "暂停", "删除"],
        ["My memories", "Export all my data (JSON)", "Recently deleted", "Preference", "Memory switch", "Use my memories",
         "Pause", "Delete"],
    ),
    "admin-changelist": (
        "admin:memoryboard_longtermmemory_changelist", "support_user",
        ["长期记忆", "已归档条目", "用户删除的条目", "偏好", "生效中", "智能体", "归档所选条目"],
        ["long-term memory", "Archived items", "Deleted by users", "Preference", "Current", "agent",
         "Archive selected items"],
    ),
}


def _setup(request, make_memory, user_fixture: str | None):
    client = Client(enforce_csrf_checks=True)
    if user_fixture:
        user = request.getfixturevalue(user_fixture)
        make_memory(request.getfixturevalue("alice"), "likes green tea", memory_type="PREFERENCE")
        client.force_login(user)
    return client


@pytest.mark.parametrize("page", list(PAGES))
def test_pages_are_chinese_by_default(request, make_memory, page):
    url_name, user_fixture, chinese, english = PAGES[page]
    html = _html(_setup(request, make_memory, user_fixture).get(reverse(url_name)))
    for text in chinese:
        assert text in html, f"{page}: {text!r} missing"
    if page != "admin-changelist":  # the admin's own templates set lang from the language code too
        assert '<html lang="zh-hans">' in html
    assert "Recently deleted" not in html and "Strategy playground" not in html and "Log out" not in html


@pytest.mark.parametrize("page", list(PAGES))
def test_pages_are_english_once_the_user_picks_english(request, make_memory, page):
    url_name, user_fixture, chinese, english = PAGES[page]
    client = _setup(request, make_memory, user_fixture)
    _pick_english(client, next_url=reverse(url_name))
    html = _html(client.get(reverse(url_name)))
    for text in english:
        assert text in html, f"{page}: {text!r} missing"
    for text in chinese:
        assert text not in html, f"{page}: {text!r} still shown in English"
    assert _chinese_outside_language_menu(html) == []
    assert 'lang="en"' in html


def test_the_language_menu_marks_the_current_language(client):
    html = _html(client.get(reverse("login")))
    assert '<option value="zh-hans" selected>简体中文</option>' in html
    html = _html(client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="en"))
    assert '<option value="en" selected>English</option>' in html and "Username" in html


def test_browser_language_is_honoured_until_the_user_picks_one(csrf_client):
    assert "Username" in _html(csrf_client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="en-US,en;q=0.9"))
    assert "用户名" in _html(csrf_client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9"))
    assert "用户名" in _html(csrf_client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="fr"))  # the default
    _pick_english(csrf_client, next_url=reverse("login"))
    assert "Username" in _html(csrf_client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="zh-CN"))


def test_playground_results_are_translated(request, login, developer):
    """Strategy descriptions, parameter labels and help texts, the result numbers' labels."""
    client = login(developer)
    html = _html(client.post(reverse("playground"), {"messages_json": json.dumps(MESSAGES)}, follow=True))
    for text in ("保留开头 N 条和末尾 M 条消息，丢弃中间部分。", "保留开头", 'title="从开头保留的消息数。"',
                 "Token 数", "摘要调用", "个 token（估算）", "粘贴的输入：16 条消息。", "保留 Token 预算内能容纳的最新消息。"):
        assert text in html, text
    client.cookies[django_settings.LANGUAGE_COOKIE_NAME] = "en"
    html = _html(client.post(reverse("playground"), {"messages_json": json.dumps(MESSAGES)}, follow=True))
    for text in ("Keep the first N and the last M messages, drop the middle.", "keep first",
                 'title="Messages kept from the start."', "Pasted input: 16 messages."):
        assert text in html, text
    assert _chinese_outside_language_menu(html) == []


def test_flash_messages_and_form_errors_follow_the_language(login, alice, make_memory):
    memory = make_memory(alice, "likes green tea")
    client = login(alice)
    html = _html(client.post(reverse("my-memories-delete", args=[memory.pk]), follow=True))
    assert "你删除了“likes green tea”。" in html  # the undo bar, where the delete happened
    client.cookies[django_settings.LANGUAGE_COOKIE_NAME] = "en"
    html = _html(client.post(reverse("my-memories-restore", args=[memory.pk]), follow=True))
    assert "Memory restored." in html


def test_the_admin_memory_page_is_chinese(login, support_user, alice, make_memory):
    memory = make_memory(alice, "likes green tea", memory_type="PREFERENCE")
    html = _html(login(support_user).get(reverse("admin:memoryboard_longtermmemory_change", args=[memory.pk])))
    for text in ("访问日志", "尚未被任何智能体读取。", "状态历史", "审计历史"):
        assert text in html, text


def test_my_memory_pages_name_types_sources_and_states(login, alice, make_memory):
    """Stored codes (PREFERENCE, agent_tool, paused) are shown by their translated names."""
    memory = make_memory(alice, "likes green tea", memory_type="PREFERENCE", source="agent_tool")
    gone = make_memory(alice, "old fact", memory_type="FACT", archived_reason="user_deleted")
    client = login(alice)
    client.post(reverse("my-memories-pause", args=[memory.pk]))
    html = _html(client.get(reverse("my-memories-detail", args=[memory.pk])))
    assert '<span class="badge">偏好</span>' in html and "由通用助手在对话中保存" in html and "state-label\">已暂停</strong>" in html
    assert "agent_tool" not in html
    listing = _html(client.get(reverse("my-memories")))
    assert f'data-id="{gone.pk}"' in listing and '<span class="badge">事实</span>' in listing
    confirm = _html(client.get(reverse("my-memories-delete-all")))
    assert '<span class="badge">偏好</span>' in confirm


def test_admin_index_fills_the_gaps_of_installed_apps_catalogs(login, superuser):
    html = _html(login(superuser).get(reverse("admin:index")))
    for text in ("模型名称", "修改或查看列表链接", "长期记忆", "审计日志"):
        assert text in html, text
    for text in ("Model name", "Add link"):
        assert text not in html, text
