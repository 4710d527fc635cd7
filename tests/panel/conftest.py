"""Fixtures of the panel tests: GM accounts and logged-in clients."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

PASSWORD = "gm-password-1"


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Any) -> None:
    """Accounts are created in most tests; the production hasher is slow on purpose."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def gm(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("ведущий", password=PASSWORD, is_staff=True)


@pytest.fixture
def other_gm(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("чужой", password=PASSWORD, is_staff=True)


@pytest.fixture
def gm_client(gm: Any) -> Client:
    client = Client()
    client.force_login(gm)
    return client


@pytest.fixture
def other_client(other_gm: Any) -> Client:
    client = Client()
    client.force_login(other_gm)
    return client


from tests.panel.vk_fake import fake_vk  # noqa: E402, F401  (the fake VK API, a fixture)
