from tests.api.helpers import *  # noqa: F401,F403
