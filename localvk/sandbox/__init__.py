"""The player page ("sandbox") of the local VK: a person picks any user of the community and
sees what their phone would show — the private conversation with the community (keyboards as
buttons that send their payload as VK does), the board, the chats they are in — and acts as
them. Simulated players (``manage.py demo_players``) read the same JSON.

Routes (served by the local VK server itself; plain HTML and a little JavaScript, no build
step, nothing from the network):

- ``GET /sandbox/`` the page; ``GET /sandbox/static/<file>`` its script and styles;
- ``GET /sandbox/api/users`` the community's users (and who is taken over) and the hosted
  communities;
- ``GET /sandbox/api/users/{id}?after_message=&after_comment=`` what the user sees, newer
  than the cursors;
- ``POST /sandbox/api/users/{id}/send`` ``{text}`` a private message to the community;
- ``POST /sandbox/api/users/{id}/press`` ``{message_id, row, column}`` press a button;
- ``POST /sandbox/api/users/{id}/board`` ``{topic_id, text}`` post in a topic;
- ``POST /sandbox/api/users/{id}/chat`` ``{chat_id, text}`` write in a chat;
- ``POST /sandbox/api/users/{id}/join`` ``{link}`` join a chat by its invite link;
- ``POST /sandbox/api/users/{id}/leave`` ``{chat_id}`` leave a chat;
- ``POST /sandbox/api/users/{id}/takeover`` ``{on}`` a person plays this user (simulated
  players leave them alone);
- ``GET /sandbox/api/feed?after_message=&after_comment=`` every private message and comment
  newer than the cursors, for simulated players.

Every route takes ``?group_id=`` for the community (a server may host several; without it,
the default one): the users list names them all (``communities``), the page has a selector,
and the page's own ``?group_id=`` opens that community (before the one picked last on the
browser). Messages and comments carry ``time``, Moscow's («01.12 14:33 МСК»), which the page
shows whatever the browser's clock.
A refusal is HTTP 400 ``{"error": "<Russian text>"}``.
"""

from .api import add_sandbox_routes

__all__ = ["add_sandbox_routes"]
