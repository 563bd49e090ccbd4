"""Shared by the benchmark scripts: replace one ``## Heading`` section of benchmarks/README.md."""

from __future__ import annotations

import pathlib
import re


def write_readme_section(readme: pathlib.Path, heading: str, section: str) -> None:
    """Replace the section that starts with ``heading`` (up to the next ``## ``), or append it."""
    text = readme.read_text(encoding="utf-8") if readme.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    readme.write_text(text, encoding="utf-8")
