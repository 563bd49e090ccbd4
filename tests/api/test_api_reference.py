"""The API reference lists every endpoint, each under its area's tag with a summary, including those that
are not DRF views (/v1/chat/completions, /v1/models, /mcp/); /api/schema/ is readable in a browser."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.django_db


def _schema(client) -> dict:
    return client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()


def test_every_endpoint_has_a_tag_of_its_area_and_a_summary(client):
    schema = _schema(client)
    operations = {(method, path): op for path, item in schema["paths"].items() for method, op in item.items()}
    for path in ("/v1/chat/completions", "/v1/models", "/mcp/"):
        assert any(p == path for _m, p in operations), path
    assert operations[("post", "/v1/chat/completions")]["tags"] == ["OpenAI-compatible"]
    assert operations[("post", "/mcp/")]["tags"] == ["MCP"]
    assert operations[("get", "/api/v1/memories/")]["tags"] == ["Memories"]
    missing = [key for key, op in operations.items() if not op.get("summary") or op.get("tags") in (None, ["api"])]
    assert missing == []
    declared = {tag["name"] for tag in schema["tags"]}
    assert {op["tags"][0] for op in operations.values()} <= declared and len(declared) >= 8


def test_the_schema_is_a_page_in_a_browser_and_a_document_for_clients(client):
    page = client.get("/api/schema/", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
    assert "Content-Disposition" not in page
    html = page.content.decode()
    assert 'id="schema-document"' in html and "/v1/chat/completions" in html and 'href="/api/docs/"' in html
    document = client.get("/api/schema/?format=json", HTTP_ACCEPT="text/html")  # the page's download link
    assert json.loads(document.content)["info"]["title"] == "memoryboard API"
    assert client.get("/api/schema/").status_code == 200  # clients without an Accept header: the document
