from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from memoryboard.agents_config import AgentConfigError, parse_agents_config


def test_agents_yaml_of_the_repository_is_valid():
    from django.conf import settings

    from memoryboard.agents_config import load_agents_config

    config = load_agents_config(settings.MEMORYBOARD_AGENTS_FILE)
    chat = config.get("chat")
    assert chat.memory_tools is True
    assert chat.long_term_memory.enabled and chat.long_term_memory.namespace == "chat"
    assert chat.long_term_memory.max_items == 200
    assert chat.long_term_memory.load_max_items == 10, "inherited from defaults"


@pytest.mark.parametrize(
    "doc, key",
    [
        ({"agent": {"agents": {"chat": {"memory-tool": True}}}}, "agent.agents.chat.memory-tool"),
        ({"agent": {"defaults": {"long-term-memory": {"max-items": "many"}}}}, "agent.defaults.long-term-memory.max-items"),
        ({"agent": {"agents": {"chat": {"long-term-memory": {"enabled": "yes"}}}}}, "agent.agents.chat.long-term-memory.enabled"),
        ({"agent": {"agents": {"chat": {"long-term-memory": {"load-max-items": 0}}}}}, "agent.agents.chat.long-term-memory.load-max-items"),
        ({"agents": {}}, "agents"),
    ],
)
def test_bad_agent_config_names_the_key(doc, key):
    with pytest.raises(AgentConfigError) as err:
        parse_agents_config(doc)
    assert err.value.key == key


def test_manage_check_fails_with_an_id_and_hint_on_a_bad_agents_file(tmp_path, settings):
    bad = tmp_path / "agents.yaml"
    bad.write_text("agent:\n  agents:\n    chat: {long-term-memory: {max-items: -3}}\n")
    settings.MEMORYBOARD_AGENTS_FILE = str(bad)
    with pytest.raises(SystemCheckError) as err:
        call_command("check")
    assert "memoryboard.E001" in str(err.value)
    assert "max-items" in str(err.value)


def test_database_url_selects_the_backend(monkeypatch):
    import dj_database_url

    parsed = dj_database_url.parse("mysql://root@127.0.0.1:3306/test")
    assert parsed["ENGINE"] == "django.db.backends.mysql"


@pytest.mark.parametrize(("age", "expected"), [(None, 60), ("0", 0), ("300", 300)])
def test_sqlite_keeps_its_connections_like_mariadb(tmp_path, age, expected):
    """Closing the last connection to a WAL file checkpoints it (fsyncs): SQLite keeps its connections for
    MEMORYBOARD_CONN_MAX_AGE (default 60 s) as MariaDB does, instead of one per request."""
    env = {key: value for key, value in os.environ.items() if key != "MEMORYBOARD_CONN_MAX_AGE"}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    if age is not None:
        env["MEMORYBOARD_CONN_MAX_AGE"] = age
    code = "from memoryboard import settings; print(settings.DATABASES['default']['CONN_MAX_AGE'])"
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2], env=env,
                         check=True, capture_output=True, text=True).stdout
    assert int(out.strip()) == expected
