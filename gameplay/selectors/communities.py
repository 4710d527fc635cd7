"""Which communities this deployment serves, with what credentials, and who may use them.

Every process asks here rather than reading ``VK_GROUP_TOKEN`` & co. itself: runbot (one long
poll per :func:`served_group_ids`), the Callback endpoint (:func:`credentials` by the event's
``group_id``), delivery (the tokens of an Outbox row's community) and the panel (which
communities a user may create games in).

The environment's community (``VK_GROUP_ID``) is a row written on start
(``services.communities.community_sync_env``); until that row exists — in tests that set the
settings directly, or a process started before the first migration — its credentials come
from the settings, so a single-community deployment works from its environment alone.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import ExpressionWrapper, F, Q, QuerySet, TextField

from gameplay.context import current_group
from gameplay.models import Community, CommunityMember, CommunityRole, Game
from gameplay.models.community import NO_COMMUNITY_VK_ID, SECRET_FIELDS
from gameplay.models.secrets import readable, secret_keys
from gameplay.selectors.admin_tokens import admin_token, stored_for_env


@dataclass(frozen=True)
class Credentials:
    """What talking to VK as one community takes. ``repr`` never shows a secret."""

    group_id: int
    name: str = ""
    group_token: str = field(default="", repr=False)
    user_token: str = field(default="", repr=False)
    callback_secret: str = field(default="", repr=False)
    confirmation_code: str = field(default="", repr=False)
    #: When the admin's user token is due for renewal (None: it does not renew itself).
    user_token_renew_at: datetime | None = None
    #: VK refused the admin's token: board posts wait until the admin signs in again.
    user_token_refused: bool = False


def env_group_id() -> int | None:
    """``VK_GROUP_ID``: the community the environment configures, if any."""
    value = getattr(settings, "VK_GROUP_ID", None)
    return int(value) if value is not None else None


def _from_env() -> Credentials | None:
    group_id = env_group_id()
    if group_id is None:
        return None
    return Credentials(
        group_id=group_id,
        group_token=settings.VK_GROUP_TOKEN or "",
        user_token=settings.VK_USER_TOKEN or "",
        callback_secret=settings.VK_CALLBACK_SECRET or "",
        confirmation_code=settings.VK_CONFIRMATION_CODE or "",
    )


def _of_row(row: Community) -> Credentials:
    """A row's credentials; the environment's community's are the environment's own (a web
    process or worker restarted with new settings need not wait for runbot's
    ``community_sync_env`` to write them into its row)."""
    env = _from_env() if row.from_env else None
    admin = admin_token(row)
    if env is not None and env.group_id == int(row.vk_id):
        stored = stored_for_env(row)
        return Credentials(
            group_id=env.group_id,
            name=row.name,
            group_token=env.group_token,
            user_token=admin.token if stored else env.user_token,
            callback_secret=env.callback_secret,
            confirmation_code=env.confirmation_code,
            user_token_renew_at=admin.renew_at if stored else None,
            user_token_refused=admin.refused,
        )
    return Credentials(
        group_id=int(row.vk_id),
        name=row.name,
        group_token=row.group_token or "",
        user_token=admin.token,
        callback_secret=row.callback_secret or "",
        confirmation_code=row.confirmation_code or "",
        user_token_renew_at=admin.renew_at,
        user_token_refused=admin.refused,
    )


def credentials(group_id: int | None) -> Credentials | None:
    """The credentials of a connected community (None: the environment's), or None when this
    deployment does not serve it (unknown, or disconnected in the panel)."""
    if group_id is None:
        group_id = env_group_id()
        if group_id is None:
            return None
    row = Community.objects.filter(vk_id=group_id).first()
    if row is not None:
        return _of_row(row) if row.connected else None
    env = _from_env()
    return env if env is not None and env.group_id == group_id else None


@dataclass(frozen=True)
class CallbackKeys:
    """What the Callback API endpoint checks a community's events with. ``repr`` shows no
    secret."""

    group_id: int
    callback_secret: str = field(default="", repr=False)
    confirmation_code: str = field(default="", repr=False)


def callback_keys(group_id: int) -> CallbackKeys | None:
    """:func:`credentials`' Callback secret and confirmation code of ``group_id`` (None when
    this deployment does not serve it), for the endpoint, which asks on every request: one
    plain statement of the four columns it needs instead of the whole row (its five
    secrets decrypted each time), and the secret's ciphertext decrypted once per process.
    Nothing stale is kept: ``connected`` and the ciphertext are read each time, and a changed
    or re-encrypted secret (``manage.py rotate_token_keys``) is a new ciphertext, decrypted
    when first seen."""
    table = connection.ops.quote_name(Community._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT connected, from_env, callback_secret, confirmation_code FROM {table} "
            "WHERE vk_id = %s",
            [group_id],
        )
        row = cursor.fetchone()
    env = _from_env()
    from_env = env if env is not None and env.group_id == group_id else None
    if row is None:
        return None if from_env is None else _keys_of(from_env)
    connected, row_from_env, stored_secret, code = row
    if not connected:
        return None
    if row_from_env and from_env is not None:
        return _keys_of(from_env)
    return CallbackKeys(group_id, _decrypted(stored_secret or "", secret_keys()), code or "")


def _keys_of(env: Credentials) -> CallbackKeys:
    return CallbackKeys(env.group_id, env.callback_secret, env.confirmation_code)


@functools.lru_cache(maxsize=1024)
def _decrypted(stored: str, keys: tuple[bytes, ...]) -> str:
    """A stored Callback secret in plain text (``keys``: the keys in force, so that other keys
    read it anew); as the model's field reads it."""
    return str(Community._meta.get_field("callback_secret").to_python(stored) or "")


