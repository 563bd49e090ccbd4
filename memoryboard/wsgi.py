import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryboard.settings")

application = get_wsgi_application()

# No start with a configuration that cannot be served safely (memoryboard.E010: no secret key, E011: a weak one).
from memoryboard.checks import refuse_to_serve_on_errors  # noqa: E402

refuse_to_serve_on_errors()

# Load the offline embedder at start-up, not on the first search (gunicorn --preload shares it).
from memoryboard.llm.factory import warm_up  # noqa: E402

warm_up()
