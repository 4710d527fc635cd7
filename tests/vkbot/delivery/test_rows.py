"""Texts cut into pieces within VK's limits (vkbot/delivery/rows.py)."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from vkbot.delivery.rows import split_text


def _printed(text: str) -> str:
    """What a reader sees of ``text``: its characters but the blanks (``str.isspace``: spaces,
    line breaks, tabs, the separators), which a cut may drop where it falls."""
    return "".join(ch for ch in text if not ch.isspace())


@given(st.text(min_size=0, max_size=3000), st.integers(min_value=20, max_value=400))
@example(text="0" * 20 + "\x1f", limit=20)  # a blank that is not a space ends the text
def test_split_text_keeps_everything_within_the_limit(text: str, limit: int) -> None:
    pieces = split_text(text, limit)
    assert all(len(p) <= limit for p in pieces)
    assert len(pieces) == 1 or all(p.strip() for p in pieces)  # never a blank piece
    assert _printed("".join(pieces)) == _printed(text)
