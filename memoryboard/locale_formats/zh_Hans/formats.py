"""Simplified Chinese numbers as mainland software and finance print them: a comma every three digits
(Django's own zh_Hans format has no separator, so 1234567 ran into the next column of a table)."""

THOUSAND_SEPARATOR = ","
NUMBER_GROUPING = 3
DECIMAL_SEPARATOR = "."
