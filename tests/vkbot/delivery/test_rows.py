"""Texts cut into pieces within VK's limits (vkbot/delivery/rows.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vkbot.delivery.rows import split_text


@given(st.text(min_size=0, max_size=3000), st.integers(min_value=20, max_value=400))
def test_split_text_keeps_everything_within_the_limit(text: str, limit: int) -> None:
    pieces = split_text(text, limit)
    assert all(len(p) <= limit for p in pieces)
    assert len(pieces) == 1 or all(p.strip() for p in pieces)  # never a blank piece
    assert "".join(pieces).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace(
        "\n", ""
    )
