"""Token authentication that reads the caller's role groups in the same query as the token."""

from __future__ import annotations

from functools import lru_cache

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions

from memoryboard.roles import DEVELOPERS_GROUP, SUPPORT_GROUP, remember_role_groups
from memoryboard.rows import instances, select_columns


def _token_sql(token_model) -> str:
    return _token_sql_for(token_model, connection.vendor)


@lru_cache(maxsize=8)
def _token_sql_for(token_model, vendor: str) -> str:
    """The user of a token key and whether they are in each role group.

    Written by hand: the ORM's compilation of the same query (two ``Exists`` annotations) costs
    several times what the database spends on it, on every API request.
    """
    user_model = get_user_model()
    qn = connection.ops.quote_name
    memberships = user_model._meta.get_field("groups")
    member_of = (
        f"EXISTS(SELECT 1 FROM {qn(memberships.m2m_db_table())} ug "
        f"INNER JOIN {qn(Group._meta.db_table)} g ON g.{qn('id')} = ug.{qn(memberships.m2m_reverse_name())} "
        f"WHERE ug.{qn(memberships.m2m_column_name())} = u.{qn(user_model._meta.pk.column)} AND g.{qn('name')} = %s)"
    )
    token_user = token_model._meta.get_field("user").column
    return (
        f"SELECT {select_columns(user_model, 'u')}, {member_of}, {member_of} "
        f"FROM {qn(user_model._meta.db_table)} u "
        f"INNER JOIN {qn(token_model._meta.db_table)} t ON t.{qn(token_user)} = u.{qn(user_model._meta.pk.column)} "
        f"WHERE t.{qn('key')} = %s"
    )


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's ``Authorization: Token <key>`` in one hand-written query; the role checks of the request
    then need no query of their own. ``request.auth`` is the token with its key and user (its
    creation time is not read)."""

    def authenticate_credentials(self, key):
        model = self.get_model()
        with connection.cursor() as cursor:
            cursor.execute(_token_sql(model), [SUPPORT_GROUP, DEVELOPERS_GROUP, key])
            rows = cursor.fetchall()
        if not rows:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        [(user, (in_support, in_developers))] = instances(get_user_model(), rows)
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        remember_role_groups(
            user, {name for name, member in ((SUPPORT_GROUP, in_support), (DEVELOPERS_GROUP, in_developers)) if member}
        )
        token = model(key=key, user=user)
        token._state.adding = False
        token._state.db = user._state.db
        return (user, token)


class BearerTokenAuthentication(TokenAuthentication):
    """The same API tokens sent as ``Authorization: Bearer <key>``, as OpenAI clients and MCP hosts do."""

    keyword = "Bearer"
