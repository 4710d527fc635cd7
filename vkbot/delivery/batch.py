"""API calls, and how they travel: alone, or up to 25 in one ``execute`` request.

``execute`` takes a VKScript program; the one generated here is, when no two calls message
one peer, a single statement, ``return [API.a.b({...}), API.c.d({...})];`` with JSON literals
as arguments (the subset the local VK server parses, see ``localvk/execute.py``). VK runs the
calls in order; a call that fails yields ``false`` in the answer's list and an entry in
``execute_errors`` (in the same order), the others their answers.

When a call messages a peer an earlier call of the program messages too, it runs only if
those earlier calls succeeded (:func:`guards`)::

    var a0 = API.messages.send({...});
    var a1 = 0;
    if (a0) { a1 = API.messages.send({...}); }
    return [a0, a1];

so a peer never reads the later message when VK failed the earlier one on its own; a call
skipped so answers ``0`` (no call here answers 0), and its recipients are held for the next
round (``CallResult.held``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from outbox.outcomes import Failure

#: The token a call needs (VK.md): the community's, or a community admin's user token.
TokenKind = Literal["group", "user"]
#: What a call does for its rows (see ``plan`` and ``outcome``).
CallKind = Literal["send", "edit", "board", "link", "kick", "answer", "create_chat"]

#: VK runs at most 25 API calls in one ``execute``.
EXECUTE_MAX_CALLS = 25
#: A bound on one program's size (each character may take up to 6 bytes in the form body).
EXECUTE_MAX_CODE = 40_000
#: A bound on what the guarded form adds to one call: ``var a24=0;if(a0&&…&&a23){a24=…;}``
#: and its place in the ``return`` list.
GUARD_OVERHEAD = 30 + 5 * (EXECUTE_MAX_CALLS - 1)
#: What a guarded call that did not run answers.
SKIPPED = 0
#: The calls that put a message in front of a peer: the ones guarded.
PEER_KINDS = ("send", "edit")

#: VK errors worth retrying: a rate or flood limit, a hiccup on VK's side, a captcha, a daily
#: quota, and a token VK refused (an operator can fix it; until then nothing can be sent).
RETRYABLE_CODES = frozenset({1, 5, 6, 9, 10, 14, 27, 28, 29, 603})
#: A whole ``execute`` refused as uncompilable or failed at run time: a bug of ours, logged;
#: its calls are retried (and give up after OUTBOX_MAX_ATTEMPTS, which tells the GM).
EXECUTE_FAILURE_CODES = frozenset({12, 13})


def is_retryable(failure: Failure) -> bool:
    """Network errors, and the VK errors in :data:`RETRYABLE_CODES`."""
    return failure.code is None or failure.code in RETRYABLE_CODES


@dataclass(frozen=True)
class Call:
    """One VK API call and what it does for which Outbox rows.

    ``targets`` pairs (row id, recipient) for a ``send`` (recipients of several rows merged
    into one ``peer_ids`` send are all different); ``part`` is the piece of a long text.
    """

    token: TokenKind
    method: str
    params: dict[str, Any]
    kind: CallKind
    row_ids: tuple[int, ...]
    targets: tuple[tuple[int, int], ...] = ()
    part: int = 0
    parts: int = 1

    def vkscript(self) -> str:
        return f"API.{self.method}({script_literal(self.params)})"

    def form(self) -> dict[str, str]:
        """The parameters as a form, for a call sent on its own."""
        return {key: form_value(value) for key, value in self.params.items() if value is not None}


@dataclass
class CallResult:
    """VK's answer to one call: ``value``, or ``failure``; ``held``: recipients of the call
    not sent in this round, so that each peer reads its rows in order (:mod:`.order`)."""

    value: Any = None
    failure: Failure | None = None
    held: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        return self.failure is None


@dataclass
class Request:
    """One HTTP request: a call on its own, or an ``execute`` of several, as the community
    ``community`` (None: with the transport's own tokens)."""

    token: TokenKind
    calls: list[Call] = field(default_factory=list)
    community: int | None = None

    @property
    def method(self) -> str:
        return self.calls[0].method if len(self.calls) == 1 else "execute"

    def form(self) -> dict[str, str]:
        if len(self.calls) == 1:
            return self.calls[0].form()
        return {"code": execute_code(self.calls)}

    def results(self, answer: dict[str, Any]) -> list[CallResult]:
        """Per-call results from VK's answer (``{"response": …, "execute_errors": …}``)."""
        if len(self.calls) == 1:
            return [CallResult(value=answer.get("response"))]
        return split_execute(self.calls, answer)

    def failed(self, failure: Failure) -> list[CallResult]:
        """Every call failed the same way (the request as a whole got an error)."""
        return [CallResult(failure=failure) for _ in self.calls]


def form_value(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list | tuple):
        return ",".join(str(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def script_literal(value: Any) -> str:
    """A JSON literal VKScript reads as the same value (line and paragraph separators escaped:
    a raw one ends a JavaScript string)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def guards(calls: Sequence[Call]) -> list[tuple[int, ...]]:
    """Per call, the earlier calls it runs after only if they succeeded: for a message, the
    latest earlier message of the program to each of its recipients."""
    last: dict[int, int] = {}
    result: list[tuple[int, ...]] = []
    for index, call in enumerate(calls):
        if call.kind not in PEER_KINDS:
            result.append(())
            continue
        peers = dict.fromkeys(peer for _, peer in call.targets)
        result.append(tuple(sorted({last[p] for p in peers if p in last})))
        for peer in peers:
            last[peer] = index
    return result


def execute_code(calls: Sequence[Call]) -> str:
    """``return [API.x.y({...}), ...];`` — the calls run in order, one answer each; in the
    guarded form when a call depends on an earlier one (:func:`guards`)."""
    depends = guards(calls)
    if not any(depends):
        return "return [" + ",".join(call.vkscript() for call in calls) + "];"
    lines: list[str] = []
    for index, (call, earlier) in enumerate(zip(calls, depends, strict=True)):
        if not earlier:
            lines.append(f"var a{index}={call.vkscript()};")
            continue
        condition = "&&".join(f"a{at}" for at in earlier)
        lines.append(f"var a{index}={SKIPPED};if({condition}){{a{index}={call.vkscript()};}}")
    names = ",".join(f"a{index}" for index in range(len(calls)))
    return "".join(lines) + f"return [{names}];"


def split_execute(calls: Sequence[Call], answer: dict[str, Any]) -> list[CallResult]:
    """Pair an ``execute`` answer with its calls: each ``false`` takes the next entry of
    ``execute_errors``; a guarded call that did not run holds its recipients. An answer that
    does not fit is a failure of every call (retried)."""
    response = answer.get("response")
    errors = list(answer.get("execute_errors") or [])
    if not isinstance(response, list) or len(response) != len(calls):
        failure = Failure(None, f"unexpected execute answer: {str(response)[:200]}")
        return [CallResult(failure=failure) for _ in calls]
    results: list[CallResult] = []
    pending_errors = iter(errors)
    for call, earlier, value in zip(calls, guards(calls), response, strict=True):
        if earlier and value == SKIPPED and value is not False:
            peers = sorted({peer for _, peer in call.targets})
            results.append(CallResult(held=tuple(peers)))
        elif value is False:
            error = next(pending_errors, None) or {}
            code = error.get("error_code")
            failure = Failure(
                int(code) if isinstance(code, int) else None,
                str(error.get("error_msg") or "the call failed inside execute"),
            )
            results.append(CallResult(failure=failure))
        else:
            results.append(CallResult(value=value))
    return results


def pack(
    calls: Iterable[Call],
    *,
    max_calls: int = EXECUTE_MAX_CALLS,
    max_code: int = EXECUTE_MAX_CODE,
    community: int | None = None,
) -> list[Request]:
    """Requests for the calls, per token, in order: ``execute`` batches of up to ``max_calls``
    calls whose program stays under ``max_code`` characters (a call alone goes as itself);
    all of them as ``community``."""
    requests: list[Request] = []
    open_requests: dict[str, tuple[Request, int]] = {}
    for call in calls:
        size = len(call.vkscript()) + GUARD_OVERHEAD
        current = open_requests.get(call.token)
        if current is not None:
            request, used = current
            if len(request.calls) < max_calls and used + size <= max_code:
                request.calls.append(call)
                open_requests[call.token] = (request, used + size)
                continue
        request = Request(call.token, [call], community)
        requests.append(request)
        open_requests[call.token] = (request, len("return [];") + size)
    return requests
