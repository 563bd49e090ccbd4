"""The user directory: platform user id → display name and e-mail, and finding people by name.

Long-term memory knows users only by their platform user id (``user:42`` in a namespace, ``user_id`` in
``chat_message``). Support staff know them by name. This module is the one place that translates, used
wherever a user is shown (the admin, the user pages) and by every user filter and search (the admin's
user filter, the API's ``user`` filter, the chat message filter), so ``?user=bob`` finds bob's items.

The default directory reads Django's users: the platform id of a Django user is
``roles.platform_user_id(user)`` (``str(user.pk)`` unless ``MEMORYBOARD_USER_ID_FUNCTION`` maps it
otherwise). A platform whose users live elsewhere names its own directory in
``MEMORYBOARD_USER_DIRECTORY``: a dotted path to a class (instantiated without arguments) or a callable
returning an object with the two methods of :class:`UserDirectory`.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db.models import Q
from django.utils.module_loading import import_string

from memoryboard.roles import platform_user_id

DEFAULT_DIRECTORY = "memoryboard.users.DjangoUserDirectory"
DEFAULT_ID_FUNCTION = "memoryboard.users.default_user_id"
# A name that matches more people than this is too vague to filter by: the filter takes the first ones.
MAX_MATCHES = 20
# With a custom id function, the Django users are mapped once and kept this long.
MAPPING_CACHE_SECONDS = 60
MAPPING_CACHE_KEY = "memoryboard:user-directory-mapping"
MAX_MAPPED_USERS = 50_000


@dataclass(frozen=True, slots=True)
class Person:
    """Someone known to the directory. ``name`` is what people call them (never empty)."""

    user_id: str
    name: str
    email: str = ""
    username: str = ""

    def is_exactly(self, term: str) -> bool:
        """Whether ``term`` is this person's id, user name or e-mail (case-insensitive but the id)."""
        lowered = term.lower()
        return term == self.user_id or lowered in (self.username.lower(), self.email.lower()) and bool(lowered)

    @property
    def known(self) -> bool:
        return self.name != self.user_id or bool(self.username)

    @property
    def label(self) -> str:
        """``name (id)``, or just the id when the directory knows nothing more."""
        return self.user_id if self.name == self.user_id else f"{self.name} ({self.user_id})"


class UserDirectory(Protocol):
    def people(self, user_ids: Iterable[str]) -> dict[str, Person]:
        """The people of these platform ids that the directory knows (unknown ids are left out)."""

    def find(self, term: str, *, limit: int = MAX_MATCHES) -> list[Person]:
        """People whose id, user name or e-mail equals ``term`` (case-insensitive) first, then people
        whose name or e-mail contains it."""


def default_user_id(user) -> str:
    """The platform user id of a signed-in Django user: its primary key (``MEMORYBOARD_USER_ID_FUNCTION``)."""
    return str(user.pk)


def _person(user, user_id: str) -> Person:
    full = (user.get_full_name() or "").strip() if hasattr(user, "get_full_name") else ""
    username = user.get_username()
    return Person(user_id=user_id, name=full or username, email=getattr(user, "email", "") or "",
                  username=username)


