"""Communities: the environment's row kept in step with the settings, a connection's outcome
recorded, disconnection, and the owner's hand on who runs games there.

The VK side of connecting (checking a token's rights, enabling the long poll or registering the
Callback server) is the panel's (``panel.connect``): it calls VK, then records here what it
found. Tokens are stored encrypted (``gameplay.models.secrets``) and never logged.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.fernet import InvalidToken
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from gameplay.models import Community, CommunityMember, CommunityRole, DealRound, Game
from gameplay.models.community import NO_COMMUNITY_NAME, NO_COMMUNITY_VK_ID
from gameplay.models.secrets import crypter, is_encrypted, under_first_key
from gameplay.refusals import CommunityRequired, NoSuchPanelUser, NotStaff, OwnerNotRemovable
from gameplay.selectors.communities import StoredSecret, stored_secrets
from gameplay.selectors.seeds import StoredSeed, stored_seeds

from .admin_tokens import AdminKey, admin_token_from_env, admin_token_store

log = logging.getLogger(__name__)


@transaction.atomic
def community_sync_env() -> Community | None:
    """Create or update the environment's community (``VK_GROUP_ID`` with its tokens and
    Callback settings) so that a deployment configured by environment keeps working as one
    community among others. Without ``VK_GROUP_ID``: nothing, None. Idempotent."""
    group_id = getattr(settings, "VK_GROUP_ID", None)
    if group_id is None:
        return None
    row, created = Community.objects.select_for_update().get_or_create(
        vk_id=int(group_id), defaults={"name": f"club{group_id}"}
    )
    wanted = {
        "group_token": settings.VK_GROUP_TOKEN or "",
        "callback_secret": settings.VK_CALLBACK_SECRET or "",
        "confirmation_code": settings.VK_CONFIRMATION_CODE or "",
    }
    changed = [name for name, value in wanted.items() if getattr(row, name) != value]
    # The admin token: the environment's, or (VK_USER_REFRESH_TOKEN) the database's own pair.
    admin_changed = admin_token_from_env(row=row)
    if created or changed or admin_changed or not row.from_env or not row.connected:
        for name in changed:
            setattr(row, name, wanted[name])
        row.from_env = True
        if not row.connected:
            row.connected, row.connected_at, row.disconnected_at = True, timezone.now(), None
        row.save()
        log.info(
            "The environment's community %s is %s",
            row.vk_id,
            "recorded" if created else "up to date with the environment",
        )
    return row


def community_of_new_game(*, vk_group_id: int | None) -> int:
    """The community a new game belongs to (every game has one): the one named (a community
    of this deployment, or ``NO_COMMUNITY_VK_ID`` for a game that must reach no VK community),
    else the environment's (its row written as on start); refused with neither. Whether the
    creator may use it is the caller's to check (``settings.check_community``)."""
    if vk_group_id is None:
        env = community_sync_env()
        if env is None:
            raise CommunityRequired()
        return int(env.vk_id)
    if vk_group_id == NO_COMMUNITY_VK_ID:
        Community.objects.get_or_create(vk_id=vk_group_id, defaults={"name": NO_COMMUNITY_NAME})
    elif not Community.objects.filter(vk_id=vk_group_id).exists():
        raise CommunityRequired()
    return int(vk_group_id)


