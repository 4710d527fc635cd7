"""The GM accounts of the panel's tests, for the GM's commands tested here."""

from tests.panel.conftest import fast_password_hashing, gm, other_gm  # noqa: F401
