"""What the agent believes about a person: the items each agent would load for them, by type, and for a
question, exactly the memory block the runtime would put in its system prompt (``runtime.retrieve_for_injection``
and ``runtime.build_system_prompt``, the code a turn runs), with its tokens. Reads only: no access is logged."""

from __future__ import annotations

from dataclasses import dataclass, field

from memoryboard.agent.runtime import agent_namespace, build_system_prompt, retrieve_for_injection
from memoryboard.agents_config import AgentConfig, get_agents_config
from memoryboard.ltm.search.results import ScoredMemory
from memoryboard.ltm.search.retrieval import format_memory_block, memory_switches, retrievable_items
from memoryboard.models import LongTermMemory, MemoryType
from memoryboard.strategies.tokens import CHARS_PER_TOKEN

MAX_LISTED = 500  # items listed per agent


@dataclass
class AgentBeliefs:
    """One agent's view of a person: the items it chooses from, by type (FACT first)."""

    agent: AgentConfig
    by_type: list[tuple[str, list[LongTermMemory]]] = field(default_factory=list)
    count: int = 0


@dataclass
class MemoryBlock:
    """The ``<long_term_memory>`` block a turn would inject for ``query`` (``""``: none), and its tokens."""

    agent: AgentConfig
    query: str
    block: str
    tokens: int
    items: list[ScoredMemory]
    switched_off: bool = False
    system_prompt: str = ""


def loading_agents() -> list[AgentConfig]:
    """The agents that load long-term memory into their prompt."""
    return [a for a in get_agents_config() if a.long_term_memory.enabled and a.long_term_memory.auto_load]


def beliefs_for(*, user_id: str) -> list[AgentBeliefs]:
    """For each agent that loads memories, the person's items it chooses from, grouped by type."""
    out = []
    order = list(MemoryType.values)
    for agent in loading_agents():
        items = list(retrievable_items(agent_namespace(agent, user_id)).order_by("-created_at")[:MAX_LISTED])
        groups: dict[str, list[LongTermMemory]] = {}
        for memory in items:
            groups.setdefault(memory.memory_type, []).append(memory)
        out.append(AgentBeliefs(agent=agent, count=len(items), by_type=sorted(
            groups.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))))
    return out


def block_tokens(block: str) -> int:
    """The block's share of the system prompt's tokens, as the context window counts it."""
    return round(len(block) / CHARS_PER_TOKEN)


def memory_block_for(*, agent: AgentConfig, user_id: str, query: str) -> MemoryBlock:
    """The memory block a turn of ``agent`` would inject for the message ``query`` of ``user_id``."""
    using, _saving = memory_switches(str(user_id))
    ranking = retrieve_for_injection(agent=agent, user_id=str(user_id), query=query, enabled=using)
    items = [] if ranking is None else ranking.results
    block = format_memory_block(items)
    return MemoryBlock(agent=agent, query=query, block=block, tokens=block_tokens(block), items=items,
                       switched_off=ranking is None, system_prompt=build_system_prompt(agent, items))
