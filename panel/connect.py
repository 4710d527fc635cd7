"""«Подключить сообщество»: the panel checks a community's tokens with VK and sets the
community up through the API, synchronously from the web request, then records it
(``gameplay.services.communities.community_record``).

1. Read-only checks, nothing changes anywhere: ``groups.getById`` (which community the
   community token is for), ``groups.getTokenPermissions`` (``messages`` and ``manage`` are
   needed), ``users.get`` and ``groups.getById`` with ``group_id`` on the user token (its owner
   must administer that community), ``account.getAppPermissions`` (``groups``; and ``offline``
   for a pasted key: one from VK ID lives an hour and renews itself instead).
2. Who may connect it: a community another owner connected, or the environment's, is refused
   (an operator may connect over another owner).
3. Setting up: in long-poll mode ``groups.setLongPollSettings`` (on, the project's API
   version, exactly :data:`EVENT_TYPES`); in callback mode (``VK_CALLBACK_MODE``)
   ``groups.getCallbackConfirmationCode``, ``groups.addCallbackServer`` (PUBLIC_URL's
   /vk/callback/, a fresh secret) and ``groups.setCallbackSettings`` (the same events); then
   ``groups.setSettings`` for the bot features, which VK may refuse to a community token: the
   checklist then names the menu.

The admin's user token comes signed in with VK ID (``panel.signin``: it renews itself) or
pasted (``без продления``); reconnecting without a new one keeps the stored one, renewed first
when due (``gameplay.services.admin_tokens``).

Every call waits for its token's shared rate limiter (``panel.vkcalls``), as the delivery's
do: VK counts the panel's checks and the delivery's posts against one budget, and a second
attempt right after a first must not trip error 6. Every VK failure is a typed refusal
(``gameplay.refusals.communities``) raised before the database is touched; no token reaches
a log line.
"""

from __future__ import annotations

import inspect
import logging
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.urls import reverse
from django.views.decorators.debug import sensitive_variables

from gameplay.models import AdminTokenSource, Community, CommunityRole
from gameplay.refusals import (
    CallbackAddressUnknown,
    CommunityFromEnvironment,
    CommunityOwnedByAnother,
    CommunityRightMissing,
    CommunityTokenInvalid,
    CommunityTokenOfAnother,
    UserNotCommunityAdmin,
    UserTokenInvalid,
    UserTokenRightMissing,
    VkAnswerUnreadable,
)
from gameplay.services.admin_tokens import AdminKey, admin_token_renew
from gameplay.services.communities import community_record
from panel.vkcalls import Vk, VkError, run

if TYPE_CHECKING:
    from vkbottle.http import AiohttpClient

log = logging.getLogger(__name__)

#: The updates the bot handles (``vkbot.handlers.routes.UPDATES``; a test holds them equal):
#: the long poll and the Callback server get exactly these.
EVENT_TYPES = (
    "message_new",
    "message_event",
    "board_post_new",
    "board_post_edit",
    "board_post_delete",
)

#: The community token's rights the bot needs: name in VK's API, its bit, and how VK's form
#: «Создать ключ» words it.
COMMUNITY_RIGHTS = (
    ("messages", 4096, "доступ к сообщениям сообщества"),
    ("manage", 262144, "доступ к управлению сообществом"),
)
#: The user token's rights (``account.getAppPermissions`` bits): a pasted key needs both, a
#: VK ID key ``groups`` (it renews itself instead of living forever).
USER_RIGHTS = (("groups", 262144), ("offline", 65536))
RENEWING_RIGHTS = (("groups", 262144),)

#: The implicit-flow link that gets an administrator's user token (docs/operations.md, "Setting
#: up a VK community", step 5).
USER_TOKEN_URL = (
    "https://oauth.vk.com/authorize?client_id={app_id}&scope=groups,offline"
    "&response_type=token&redirect_uri=https://oauth.vk.com/blank.html&v=5.199"
)

#: Checklist keys (texts: templates/panel/_community_steps.html).
PLAYERS_ALLOW, BOARD_SECTION, BOT_FEATURES, CALLBACK_CONFIRM = (
    "players_allow",
    "board_section",
    "bot_features",
    "callback_confirm",
)
LONG_POLL, CALLBACK_SERVER = "long_poll", "callback_server"


def _event_flags() -> dict[str, int]:
    """Every event type ``groups.setLongPollSettings`` knows: ours on, the others off."""
    from vkbottle_types.codegen.methods.groups import GroupsCategory  # panel.vkcalls: why here

    params = inspect.signature(GroupsCategory.set_long_poll_settings).parameters
    names = [
        n
        for n, p in params.items()
        if p.kind == p.POSITIONAL_OR_KEYWORD
        and n not in ("self", "group_id", "api_version", "enabled")
    ]
    return {n: int(n in EVENT_TYPES) for n in names}


