"""``account.getAppPermissions``: the rights the calling user gave the app, as VK's bit mask.

VK answers a user token only (a community token gets error 27) with an integer: the sum of
the bits of the user rights (dev.vk.com, «Права доступа для токена пользователя»). A token
issued by VK ID has the rights its sign-in granted (``scope``; names VK's bit list does not
have, such as ``vkid.personal_info``, add nothing); a user token declared to the server (as an
old implicit-flow key with ``offline``) has every right. Asked about another user
(``user_id``), VK tells that user's settings in the app: none here, 0.
"""

from __future__ import annotations

from .registry import CallContext, method

#: VK's bits of the user token rights.
USER_SCOPE_BITS: dict[str, int] = {
    "notify": 1,
    "friends": 2,
    "photos": 4,
    "audio": 8,
    "video": 16,
    "stories": 64,
    "pages": 128,
    "menu": 256,
    "status": 1024,
    "notes": 2048,
    "messages": 4096,
    "wall": 8192,
    "ads": 32768,
    "offline": 65536,
    "docs": 131072,
    "groups": 262144,
    "notifications": 524288,
    "stats": 1048576,
    "email": 4194304,
    "market": 134217728,
    "phone_number": 268435456,
}


def user_mask(scopes: frozenset[str] | None) -> int:
    """The bit mask of ``scopes`` (None: every right)."""
    names = USER_SCOPE_BITS if scopes is None else scopes
    return sum(USER_SCOPE_BITS.get(name, 0) for name in set(names))


@method("account.getAppPermissions", user_only=True)
def account_get_app_permissions(ctx: CallContext) -> int:
    user_id = ctx.params.get_int("user_id", minimum=1)
    if user_id is not None and user_id != ctx.user_id:
        return 0
    return user_mask(ctx.user_scopes)
