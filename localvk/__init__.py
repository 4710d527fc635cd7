"""A local stand-in for the VK API (v5.199) for tests, the demo and benchmarks.

It speaks VK's wire format over HTTP (``/method/<name>`` and a Bots Long Poll server), keeps
each community's state in a :class:`LocalVK` (one server hosts several: :class:`Communities`,
a request goes to the community of its token), enforces VK's limits, records every call, and
can inject faults. Nothing here imports Django; ``python -m localvk`` runs it alone.

Typical test use::

    async with running_server(LocalVK(group_id=1)) as srv:
        api = srv.vk_api()                     # a real vkbottle API aimed at srv.api_url
        srv.state.inject_message(42, "hello")  # a user writes to the community
        other = srv.communities.create(group_id=2, group_token="t2", user_tokens=["u2"])
"""

from .app import make_app
from .communities import Communities
from .errors import VKError
from .faults import FaultConfig
from .models import Chat, Comment, Message, Topic, User, chat_peer_id
from .recording import CallRecord, token_fingerprint
from .server import RunningServer, ServerThread, point_api_at, running_server
from .state import LocalVK

__all__ = [
    "CallRecord",
    "Chat",
    "Comment",
    "Communities",
    "FaultConfig",
    "LocalVK",
    "Message",
    "RunningServer",
    "ServerThread",
    "Topic",
    "User",
    "VKError",
    "chat_peer_id",
    "make_app",
    "point_api_at",
    "running_server",
    "token_fingerprint",
]