@dataclass
class Found:
    """What the read-only checks learned."""

    vk_id: int
    name: str
    screen_name: str
    rights: list[str]
    admin_name: str
    done: list[str] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)
    confirmation_code: str = ""
    callback_secret: str = ""
    callback_server_id: int | None = None


def _groups(answer: Any) -> list[dict[str, Any]]:
    """``groups.getById``'s communities: a list before API 5.194, ``{"groups": [...]}`` after."""
    rows = answer.get("groups") if isinstance(answer, dict) else answer
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def _rights(answer: Any) -> set[str]:
    names = (
        {str(p.get("name")) for p in (answer.get("permissions") or []) if isinstance(p, dict)}
        if isinstance(answer, dict)
        else set()
    )
    mask = answer.get("mask") if isinstance(answer, dict) else None
    if isinstance(mask, int):
        names |= {name for name, bit, _ in COMMUNITY_RIGHTS if mask & bit}
    return names


@sensitive_variables()
async def _check_group(client: AiohttpClient, group_token: str) -> Found:
    """The community token's part of the checks: which community, and its rights."""
    group = Vk(group_token, client, "group")
    step = "проверка ключа сообщества"
    try:
        rows = _groups(await group.call("groups.getById", step))
    except VkError as e:
        if e.code in (5, 27, 100, 1116):
            raise CommunityTokenInvalid() from None
        raise e.refusal() from None
    if len(rows) != 1 or not isinstance(rows[0].get("id"), int):
        raise CommunityTokenInvalid()
    row = rows[0]
    vk_id, name = int(row["id"]), str(row.get("name") or f"club{row['id']}")
    try:
        rights = _rights(await group.call("groups.getTokenPermissions", "права ключа сообщества"))
    except VkError as e:
        raise (CommunityTokenInvalid() if e.code == 5 else e.refusal()) from None
    for right, _bit, wording in COMMUNITY_RIGHTS:
        if right not in rights:
            raise CommunityRightMissing(right=wording)
    return Found(
        vk_id=vk_id,
        name=name,
        screen_name=str(row.get("screen_name") or ""),
        rights=sorted(rights),
        admin_name="",
    )


@sensitive_variables()
async def _check(
    client: AiohttpClient, group_token: str, user_token: str, renewing: bool = False
) -> Found:
    """Every check (module, step 1); ``renewing``: the user token is VK ID's (it need not be
    ``offline``)."""
    found = await _check_group(client, group_token)
    vk_id, name = found.vk_id, found.name
    user = Vk(user_token, client, "user")
    step = "проверка ключа администратора"
    try:
        people = await user.call("users.get", step)
        if not isinstance(people, list) or not people or not isinstance(people[0], dict):
            raise UserTokenInvalid()
        person = people[0]
        admin_name = " ".join(str(person.get(k) or "") for k in ("first_name", "last_name"))
        admin_name = admin_name.strip() or f"id{person.get('id')}"
        theirs = _groups(
            await user.call("groups.getById", step, group_id=vk_id, fields="is_admin,admin_level")
        )
    except VkError as e:
        if e.code in (5, 27, 28, 1116):
            raise UserTokenInvalid() from None
        raise e.refusal() from None
    if not theirs or not theirs[0].get("is_admin"):
        raise UserNotCommunityAdmin(user=admin_name, community=name)
    try:
        mask = await user.call("account.getAppPermissions", step)
    except VkError:
        mask = None  # not every server answers it; the token still did the checks above
    if isinstance(mask, int) and not isinstance(mask, bool):
        for right, bit in RENEWING_RIGHTS if renewing else USER_RIGHTS:
            if not mask & bit:
                raise UserTokenRightMissing(right=right)
    found.admin_name = admin_name
    return found


def callback_url() -> str:
    """Where VK sends this deployment's events in callback mode ('' without PUBLIC_URL)."""
    base = (getattr(settings, "PUBLIC_URL", "") or "").rstrip("/")
    return f"{base}{reverse('vkbot:callback')}" if base else ""


