"""Load the demo data: users of each role, two agents' conversations, memories of every kind."""

from __future__ import annotations

import json
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from memoryboard.ltm.search.embeddings import memory_embed_many
from memoryboard.ltm.store.upsert import memory_upsert_many
from memoryboard.ltm.write.items import memory_build
from memoryboard.management.database import require_migrated
from memoryboard.models import ArchivedReason, ChatMessage, LongTermMemory
from memoryboard.models.namespaces import build_namespace
from memoryboard.roles import DEVELOPERS_GROUP, SUPPORT_GROUP, ensure_role_groups

DEMO_PASSWORD = "memoryboard-demo"

# username, role, is_staff, is_superuser, groups
DEMO_USERS = [
    ("admin", "superuser", True, True, []),
    ("support", "support", True, False, [SUPPORT_GROUP]),
    ("developer", "developers", True, False, [DEVELOPERS_GROUP]),
    ("alice", "end user", False, False, []),
    ("bob", "end user", False, False, []),
]

# (agent, content, type, source, archived_reason or None)
ALICE_MEMORIES = [
    ("chat", "用户是Java后端开发者，主要使用Spring Boot", "FACT", "auto_extract", None),
    ("chat", "偏好代码示例而不是长篇解释", "PREFERENCE", "agent_tool", None),
    ("chat", "部署前总是先跑单元测试，再打包镜像", "PROCEDURE", "auto_extract", None),
    ("chat", "昨天排查了一个Redis连接池泄漏的问题", "EPISODE", "auto_extract", None),
    ("chat", "User lives in Shanghai and works remotely", "FACT", "agent_tool", None),
    ("chat", "Prefers answers in Chinese with English technical terms", "PREFERENCE", "auto_extract", None),
    ("chat", "Asked about Kafka consumer lag last month", "EPISODE", "auto_extract", ArchivedReason.DECAY),
    ("chat", "曾经偏好Eclipse，现在改用IntelliJ IDEA", "PREFERENCE", "auto_extract", ArchivedReason.OVER_LIMIT),
    ("coder", "Uses Python 3.11 and pytest for side projects", "FACT", "auto_extract", None),
    ("coder", "Code review checklist: tests, naming, error handling", "PROCEDURE", "agent_tool", None),
]
# The conversation each demo item came from (by user and agent), so "My memories" can link to it.
SOURCE_CONVERSATIONS = {("alice", "chat"): "demo-zh-redis", ("bob", "coder"): "demo-sql-review"}
BOB_MEMORIES = [
    ("chat", "User is a product manager at a fintech startup", "FACT", "auto_extract", None),
    ("chat", "喜欢简洁的要点式回答", "PREFERENCE", "agent_tool", None),
    ("chat", "Weekly report: collect metrics on Monday, send on Tuesday", "PROCEDURE", "auto_extract", None),
    ("chat", "上周参加了产品发布会", "EPISODE", "auto_extract", ArchivedReason.STAFF),
    ("coder", "Learning SQL window functions", "EPISODE", "agent_tool", None),
    ("coder", "Wants explanations without jargon", "PREFERENCE", "auto_extract", ArchivedReason.USER_DELETED),
]

CHINESE_CONVERSATION = [
    ("SYSTEM", "你是一个乐于助人的助手。"),
    ("USER", "你好，我是一名Java后端开发者，最近在用Spring Boot。"),
    ("ASSISTANT", "你好！很高兴认识你。Spring Boot 有什么我可以帮你的吗？"),
    ("USER", "我想了解一下怎么配置Redis连接池。我喜欢有代码示例的回答。"),
    ("ASSISTANT", "好的，可以在 application.yml 里配置 spring.data.redis.lettuce.pool 的 max-active、max-idle 等参数。"),
    ("USER", "昨天我遇到了连接池泄漏的问题，连接数一直涨。"),
    ("ASSISTANT", "通常是连接没有归还。检查是否在finally中关闭了连接，或者使用try-with-resources。"),
    ("USER", "谢谢，问题解决了！"),
]
ENGLISH_CONVERSATION = [
    ("SYSTEM", "You are a helpful assistant."),
    ("USER", "Hi! I live in Shanghai and work remotely for a European company."),
    ("ASSISTANT", "Nice to meet you! How can I help today?"),
    ("USER", "I prefer answers in Chinese but keep English technical terms, please."),
    ("ASSISTANT", "好的，我会用中文回答，并保留 English technical terms。"),
    ("USER", "What's a good way to monitor Kafka consumer lag?"),
    ("ASSISTANT", "可以使用 Burrow 或 kafka-consumer-groups.sh --describe 查看 lag，也可以接入 Prometheus exporter。"),
]
CODER_CONVERSATION = [
    ("SYSTEM", "You are a senior code reviewer."),
    ("USER", "I'm learning SQL window functions. Can you explain ROW_NUMBER?"),
    ("ASSISTANT", "ROW_NUMBER() assigns a sequence number to each row within a partition, ordered as you specify."),
    ("USER", "And how is RANK different?"),
    ("ASSISTANT", "RANK gives ties the same number and leaves gaps after them; DENSE_RANK leaves no gaps."),
    ("TOOL", '{"query": "SELECT RANK() OVER (ORDER BY score DESC) FROM t", "rows": 12}'),
]


