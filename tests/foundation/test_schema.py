"""The migrations produce the shared tables of docs/schema.sql (checked on MariaDB/MySQL)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import connection

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schema.sql"


def parse_schema_sql() -> dict[str, dict]:
    tables: dict[str, dict] = {}
    for name, body in re.findall(r"CREATE TABLE `(\w+)` \((.*?)\n\)", SCHEMA.read_text(), re.S):
        columns, keys = {}, {}
        for line in body.strip().splitlines():
            line = line.strip().rstrip(",")
            if m := re.match(r"`(\w+)` (\w+(?:\(\d+\))?)( NOT NULL| NULL)?", line):
                columns[m.group(1)] = (m.group(2).upper(), m.group(3) != " NULL")
            elif m := re.match(r"KEY `(\w+)` \((.*)\)", line):
                keys[m.group(1)] = [c.strip(" `") for c in m.group(2).split(",")]
            elif m := re.match(r"PRIMARY KEY \(`(\w+)`\)", line):
                keys["PRIMARY"] = [m.group(1)]
        tables[name] = {"columns": columns, "keys": keys}
    return tables


def test_schema_sql_describes_both_shared_tables():
    tables = parse_schema_sql()
    assert set(tables) == {"ah_long_term_memory", "chat_message"}
    assert tables["ah_long_term_memory"]["columns"]["id"] == ("VARCHAR(255)", True)
    assert tables["chat_message"]["keys"]["idx_chat_conv_id"] == ["conversation_id", "id"]


def _normalize(column_type: str) -> str:
    column_type = column_type.upper()
    aliases = {"INT(11)": "INT", "BIGINT(20)": "BIGINT", "JSON": "LONGTEXT"}
    return aliases.get(column_type, column_type)


@pytest.mark.mysql
@pytest.mark.django_db
def test_migrations_produce_schema_sql_on_mysql():
    if connection.vendor != "mysql":
        pytest.skip("the DDL contract is MySQL/MariaDB; run the suite with DATABASE_URL=mysql://…")
    expected = parse_schema_sql()
    with connection.cursor() as cursor:
        for table, spec in expected.items():
            cursor.execute(
                "SELECT column_name, column_type, is_nullable FROM information_schema.columns "
                "WHERE table_schema = DATABASE() AND table_name = %s",
                [table],
            )
            actual = {name: (_normalize(ctype), nullable == "NO") for name, ctype, nullable in cursor.fetchall()}
            wanted = {name: (_normalize(ctype), not_null) for name, (ctype, not_null) in spec["columns"].items()}
            assert actual == wanted, table
            cursor.execute(
                "SELECT index_name, column_name FROM information_schema.statistics "
                "WHERE table_schema = DATABASE() AND table_name = %s ORDER BY index_name, seq_in_index",
                [table],
            )
            keys: dict[str, list[str]] = {}
            for index_name, column in cursor.fetchall():
                keys.setdefault(index_name, []).append(column)
            assert keys == spec["keys"], table


@pytest.mark.django_db
def test_shared_tables_have_the_contract_names_on_any_backend():
    tables = set(connection.introspection.table_names())
    assert {"ah_long_term_memory", "chat_message", "memoryboard_embedding", "memoryboard_audit_log"} <= tables
    columns = {c.name for c in connection.introspection.get_table_description(connection.cursor(), "ah_long_term_memory")}
    assert columns == {
        "id", "namespace", "key_name", "value_json", "created_at", "updated_at", "access_count",
        "last_accessed_at", "relevance_score", "archived", "archived_at", "archived_reason",
    }
