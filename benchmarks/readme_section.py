"""Write one benchmark's section into benchmarks/README.md, leaving the other sections alone."""

from __future__ import annotations

import pathlib
import re

README = pathlib.Path(__file__).resolve().parent / "README.md"


def write_section(heading: str, section: str, readme: pathlib.Path = README) -> None:
    """Replace the ``heading`` section (up to the next ``## ``) with ``section``, or append it.

    Args:
        heading: The section's heading line, e.g. ``"## Playground"``.
        section: The full new section, heading included.
        readme: The README to edit.
    """
    text = readme.read_text(encoding="utf-8") if readme.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    readme.write_text(text, encoding="utf-8")