def long_conversation(turns: int = 160) -> list[tuple[str, str]]:
    """A conversation of 2 × turns + 1 messages, long enough that every strategy trims it."""
    topics = [
        ("数据库索引", "B+树索引适合范围查询，哈希索引只适合等值查询。"),
        ("caching", "Cache-aside keeps the database as the source of truth; invalidate on write."),
        ("消息队列", "至少一次投递需要消费者做幂等处理，比如用业务主键去重。"),
        ("observability", "Metrics tell you that something is wrong, traces tell you where, logs tell you why."),
        ("容器编排", "Kubernetes 的 readiness probe 决定流量，liveness probe 决定是否重启。"),
    ]
    messages = [("SYSTEM", "You are a patient tutor for backend engineering. 你是一名耐心的后端工程导师。")]
    for i in range(turns):
        topic, answer = topics[i % len(topics)]
        messages.append(("USER", f"第{i + 1}个问题 / question {i + 1}: 能再讲讲{topic}吗? Please go deeper on {topic}."))
        messages.append(("ASSISTANT", f"({i + 1}) {answer} " + "更多细节 more detail. " * (1 + i % 4)))
    return messages


def react_conversation(rounds: int = 30) -> list[tuple[str, str, dict | None]]:
    """A ReAct agent's long tool-using conversation: each round a question, one or two parallel tool calls
    (stored in ``metadata.tool_calls`` with ids), their TOOL results (``metadata.tool_call_id``) and the
    answer. Long enough that every context strategy visibly acts on it (CLEAR_TOOL_RESULTS included)."""
    tables = ["orders", "users", "payments", "shipments", "refunds"]
    messages: list[tuple[str, str, dict | None]] = [
        ("SYSTEM", "You are a data analyst agent with the tools run_sql and search_docs. 你是一名数据分析智能体。", None)
    ]
    call = 0
    for i in range(rounds):
        table = tables[i % len(tables)]
        messages.append(("USER", f"第{i + 1}步 / step {i + 1}: how many rows in {table} changed last week, and why?", None))
        calls = [("run_sql", json.dumps({"sql": f"SELECT count(*) FROM {table} WHERE updated_at > now() - interval 7 day"}))]
        if i % 3 == 0:
            calls.append(("search_docs", json.dumps({"query": f"{table} retention policy"})))
        ids = []
        for _name, _args in calls:
            call += 1
            ids.append(f"call_demo_{call:03d}")
        messages.append(("ASSISTANT", "", {"demo": True, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, (name, args) in zip(ids, calls)]}))
        for cid, (name, _args) in zip(ids, calls):
            if name == "run_sql":
                rows = ", ".join(f'{{"day": "2026-11-{d:02d}", "changed": {(i * 37 + d * 11) % 500}}}' for d in range(20, 27))
                result = f'{{"rows": [{rows}], "elapsed_ms": {12 + i}}}'
            else:
                result = (f"{table} retention: rows are archived after 90 days; 归档任务每天凌晨运行。"
                          + " See runbook section 4.2 for the backfill procedure." * 3)
            messages.append(("TOOL", result, {"demo": True, "tool_call_id": cid, "name": name}))
        messages.append(("ASSISTANT", f"({i + 1}) {table}: the changes follow the nightly job; 变化来自夜间任务。", None))
    return messages


