"""Command-line options for the communities a server hosts (``python -m localvk`` and
``manage.py runlocalvk``): the default community's token rights, and more communities.

``--community GROUP_ID:GROUP_TOKEN:USER_TOKEN[:NAME[:SCOPES]]`` (repeatable) declares one more
community: its id, community token, an admin's user token (empty: none; the same token as
another community's: the same person admins both), its name and its token's rights
(comma-separated, e.g. ``messages,photos``; default messages, manage, photos, docs; ``-`` for
none). Example::

    python -m localvk --group-id 1 --community 2:group-token-2:user-token-2:Мафия-2 \\
        --community 3:group-token-3::Без-прав:messages
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

from .communities import Communities
from .scopes import parse_scopes
from .state import LocalVK


@dataclass(frozen=True)
class CommunitySpec:
    group_id: int
    group_token: str
    user_token: str
    name: str | None
    scopes: frozenset[str]


def parse_community(text: str) -> CommunitySpec:
    """One ``--community`` value; ValueError with an operator-facing message if wrong."""
    parts = text.split(":", 4)
    if len(parts) < 3:
        raise ValueError(
            f"--community {text!r}: expected GROUP_ID:GROUP_TOKEN:USER_TOKEN[:NAME[:SCOPES]]"
        )
    raw_id, group_token, user_token = parts[0].strip(), parts[1].strip(), parts[2].strip()
    if not raw_id.isdigit() or int(raw_id) < 1:
        raise ValueError(f"--community {text!r}: the group id must be a positive integer")
    if not group_token:
        raise ValueError(f"--community {text!r}: the community token must not be empty")
    name = parts[3].strip() if len(parts) > 3 and parts[3].strip() else None
    raw_scopes = parts[4].strip() if len(parts) > 4 else None
    try:
        scopes = parse_scopes("" if raw_scopes == "-" else raw_scopes or None)
    except ValueError as exc:
        raise ValueError(f"--community {text!r}: {exc}") from None
    return CommunitySpec(int(raw_id), group_token, user_token, name, scopes)


def add_community_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("more communities (one server hosts them all)")
    group.add_argument(
        "--group-scopes",
        default=None,
        metavar="SCOPES",
        help="the default community token's rights, comma-separated "
        "(default messages,manage,photos,docs; '-' for none)",
    )
    group.add_argument(
        "--community",
        action="append",
        dest="communities",
        default=None,
        metavar="GROUP_ID:GROUP_TOKEN:USER_TOKEN[:NAME[:SCOPES]]",
        help="host one more community (repeatable); an empty USER_TOKEN: no admin token",
    )


def default_scopes(raw: str | None) -> frozenset[str]:
    """``--group-scopes``: ValueError naming an unknown right."""
    try:
        return parse_scopes("" if raw == "-" else raw)
    except ValueError as exc:
        raise ValueError(f"--group-scopes: {exc}") from None


def declare_communities(default: LocalVK, specs: Sequence[str] | None) -> Communities:
    """The registry with ``default`` first and one community per ``--community``."""
    communities = Communities.of(default)
    for text in specs or ():
        spec = parse_community(text)
        communities.create(
            group_id=spec.group_id,
            group_token=spec.group_token,
            user_tokens=[spec.user_token] if spec.user_token else [],
            group_name=spec.name,
            scopes=spec.scopes,
        )
    return communities
