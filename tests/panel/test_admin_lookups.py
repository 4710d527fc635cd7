"""No query a GM can shape on the admin's lists learns a secret before the end: the rounds'
seeds (``Game.seed``, ``DealRound.seed``), the communities' tokens and Callback secrets, the
accounts' password hashes. A seed known while sign-up runs lets a GM pick who is dealt mafia
(remove one sign-up, add one VK id), so a lookup such as ``?seed__startswith=a4`` or a binary
search with ``?seed__lt=…`` must list the same games whatever the guess.

Two layers: the secrets are stored Fernet-encrypted (a ciphertext that differs per row, so a
lookup compares nothing meaningful), and every admin list accepts only the lookups of its own
allow-list (``panel.lookups.AllowListedLookups``); any other ``field__lookup`` is refused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.contrib.auth.models import Group, User
from django.db import models
from django.db.models.constants import LOOKUP_SEP
from django.test import Client
from django.urls import reverse

from gameplay.models import Community, CommunityMember, CommunityRole, DealRound, Game
from gameplay.models.secrets import SecretField
from panel.admin import GameAdmin
from tests.module_db import module_rows
from tests.panel.conftest import PASSWORD
from tests.panel.support import make_game

pytestmark = pytest.mark.django_db

#: The secrets that must be stored encrypted: (model, field name).
ENCRYPTED = frozenset(
    {
        (Game, "seed"),
        (DealRound, "seed"),
        (Community, "group_token"),
        (Community, "user_token"),
        (Community, "callback_secret"),
    }
)


def encrypted_fields() -> set[tuple[type[models.Model], str]]:
    """Every ``SecretField`` of the project's models."""
    return {
        (model, field.name)
        for model in apps.get_models()
        for field in model._meta.get_fields()
        if isinstance(field, SecretField)
    }


#: Every secret the walks cover: whatever is stored encrypted (a secret added later is walked
#: too), the seeds, and the accounts' password hashes.
SECRETS = frozenset(encrypted_fields() | ENCRYPTED | {(User, "password")})
#: How many relations a walk follows from a list's model to reach a secret.
HOPS = 2
SEED_A = "a4" + "1c" * 31
SEED_B = "5b" + "e3" * 31


def client_for(user: Any) -> Client:
    client = Client(raise_request_exception=False)  # a 500 is a status the walk sees
    client.force_login(user)
    return client


def build_world() -> dict[str, Any]:
    """Games in sign-up, dealt and running, of a community with every secret; one game of
    another GM; the GM (in a group) and a superuser, each with a signed-in client. Built once
    for the module (:func:`tests.module_db.module_rows`): the tests only read them."""
    gm = User.objects.create_user("ведущий", password=PASSWORD, is_staff=True)
    club = Community.objects.create(
        vk_id=910,
        name="Клуб",
        connected=True,
        group_token="vk1.a.group-token-of-the-club",
        user_token="vk1.a.user-token-of-the-admin",
        callback_secret="callback-secret-of-the-club",
    )
    CommunityMember.objects.create(community=club, user=gm, role=CommunityRole.GM)
    other = User.objects.create_user("другой", password="x", is_staff=True)
    group = Group.objects.create(name="ведущие")
    gm.groups.add(group)
    club_games: dict[str, Any] = {"vk_group_id": club.vk_id}
    games = {
        "recruiting": make_game(gm, deal=False, start=False, seed=SEED_A, vk_base=81_000,
                                **club_games),
        "dealt": make_game(gm, start=False, seed=SEED_B, name="Вторая", vk_base=82_000,
                           **club_games),
        "drawn": make_game(gm, start=False, seed=None, name="Третья", vk_base=83_000,
                           **club_games),
        "running": make_game(gm, seed="f" * 64, name="Четвёртая", vk_base=84_000,
                             **club_games),
        "theirs": make_game(other, deal=False, start=False, seed="0" * 64, name="Чужая",
                            vk_base=85_000, **club_games),
    }  # fmt: skip
    boss = User.objects.create_superuser("админ", password="x")
    return {"games": games, "gm": client_for(gm), "boss": client_for(boss), "club": club}


