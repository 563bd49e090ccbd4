"""Evaluation of long-term memory on the shipped sets (``tests/data/``): ``manage.py memory_eval`` and the
benchmarks import it; nothing that serves a request does (an import-linter contract checks it)."""
