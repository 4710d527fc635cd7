"""The demo's fixed facts (its communities, tokens, users) and its per-run layout (folder,
ports), and the environment every demo process gets.

The demo's local VK hosts several communities (:data:`COMMUNITIES`): two connected ones with a
game each (:data:`GAME_COMMUNITIES`: «Машина времени · демо», the environment's, and
«Классика · демо»), and one nobody connected yet (:data:`CONNECT`): a person types its community
token into the panel's «Подключить сообщество» and signs its admin in with «Войти через VK ID»
on the local VK's VK ID page (:data:`VK_ID_APP_ID`, the panel's redirect address registered);
or pastes its admin's token instead. Its :data:`CONNECT_WEAK_TOKEN` lacks the ``manage`` right,
to see the panel refuse it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class DemoCommunity:
    """A community of the demo's local VK; with a game when ``game_name`` is set: its
    ``players`` and ``guests`` are the demo's users from index ``first_user`` on."""

    group_id: int
    name: str
    group_token: str
    user_token: str
    game_name: str = ""
    theme: str = "time_machine"
    players: int = 0
    guests: int = 0
    first_user: int = 0

    def localvk_option(self) -> str:
        """Its ``--community`` value for ``runlocalvk``."""
        return f"{self.group_id}:{self.group_token}:{self.user_token}:{self.name}"


GROUP_ID = 1
GROUP_NAME = "Машина времени · демо"
GROUP_TOKEN = "demo-group-token"
USER_TOKEN = "demo-user-token"
#: The community admin whose user token posts in the board (the GM's VK account).
ADMIN_USER_ID = 100
GAME_NAME = "Машина времени (демо)"
PLAYERS = 26
#: Users of the community who are not in the game (reserves, spectators, curious people).
GUESTS = 4
FIRST_USER_ID = 1001
#: Seconds between deadline ticks in the demo (phases are minutes long).
TICK_SECONDS = 5

#: The environment's community (VK_GROUP_ID): the 26-player game.
MAIN = DemoCommunity(
    group_id=GROUP_ID,
    name=GROUP_NAME,
    group_token=GROUP_TOKEN,
    user_token=USER_TOKEN,
    game_name=GAME_NAME,
    theme="time_machine",
    players=PLAYERS,
    guests=GUESTS,
    first_user=0,
)
#: A second connected community with a smaller game of the «Классика» theme.
CLASSIC = DemoCommunity(
    group_id=2,
    name="Классика · демо",
    group_token="demo-classic-group-token",
    user_token="demo-classic-user-token",
    game_name="Классика (демо)",
    theme="classic",
    players=12,
    guests=2,
    first_user=PLAYERS + GUESTS,
)
#: A community in the local VK that nobody connected: try «Подключить сообщество» with it.
CONNECT = DemoCommunity(
    group_id=3,
    name="Новое сообщество · демо",
    group_token="demo-connect-group-token",
    user_token="demo-connect-user-token",
)
#: Another community token of :data:`CONNECT` without the ``manage`` right: the panel refuses it.
CONNECT_WEAK_TOKEN = "demo-connect-weak-token"
CONNECT_WEAK_SCOPES = ("messages",)
#: The demo's VK ID app in the local VK («Войти через VK ID»; its trusted redirect URL is the
#: panel's, :meth:`DemoLayout.vkid_redirect`).
VK_ID_APP_ID = 51_000_003

#: The communities with a demo game (the seed sets them up, the simulated players play them).
GAME_COMMUNITIES = (MAIN, CLASSIC)
#: Every community of the demo's local VK, the default (the environment's) first.
COMMUNITIES = (*GAME_COMMUNITIES, CONNECT)


def all_users_count() -> int:
    return sum(c.players + c.guests for c in GAME_COMMUNITIES)


def community_users(count: int | None = None) -> list[tuple[int, str, str, int]]:
    """``(vk id, first name, last name, sex)`` of the demo's users: VK ids from 1001 on with
    the local VK's generated names, skipping ids whose first name is already taken, so that a
    vote «голос: Имя» is never ambiguous (all the demo's communities' users by default: no
    two of them share a first name)."""
    if count is None:
        count = all_users_count()
    # Imported here: localvk is not in the production image, where the demo app is installed
    # too and its commands must load (``demo_seed`` refuses there instead of failing to import).
    from localvk.names import generated_name

    users: list[tuple[int, str, str, int]] = []
    seen: set[str] = set()
    user_id = FIRST_USER_ID
    while len(users) < count:
        first, last, sex = generated_name(user_id)
        if first not in seen:
            seen.add(first)
            users.append((user_id, first, last, sex))
        user_id += 1
    return users


def users_of(community: DemoCommunity) -> list[tuple[int, str, str, int]]:
    """The users of ``community``'s game: its players first, then its guests."""
    users = community_users()
    return users[community.first_user : community.first_user + community.players + community.guests]


def player_ids(community: DemoCommunity = MAIN) -> list[int]:
    return [user[0] for user in users_of(community)[: community.players]]


@dataclass(frozen=True)
class DemoLayout:
    """Where the demo keeps its data and which loopback ports its servers use."""

    data_dir: Path
    host: str = "127.0.0.1"
    web_port: int = 8000
    vk_port: int = 8081
    redis_port: int = 6390

    @property
    def db_path(self) -> Path:
        return self.data_dir / "db.sqlite3"

    @property
    def localvk_state(self) -> Path:
        return self.data_dir / "localvk.json"

    @property
    def web_url(self) -> str:
        return f"http://{self.host}:{self.web_port}"

    @property
    def vk_url(self) -> str:
        return f"http://{self.host}:{self.vk_port}"

    @property
    def api_url(self) -> str:
        return f"{self.vk_url}/method/"

    @property
    def sandbox_url(self) -> str:
        return f"{self.vk_url}/sandbox/"

    @property
    def vkid_url(self) -> str:
        """The local VK's VK ID (``VK_ID_URL``)."""
        return f"{self.vk_url}/vkid/"

    @property
    def vkid_redirect(self) -> str:
        """Where VK ID sends the browser back: the panel's (``PUBLIC_URL`` + its path)."""
        return f"{self.web_url}/panel/communities/vkid/"

    @property
    def redis_url(self) -> str:
        return f"redis://{self.host}:{self.redis_port}/0"

    def env(self) -> dict[str, str]:
        """What every demo process's environment is set to (on top of the caller's)."""
        return {
            "DEBUG": "true",
            "DATABASE_URL": f"sqlite:///{self.db_path.resolve()}",
            "REDIS_URL": self.redis_url,
            "VK_API_URL": self.api_url,
            "PUBLIC_URL": self.web_url,
            "VK_GROUP_ID": str(GROUP_ID),
            "VK_GROUP_TOKEN": GROUP_TOKEN,
            "VK_USER_TOKEN": USER_TOKEN,
            "VK_ID_URL": self.vkid_url,
            "VK_ID_APP_ID": str(VK_ID_APP_ID),
            "DEADLINE_TICK_SECONDS": str(TICK_SECONDS),
            "OUTBOX_DELIVERY_ENABLED": "true",
            "DEMO_VK_URL": self.vk_url,
            "PYTHONUNBUFFERED": "1",
        }