@sensitive_variables()
async def _set_up(
    client: AiohttpClient, group_token: str, found: Found, old_server_id: int | None
) -> Found:
    group = Vk(group_token, client, "group")
    vk_id, version, flags = found.vk_id, settings.VK_API_VERSION, _event_flags()
    try:
        if settings.VK_CALLBACK_MODE:
            step = "сервер Callback API"
            code = await group.call("groups.getCallbackConfirmationCode", step, group_id=vk_id)
            found.confirmation_code = str((code or {}).get("code") or "")
            if not found.confirmation_code:
                raise VkAnswerUnreadable(step=step)
            if old_server_id:
                try:
                    await group.call(
                        "groups.deleteCallbackServer", step, group_id=vk_id, server_id=old_server_id
                    )
                except VkError:
                    pass  # removed in VK already
            found.callback_secret = secrets.token_urlsafe(32)
            server = await group.call(
                "groups.addCallbackServer",
                step,
                group_id=vk_id,
                url=callback_url(),
                title="vkmafia",
                secret_key=found.callback_secret,
            )
            server_id = (server or {}).get("server_id")
            if not isinstance(server_id, int):
                raise VkAnswerUnreadable(step=step)
            found.callback_server_id = server_id
            await group.call(
                "groups.setCallbackSettings",
                "события Callback API",
                group_id=vk_id,
                server_id=server_id,
                api_version=version,
                **flags,
            )
            found.done.append(CALLBACK_SERVER)
            found.todo.append(CALLBACK_CONFIRM)
        else:
            await group.call(
                "groups.setLongPollSettings",
                "включение Long Poll API",
                group_id=vk_id,
                enabled=1,
                api_version=version,
                **flags,
            )
            found.done.append(LONG_POLL)
    except VkError as e:
        raise e.refusal() from None
    try:
        await group.call(
            "groups.setSettings",
            "возможности ботов",
            group_id=vk_id,
            messages=1,
            bots_capabilities=1,
            bots_start_button=1,
            bots_add_to_chat=1,
        )
        found.done.append(BOT_FEATURES)
    except VkError:
        found.todo.append(BOT_FEATURES)
    found.todo += [BOARD_SECTION, PLAYERS_ALLOW]
    return found


@sensitive_variables()
def connect(
    *,
    group_token: str,
    user_token: str = "",
    key: AdminKey | None = None,
    by: Any,
    community: Community | None = None,
) -> Community:
    """Check the tokens with VK, set the community up and record it; ``by`` becomes its owner
    when it has none. ``community``: connecting that one again (the token must be its). The
    admin's token: ``key`` (signed in with VK ID), else ``user_token`` (pasted: it does not
    renew itself), else, connecting ``community`` again, the stored one (renewed first when
    due). Refusals (``RuleViolation``) change nothing in the database."""
    group_token, user_token = group_token.strip(), user_token.strip()
    if not group_token:
        raise CommunityTokenInvalid()
    if key is None and user_token:
        key = AdminKey(access_token=user_token, source=AdminTokenSource.PASTED)
    keep = key is None and community is not None and bool(community.user_token)
    if key is None and not keep:
        raise UserTokenInvalid()
    if settings.VK_CALLBACK_MODE and not callback_url():
        raise CallbackAddressUnknown()
    if key is not None:
        checked, renewing = key.access_token, key.source == AdminTokenSource.VK_ID
    else:
        assert community is not None
        checked = _stored_admin_token(community)
        renewing = community.user_token_source == AdminTokenSource.VK_ID
    found: Found = run(_check, group_token, checked, renewing)
    if community is not None and community.vk_id != found.vk_id:
        raise CommunityTokenOfAnother(community=str(community))
    row = Community.objects.filter(vk_id=found.vk_id).first()
    if row is not None:
        may_connect(row, by)
    run(_set_up, group_token, found, row.callback_server_id if row else None)
    setup = {
        "mode": "callback" if settings.VK_CALLBACK_MODE else "longpoll",
        "rights": found.rights,
        "admin": found.admin_name,
        "done": found.done,
        "todo": found.todo,
    }
    saved = community_record(
        vk_id=found.vk_id,
        name=found.name,
        screen_name=found.screen_name,
        group_token=group_token,
        user_token=None,
        admin_key=key,
        callback_secret=found.callback_secret,
        confirmation_code=found.confirmation_code,
        callback_server_id=found.callback_server_id,
        setup=setup,
        connected=True,
        by=by,
    )
    log.info(
        "Community %s connected from the panel by %s (%s)",
        found.vk_id,
        by.get_username(),
        setup["mode"],
    )
    return saved


@sensitive_variables()
def check_community_token(group_token: str) -> Found:
    """The community token's checks alone (which community, its rights): what «Войти через
    VK ID» asks before sending the admin to VK ID, so that a wrong community token is said at
    once. Raises the refusals of :func:`connect`."""
    group_token = group_token.strip()
    if not group_token:
        raise CommunityTokenInvalid()
    return run(_check_group, group_token)


def _stored_admin_token(community: Community) -> str:
    """The stored admin token to check with, renewed first when it is due; a token VK
    refused for good is no token (the admin must sign in again)."""
    renewal = admin_token_renew(vk_id=community.vk_id)
    if renewal.refused or not renewal.token:
        raise UserTokenInvalid()
    return renewal.token


def may_connect(row: Community, by: Any) -> None:
    """Refuse ``by`` connecting ``row`` again when it is the environment's, or another owner's
    (an operator may)."""
    if row.from_env:
        raise CommunityFromEnvironment(community=str(row))
    owners = row.members.filter(role=CommunityRole.OWNER)
    if owners.exists() and not owners.filter(user=by).exists() and not by.is_superuser:
        raise CommunityOwnedByAnother(community=str(row))