world = module_rows(build_world)


def changelist_url(model: type[models.Model]) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


def listing(client: Client, url: str, params: dict[str, str] | None = None) -> tuple:
    """What a list shows for these query parameters: the rows listed, or that it refused
    (the panel's redirect to the bare list, ``?e=1``, as for a malformed filter; Django's own
    400 for a lookup across relations). Never a 500."""
    response = client.get(url, params or {})
    assert response.status_code in (200, 302, 400), (url, params, response.status_code)
    if response.status_code == 302:
        assert response["Location"] == f"{url}?e=1", response["Location"]
    if response.status_code != 200:
        return ("refused",)
    change_list: ChangeList = response.context["cl"]
    return ("listed", tuple(sorted(row.pk for row in change_list.result_list)))


def registered() -> list[tuple[type[models.Model], admin.ModelAdmin]]:
    return sorted(admin.site._registry.items(), key=lambda item: item[0]._meta.label)


def lookups_of(field: models.Field) -> list[str]:
    """Every lookup and transform registered for the field's class ("" is the bare field)."""
    return ["", *sorted(field.get_lookups())]


def key(path: str, lookup: str) -> str:
    return f"{path}{LOOKUP_SEP}{lookup}" if lookup else path


def secret_paths(model: type[models.Model]) -> Iterator[tuple[str, models.Field]]:
    """Every ``a__b__secret`` path from ``model`` to a secret field, across up to ``HOPS``
    relations (forward and reverse)."""

    def walk(at: type[models.Model], prefix: str, hops: int) -> Iterator[tuple[str, Any]]:
        for field in at._meta.get_fields():
            path = f"{prefix}{field.name}"
            if (at, field.name) in SECRETS:
                yield path, field
            elif field.is_relation and field.related_model is not None and hops < HOPS:
                yield from walk(field.related_model, f"{path}{LOOKUP_SEP}", hops + 1)

    yield from walk(model, "", 0)


def guesses(plain: str, lookup: str) -> list[str]:
    """The values an attacker tries for a lookup on a secret whose value is ``plain``."""
    if lookup == "isnull":
        return ["1", "0"]
    return [plain, plain[:1], plain[:2], plain[1:], ""]


def plain_value(field: models.Field) -> str:
    row = field.model.objects.exclude(**{field.name: ""}).order_by("pk").first()  # type: ignore[attr-defined]
    return str(getattr(row, field.name)) if row is not None else "x"


def visible_to(client: Client, model: type[models.Model]) -> bool:
    return client.get(changelist_url(model)).status_code == 200


def test_every_secret_is_stored_encrypted() -> None:
    """The seeds of the deal are ``SecretField``s, as the tokens are."""
    assert ENCRYPTED <= encrypted_fields()


@pytest.mark.slow  # thousands of requests: `make test`, not the edit loop's lane
@pytest.mark.parametrize("who", ["gm", "boss"])
def test_no_lookup_on_a_secret_changes_what_is_listed(world: dict[str, Any], who: str) -> None:
    """Every list registered on the admin site, every path to a secret, every lookup its
    field's class registers, with the secret's own value and its prefixes: the list is the
    unfiltered one or refused."""
    client: Client = world[who]
    walked = 0
    for model, _ in registered():
        url = changelist_url(model)
        if not visible_to(client, model):
            continue
        unfiltered = listing(client, url)
        assert unfiltered[0] == "listed" and unfiltered[1]
        for path, field in secret_paths(model):
            plain = plain_value(field)
            local = LOOKUP_SEP not in path
            for lookup in lookups_of(field):
                values = guesses(plain, lookup) if local else guesses(plain, lookup)[1:2]
                for value in values:
                    seen = listing(client, url, {key(path, lookup): value})
                    assert seen in (unfiltered, ("refused",)), (who, url, key(path, lookup), value)
                    walked += 1
    assert walked > 100


