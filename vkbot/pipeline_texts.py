"""What the ingestion pipeline says to players (Russian)."""

from __future__ import annotations

#: Sent privately when the bot failed on something a user did (an internal error, never a
#: refusal: refusals are the handlers' own replies). Says nothing about the cause.
INTERNAL_ERROR = (
    "Извините, бот не смог обработать ваше последнее действие из-за внутренней ошибки. "
    "Мы уже разбираемся. Попробуйте, пожалуйста, ещё раз чуть позже."
)
