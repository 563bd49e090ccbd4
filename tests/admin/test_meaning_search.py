"""The admin's search by meaning: the one search over what the staff member may see, one user's items
or everyone's, each result with its score parts; left-out candidates counted; bad input is a 400."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from memoryboard.ltm.search.retrieval import memory_rank
from memoryboard.ltm.store.selectors import memory_queryset_for
from memoryboard.models import PauseRule
from tests.admin.conftest import changelist_url

pytestmark = pytest.mark.django_db

URL = reverse("admin:memoryboard_longtermmemory_meaning")


def _result_ids(html: str) -> list[str]:
    table = html[html.index('id="mb-meaning-results"'):]
    return re.findall(r'<tr data-id="([^"]+)">', table[:table.index("</table>")])


def test_results_best_first_with_their_score_parts_across_users(login, support_user, alice, bob, make_memory,
                                                                 use_embedder):
    java = make_memory(alice, "用户是Java后端开发者，主要使用Spring Boot")
    make_memory(alice, "User likes hiking in the mountains", memory_type="PREFERENCE")
    bobs = make_memory(bob, "Bob is a backend engineer who writes Java")
    make_memory(bob, "Bob keeps bees")
    client = login(support_user)
    assert URL in client.get(changelist_url()).content.decode()  # linked from the list

    response = client.get(URL, {"q": "Java backend developer"})
    assert response.status_code == 200
    html = response.content.decode()
    expected = memory_rank(queryset=memory_queryset_for(support_user), query="Java backend developer", k=10)
    assert _result_ids(html) == [hit.memory.pk for hit in expected.results]
    assert set(_result_ids(html)) >= {java.pk, bobs.pk}
    first = expected.results[0]
    row = html[html.index(f'<tr data-id="{first.memory.pk}">'):]
    row = row[:row.index("</tr>")]
    assert f"{first.parts.cosine:.3f}" in row and f"<strong>{first.parts.final:.3f}</strong>" in row
    assert "candidates considered" in html and "exact search" in html
    assert "Left out:" in html and "below the minimum relevance" in html  # the bees

    only_alice = client.get(URL, {"q": "Java backend developer", "user": "alice"}).content.decode()
    assert _result_ids(only_alice) == [java.pk]


def test_paused_items_are_counted_not_shown(login, support_user, alice, make_memory):
    kept = make_memory(alice, "User drinks green tea every morning")
    paused = make_memory(alice, "User drinks green tea with milk", memory_type="PREFERENCE")
    PauseRule.objects.create(user_id=str(alice.pk), agent_namespace="", memory_type="PREFERENCE")
    html = login(support_user).get(URL, {"q": "green tea"}).content.decode()
    assert _result_ids(html) == [kept.pk] and paused.pk not in html
    assert re.search(r"1 paused", html)


def test_content_is_escaped(login, support_user, alice, make_memory):
    make_memory(alice, "User <script>alert(1)</script> likes tea")
    html = login(support_user).get(URL, {"q": "<b>tea</b>"}).content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert "<b>tea</b>" not in html


@pytest.mark.parametrize("params, field", [({"q": ""}, "q"), ({"q": "tea", "k": "0"}, "k"), ({"q": "tea", "k": "abc"}, "k"),
                                           ({"q": "x" * 2001}, "q")])
def test_bad_input_is_a_400_naming_the_field(login, support_user, params, field):
    response = login(support_user).get(URL, params)
    assert response.status_code == 400
    assert field in response.context["form"].errors


def test_only_staff_who_may_view_items(client, login, alice, developer, superuser):
    assert login(alice).get(URL, {"q": "tea"}).status_code == 403  # not staff: the site's 403 page
    assert login(developer).get(URL, {"q": "tea"}).status_code == 200  # developers view, read-only
    assert login(superuser).get(URL).status_code == 200


def test_a_failing_embedding_model_is_said_not_raised(login, support_user, alice, make_memory, openai_settings):
    make_memory(alice, "User drinks green tea every morning")
    openai_settings.set_fault("http500")
    response = login(support_user).get(URL, {"q": "green tea"})
    assert response.status_code == 502
    assert "The embedding model failed" in response.content.decode()
    assert 'id="mb-meaning-results"' not in response.content.decode()
