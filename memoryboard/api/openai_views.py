"""The OpenAI-compatible endpoint: ``POST /v1/chat/completions`` and ``GET /v1/models``.

``model`` is an agent of agents.yaml; the user comes from the API token (``Authorization: Bearer``),
never from the body (``user`` is ignored). The conversation is named by the
``X-Memoryboard-Conversation-Id`` header or ``metadata.conversation_id``; without one a new
conversation starts, and every answer names it in the same header.
"""

from __future__ import annotations

from django.http import StreamingHttpResponse
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryboard.agent.completions import chat_completion
from memoryboard.agent.runtime import MEMORY_TOOL_NAMES
from memoryboard.agent.service import AgentLLMUnavailable, AgentNotFound, AgentStoreUnavailable, ConversationNotYours
from memoryboard.agents_config import get_agents_config
from memoryboard.api.exceptions import ApplicationError, turn_llm_failure, with_retry_after
from memoryboard.api.openai_format import (
    CONVERSATION_HEADER,
    completion_body,
    completion_chunks,
    openai_error,
    parse_completion_request,
)
from memoryboard.api.renderers import FAST_JSON_RENDERERS
from memoryboard.shared.authentication import BearerTokenAuthentication, TokenAuthentication
from memoryboard.shared.errors import error_body


def _turn_failed(code: str, message: str, conversation_id: str, status_code: int) -> Response:
    """A turn that failed after the client's messages were stored: an OpenAI-shaped error naming the conversation."""
    response = Response(openai_error({**error_body(code, message), "conversation_id": conversation_id}, status_code),
                        status=status_code)
    response[CONVERSATION_HEADER] = conversation_id
    # The message is stored: the openai client must not repeat the request on its own.
    response["x-should-retry"] = "false"
    return with_retry_after(response)


class OpenAICompatibleView(APIView):
    """Token authentication only (Bearer, or the API's ``Token``); errors in OpenAI's shape."""

    authentication_classes = [BearerTokenAuthentication, TokenAuthentication]
    permission_classes = [IsAuthenticated]
    renderer_classes = FAST_JSON_RENDERERS

    def handle_exception(self, exc):
        response = super().handle_exception(exc)
        if isinstance(getattr(response, "data", None), dict) and "error" in response.data:
            response.data = openai_error(response.data, response.status_code)
        return response


class ModelsView(OpenAICompatibleView):
    """The agents of agents.yaml as OpenAI models."""

    @extend_schema(exclude=True)
    def get(self, request):
        agents = sorted(get_agents_config().agents)
        return Response({"object": "list", "data": [
            {"id": agent_id, "object": "model", "created": 0, "owned_by": "memoryboard"} for agent_id in agents
        ]})


class ChatCompletionsView(OpenAICompatibleView):
    """One Chat Completions request, run as a turn of the agent for the token's user."""

    @extend_schema(exclude=True)
    def post(self, request):
        body = parse_completion_request(request.data, header_conversation=request.headers.get(CONVERSATION_HEADER))
        agent = get_agents_config().get(body.model)
        if agent is None:
            raise ApplicationError(_("Unknown model %(model)s: use an agent id of GET /v1/models.") % {"model": body.model},
                                   field="model", status_code=status.HTTP_404_NOT_FOUND, code="model_not_found")
        if agent.memory_tools and agent.long_term_memory.enabled:
            for index, tool in enumerate(body.tools):
                if tool["function"]["name"] in MEMORY_TOOL_NAMES:
                    raise ApplicationError(_("This name is reserved for the agent's memory tools."),
                                           field=f"tools[{index}].function.name")
        try:
            result = chat_completion(user=request.user, agent_id=agent.agent_id, conversation_id=body.conversation_id,
                                     messages=body.messages, tools=body.tools)
        except AgentNotFound as exc:  # agents.yaml reloaded in between
            raise ApplicationError(str(exc), field="model", status_code=404, code="model_not_found") from exc
        except ConversationNotYours as exc:
            raise ApplicationError(_("No such conversation for this agent."), field="metadata.conversation_id",
                                   status_code=status.HTTP_404_NOT_FOUND, code="not_found") from exc
        except AgentLLMUnavailable as exc:
            code, message = turn_llm_failure(exc.reason)
            return _turn_failed(code, message, exc.conversation_id, status.HTTP_502_BAD_GATEWAY)
        except AgentStoreUnavailable as exc:
            message = _("The database became unavailable during the reply. Your message was saved; "
                        "the reply was not. Try again.")
            return _turn_failed("unavailable", message, exc.conversation_id, status.HTTP_503_SERVICE_UNAVAILABLE)
        if body.stream:
            response = StreamingHttpResponse(
                completion_chunks(result, messages=body.messages, include_usage=body.include_usage),
                content_type="text/event-stream; charset=utf-8",
            )
            response["Cache-Control"] = "no-cache"
            response["X-Accel-Buffering"] = "no"
        else:
            response = Response(completion_body(result, messages=body.messages))
        response[CONVERSATION_HEADER] = result.conversation_id
        return response
