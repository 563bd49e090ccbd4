import os
import sys

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryboard.settings")

application = get_wsgi_application()

# No start with a configuration that cannot be served safely (memoryboard.E010: no secret key, E011: a weak one).
from memoryboard.checks import refuse_to_serve_on_errors  # noqa: E402

refuse_to_serve_on_errors()

# Load the offline embedder at start-up, not on the first search (gunicorn --preload shares it).
from memoryboard.llm.factory import warm_up  # noqa: E402

warm_up()

# The index follower and the expiry sweep run from the start of every serving process (memoryboard.background);
# under gunicorn, in each worker (gunicorn.conf.py's post_worker_init), never in the master that forks them.
from memoryboard.background import start_background_work  # noqa: E402

if "gunicorn" not in sys.modules:
    start_background_work()
