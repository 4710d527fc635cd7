"""The record of every API call the local server answered (or dropped)."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .limits import max_in_window


def token_fingerprint(token: str | None) -> str | None:
    """A short stand-in for a token in the record (``sha256`` hex, 12 characters): which
    token a call came with, without the token itself."""
    if not token:
        return None
    return hashlib.sha256(token.encode()).hexdigest()[:12]


@dataclass
class CallRecord:
    """One API call. ``parent`` is the seq of the ``execute`` a call ran inside, else None.
    ``group_id`` is the community the call was attributed to (by its token; None for a call
    without a valid token), ``token`` the :func:`token_fingerprint` of its token."""

    seq: int
    time: float
    monotonic: float
    token_kind: str
    method: str
    params: dict[str, str]
    version: str | None = None
    response: Any = None
    error: dict[str, Any] | None = None
    execute_errors: list[dict[str, Any]] | None = None
    fault: str | None = None
    parent: int | None = None
    user_id: int | None = None
    group_id: int | None = None
    token: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and self.fault not in {"drop_before"}

    @property
    def error_code(self) -> int | None:
        return None if self.error is None else int(self.error["error_code"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "time": self.time,
            "monotonic": self.monotonic,
            "token_kind": self.token_kind,
            "method": self.method,
            "params": self.params,
            "version": self.version,
            "response": self.response,
            "error": self.error,
            "execute_errors": self.execute_errors,
            "fault": self.fault,
            "parent": self.parent,
            "user_id": self.user_id,
            "group_id": self.group_id,
            "token": self.token,
        }


class CallLog:
    """Append-only list of :class:`CallRecord` with the queries tests need."""

    def __init__(self, counter: Callable[[], int] | None = None) -> None:
        """``counter``: where the seq numbers come from (the communities of one server share
        one, so seqs are unique and ordered across them)."""
        self.records: list[CallRecord] = []
        self._counter = counter if counter is not None else itertools.count(1).__next__

    def next_seq(self) -> int:
        return self._counter()

    def add(self, record: CallRecord) -> CallRecord:
        self.records.append(record)
        return record

    def clear(self) -> None:
        self.records.clear()

    def find(
        self,
        method: str | None = None,
        *,
        token_kind: str | None = None,
        since: int = 0,
        include_inner: bool = True,
        ok: bool | None = None,
    ) -> list[CallRecord]:
        """Records matching all the given filters, oldest first (``since``: seq greater than)."""
        found = []
        for record in self.records:
            if record.seq <= since:
                continue
            if method is not None and record.method != method:
                continue
            if token_kind is not None and record.token_kind != token_kind:
                continue
            if not include_inner and record.parent is not None:
                continue
            if ok is not None and record.ok != ok:
                continue
            found.append(record)
        return found

    def requests(self, token_kind: str | None = None) -> list[CallRecord]:
        """Top-level requests (an ``execute`` is one request; its inner calls are not)."""
        return self.find(token_kind=token_kind, include_inner=False)

    def max_per_second(self, token_kind: str | None = None, *, accepted_only: bool = False) -> int:
        """Most requests seen in any 1-second window, for one token kind or all."""
        records = self.requests(token_kind)
        if accepted_only:
            records = [r for r in records if r.error_code != 6 or r.fault is not None]
        return max_in_window(r.monotonic for r in records)

    def stats(self) -> dict[str, Any]:
        kinds = sorted({r.token_kind for r in self.records})
        per_kind: dict[str, Any] = {}
        for kind in kinds:
            requests = self.requests(kind)
            errors: dict[str, int] = {}
            for record in requests:
                if record.error_code is not None:
                    key = str(record.error_code)
                    errors[key] = errors.get(key, 0) + 1
            per_kind[kind] = {
                "requests": len(requests),
                "max_per_second": self.max_per_second(kind),
                "max_accepted_per_second": self.max_per_second(kind, accepted_only=True),
                "errors": errors,
            }
        methods: dict[str, int] = {}
        for record in self.records:
            methods[record.method] = methods.get(record.method, 0) + 1
        return {
            "requests": len(self.requests()),
            "calls": len(self.records),
            "max_per_second": self.max_per_second(),
            "per_token_kind": per_kind,
            "methods": methods,
        }
