"""One API request from arrival to answer: version, method, token (which community it goes
to: :meth:`~localvk.communities.Communities.resolve`), rate limit, injected faults, the
method itself (``execute`` included), its token's rights, and the record of it all (in the
community's call log; a call without a valid token in the default community's)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .communities import Communities, Identity
from .errors import VKError, group_auth_error
from .execute import compile_code, run_program
from .faults import NO_FAULT, DropMode, FaultDecision
from .methods import METHODS, CallContext
from .params import Params, encode_params
from .recording import CallRecord, token_fingerprint

if TYPE_CHECKING:
    from .state import LocalVK

logger = logging.getLogger(__name__)

MIN_VERSION = (5, 81)
EXECUTE = "execute"


@dataclass
class ApiAnswer:
    """What to send back: a JSON ``body``, or nothing and ``drop`` the connection, or (with
    ``bad_gateway``) VK's front's HTML 502 page."""

    body: dict[str, Any] | None
    drop: DropMode | None
    record: CallRecord
    bad_gateway: bool = False


def request_params(
    method: str, version: str | None, params: Mapping[str, str]
) -> list[dict[str, str]]:
    """VK's ``request_params`` echo: method, oauth, v, then the call's own parameters."""
    echo = [{"key": "method", "value": method}, {"key": "oauth", "value": "1"}]
    if version is not None:
        echo.append({"key": "v", "value": version})
    echo.extend({"key": key, "value": value} for key, value in params.items())
    return echo


def _check_version(version: str | None) -> None:
    if version is None or version == "":
        raise VKError(
            8,
            message='Invalid request: v is required. Version param should be passed as "v". '
            '"version" param is invalid and not supported.',
        )
    try:
        major, minor = (int(part) for part in version.split(".", 1))
    except ValueError:
        raise VKError(8, "v is invalid") from None
    if (major, minor) < MIN_VERSION:
        raise VKError(8, "versions below 5.81 are deprecated")


def _authenticate(
    token: str | None, identity: Identity | None, communities: Communities
) -> Identity:
    """Who calls, or error 5 with VK's reason: no token, a token VK ID issued that expired or
    was revoked, or a token nobody issued."""
    if token is None or token == "":
        raise VKError(5, "no access_token passed.")
    if identity is None:
        raise VKError(5, communities.vkid.rejection(token) or "invalid access_token (4).")
    return identity


async def handle_api_call(
    server: LocalVK | Communities,
    method: str,
    raw_params: Mapping[str, str],
    *,
    base_url: str,
) -> ApiAnswer:
    """Answer one request to ``/method/<method>`` (the HTTP layer only encodes the answer)."""
    communities = Communities.of(server)
    params = dict(raw_params)
    token = params.pop("access_token", None)
    version = params.pop("v", None)
    echo = request_params(method, version, params)
    decision: FaultDecision = NO_FAULT
    found = communities.resolve(token, params)
    state = found.state if found is not None else communities.default
    with state.lock:
        record = state.log.add(
            CallRecord(
                seq=state.log.next_seq(),
                time=time.time(),
                monotonic=time.monotonic(),
                token_kind="none" if not token else "invalid",
                method=method,
                params=params,
                version=version,
                token=token_fingerprint(token),
            )
        )
        try:
            _check_version(version)
            if method != EXECUTE and method not in METHODS:
                raise VKError(3)
            identity = _authenticate(token, found, communities)
            kind, user_id = identity.kind, identity.user_id
            record.token_kind, record.user_id = kind, user_id
            record.group_id = state.group_id
            assert token is not None
            if not identity.home.limits.try_acquire(token, kind, record.monotonic):
                raise VKError(6)
            decision = state.faults.decide(method)
        except VKError as exc:
            record.error = exc.to_error()
            return ApiAnswer({"error": exc.to_error(echo)}, None, record)
    if decision.delay:
        await asyncio.sleep(decision.delay)
    if decision.drop == "before":
        record.fault = "drop_before"
        return ApiAnswer(None, "before", record)
    if decision.bad_gateway:
        record.fault = "bad_gateway"
        return ApiAnswer(None, None, record, bad_gateway=True)
    with state.lock:
        if decision.error_code is not None:
            record.fault = f"error_{decision.error_code}"
            refused = VKError(decision.error_code)
            record.error = refused.to_error()
            body: dict[str, Any] = {"error": refused.to_error(echo)}
        else:
            ctx = CallContext(
                state,
                token,
                kind,
                user_id,
                Params(params),
                base_url,
                record.seq,
                communities,
                identity.scopes,
            )
            body = _run(ctx, method, record, echo)
    if decision.drop == "after":
        record.fault = "drop_after"
        return ApiAnswer(None, "after", record)
    return ApiAnswer(body, None, record)


def _run(ctx: CallContext, method: str, record: CallRecord, echo: list[dict[str, str]]) -> dict:
    try:
        if method == EXECUTE:
            response, errors = _execute(ctx)
            record.response = response
            body: dict[str, Any] = {"response": response}
            if errors:
                record.execute_errors = errors
                body["execute_errors"] = errors
            return body
        response = invoke(ctx, method)
        record.response = response
        return {"response": response}
    except VKError as exc:
        record.error = exc.to_error()
        return {"error": exc.to_error(echo)}
    except Exception:  # a bug here must look like VK's error 10, never an HTTP 500
        logger.exception("local VK failed on %s", method)
        internal = VKError(10)
        record.error = internal.to_error()
        return {"error": internal.to_error(echo)}


def invoke(ctx: CallContext, method: str) -> Any:
    """Run one registered method for an authenticated caller."""
    spec = METHODS.get(method)
    if spec is None:
        raise VKError(3)
    if spec.user_only and ctx.is_group:
        raise group_auth_error()
    if spec.scope is not None and ctx.is_group and spec.scope not in ctx.scopes:
        raise VKError(15, "no access to call this method")
    if spec.user_scope is not None and ctx.user_scopes is not None and not ctx.is_group:
        if spec.user_scope not in ctx.user_scopes:
            raise VKError(15, "no access to call this method")
    return spec.impl(ctx)


def _execute(ctx: CallContext) -> tuple[Any, list[dict[str, Any]]]:
    code = ctx.params.req_str("code")
    statements = compile_code(code)
    state = ctx.state

    def call(method: str, args: dict[str, Any]) -> Any:
        params = encode_params(args)
        record = state.log.add(
            CallRecord(
                seq=state.log.next_seq(),
                time=time.time(),
                monotonic=time.monotonic(),
                token_kind=ctx.token_kind,
                method=method,
                params=params,
                parent=ctx.parent_seq,
                user_id=ctx.user_id,
                group_id=state.group_id,
                token=token_fingerprint(ctx.token),
            )
        )
        inner = CallContext(
            state,
            ctx.token,
            ctx.token_kind,
            ctx.user_id,
            Params(params),
            ctx.base_url,
            ctx.parent_seq,
            ctx.communities,
            ctx.user_scopes,
        )
        try:
            if method == EXECUTE:
                raise VKError(3)
            injected = state.faults.inner_error(method)
            if injected is not None:
                raise VKError(injected)
            response = invoke(inner, method)
        except VKError as exc:
            record.error = exc.to_error()
            raise
        record.response = response
        return response

    result = run_program(statements, call)
    return result.response, result.errors