@transaction.atomic
def community_record(
    *,
    vk_id: int,
    name: str,
    screen_name: str = "",
    group_token: str,
    user_token: str | None = "",
    admin_key: AdminKey | None = None,
    callback_secret: str = "",
    confirmation_code: str = "",
    callback_server_id: int | None = None,
    setup: dict[str, Any] | None = None,
    connected: bool,
    by: Any = None,
) -> Community:
    """Record a community after the panel's check of it with VK: its tokens, what was set up
    and what is left, and whether it is connected (its traffic starts). The user ``by``
    becomes its owner when it has none. The admin's token: ``admin_key`` (signed in with VK
    ID, or pasted), else ``user_token`` (None: the stored one stays, renewals and all)."""
    row, _ = Community.objects.select_for_update().get_or_create(vk_id=int(vk_id))
    row.name, row.screen_name = name, screen_name
    row.group_token = group_token
    if admin_key is not None:
        admin_token_store(row=row, key=admin_key)
    elif user_token is not None:
        row.user_token = user_token
    if callback_secret:
        row.callback_secret = callback_secret
    row.confirmation_code = confirmation_code or row.confirmation_code
    row.callback_server_id = callback_server_id or row.callback_server_id
    row.setup = setup or {}
    if connected and not row.connected:
        row.connected_at, row.disconnected_at = timezone.now(), None
    row.connected = connected
    row.save()
    if by is not None and getattr(by, "pk", None) is not None:
        has_owner = row.members.filter(role=CommunityRole.OWNER).exists()
        CommunityMember.objects.update_or_create(
            community=row,
            user=by,
            defaults={} if has_owner else {"role": CommunityRole.OWNER},
        )
    return row


@transaction.atomic
def community_disconnect(*, community: Community) -> Community:
    """Stop the community's traffic (runbot drops its long poll, the Callback endpoint refuses
    its events, delivery holds its rows); its games and tokens stay, to connect it again."""
    row = Community.objects.select_for_update().get(pk=community.pk)
    if row.connected:
        row.connected, row.disconnected_at = False, timezone.now()
        row.save(update_fields=["connected", "disconnected_at"])
    return row


@transaction.atomic
def community_member_set(
    *, community: Community, user: Any, role: str = CommunityRole.GM
) -> CommunityMember:
    """Let ``user`` run games in ``community`` (as a GM, or an owner)."""
    member, _ = CommunityMember.objects.update_or_create(
        community=community, user=user, defaults={"role": CommunityRole(role).value}
    )
    return member


@transaction.atomic
def community_member_remove(*, community: Community, user: Any) -> None:
    """Take ``user``'s access to the community's games away (their games stay)."""
    CommunityMember.objects.filter(community=community, user=user).delete()


#: The key of ``Community.setup`` under which runbot says how its long poll fares.
LONGPOLL_STATUS = "longpoll"


@transaction.atomic
def community_longpoll_status(*, vk_id: int, problem: str = "") -> bool:
    """Record what runbot found polling community ``vk_id``: ``problem`` (English, for the
    operator and the GM: e.g. VK refused the token), or "" once it polls, under
    ``setup["longpoll"]`` (``ok``, ``problem``, ``at``). Written only when it changes;
    returns whether it did (False also when the community has no row)."""
    row = Community.objects.select_for_update().filter(vk_id=int(vk_id)).first()
    if row is None:
        return False
    setup = dict(row.setup) if isinstance(row.setup, dict) else {}
    before = setup.get(LONGPOLL_STATUS)
    if isinstance(before, dict) and (before.get("ok"), before.get("problem")) == (
        not problem,
        problem,
    ):
        return False
    setup[LONGPOLL_STATUS] = {
        "ok": not problem,
        "problem": problem,
        "at": timezone.now().isoformat(timespec="seconds"),
    }
    row.setup = setup
    row.save(update_fields=["setup"])
    log.info(
        "Community %s: %s",
        row.vk_id,
        f"long poll refused: {problem}" if problem else "the long poll works",
    )
    return True


# --- secrets at rest -----------------------------------------------------------------------------


class SecretsUnreadable(Exception):
    """Some stored secrets cannot be decrypted with the keys in force; nothing was changed.
    The message names the communities, games and columns, never a value."""

    def __init__(self, secrets: Sequence[StoredSecret | StoredSeed]) -> None:
        self.secrets = list(secrets)
        where = ", ".join(secret.where for secret in secrets)
        super().__init__(
            f"{len(secrets)} stored secret(s) cannot be decrypted with the configured keys: {where}"
        )