class Command(BaseCommand):
    help = "Load demo users, conversations and memories (idempotent; --reset wipes the demo data first)."

    def add_arguments(self, parser):
        parser.add_argument("--reset", action="store_true", help="Delete existing demo data first.")

    def handle(self, *args, reset: bool = False, **options):
        require_migrated()
        ensure_role_groups()
        with transaction.atomic():
            users = self._users()
            if reset:
                ChatMessage.objects.filter(conversation_id__startswith="demo-").delete()
                LongTermMemory.objects.filter(key_name__startswith="demo-").delete()
            conversations = self._conversations(users)
            memories, added = self._memories(users)
        # What the database holds, not only what this run wrote: a second run over a database whose demo
        # users kept adding memories must not claim the demo's count.
        total = LongTermMemory.objects.count()
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo data ready: {len(users)} users, {conversations} demo conversations, {memories} demo memories "
                f"({added} added now). The database holds {total} memories in all."
            )
        )
        self.stdout.write("Demo logins (password for all: %s):" % DEMO_PASSWORD)
        for username, role, *_ in DEMO_USERS:
            self.stdout.write(f"  {username:<10} {role}")

    def _users(self) -> dict:
        User = get_user_model()
        users = {}
        for username, _role, is_staff, is_superuser, groups in DEMO_USERS:
            user, created = User.objects.get_or_create(
                username=username,
                defaults={"is_staff": is_staff, "is_superuser": is_superuser, "email": f"{username}@example.com"},
            )
            if created:
                user.set_password(DEMO_PASSWORD)
                user.save()
            for name in groups:
                user.groups.add(Group.objects.get(name=name))
            users[username] = user
        return users

    def _conversations(self, users) -> int:
        alice, bob = str(users["alice"].pk), str(users["bob"].pk)
        plan = [
            ("demo-zh-redis", "chat", alice, CHINESE_CONVERSATION),
            ("demo-en-kafka", "chat", alice, ENGLISH_CONVERSATION),
            ("demo-long-tutor", "chat", alice, long_conversation()),
            ("demo-sql-review", "coder", bob, CODER_CONVERSATION),
            ("demo-react-analyst", "coder", alice, react_conversation()),
        ]
        start = timezone.now() - timedelta(days=3)
        for conversation_id, agent, user_id, messages in plan:
            if ChatMessage.objects.filter(conversation_id=conversation_id).exists():
                continue
            ChatMessage.objects.bulk_create(
                [
                    ChatMessage(
                        conversation_id=conversation_id,
                        agent_id=agent,
                        user_id=user_id,
                        role=message[0],
                        content=message[1],
                        metadata=message[2] if len(message) > 2 and message[2] else {"demo": True},
                        created_at=start + timedelta(seconds=30 * i),
                    )
                    for i, message in enumerate(messages)
                ]
            )
        return len(plan)

    def _memories(self, users) -> int:
        now = timezone.now()
        items = []
        for username, specs in (("alice", ALICE_MEMORIES), ("bob", BOB_MEMORIES)):
            user_id = str(users[username].pk)
            for index, (agent, content, memory_type, source, archived_reason) in enumerate(specs):
                memory = memory_build(
                    namespace=build_namespace(agent_namespace=agent, user_id=user_id),
                    content=content,
                    memory_type=memory_type,
                    source=source,
                    agent_id=agent,
                    conversation_id=SOURCE_CONVERSATIONS.get((username, agent), "") if source != "manual" else "",
                )
                # Stable ids make the command idempotent.
                memory.pk = memory.key_name = f"demo-{username}-{index:02d}"
                memory.created_at = now - timedelta(days=20 - index)
                memory.updated_at = memory.created_at
                memory.access_count = index % 5
                memory.last_accessed_at = now - timedelta(days=index) if index % 5 else None
                memory.relevance_score = round(1.0 - index * 0.05, 2)
                if archived_reason:
                    memory.archived = True
                    memory.archived_at = now - timedelta(days=2)
                    memory.archived_reason = archived_reason
                items.append(memory)
        existing = set(LongTermMemory.objects.filter(pk__in=[m.pk for m in items]).values_list("pk", flat=True))
        new_items = [m for m in items if m.pk not in existing]
        memory_upsert_many(new_items)
        memory_embed_many(new_items)
        return len(items), len(new_items)
