import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryboard.settings")

application = get_wsgi_application()

# Load the offline embedder at start-up, not on the first search (gunicorn --preload shares it).
from memoryboard.llm.factory import warm_up  # noqa: E402

warm_up()
