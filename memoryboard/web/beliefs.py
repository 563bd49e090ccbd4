"""What the agent believes about you: for the end user (My memories, their own items only) and for support
(the user page). Lists the items each agent would load, by type; for a question typed in, the exact memory
block the agent would get (``agent.beliefs``, the runtime's own code) with its tokens. Reads only, a GET."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from memoryboard.agent.beliefs import beliefs_for, loading_agents, memory_block_for
from memoryboard.agents_config import agent_labels
from memoryboard.llm.errors import LLMError
from memoryboard.roles import can_read_all_memories, platform_user_id
from memoryboard.users import person as lookup_person
from memoryboard.web.people import person_known

MAX_QUESTION_CHARS = 2000


def _page(request, *, user_id: str, own: bool, person=None):
    agents = loading_agents()
    labels = agent_labels()
    query = (request.GET.get("q") or "").strip()[:MAX_QUESTION_CHARS]
    agent_id = request.GET.get("agent") or (agents[0].agent_id if agents else "")
    agent = next((a for a in agents if a.agent_id == agent_id), None)
    status, error, block = 200, "", None
    if query and agent is None:
        status, error = 400, _("Choose an agent that loads memories.")
    elif query:
        try:
            block = memory_block_for(agent=agent, user_id=user_id, query=query)
        except LLMError as exc:
            status, error = 503, _("The embedding model is unavailable (%(reason)s).") % {"reason": exc.reason}
    return render(request, "web/beliefs.html", {
        "own": own, "person": person, "user_id": user_id, "query": query, "agent_id": agent_id, "error": error,
        "agents": [(a.agent_id, labels.get(a.agent_id, a.agent_id)) for a in agents],
        "beliefs": [(labels.get(b.agent.agent_id, b.agent.agent_id), b) for b in beliefs_for(user_id=user_id)],
        "memory_block": block,
    }, status=status)


@login_required
@require_GET
def my_beliefs(request):
    return _page(request, user_id=platform_user_id(request.user), own=True)


@login_required
@require_GET
def person_beliefs(request, user_id: str):
    if not can_read_all_memories(request.user):
        raise PermissionDenied
    person = lookup_person(user_id)
    if not person_known(user_id, person):
        raise Http404(_("No such user."))
    return _page(request, user_id=user_id, own=False, person=person)
