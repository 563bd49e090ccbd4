"""A bounded schemathesis run over every operation of the OpenAPI schema, as each role: no 5xx, and every
response matches the schema (status code, content type, body) (issue 12)."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

pytestmark = pytest.mark.django_db

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXAMPLES_PER_OPERATION = 4  # positive and negative cases; bounded so the suite stays fast (~20 s for 5 roles)


@pytest.fixture
def api_schema(settings):
    from django.core.signals import request_finished, request_started
    from django.core.wsgi import get_wsgi_application
    from django.db import close_old_connections

    settings.ALLOWED_HOSTS = ["*"]
    # As Django's test client does: the test's transaction must survive the requests.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application())
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def role_tokens(superuser, support_user, developer, alice, make_memory, make_conversation):
    from rest_framework.authtoken.models import Token

    make_memory(alice, "I am a Java developer")
    make_conversation(alice, 6)
    return {name: Token.objects.create(user=user).key for name, user in (
        ("superuser", superuser), ("support", support_user), ("developer", developer), ("end user", alice))}


@pytest.mark.parametrize("role", ["anonymous", "end user", "developer", "support", "superuser"])
def test_every_operation_answers_within_its_schema(api_schema, role_tokens, role):
    headers = {} if role == "anonymous" else {"Authorization": f"Token {role_tokens[role]}"}
    failures = []
    for result in api_schema.get_all_operations():
        operation = result.ok()

        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, derandomize=True, database=None,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
        @given(case=st.one_of(operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
                              operation.as_strategy(generation_mode=GenerationMode.NEGATIVE)))
        def run(case):
            case.call_and_validate(headers=headers, checks=CHECKS)

        try:
            run()
        except Exception as exc:  # noqa: BLE001 - collected, reported all at once
            failures.append(f"{operation.method.upper()} {operation.path}: {exc}")
    assert not failures, "\n\n".join(failures)