@pytest.mark.slow  # every lookup of every field of every list: `make test` runs it
@pytest.mark.parametrize("who", ["gm", "boss"])
def test_only_the_allow_listed_lookups_are_accepted(world: dict[str, Any], who: str) -> None:
    """Every field of every listed model with every lookup its class registers: refused
    unless the list's allow-list names it, and never a 500."""
    client: Client = world[who]
    for model, model_admin in registered():
        url = changelist_url(model)
        if not visible_to(client, model):
            continue
        allowed = set(model_admin.allowed_lookups)  # type: ignore[attr-defined]  # the panel's
        for field in model._meta.get_fields():
            if not field.concrete or field.is_relation:
                continue
            for lookup in lookups_of(field):
                param = key(field.name, lookup)
                seen = listing(client, url, {param: "1"})
                assert (seen == ("refused",)) == (param not in allowed), (who, url, param)


def test_the_lists_filters_still_work(world: dict[str, Any]) -> None:
    """Every choice each list's filters offer is an allowed lookup: it lists, not refuses."""
    client: Client = world["boss"]
    for model, _ in registered():
        url = changelist_url(model)
        response = client.get(url)
        assert response.status_code == 200
        choices = [
            choice["query_string"]
            for spec in response.context["cl"].filter_specs
            for choice in spec.choices(response.context["cl"])
        ]
        for query in choices:
            assert client.get(f"{url}{query}").status_code == 200, (url, query)


@pytest.mark.slow  # every ordering and search of every list: `make test` runs it
def test_ordering_search_and_autocomplete_never_touch_a_secret(world: dict[str, Any]) -> None:
    """The columns a list sorts by (``?o=``) and its search fields (``?q=``, the autocomplete)
    are no secret; searching for a secret's value finds nothing, as a nonsense word does."""
    client: Client = world["boss"]
    for model, model_admin in registered():
        url = changelist_url(model)
        request = client.get(url).wsgi_request
        change_list = model_admin.get_changelist_instance(request)
        for index, column in enumerate(model_admin.get_list_display(request)):
            ordering = change_list.get_ordering_field(column)
            if ordering is None:
                continue
            name = str(ordering).lstrip("-").split(LOOKUP_SEP)[0]
            assert (model, name) not in SECRETS, (url, column)
            for sign in ("", "-"):
                assert client.get(url, {"o": f"{sign}{index}"}).status_code == 200
        for search in model_admin.get_search_fields(request):
            assert (model, search.lstrip("^=@").split(LOOKUP_SEP)[0]) not in SECRETS
        nonsense = listing(client, url, {"q": "zz-nothing-is-called-so"})
        for secret_model, name in SECRETS:
            for row in secret_model.objects.exclude(**{name: ""}):  # type: ignore[attr-defined]
                value = str(getattr(row, name))
                for term in (value, value[:8]):
                    assert listing(client, url, {"q": term}) == nonsense, (url, name)
    # The autocomplete of every relation to a listed model searches that model's fields only.
    autocomplete = reverse("admin:autocomplete")
    for model, _ in registered():
        for field in model._meta.get_fields():
            if not (
                field.is_relation and field.concrete and field.related_model in dict(registered())
            ):
                continue
            assert model._meta.model_name is not None  # a concrete model's
            params = {"app_label": model._meta.app_label, "model_name": model._meta.model_name,
                      "field_name": field.name}  # fmt: skip
            found = set()
            for term in (SEED_A, SEED_A[:4], "vk1.a.group", "zz-nothing-is-called-so"):
                response = client.get(autocomplete, {**params, "term": term})
                assert response.status_code != 500
                found.add(response.content if response.status_code == 200 else b"refused")
            assert len(found) == 1, (model, field.name)


# --- the attack of the issue, through the panel as a GM -----------------------------------------


