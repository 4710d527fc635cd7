"""Typed access to form-encoded VK parameters; anything malformed is VK's error 100."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from .errors import param_error

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


def to_param_value(value: Any) -> str | None:
    """Encode a Python/JSON value the way VK clients put it in a form (None drops the key)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list | tuple):
        return ",".join(str(to_param_value(item)) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def encode_params(values: Mapping[str, Any]) -> dict[str, str]:
    """Encode a mapping of arbitrary values into VK's string parameters."""
    encoded: dict[str, str] = {}
    for key, value in values.items():
        text = to_param_value(value)
        if text is not None:
            encoded[str(key)] = text
    return encoded


class Params(Mapping[str, str]):
    """Read-only view of a request's parameters with VK-style validation."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = dict(values)

    def __getitem__(self, key: str) -> str:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def has(self, name: str) -> bool:
        """True if the parameter is present and not empty."""
        return self._values.get(name, "") != ""

    def get_str(
        self, name: str, *, required: bool = False, max_length: int | None = None
    ) -> str | None:
        value = self._values.get(name)
        if value is None or value == "":
            if required:
                raise param_error(f"{name} is undefined")
            return None
        if max_length is not None and len(value) > max_length:
            raise param_error(f"{name} is too long")
        return value

    def req_str(self, name: str, *, max_length: int | None = None) -> str:
        value = self.get_str(name, required=True, max_length=max_length)
        assert value is not None
        return value

    def get_int(
        self,
        name: str,
        *,
        required: bool = False,
        default: int | None = None,
        minimum: int | None = None,
        maximum: int | None = INT64_MAX,
    ) -> int | None:
        raw = self._values.get(name)
        if raw is None or raw.strip() == "":
            if required:
                raise param_error(f"{name} is undefined")
            return default
        value = _parse_int(name, raw)
        _check_range(name, value, minimum, maximum)
        return value

    def req_int(
        self, name: str, *, minimum: int | None = None, maximum: int | None = INT64_MAX
    ) -> int:
        value = self.get_int(name, required=True, minimum=minimum, maximum=maximum)
        assert value is not None
        return value

    def get_int_list(
        self, name: str, *, max_items: int | None = None, minimum: int | None = None
    ) -> list[int] | None:
        raw = self._values.get(name)
        if raw is None or raw.strip() == "":
            return None
        items = [part.strip() for part in raw.split(",")]
        if any(part == "" for part in items):
            raise param_error(f"{name} is invalid")
        values = [_parse_int(name, part) for part in items]
        for value in values:
            _check_range(name, value, minimum, INT64_MAX)
        if max_items is not None and len(values) > max_items:
            raise param_error(f"{name} is too long, max {max_items} items")
        return values

    def get_bool(self, name: str, *, default: bool = False) -> bool:
        raw = self._values.get(name)
        if raw is None or raw == "":
            return default
        lowered = raw.strip().lower()
        if lowered in {"1", "true"}:
            return True
        if lowered in {"0", "false"}:
            return False
        raise param_error(f"{name} should be 0 or 1")

    def get_choice(self, name: str, options: tuple[str, ...], *, default: str) -> str:
        raw = self._values.get(name)
        if raw is None or raw == "":
            return default
        if raw not in options:
            raise param_error(f"{name} should be one of {', '.join(options)}")
        return raw


def _parse_int(name: str, raw: str) -> int:
    text = raw.strip()
    try:
        return int(text)
    except ValueError:
        raise param_error(f"{name} not integer") from None


def _check_range(name: str, value: int, minimum: int | None, maximum: int | None) -> None:
    if minimum is not None and value < minimum:
        raise param_error(f"{name} should be not less than {minimum}")
    if maximum is not None and value > maximum:
        raise param_error(f"{name} should be not more than {maximum}")
