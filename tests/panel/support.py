"""Games for the panel tests, built through the services (as the bot and the panel would)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import pytest

from gameplay import services
from gameplay.models import Actor, Game, Seat, SeatStatus
from gameplay.rules import Role, RoleCounts, RuleViolation
from tests.module_db import module_rows

VK_BASE = 700_000


def seats_by_role(game: Game) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for s in Seat.objects.filter(game=game, status=SeatStatus.PLAYER).order_by("number"):
        out.setdefault(s.role, []).append(cast(int, s.number))  # a player's seat
    return out


def make_game(
    gm: Any = None,
    *,
    players: int = 7,
    name: str = "Тестовая игра",
    deal: bool = True,
    start: bool = True,
    seed: str | None = "panel-seed",
    vk_base: int = VK_BASE,
    **settings: Any,
) -> Game:
    """A game in the community :func:`tests.gameplay.factories.community_id` gives, run by
    ``gm`` (made one of that community's GMs when not a member yet)."""
    from gameplay.models import Community
    from gameplay.services.communities import community_member_set
    from tests.gameplay.factories import community_id

    settings.setdefault("topic_id", vk_base)
    settings["vk_group_id"] = community_id(settings.get("vk_group_id"))
    if gm is not None:
        community = Community.objects.get(vk_id=settings["vk_group_id"])
        if not community.members.filter(user=gm).exists():
            community_member_set(community=community, user=gm)
    game = services.game_create(
        name=name,
        counts=RoleCounts.default_for(players),
        gm=gm,
        by=Actor.gm(gm) if gm is not None else Actor.BOT,
        seed=seed,
        **settings,
    )
    entries = [services.SignupEntry(vk_base + i, f"Игрок {i}") for i in range(1, players + 1)]
    services.signups_create(game_id=game.pk, entries=entries)
    if deal:
        services.game_deal(game_id=game.pk)
    if start:
        services.game_start(game_id=game.pk)
    game.refresh_from_db()
    return game


def living(game: Game) -> list[Seat]:
    return list(
        Seat.objects.filter(game=game, status=SeatStatus.PLAYER, alive=True).order_by("number")
    )


def vote_round(game: Game, *, changes: int = 1, skip: int = 0) -> None:
    """Every living player votes (and changes the vote ``changes`` times), round-robin, except
    the last ``skip`` players; the first living civilian gets the most votes."""
    alive = living(game)
    voters = alive[: len(alive) - skip] if skip else alive
    civilians = [s for s in alive if s.role == Role.CIVILIAN] or [
        s for s in alive if s.role != Role.MAFIA
    ]
    # The players' seats have their numbers.
    lead = cast(int, civilians[0].number)
    for k in range(changes + 1):
        for i, s in enumerate(voters):
            target = lead if k == changes else cast(int, alive[(i + k + 1) % len(alive)].number)
            if target == s.number:
                target = cast(int, alive[(i + 1) % len(alive)].number)
            try:
                services.vote_submit(game_id=game.pk, voter=cast(int, s.number), target=target)
            except RuleViolation:
                pass


def _try(game: Game, actor: int, act: str, targets: list[int]) -> None:
    for target in targets:
        try:
            services.night_action_submit(game_id=game.pk, actor=actor, act=act, target=target)
            return
        except RuleViolation:
            continue


def night_round(game: Game) -> None:
    """A slow night: the mafia shoots the last civilian and the doctor heals them; the maniac
    shoots a mafia member; the commissar checks someone. At most one death a night."""
    alive = living(game)
    mafia = [cast(int, s.number) for s in alive if s.role == Role.MAFIA]  # the players' seats
    others = [cast(int, s.number) for s in alive if s.role != Role.MAFIA]
    target = others[-1]
    for s in alive:
        n = cast(int, s.number)
        if s.role == Role.DOCTOR:
            _try(game, n, "heal", [target, n, *others])
        elif s.role == Role.MANIAC:
            _try(game, n, "maniac_shot", mafia + [m for m in others if m != n])
        elif s.role == Role.COMMISSAR:
            _try(game, n, "check", [m for m in mafia + others if m != n])
    if mafia:
        _try(game, mafia[0], "mafia_shot", [target])


def close_now(client: Any, game: Game, *, follow: bool = True) -> Any:
    """«Закрыть день/ночь сейчас» as a GM does it: open the confirmation page, confirm it."""
    from django.urls import reverse

    url = reverse("admin:panel_close", kwargs={"game_id": game.pk})
    preview = client.get(url).context["preview"]
    return client.post(
        url,
        {"confirm": "yes", "phase": str(preview.phase.pk), "expect": preview.fingerprint},
        follow=follow,
    )


def community_of(
    vk_id: int, *members: Any, owner: Any = None, name: str = "", **fields: Any
) -> Any:
    """A connected community with ``owner`` and GMs ``members`` (no VK behind it)."""
    from gameplay.models import Community, CommunityMember, CommunityRole

    fields.setdefault("connected", True)
    row = Community.objects.create(vk_id=vk_id, name=name or f"Сообщество {vk_id}", **fields)
    if owner is not None:
        CommunityMember.objects.create(community=row, user=owner, role=CommunityRole.OWNER)
    for user in members:
        CommunityMember.objects.create(community=row, user=user, role=CommunityRole.GM)
    return row


def module_gm(build: Callable[[Any], dict[str, int]]) -> tuple[Any, Any]:
    """A module's GM and the rows ``build(gm)`` makes for them (their pks by name), built once
    for the module (:func:`tests.module_db.module_rows`): each test changes them in its own
    savepoint, rolled back after it. Returns the module-scoped ``world`` fixture (the pks,
    ``"gm"`` among them) and a ``gm`` fixture (the account, read afresh for each test)."""

    def rows() -> dict[str, int]:
        from django.contrib.auth import get_user_model

        from tests.panel.conftest import PASSWORD

        user = get_user_model().objects.create_user("ведущий", password=PASSWORD, is_staff=True)
        return {"gm": user.pk, **build(user)}

    @pytest.fixture
    def gm(world: dict[str, int], django_user_model: Any) -> Any:
        return django_user_model.objects.get(pk=world["gm"])

    return module_rows(rows), gm