class DjangoUserDirectory:
    """People are Django's users; the platform id follows ``MEMORYBOARD_USER_ID_FUNCTION``."""

    def __init__(self):
        self.model = get_user_model()
        self.by_pk = getattr(settings, "MEMORYBOARD_USER_ID_FUNCTION", DEFAULT_ID_FUNCTION) == DEFAULT_ID_FUNCTION

    def _matching(self, term: str):
        """Every word of ``term`` in the user name, the e-mail or a part of the name: "Bob Builder"
        finds the user whose first name is Bob and last name Builder."""
        names = [name for name in ("first_name", "last_name") if any(f.name == name for f in self.model._meta.fields)]
        fields = [self.model.USERNAME_FIELD, "email", *names]
        q = Q()
        for word in term.split():
            q &= functools.reduce(operator.or_, (Q(**{f"{field}__icontains": word}) for field in fields))
        return q

    def _exact(self, term: str) -> Q:
        return Q(**{f"{self.model.USERNAME_FIELD}__iexact": term}) | Q(email__iexact=term)

    def _mapping(self) -> dict[str, str]:
        """Platform id → Django pk for every user (only with a custom id function), cached briefly."""
        mapping = cache.get(MAPPING_CACHE_KEY)
        if mapping is None:
            mapping = {platform_user_id(u): u.pk for u in self.model.objects.all()[:MAX_MAPPED_USERS]}
            cache.set(MAPPING_CACHE_KEY, mapping, MAPPING_CACHE_SECONDS)
        return mapping

    def _platform_id(self, user) -> str:
        return str(user.pk) if self.by_pk else platform_user_id(user)

    def people(self, user_ids: Iterable[str]) -> dict[str, Person]:
        ids = {str(i) for i in user_ids if i}
        if not ids:
            return {}
        if self.by_pk:
            pks = [int(i) for i in ids if i.isascii() and i.isdigit() and len(i) < 19]
        else:
            mapping = self._mapping()
            pks = [mapping[i] for i in ids if i in mapping]
        if not pks:
            return {}
        users = self.model.objects.filter(pk__in=pks)
        return {p.user_id: p for p in (_person(u, self._platform_id(u)) for u in users) if p.user_id in ids}

    def find(self, term: str, *, limit: int = MAX_MATCHES) -> list[Person]:
        term = term.strip()
        if not term:
            return []
        exact_q = self._exact(term)
        if self.by_pk and term.isascii() and term.isdigit() and len(term) < 19:
            exact_q |= Q(pk=int(term))
        elif not self.by_pk and term in self._mapping():
            exact_q |= Q(pk=self._mapping()[term])
        users = list(self.model.objects.filter(exact_q | self._matching(term))[: limit * 2])
        people = [_person(u, self._platform_id(u)) for u in users]
        people.sort(key=lambda p: (not p.is_exactly(term), p.name.lower(), p.user_id))
        return people[:limit]


def get_directory() -> UserDirectory:
    """The configured directory (``MEMORYBOARD_USER_DIRECTORY``)."""
    target = import_string(getattr(settings, "MEMORYBOARD_USER_DIRECTORY", DEFAULT_DIRECTORY))
    return target()


def people(user_ids: Iterable[str]) -> dict[str, Person]:
    """A :class:`Person` for every id given: the directory's, or one named by the bare id."""
    ids = [str(i) for i in user_ids if i not in (None, "")]
    known = get_directory().people(set(ids)) if ids else {}
    return {i: known.get(i) or Person(user_id=i, name=i) for i in ids}


def person(user_id: str) -> Person:
    return people([user_id])[str(user_id)]


def find_people(term: str, *, limit: int = MAX_MATCHES) -> list[Person]:
    return get_directory().find(term, limit=limit)


def user_ids_matching(term: str) -> list[str]:
    """The platform ids a user filter means by ``term``: a name, an e-mail or an id.

    The term itself is always one of them (an id the directory does not know still has items). If
    someone's id, user name or e-mail equals the term, those are the matches; otherwise everyone whose
    name or e-mail contains it (at most ``MAX_MATCHES``).
    """
    term = (term or "").strip()
    if not term:
        return []
    found = find_people(term)
    exact = [p.user_id for p in found if p.is_exactly(term)]
    ids = [term] + (exact or [p.user_id for p in found])
    return list(dict.fromkeys(ids))


def attach_people(objects: Iterable, *, attr: str = "user_id") -> list:
    """Set ``obj.person`` on each object from one directory lookup (no query per row)."""
    objects = list(objects)
    found = people({getattr(o, attr) for o in objects if getattr(o, attr, None)})
    for obj in objects:
        uid = getattr(obj, attr, None)
        obj.person = found.get(str(uid)) if uid else None
    return objects
