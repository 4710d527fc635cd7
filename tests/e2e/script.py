"""The end-to-end game as its script sees it: the people, the topics, the cast once dealt,
moments in time (message ids of the local VK), and small readers of what the bot posted."""

from __future__ import annotations

import re
from typing import Any, cast

from gameplay.models import Outbox, OutboxStatus, Seat, SeatStatus
from localvk import Message
from tests.e2e.cast import BASE, PEOPLE, Cast
from tests.e2e.harness import Player, World, db, payloads

#: Round 1's seed (drawn by the server in a real game; the final post reveals it). With the
#: roster of the 26 players it puts the clock with the mafia, the red button and the book with
#: civilians (``cast_of``).
SEED = "e2e-full-game-3"
#: Who the GM's commands are logged as.
GM = "gm:ведущий"
GAME = "Машина времени"
INVITE = re.compile(r"https://vk\.me/join/[\w-]+")


class Script:
    """The running game as the test sees it: people, topics, the cast, marks in time."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.state = world.state
        self.people = {
            i: Player(world, BASE + i, first, last)
            for i, (first, last) in enumerate(PEOPLE, start=1)
        }
        for p in self.people.values():
            self.state.add_user(p.vk, p.first, p.last, sex=p.sex)
        self.recruit = self.state.create_topic("Набор в игру «Машина времени»", "Пишите «+».")
        self.topic = self.state.create_topic("Машина времени", "Здесь идёт игра.")
        self.game_id = 0
        self.cast: Cast | None = None
        self.seat_holder: dict[int, Player] = {}
        #: seat → message id after which its role is public (execution or modkill announced)
        self.public_from: dict[int, int] = {}
        #: named moments: the id of the latest message then
        self.marks: dict[str, int] = {}

    # --- marks and lookups ---------------------------------------------------------------------

    def mark(self) -> int:
        """The id of the latest message the local VK holds."""
        messages = self.state.messages
        return messages[-1].id if messages else 0

    def seat(self, number: int) -> Player:
        return self.seat_holder[number]

    def comments(self, topic_id: int, after: int = 0) -> list[str]:
        return [
            c.text
            for c in self.state.topic(topic_id).visible_comments()
            if c.from_id < 0 and c.id > after
        ]

    def board(self, after: int = 0) -> str:
        """The game topic's comments by the community (posts merged into one comment are
        separated by a blank line)."""
        return "\n\n".join(self.comments(self.topic.id, after))

    def posts(self, head: str, after: int = 0) -> list[str]:
        """The bot's posts in the game topic that start with ``head`` (up to a blank line)."""
        pieces = ("\n\n" + self.board(after)).split("\n\n" + head)[1:]
        return [(head + piece).split("\n\n")[0] for piece in pieces]

    def last_comment_id(self) -> int:
        return max((c.id for t in self.state.topics.values() for c in t.comments), default=0)

    async def gm(self, fn: Any, **kwargs: Any) -> Any:
        """A GM command through its service (as the panel calls it), then the bot and the
        delivery catch up."""
        result = await db(fn, game_id=self.game_id, by=GM, **kwargs)
        await self.world.settle()
        return result

    async def alive(self) -> set[int]:
        return cast(
            "set[int]",  # the players' seats have their numbers
            set(
                await db(
                    lambda: list(
                        Seat.objects.filter(
                            game_id=self.game_id,
                            status=SeatStatus.PLAYER,
                            alive=True,
                        ).values_list("number", flat=True)
                    )
                )
            ),
        )


def failed_rows() -> list[tuple[int, str, list[int]]]:
    """(id, kind, recipients) of the Outbox rows VK refused for good."""
    return [(o.pk, o.kind, o.peer_ids) for o in Outbox.objects.filter(status=OutboxStatus.FAILED)]


def vote_text(how: int, target: Player, number: int) -> str:
    """The ways people vote in the board: a number, a name (any case, «е» for «ё»), a
    mention."""
    return [f"голос {number}", f"Голос: {target.name.upper().replace('Ё', 'Е')}", target.mention][
        how % 3
    ]


def first_target(message: Message) -> int:
    return next(p.target for p in payloads(message) if p.target is not None)


def team_shot(s: Script, target: int, sender: int) -> str:
    return (
        f"Выстрел мафии: №{target} {s.seat(target).name} "
        f"({s.seat(sender).g('отправил', 'отправила')} №{sender} {s.seat(sender).name})."
    )
