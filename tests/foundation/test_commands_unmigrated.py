"""Every command that reads or writes memoryboard's tables says to run ``migrate`` on a database without
them, instead of ending in a traceback (a real, empty SQLite file, in one subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EVAL_SET = ROOT / "tests" / "data" / "bilingual_eval.json"

COMMANDS = [
    ["ann_rebuild", "--no-progress"],
    ["import_memories", str(EVAL_SET), "--user", "alice"],
    ["mcp", "--token", "mb_anything"],
    ["memory_cleanup"],
    ["memory_decay"],
    ["memory_eval", str(EVAL_SET), "--no-progress"],
    ["purge_deleted"],
    ["reembed", "--no-progress"],
    ["respell_namespaces"],
    ["seed_demo"],
]

SCRIPT = """
import json, sys
import django
django.setup()
from django.core.management import CommandError, call_command
answers = {}
for argv in json.loads(sys.argv[1]):
    try:
        call_command(*argv)
        answers[argv[0]] = "ran"
    except CommandError as error:
        answers[argv[0]] = str(error)
print(json.dumps(answers))
"""


def test_each_data_command_on_a_database_without_migrations_says_to_migrate(tmp_path):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'fresh.sqlite3'}",
           "DJANGO_SETTINGS_MODULE": "memoryboard.settings", "MEMORYBOARD_EMBEDDER": "hashing"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(COMMANDS)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    answers = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(answers) == {argv[0] for argv in COMMANDS}
    for command, answer in answers.items():
        assert "run `python manage.py migrate` first" in answer, (command, answer)
        assert "unapplied migration(s)" in answer, (command, answer)


def test_manage_py_prints_the_advice_and_exits_with_an_error(tmp_path):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'fresh.sqlite3'}"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run([sys.executable, str(ROOT / "manage.py"), "reembed", "--no-progress"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "run `python manage.py migrate` first" in done.stderr
    assert "Traceback" not in done.stderr
