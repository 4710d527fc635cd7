"""The game's seats as the panel lists them: one seat by number, the whole list, the reserve,
a listed sign-up by id."""

from __future__ import annotations

from gameplay.models import Game, Seat, SeatStatus


def seat_at(game: Game, number: int) -> Seat | None:
    """The seated player at seat ``number``."""
    return Seat.objects.filter(game=game, status=SeatStatus.PLAYER, number=number).first()


def all_seats(game: Game) -> list[Seat]:
    """Every seat of the game (players, reserves, withdrawn), in seat then sign-up order."""
    return list(Seat.objects.filter(game=game).order_by("number", "signed_up_at", "id"))


def reserves(game: Game) -> list[Seat]:
    """The reserve, in sign-up order."""
    return list(Seat.objects.filter(game=game, status=SeatStatus.RESERVE).order_by("signed_up_at"))


def listed_seat(game: Game, seat_id: int) -> Seat | None:
    """A sign-up or a reserve entry of the game (not a withdrawn one)."""
    return Seat.objects.filter(pk=seat_id, game=game).exclude(status=SeatStatus.WITHDRAWN).first()
