"""The demo's fixed facts (its community, tokens, users) and its per-run layout (folder,
ports), and the environment every demo process gets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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


def community_users(count: int = PLAYERS + GUESTS) -> list[tuple[int, str, str, int]]:
    """``(vk id, first name, last name, sex)`` of the demo's users: VK ids from 1001 on with
    the local VK's generated names, skipping ids whose first name is already taken, so that a
    vote «голос: Имя» is never ambiguous."""
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


def player_ids() -> list[int]:
    return [user[0] for user in community_users()[:PLAYERS]]


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
            "DEADLINE_TICK_SECONDS": str(TICK_SECONDS),
            "OUTBOX_DELIVERY_ENABLED": "true",
            "DEMO_VK_URL": self.vk_url,
            "PYTHONUNBUFFERED": "1",
        }
