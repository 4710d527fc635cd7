"""Method registry and the context a method implementation runs with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import VKError
from ..params import Params

if TYPE_CHECKING:
    from ..communities import Communities
    from ..state import LocalVK


@dataclass
class CallContext:
    """One method call: who calls (token kind, user id) and with which parameters. ``state``
    is the community the call goes to; ``communities`` the server's others (if any)."""

    state: LocalVK
    token: str
    token_kind: str
    user_id: int | None
    params: Params
    base_url: str
    parent_seq: int | None = None
    communities: Communities | None = None
    #: The rights of a user token issued by VK ID (None: a declared user token, which has
    #: every right).
    user_scopes: frozenset[str] | None = None

    @property
    def is_group(self) -> bool:
        return self.token_kind == "group"

    @property
    def scopes(self) -> frozenset[str]:
        """The rights of the community token (empty for a user token)."""
        return self.state.token_scopes(self.token) if self.is_group else frozenset()

    @property
    def is_admin(self) -> bool:
        """A community token, or a user token of an admin of ``state``."""
        return self.is_group or self.state.is_admin(self.user_id)

    @property
    def sender_id(self) -> int:
        """Who a message or comment comes from: ``-group_id`` or the token's user."""
        if self.is_group:
            return self.state.community_id
        assert self.user_id is not None
        return self.user_id


MethodImpl = Callable[[CallContext], Any]


@dataclass(frozen=True)
class MethodSpec:
    name: str
    impl: MethodImpl
    user_only: bool = False
    scope: str | None = None
    user_scope: str | None = None


METHODS: dict[str, MethodSpec] = {}

#: The user token right that stands for a community token right: a user acts on a community
#: they administer with ``groups`` (VK's user scopes have no ``manage``).
USER_SCOPE_OF: dict[str, str] = {"messages": "messages", "manage": "groups"}


def method(
    name: str,
    *,
    user_only: bool = False,
    scope: str | None = None,
    user_scope: str | None = None,
) -> Callable[[MethodImpl], MethodImpl]:
    """Register an implementation; ``user_only`` methods answer a community token with 27,
    a community token without the right ``scope`` gets 15, and so does a user token issued by
    VK ID without ``user_scope`` (by default the user right standing for ``scope``)."""
    if user_scope is None and scope is not None:
        user_scope = USER_SCOPE_OF.get(scope)

    def register(impl: MethodImpl) -> MethodImpl:
        METHODS[name] = MethodSpec(name, impl, user_only, scope, user_scope)
        return impl

    return register


def check_group_id(ctx: CallContext, *, required: bool, admin: bool = True) -> int:
    """The ``group_id`` parameter, which must be the community the call goes to (else error
    15); with a user token, whose user must be its admin unless ``admin`` is False."""
    group_id = ctx.params.get_int("group_id", required=required, minimum=0)
    if group_id is None or group_id == 0:
        if required:
            raise VKError(100, "group_id is undefined")
        group_id = ctx.state.group_id
    if group_id != ctx.state.group_id:
        raise VKError(15, "no access to this community")
    if admin and not ctx.is_admin:
        raise VKError(15, "no access to this community")
    return group_id
