"""Output shared by the dry-run-by-default maintenance commands."""

from __future__ import annotations

from collections.abc import Sequence

LISTED = 50


def write_listing(stdout, lines: Sequence[str], *, applied: bool, hint: str) -> None:
    """Print up to 50 lines of what changed (or would), and the dry-run hint when nothing was written."""
    for line in lines[:LISTED]:
        stdout.write(f"  {line}")
    if len(lines) > LISTED:
        stdout.write(f"  ... and {len(lines) - LISTED} more")
    if lines and not applied:
        stdout.write(hint)
