"""The strategy package must import nothing from Django nor from other memoryboard packages."""

from __future__ import annotations

import ast
import pathlib

import memoryboard.strategies

PACKAGE = pathlib.Path(memoryboard.strategies.__file__).parent


def imported_modules(path: pathlib.Path) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or "", node.level))
    return found


def test_no_module_imports_django_or_other_memoryboard_packages():
    files = sorted(PACKAGE.glob("*.py"))
    assert len(files) >= 8
    offenders = []
    for path in files:
        for module, level in imported_modules(path):
            top = module.split(".")[0]
            if top in {"django", "rest_framework", "openai", "langchain_core", "numpy"}:
                offenders.append(f"{path.name}: {module}")
            if level == 0 and top == "memoryboard" and not module.startswith("memoryboard.strategies"):
                offenders.append(f"{path.name}: {module}")
            if level > 1:
                offenders.append(f"{path.name}: relative import outside the package ({'.' * level}{module})")
    assert offenders == []


def test_docstring_examples_run():
    import doctest
    import importlib

    failures = attempted = 0
    for path in sorted(PACKAGE.glob("*.py")):
        name = "memoryboard.strategies" if path.stem == "__init__" else f"memoryboard.strategies.{path.stem}"
        module = importlib.import_module(name)
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        failures += result.failed
        attempted += result.attempted
    assert failures == 0
    assert attempted >= 20
