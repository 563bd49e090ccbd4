"""Memory per gunicorn worker with the repository's gunicorn.conf.py: one model per host, not per worker.

Run: ``.venv/bin/python benchmarks/worker_rss.py`` (``--items 2000 --searches 20`` for a quick check). It
migrates a SQLite file (or uses ``--database-url``), seeds one user with ``--items`` items, starts gunicorn
with ``gunicorn.conf.py`` (``--workers``; everything else the file's defaults, the product's default
``MEMORYBOARD_VECTOR_CACHE_MB``), sends ``--searches`` searches of that user spread over the workers, and
prints for the master and each worker the RSS (what ``ps`` shows, pages shared with the master counted in
every process) and the PSS (shared pages divided among the processes that share them: what a worker
really adds). ``--no-preload`` runs the same without ``preload_app`` (one model loaded per worker).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.ports import free_port  # noqa: E402

SEED = """
import django
django.setup()
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from memoryboard.models.namespaces import build_namespace
from memoryboard.ltm.write.items import memory_build
from memoryboard.ltm.store.upsert import memory_upsert_many
from memoryboard.ltm.search.embeddings import memory_embed_many
user, _ = get_user_model().objects.get_or_create(username="rss-user")
namespace = build_namespace(agent_namespace="chat", user_id=str(user.pk))
batch = [memory_build(namespace=namespace, content=f"Item {{n}}: the user likes topic {{n % 97}} and place {{n % 31}}",
                      memory_type="FACT", source="manual", agent_id="chat") for n in range({items})]
for start in range(0, len(batch), 500):
    memory_upsert_many(batch[start:start + 500])
    memory_embed_many(batch[start:start + 500])
print(Token.objects.get_or_create(user=user)[0].key)
"""


def memory_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of a process in kB, from /proc."""
    rss = pss = 0
    with open(f"/proc/{pid}/smaps_rollup") as handle:
        for line in handle:
            if line.startswith("Rss:"):
                rss = int(line.split()[1])
            elif line.startswith("Pss:"):
                pss = int(line.split()[1])
    return rss, pss


def children(pid: int) -> list[int]:
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return sorted(found)


def main() -> None:
    import httpx

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--database-url", default="", help="default: a fresh SQLite file")
    parser.add_argument("--no-preload", action="store_true", help="gunicorn without preload_app")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as directory:
        env = dict(os.environ)
        env.update(DATABASE_URL=args.database_url or f"sqlite:///{directory}/db.sqlite3",
                   DJANGO_SETTINGS_MODULE="memoryboard.settings", MEMORYBOARD_DEBUG="0",
                   MEMORYBOARD_SECRET_KEY="rss-benchmark-only-" + "0123456789abcdef" * 3, MEMORYBOARD_ALLOWED_HOSTS="127.0.0.1",
                   MEMORYBOARD_LOG_LEVEL="ERROR", OPENAI_BASE_URL="", MEMORYBOARD_WEB_WORKERS=str(args.workers))
        subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=ROOT, env=env, check=True)
        token = subprocess.run([sys.executable, "-c", SEED.format(items=args.items)], cwd=ROOT, env=env, check=True,
                               capture_output=True, text=True).stdout.strip().splitlines()[-1]
        port = free_port()
        cmd = [str(pathlib.Path(sys.executable).with_name("gunicorn")), "-c", str(ROOT / "gunicorn.conf.py"),
               "-b", f"127.0.0.1:{port}", "--log-level", "warning"]
        web = subprocess.Popen(cmd, cwd=ROOT, env={**env, "MEMORYBOARD_WEB_PRELOAD": "0" if args.no_preload else "1"})
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{base}/api/v1/health/", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            before = {pid: memory_kb(pid) for pid in [web.pid, *children(web.pid)]}
            headers = {"Authorization": f"Token {token}"}
            for number in range(args.searches):
                # A new connection each time: gthread workers take turns accepting them.
                response = httpx.get(f"{base}/api/v1/memories/search/", params={"q": f"topic {number % 97}"},
                                     headers=headers, timeout=120)
                response.raise_for_status()
            after = {pid: memory_kb(pid) for pid in [web.pid, *children(web.pid)]}
        finally:
            web.terminate()
            web.wait(30)
    print(f"gunicorn.conf.py, {args.workers} workers, preload {'off' if args.no_preload else 'on'}, "
          f"{args.items} items searched {args.searches} times; load average {os.getloadavg()[0]:.1f}")
    print(f"{'process':10s} {'RSS start':>10s} {'PSS start':>10s} {'RSS after':>10s} {'PSS after':>10s}  (MB)")
    for pid, (rss, pss) in after.items():
        rss0, pss0 = before.get(pid, (0, 0))
        role = "master" if pid == web.pid else f"worker {pid}"
        print(f"{role:10s} {rss0 / 1024:10.0f} {pss0 / 1024:10.0f} {rss / 1024:10.0f} {pss / 1024:10.0f}")


if __name__ == "__main__":
    main()
