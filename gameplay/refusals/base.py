"""What every refusal of the family shares."""

from __future__ import annotations


class Worded:
    """``str()`` is the text a person reads (as when the text was the exception's message)."""

    def __str__(self) -> str:
        return self.reason  # type: ignore[attr-defined]
