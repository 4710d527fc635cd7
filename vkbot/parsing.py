"""What players type, as commands: pure functions, no database.

Private messages: night actions («проверка 5», «лечу Аня», «выстрел @id123», «удар 7 комиссар»,
«часы 5», «кнопка 5», «книга 5»), votes («голос 5», «голос: Аня», «голос за [id123|Аню]
досрочно»), «голоса» (the vote count, also «подсчёт»), «статус», «помощь», «+»/«участвую»,
«запас», «снимаюсь», «в ЗЗ», and «!текст» for the mafia's relay. Board posts: votes, «голоса»
and sign-ups; anything else in a post is discussion (``parse_board`` returns None).

A player is named by seat number («5», «№5», «#5»), a mention (``[id123|Аня]``, ``@id123``,
``*id123``, ``vk.com/id123``) or a name (resolved against the roster elsewhere:
``gameplay.names``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gameplay.names import fold
from gameplay.refusals import TargetMissing, VoteTargetMissing
from gameplay.rules.errors import RuleViolation

# Command kinds.
NIGHT = "night"
VOTE = "vote"
COUNT = "count"
STATUS = "status"
HELP = "help"
MENU = "menu"
SIGNUP = "signup"
RESERVE = "reserve"
WITHDRAW = "withdraw"
SPECTATORS = "spectators"
RELAY = "relay"
EMPTY = "empty"
UNKNOWN = "unknown"

# Night verbs (``Command.verb``); «выстрел» becomes the shot of the sender's role.
CHECK, SHOT, HEAL, STRIKE = "check", "shot", "heal", "role_strike"
CLOCK, RED_BUTTON, BOOK = "clock", "red_button", "book"

MAX_TEXT = 4000

_VERBS: tuple[tuple[str, str], ...] = (
    (CHECK, r"проверка|проверить|проверяю|проверь|проверим|чек"),
    (SHOT, r"выстрел|выстрелить|стреляю|стрелять|стреляем|стрельба|убиваю|убить"),
    (HEAL, r"лечу|лечить|лечение|лечим|вылечить|хил"),
    (STRIKE, r"ролевой\s+удар|ролевка|удар"),
    (CLOCK, r"часы|часами"),
    (RED_BUTTON, r"красная\s+кнопка|кнопка|кнопку|кнопкой"),
    (BOOK, r"книга|книгу|книгой"),
)
_VERB_RE = re.compile(
    r"^(?:" + "|".join(f"(?P<{k}>{v})" for k, v in _VERBS) + r")(?![\w])"
    r"[\s:,.\-—–]*(?P<rest>.*)$",
    re.S,
)
_VOTE_RE = re.compile(
    r"^(?:мой\s+)?(?:голос(?:ую)?)(?![\w])[\s:,\-—–]*(?:за(?![\w])\s*)?(?P<rest>.*)$"
)
_EARLY_RE = re.compile(r"(?<![\w])досрочн\w*", re.I)
_COUNT_WORDS = {
    "голоса",
    "голоса?",
    "подсчет",
    "подсчет голосов",
    "подсчитать",
    "подсчитай",
    "счет голосов",
    "покажи голоса",
    "сколько голосов",
}
_STATUS_WORDS = {"статус", "status", "мой статус", "что я отправил"}
_HELP_WORDS = {
    "помощь",
    "help",
    "справка",
    "команды",
    "начать",
    "start",
    "/start",
    "/help",
    "меню",
    "?",
}
_MENU_WORDS = {"действия", "мои действия", "ход", "мой ход", "кнопки", "голосовать"}
_SIGNUP_WORDS = {
    "+",
    "++",
    "+1",
    "участвую",
    "я участвую",
    "записываюсь",
    "запишите",
    "запишите меня",
    "хочу играть",
    "я в деле",
    "в игру",
}
_RESERVE_WORDS = {
    "запас",
    "в запас",
    "+ запас",
    "+запас",
    "запишите в запас",
    "хочу в запас",
    "резерв",
    "в резерв",
}
_WITHDRAW_WORDS = {
    "-",
    "минус",
    "снимаюсь",
    "не участвую",
    "выхожу",
    "отписываюсь",
    "выписываюсь",
    "передумал",
    "передумала",
    "удалите меня",
}
_SPECTATOR_WORDS = {
    "в зз",
    "зз",
    "хочу в зз",
    "в беседу зз",
    "беседа зз",
    "в беседу зрителей",
    "зрители",
}

_MENTION_RE = re.compile(
    r"\[id(?P<a>\d{1,12})\|[^\]]{0,200}\]|(?<![\w/])[@*]id(?P<b>\d{1,12})(?!\d)"
    r"|(?:https?://)?(?:m\.)?vk\.(?:com|ru)/id(?P<c>\d{1,12})(?!\d)",
    re.I,
)
_NUMBER_RE = re.compile(r"^(?:№|#|no\.?|n|номер|место)?\s*(?P<n>\d{1,4})(?![\w])")
_SELF_WORDS = frozenset({"себя", "себе", "меня", "мне", "сам", "сама", "собой"})
_NAME_STOP = re.compile(r"[.,!?;:()\"«»\n]")
_GUESSES: dict[str, str] = {
    "commissar": r"комиссар\w*|коммиссар\w*|ком|комм",
    "doctor": r"доктор\w*|док|врач\w*",
    "maniac": r"маньяк\w*|ман",
    "mafia": r"мафи\w*",
    "civilian": r"мирн\w*|мж",
}
_GUESS_RE = re.compile(
    r"(?<![\w])(?:" + "|".join(f"(?P<{k}>{v})" for k, v in _GUESSES.items()) + r")(?![\w])"
)


@dataclass(frozen=True, slots=True)
class Target:
    """A player as typed: exactly one of the fields is set."""

    number: int | None = None
    vk_id: int | None = None
    name: str | None = None
    #: «себя», «себе», «меня»: the sender's own seat.
    me: bool = False


@dataclass(frozen=True, slots=True)
class Command:
    kind: str
    verb: str = ""
    target: Target | None = None
    guess: str | None = None
    early: bool = False
    text: str = ""
    #: The command word was understood but the rest was not: what to tell the player.
    #: The refusal a command without its target gets (its text: templates/messages/refusals/).
    error: type[RuleViolation] | None = None


def clean(text: object) -> str:
    """Any input as a bounded string (VK text may be anything a forged update holds)."""
    if not isinstance(text, str):
        return ""
    return text[:MAX_TEXT].replace("\x00", "")


def _words_only(text: str) -> str:
    """Folded, without surrounding punctuation or emoji (for whole-message commands)."""
    text = fold(text)
    text = re.sub(r"[^\w\s+\-?/]", " ", text)
    return " ".join(text.split()).strip()


def parse_target(text: str) -> Target | None:
    """A seat number, a mention or a name at the start of ``text`` (None if nothing)."""
    text = text.strip()
    m = _MENTION_RE.match(text)
    if m:
        return Target(vk_id=int(m.group("a") or m.group("b") or m.group("c")))
    folded = fold(text)
    m = _NUMBER_RE.match(folded)
    if m:
        return Target(number=int(m.group("n")))
    m = _MENTION_RE.search(text)
    if m and not _NAME_STOP.search(text[: m.start()]):
        return Target(vk_id=int(m.group("a") or m.group("b") or m.group("c")))
    name = _NAME_STOP.split(text, maxsplit=1)[0]
    name = re.sub(r"^(?:за|на|в|по|игрока|игрок)\s+", "", fold(name))
    name = " ".join(name.split()[:3])
    if name.split()[:1] and name.split()[0] in _SELF_WORDS:
        return Target(me=True)
    return Target(name=name) if name and re.search(r"\w", name) else None


def _night(verb: str, rest: str) -> Command:
    guess = None
    if verb == STRIKE:
        folded = fold(rest)
        m = _GUESS_RE.search(folded)
        if m is not None:
            guess = next(k for k, v in m.groupdict().items() if v)
            rest = (folded[: m.start()] + " " + folded[m.end() :]).strip(" ,:-—")
    target = parse_target(rest)
    if target is None:
        return Command(NIGHT, verb=verb, guess=guess, error=TargetMissing)
    return Command(NIGHT, verb=verb, target=target, guess=guess)


def _vote(rest: str) -> Command:
    early = bool(_EARLY_RE.search(rest))
    rest = _EARLY_RE.sub(" ", rest).strip(" ,:-—")
    target = parse_target(rest)
    if target is None:
        return Command(VOTE, early=early, error=VoteTargetMissing)
    return Command(VOTE, target=target, early=early)


def _whole(text: str) -> Command | None:
    """Commands that are the whole message."""
    words = _words_only(text)
    for kind, table in (
        (COUNT, _COUNT_WORDS),
        (STATUS, _STATUS_WORDS),
        (HELP, _HELP_WORDS),
        (MENU, _MENU_WORDS),
        (RESERVE, _RESERVE_WORDS),
        (SIGNUP, _SIGNUP_WORDS),
        (WITHDRAW, _WITHDRAW_WORDS),
        (SPECTATORS, _SPECTATOR_WORDS),
    ):
        if words in table:
            return Command(kind)
    return None


def _mention_vote(text: str) -> Command | None:
    """A message that is only a mention (and maybe «досрочно») is a vote for that player."""
    m = _MENTION_RE.search(text)
    if m is None:
        return None
    rest = _EARLY_RE.sub(" ", text[: m.start()] + text[m.end() :])
    if re.search(r"\w", rest):
        return None
    return Command(
        VOTE,
        target=Target(vk_id=int(m.group("a") or m.group("b") or m.group("c"))),
        early=bool(_EARLY_RE.search(text)),
    )


def parse_private(raw: object) -> Command:
    """A private message to the community."""
    text = clean(raw).strip()
    if not text:
        return Command(EMPTY)
    if text.startswith("!"):
        return Command(RELAY, text=text[1:].strip())
    whole = _whole(text)
    if whole is not None:
        return whole
    first = fold(text.splitlines()[0])
    m = _VERB_RE.match(first)
    if m:
        verb = next(k for k, _ in _VERBS if m.group(k))
        return _night(verb, m.group("rest"))
    m = _VOTE_RE.match(first)
    if m:
        return _vote(m.group("rest"))
    return _mention_vote(text) or Command(UNKNOWN)


def parse_board(raw: object) -> Command | None:
    """A post in a game's topic: a vote, «голоса», a sign-up; None for discussion."""
    text = clean(raw).strip()
    if not text:
        return None
    whole = _whole(text)
    if whole is not None and whole.kind in (COUNT, SIGNUP, RESERVE, WITHDRAW):
        return whole
    for line in text.splitlines():
        m = _VOTE_RE.match(fold(line.strip()))
        if m:
            return _vote(m.group("rest"))
    return _mention_vote(text)


#: In a chat: asks the bot for the chat's number for the GM panel («номер беседы»).
_CHAT_NUMBER_WORDS = {"номер беседы", "/номер", "/номер беседы", "id беседы", "peer_id"}
#: A mention of a community at the start of a chat message («[club77|Мафия] номер беседы»).
_CLUB_MENTION_RE = re.compile(r"^\s*(?:\[club\d{1,12}\|[^\]]{0,200}\]|@club\d{1,12})[\s,:]*", re.I)


def is_chat_number_request(raw: object) -> bool:
    """A chat message asking for the chat's number (the community may be mentioned first)."""
    text = _CLUB_MENTION_RE.sub("", clean(raw)[:200])
    return _words_only(text).rstrip("? ") in _CHAT_NUMBER_WORDS


def mention(vk_user_id: int, name: str) -> str:
    """A VK mention for a board answer (brackets and bars in the name would break it)."""
    safe = re.sub(r"[\[\]|]", "", name).strip() or f"id{vk_user_id}"
    return f"[id{vk_user_id}|{safe}]"
