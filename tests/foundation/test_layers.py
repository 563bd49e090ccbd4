"""The layers of docs/architecture.md hold, and cannot rot: the import contracts (.importlinter) are kept and
fail on an import upward, imports inside functions stay few and explained, no private name crosses modules."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "memoryboard"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
# Imports inside functions: only where Django's app registry needs them (AppConfig.ready(), ...).
MAX_FUNCTION_IMPORTS = 20


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` with the repository's contracts, on the ``memoryboard`` package under ``root``."""
    return subprocess.run([str(LINT_IMPORTS), "--no-logo", "--no-cache", str(ROOT / ".importlinter")],
                          cwd=root, env={"PYTHONPATH": str(root), "PATH": ""}, capture_output=True, text=True,
                          timeout=300)


def modules() -> list[tuple[str, ast.Module, list[str], str]]:
    """``(dotted name, tree, source lines, package)`` of every module of the package (migrations included)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        source = path.read_text(encoding="utf-8")
        found.append((name, ast.parse(source), source.splitlines(), package))
    return found


def function_imports(tree: ast.Module) -> list[ast.stmt]:
    """The import statements inside a function body (of nested functions too, each once)."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.update((id(child), child) for child in ast.walk(node)
                         if isinstance(child, (ast.Import, ast.ImportFrom)))
    return sorted(found.values(), key=lambda child: child.lineno)


def test_the_contracts_are_kept():
    run = lint_imports(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


@pytest.mark.parametrize("module, upward", [
    ("ltm/store/items.py", "from memoryboard.ltm.search import retrieval"),  # store reaching up into search
    ("ltm/search/ranking.py", "from memoryboard.agent import runtime"),  # long-term memory into the agent
    ("models/memory.py", "from memoryboard.audit import audit_record"),  # the models into the audit log
    ("web/views.py", "from memoryboard.admin import common"),  # one surface into another
    ("strategies/tokens.py", "from django.conf import settings"),  # Django into the strategies
    ("ltm/write/tools.py", "from memoryboard.evaluation import retrieval"),  # evaluation into a request
])
def test_an_import_against_the_layers_fails_the_contracts(tmp_path, module, upward):
    shutil.copytree(PACKAGE, tmp_path / "memoryboard", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "memoryboard" / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n\ndef added():\n    {upward}  # noqa\n",
                      encoding="utf-8")
    run = lint_imports(tmp_path)
    assert run.returncode != 0, run.stdout
    assert "BROKEN" in run.stdout


def test_imports_inside_functions_are_few_and_each_says_why():
    found = []
    for name, tree, lines, _package in modules():
        for node in function_imports(tree):
            above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
            found.append((f"{name}:{node.lineno}", above.startswith("#")))
    assert len(found) <= MAX_FUNCTION_IMPORTS, [where for where, _why in found]
    assert [where for where, why in found if not why] == [], "an import inside a function needs a comment above it"


def test_no_private_name_is_imported_from_another_module():
    package_modules = {name for name, _tree, _lines, _package in modules()}
    crossing = []
    for name, tree, _lines, package in modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:  # relative: from the module's package, one level up per extra dot
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source not in package_modules or source == name:
                continue
            crossing += [f"{name}: from {source} import {alias.name}" for alias in node.names
                         if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert crossing == []