@dataclass(frozen=True)
class Rotation:
    """What :func:`community_secrets_rotate` did."""

    communities: int  # communities with at least one secret stored
    secrets: int  # community secrets written again, encrypted with the first key
    from_older_keys: int  # of the secrets and seeds, encrypted with another key before
    from_plain_text: int  # of the secrets and seeds, stored unencrypted before
    games: int = 0  # games with at least one seed of the deal stored
    seeds: int = 0  # seeds (the games' and their rounds') written again


@transaction.atomic
def community_secrets_rotate() -> Rotation:
    """Encrypt every stored secret again with the first key of ``TOKEN_ENCRYPTION_KEYS`` (or
    the first key derived from ``SECRET_KEY``), in one transaction, so that the older keys can
    be dropped: the communities' ``group_token``, ``user_token`` and ``callback_secret``, and
    the seeds of the deal (``Game.seed``, ``DealRound.seed``). Raises
    :class:`SecretsUnreadable`, changing nothing, when any stored value cannot be decrypted
    with the keys in force."""
    found = stored_secrets(Community.objects.select_for_update().order_by("pk"))
    seeds = stored_seeds(lock=True)
    every: list[StoredSecret | StoredSeed] = [*found, *seeds]
    unreadable: list[StoredSecret | StoredSeed] = []
    plain: dict[StoredSecret | StoredSeed, str] = {}
    fernet = crypter()
    for secret in every:
        if not is_encrypted(secret.stored):
            plain[secret] = secret.stored
            continue
        try:
            plain[secret] = fernet.decrypt(secret.stored.encode()).decode()
        except InvalidToken:
            unreadable.append(secret)
    if unreadable:
        raise SecretsUnreadable(unreadable)
    # Written through the fields (get_prep_value), which encrypt with the first key.
    for pk in sorted({s.community_id for s in found}):
        values = {s.field: plain[s] for s in found if s.community_id == pk}
        Community.objects.filter(pk=pk).update(**values)
    for seed in seeds:
        if seed.round is None:
            Game.objects.filter(pk=seed.game_id).update(seed=plain[seed])
        else:
            DealRound.objects.filter(game_id=seed.game_id, number=seed.round).update(
                seed=plain[seed]
            )
    rotation = Rotation(
        communities=len({s.community_id for s in found}),
        secrets=len(found),
        from_older_keys=sum(
            1 for s in every if is_encrypted(s.stored) and not under_first_key(s.stored)
        ),
        from_plain_text=sum(1 for s in every if not is_encrypted(s.stored)),
        games=len({s.game_id for s in seeds}),
        seeds=len(seeds),
    )
    log.info("Stored secrets encrypted again with the first key: %s", rotation)
    return rotation


# --- the owner's hand ---------------------------------------------------------------------------


@transaction.atomic
def community_gm_add(*, community: Community, username: str) -> CommunityMember:
    """The owner's «добавить ведущего»: the panel account ``username`` (active staff) may run
    games in the community; the owner stays the owner."""
    username = (username or "").strip()
    user = get_user_model().objects.filter(username=username).first() if username else None
    if user is None:
        raise NoSuchPanelUser(username=username[:150])
    if not (user.is_active and user.is_staff):
        raise NotStaff(username=user.get_username())
    member = CommunityMember.objects.filter(community=community, user=user).first()
    if member is not None:
        return member
    return community_member_set(community=community, user=user, role=CommunityRole.GM)


@transaction.atomic
def community_gm_remove(*, community: Community, user: Any) -> None:
    """The owner's «убрать ведущего»: never the owner."""
    if CommunityMember.objects.filter(
        community=community, user=user, role=CommunityRole.OWNER
    ).exists():
        raise OwnerNotRemovable()
    community_member_remove(community=community, user=user)


@transaction.atomic
def community_history_set(*, community: Community, public: bool) -> Community:
    """Whether GMs of other communities see this community's finished games in a player's
    history."""
    row = Community.objects.select_for_update().get(pk=community.pk)
    if row.history_public != public:
        row.history_public = public
        row.save(update_fields=["history_public"])
    return row