def served() -> list[Credentials]:
    """Every community this deployment serves now, by VK id."""
    rows = {int(r.vk_id): _of_row(r) for r in Community.objects.filter(connected=True)}
    env = _from_env()
    if (
        env is not None
        and env.group_id not in rows
        and not Community.objects.filter(vk_id=env.group_id).exists()
    ):
        rows[env.group_id] = env
    return [rows[k] for k in sorted(rows)]


def served_group_ids() -> list[int]:
    return [c.group_id for c in served()]


def default_group_id() -> int | None:
    """The community an Outbox row of no community (a reply outside any game, outside
    ``serving``) goes out as: the environment's."""
    return env_group_id()


def this_group_id() -> int | None:
    """The community being served (``gameplay.context.serving``), else the environment's:
    "this community" to the bot's handlers."""
    group = current_group()
    return group if group is not None else env_group_id()


def in_served_community(path: str = "") -> Q:
    """The condition on ``Game`` rows (``path``: the way to the game, e.g. ``"game__"``) that
    keeps the games of the community being served (``gameplay.context.current_group``); none
    outside ``serving``."""
    group = current_group()
    if group is None:
        return Q()
    return Q(**{f"{path}vk_group_id": group})


def of_served_community(game: Game) -> bool:
    """Whether ``game`` (already read) is of the community being served (always outside
    ``serving``)."""
    group = current_group()
    return group is None or int(game.vk_group_id) == group


# --- people ------------------------------------------------------------------------------------


def communities_for(user: Any) -> QuerySet[Community]:
    """The communities a panel user may create and run games in (all for a superuser; never
    the row of the games of no community, ``NO_COMMUNITY_VK_ID``)."""
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return Community.objects.none()
    if user.is_superuser:
        return Community.objects.exclude(vk_id=NO_COMMUNITY_VK_ID)
    return Community.objects.filter(members__user=user).distinct()


def gm_choices(*, user: Any, game: Game | None = None) -> QuerySet[Any]:
    """Whom ``user`` may make GMs of ``game`` (None: of a new game): active staff accounts
    that are members of the game's community (of a new game: of any of ``user``'s), ``user``
    themselves for a new game, and the game's current GMs. Never the people of other
    communities, a staff account of none, or an operator who is not a member."""
    if game is None:
        groups = communities_for(user).values("vk_id")
        extra = Q(pk=user.pk)
    else:
        groups = Community.objects.filter(vk_id=game.vk_group_id).values("vk_id")
        extra = Q(pk__in=Game.gms.through.objects.filter(game=game).values("user_id"))
    members = CommunityMember.objects.filter(community__vk_id__in=groups).values("user_id")
    return (
        get_user_model()
        .objects.filter(Q(pk__in=members) | extra, is_active=True, is_staff=True)
        .order_by("username")
    )


def is_member(*, user: Any, vk_group_id: int) -> bool:
    """Whether ``user`` is a member (GM or owner) of the community ``vk_group_id``."""
    return CommunityMember.objects.filter(user=user, community__vk_id=vk_group_id).exists()


def owned_by(user: Any) -> QuerySet[Community]:
    """The communities whose GMs a user manages (all for a superuser)."""
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return Community.objects.none()
    if user.is_superuser:
        return Community.objects.all()
    return Community.objects.filter(members__user=user, members__role=CommunityRole.OWNER)


def membership_q(user: Any) -> Q:
    """Games (``Game`` rows) of communities ``user`` belongs to."""
    ids = CommunityMember.objects.filter(user=user).values("community__vk_id")
    return Q(vk_group_id__in=ids)


def owner_q(user: Any) -> Q:
    ids = CommunityMember.objects.filter(user=user, role=CommunityRole.OWNER).values(
        "community__vk_id"
    )
    return Q(vk_group_id__in=ids)


# --- secrets at rest -----------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredSecret:
    """One secret of a community as the database holds it (the ciphertext, never decrypted
    here). ``repr`` hides the value."""

    community_id: int
    vk_id: int
    field: str
    stored: str = field(repr=False)  # type: ignore[operator]  # dataclasses.field, not `field: str`

    @property
    def where(self) -> str:
        """How an operator's message names it (never with its value)."""
        return f"community {self.community_id} (VK {self.vk_id}) {self.field}"


def stored_secrets(rows: QuerySet[Community] | None = None) -> list[StoredSecret]:
    """Every non-empty secret column of ``rows`` (default: every community), as stored."""
    raw = {f"stored_{name}": ExpressionWrapper(F(name), output_field=TextField())
           for name in SECRET_FIELDS}  # fmt: skip
    found = []
    query = (Community.objects.all() if rows is None else rows).order_by("pk")
    for row in query.annotate(**raw).values("pk", "vk_id", *raw):
        for name in SECRET_FIELDS:
            stored = row[f"stored_{name}"] or ""
            if stored:
                found.append(StoredSecret(row["pk"], int(row["vk_id"]), name, stored))
    return found


def unreadable_secrets() -> list[StoredSecret]:
    """The stored secrets no key in force decrypts (a key dropped too early, a SECRET_KEY
    changed without SECRET_KEY_FALLBACKS): they read as empty."""
    return [secret for secret in stored_secrets() if not readable(secret.stored)]
