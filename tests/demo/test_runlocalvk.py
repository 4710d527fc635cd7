"""``manage.py runlocalvk``: the local VK server with its defaults from the Django settings."""

from __future__ import annotations

from typing import Any

import pytest


def test_runlocalvk_takes_its_defaults_from_settings(settings: Any) -> None:
    from demo.management.commands.runlocalvk import Command

    settings.VK_GROUP_ID = 321
    settings.VK_GROUP_TOKEN = "from-settings"
    settings.VK_USER_TOKEN = "admin-from-settings"
    command = Command()
    parser = command.create_parser("manage.py", "runlocalvk")
    options = vars(parser.parse_args([]))
    state = command.build_state(options)
    assert (state.group_id, state.group_token) == (321, "from-settings")
    assert state.user_tokens == {"admin-from-settings": 100}
    explicit = vars(
        parser.parse_args(["--group-id", "9", "--user-token", "a", "--user-token", "b"])
    )
    state = command.build_state(explicit)
    assert state.group_id == 9 and state.user_tokens == {"a": 100, "b": 101}


def test_runlocalvk_declares_more_communities(settings: Any) -> None:
    from django.core.management.base import CommandError

    from demo.management.commands.runlocalvk import Command
    from localvk import Communities

    settings.VK_GROUP_ID = 321
    settings.VK_GROUP_TOKEN = "from-settings"
    settings.VK_USER_TOKEN = "admin-from-settings"
    command = Command()
    parser = command.create_parser("manage.py", "runlocalvk")
    state = command.build_state(vars(parser.parse_args([
        "--group-scopes", "messages", "--community", "322:second:admin-from-settings:Вторая",
        "--community", "323:third::Третья:messages,photos",
    ])))  # fmt: skip
    registry = Communities.of(state)
    assert [c.group_id for c in registry] == [321, 322, 323]
    assert state.group_tokens == {"from-settings": {"messages"}}
    second, third = registry.get(322), registry.get(323)
    assert second.user_tokens == {"admin-from-settings": 100} and second.group_name == "Вторая"
    assert third.group_tokens == {"third": {"messages", "photos"}} and not third.user_tokens
    for bad in (
        ["--community", "322:from-settings:x"],
        ["--community", "nope"],
        ["--group-scopes", "wall"],
    ):
        with pytest.raises(CommandError):
            command.build_state(vars(parser.parse_args(bad)))


def test_runlocalvk_takes_the_code_and_secret_from_settings(settings: Any) -> None:
    from django.core.management.base import CommandError

    from demo.management.commands.runlocalvk import Command

    settings.VK_CONFIRMATION_CODE = "from-settings"
    settings.VK_CALLBACK_SECRET = "secret-from-settings"
    command = Command()
    parser = command.create_parser("manage.py", "runlocalvk")
    state = command.build_state(vars(parser.parse_args([])))
    assert state.callbacks.config is None  # no URL: no pushing, whatever the settings say
    state = command.build_state(vars(parser.parse_args(["--callback-url", "http://h/cb/"])))
    config = state.callbacks.config
    assert config is not None
    assert (config.confirmation_code, config.secret) == ("from-settings", "secret-from-settings")

    settings.VK_CONFIRMATION_CODE = ""
    with pytest.raises(CommandError, match="confirmation code"):
        command.build_state(vars(parser.parse_args(["--callback-url", "http://h/cb/"])))


def test_runlocalvk_takes_the_vk_id_app_from_options_or_settings(settings: Any) -> None:
    from django.core.management.base import CommandError

    from demo.management.commands.runlocalvk import Command
    from localvk import Communities

    settings.VK_ID_APP_ID = 51234567
    settings.VK_ID_REDIRECT_URI = "http://127.0.0.1:8000/cb/"
    command = Command()
    parser = command.create_parser("manage.py", "runlocalvk")
    vkid = Communities.of(command.build_state(vars(parser.parse_args([])))).vkid
    assert vkid.apps[51234567].redirect_uris == ("http://127.0.0.1:8000/cb/",)
    assert vkid.access_ttl == 3600.0
    explicit = parser.parse_args(
        ["--vkid-app-id", "7", "--vkid-redirect", "http://x.test/", "--user-token-ttl", "5"]
    )
    vkid = Communities.of(command.build_state(vars(explicit))).vkid
    assert set(vkid.apps) == {7} and vkid.access_ttl == 5.0
    settings.VK_ID_APP_ID = None
    assert not Communities.of(command.build_state(vars(parser.parse_args([])))).vkid.apps
    with pytest.raises(CommandError):
        command.build_state(vars(parser.parse_args(["--vkid-app-id", "7"])))