@pytest.mark.slow  # hundreds of guesses: `make test` runs it
def test_the_seed_search_lists_the_same_games_for_every_guess(world: dict[str, Any]) -> None:
    """``?seed__startswith=<each hex digit>`` and the binary search's ``seed__lt``/``seed__gt``
    guesses, as a GM: every guess gets the same answer, so none tells the seed apart."""
    client: Client = world["gm"]
    url = changelist_url(Game)
    recruiting: Game = world["games"]["recruiting"]
    drawn = DealRound.objects.get(game=world["games"]["drawn"]).seed  # drawn by the server
    assert Game.objects.get(pk=recruiting.pk).seed == SEED_A  # the seed reads back as it was
    assert len(listing(client, url)[1]) == 4  # the GM's four games
    answers = {}
    for param in ("seed__startswith", "seed__istartswith", "deal_rounds__seed__startswith"):
        for digit in "0123456789abcdef":
            answers[(param, digit)] = listing(client, url, {param: digit})
    middle = "8" + "0" * 63
    for param in ("seed__lt", "seed__gt", "seed__lte", "seed__gte", "deal_rounds__seed__lt"):
        for guess in (middle, "4" + "0" * 63, "c" + "0" * 63, SEED_A, SEED_B, drawn):
            answers[(param, guess)] = listing(client, url, {param: guess})
    by_answer: dict[tuple, list[str]] = {}
    for (param, guess), answer in answers.items():
        by_answer.setdefault(answer, []).append(f"{param}={guess[:4]}")
    assert len(by_answer) == 1, by_answer  # the guesses each answer was given to
    # The binary search of the issue, run to the end, learns nothing: every bit the same.
    low, high = "0" * 64, "f" * 64
    bits = []
    for _ in range(256):
        middle = format((int(low, 16) + int(high, 16)) // 2, "064x")
        below = listing(client, url, {"seed__lt": middle})
        bits.append(below)
        hit = below[0] == "listed" and recruiting.pk in below[1]
        low, high = (low, middle) if hit else (middle, high)
        if int(high, 16) - int(low, 16) <= 1:
            break
    assert len(set(bits)) == 1 and SEED_A not in (low, high)


# --- a refused list is refused before it is built ------------------------------------------------


def test_a_refused_lookup_builds_no_list(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A lookup off the allow-list is refused from the query string alone: no list, no query
    set; the redirect and the security log are those of a refusal met while building it. An
    allowed filter still builds its list."""
    built: list[str] = []
    original = GameAdmin.get_queryset

    def spied(self: GameAdmin, request: Any) -> Any:
        built.append(request.get_full_path())
        return original(self, request)

    monkeypatch.setattr(GameAdmin, "get_queryset", spied)
    client: Client = world["gm"]
    url = changelist_url(Game)
    with caplog.at_level("WARNING", logger="django.security.DisallowedModelAdminLookup"):
        assert listing(client, url, {"seed__startswith": "a"}) == ("refused",)
        assert listing(client, url, {"status__exact": "recruiting", "name__gt": "A"}) == (
            "refused",
        )
    assert built == []
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == [
        "Filtering by seed__startswith not allowed",
        "Filtering by name__gt not allowed",
    ]
    # The parameters a list reads as no filter are no refusal: paging, sorting, searching.
    assert listing(client, url, {"p": "1", "o": "1", "q": "Вторая", "status__exact": "dealt"})[
        0
    ] == ("listed")
    assert len(built) == 1


def test_a_refused_lookup_keeps_what_the_list_checks_first(world: dict[str, Any]) -> None:
    """Beside a refused lookup, what Django's list answers before its filters still comes
    first: a ``_to_field`` the list may not reference is a 400, and a search with a NUL
    character is reported (a message on the page the refusal redirects to)."""
    client: Client = world["boss"]
    url = changelist_url(Game)
    response = client.get(url, {"_to_field": "seed", "seed__startswith": "a"})
    assert response.status_code == 400
    response = client.get(url, {"_to_field": "seed"})  # alone: the same 400 as Django's
    assert response.status_code == 400
    response = client.get(url, {"q": "a\x00b", "seed__startswith": "a"}, follow=True)
    assert response.redirect_chain == [(f"{url}?e=1", 302)]
    errors = [str(m) for m in response.context["messages"]]
    assert errors == ["Данные содержат запрещённый символ: ноль-байт"]
