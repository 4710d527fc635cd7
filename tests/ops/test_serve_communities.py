"""``make run`` with communities as data: the environment's community is optional —
without VK_GROUP_ID the deployment serves the communities connected in the panel and says, in
one line, that none is configured yet and where to connect one — but a half-configured
environment's community is still refused in one line."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from config.env import EnvError
from ops import serve
from ops.serve import Bind, ServeOptions

POSTGRES = {"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "mafia"}}


def settings_of(**values: Any) -> SimpleNamespace:
    base = {
        "VK_GROUP_ID": None, "VK_GROUP_TOKEN": "", "VK_USER_TOKEN": "",
        "VK_CALLBACK_SECRET": "", "VK_CONFIRMATION_CODE": "",
        "REDIS_URL": "redis://127.0.0.1:6379/0", "DATABASES": POSTGRES,
        "VK_API_URL": "https://api.vk.ru/method/", "VK_COMMUNITIES_REFRESH_SECONDS": 5,
        "DEBUG": False,
    }  # fmt: skip
    return SimpleNamespace(**{**base, **values})


@pytest.fixture(autouse=True)
def database_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/mafia")


@pytest.mark.parametrize("callback", [False, True])
def test_no_environments_community_is_a_configuration_that_works(callback: bool) -> None:
    serve.check_config(settings_of(), callback=callback)


ENV = {"VK_GROUP_ID": 77, "VK_GROUP_TOKEN": "g", "VK_USER_TOKEN": "u"}


@pytest.mark.parametrize(
    ("values", "callback", "message"),
    [
        ({"VK_GROUP_ID": 77}, False, "VK_GROUP_TOKEN and VK_USER_TOKEN are not set: "),
        ({"VK_GROUP_ID": 77, "VK_GROUP_TOKEN": "g"}, False, "VK_USER_TOKEN is not set: "),
        ({"VK_GROUP_TOKEN": "g"}, False, "VK_GROUP_TOKEN is set but VK_GROUP_ID is not: "),
        (
            {"VK_GROUP_TOKEN": "g", "VK_USER_TOKEN": "u"},
            False,
            "VK_GROUP_TOKEN and VK_USER_TOKEN are set but VK_GROUP_ID is not",
        ),
        ({"VK_CALLBACK_SECRET": "s"}, True, "VK_CALLBACK_SECRET is set but VK_GROUP_ID is not"),
        ({**ENV, "VK_CONFIRMATION_CODE": "c"}, True, "VK_CALLBACK_SECRET is not set: the Callback"),
    ],
)
def test_a_half_configured_environments_community_is_refused(
    values: dict[str, Any], callback: bool, message: str
) -> None:
    with pytest.raises(EnvError) as refused:
        serve.check_config(settings_of(**values), callback=callback)

    assert str(refused.value).startswith(message), refused.value
    assert "\n" not in str(refused.value)


def test_the_environments_community_in_callback_mode_needs_its_secret_and_code() -> None:
    serve.check_config(settings_of(**ENV), callback=False)
    serve.check_config(
        settings_of(**ENV, VK_CALLBACK_SECRET="s", VK_CONFIRMATION_CODE="c"), callback=True
    )


OPTIONS = ServeOptions(project_dir=Path("."), bind=Bind("127.0.0.1:8000", "127.0.0.1", 8000))


def test_the_banner_says_no_community_is_configured_yet_and_where_to_connect_one() -> None:
    for served in (0, None):
        lines = serve.banner(OPTIONS, settings_of(), served)
        assert lines[0].startswith(
            "running for the VK communities connected in the panel (none yet) via "
        )
        assert lines[1] == (
            "no VK community is configured yet: connect one in the panel at "
            "/panel/communities/connect/ («Сообщества» → «Подключить сообщество»); it is "
            "served within 5 s, no restart."
        )
        assert lines[2] == "Ctrl-C stops everything."


@pytest.mark.parametrize(
    ("values", "served", "start"),
    [
        (ENV, 1, "running for VK community 77 via "),
        (ENV, None, "running for VK community 77 via "),
        (ENV, 3, "running for VK community 77 and 2 more connected in the panel via "),
        ({}, 1, "running for 1 VK community connected in the panel via "),
        ({}, 4, "running for 4 VK communities connected in the panel via "),
    ],
)
def test_the_banner_names_the_communities_served(
    values: dict[str, Any], served: int | None, start: str
) -> None:
    lines = serve.banner(OPTIONS, settings_of(**values), served)

    assert lines[0].startswith(start), lines[0]
    assert not any("no VK community" in line for line in lines)


@pytest.mark.django_db
def test_connected_count_counts_what_the_deployment_serves(settings) -> None:
    from gameplay.models import Community

    settings.VK_GROUP_ID = None
    assert serve.connected_count() == 0
    Community.objects.create(vk_id=5, connected=True)
    Community.objects.create(vk_id=6, connected=False)
    assert serve.connected_count() == 1
    settings.VK_GROUP_ID, settings.VK_GROUP_TOKEN = 7, "g"
    assert serve.connected_count() == 2  # the environment's, not recorded yet, counts


def test_connected_count_is_none_when_the_database_cannot_tell(monkeypatch) -> None:
    from django.db import OperationalError

    import gameplay.selectors.communities as selectors

    def down() -> list[int]:
        raise OperationalError("no such table: gameplay_community")

    monkeypatch.setattr(selectors, "served_group_ids", down)
    assert serve.connected_count() is None
