from __future__ import annotations

from memoryboard.llm.factory import models_status
from memoryboard.roles import is_developer, is_support


def models_in_use(request) -> dict:
    """Tell every page whether the offline models are in use (shown as a banner)."""
    return {"models_status": models_status()}


def navigation(request) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav_playground": False, "nav_people": False, "nav_staff": False}
    staff = is_developer(user) or is_support(user)
    # Staff pages and notes (the API, the offline-models banner) are not for end users.
    return {"nav_playground": staff, "nav_people": staff, "nav_staff": staff or user.is_staff}
