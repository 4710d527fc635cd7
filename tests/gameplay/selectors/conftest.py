"""The GM accounts of the panel's tests, for the selectors that answer per GM."""

from tests.panel.conftest import fast_password_hashing, gm, other_gm  # noqa: F401
