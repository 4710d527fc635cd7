"""Profanity, insults and reveals of night actions in players' posts: flags for the GM, never a
punishment (RULES.md G2, G4). Pure Python.

Why a list of our own: the PyPI candidates for Russian were checked (``check-swear`` pins
scikit-learn 1.4.0 and needs NLTK data at run time; ``djantimat`` needs the unmaintained
pymorphy2 and a database table; ``badwords-r`` is a flat list of word forms with no handling
of disguises). So this module keeps word roots and matches them after undoing the usual
disguises:

- case, and «ё» as «е»;
- Latin look-alike letters (a→а, e→е, o→о, p→р, c→с, x→х, y→у, k→к, m→м, t→т, b→в, h→н,
  u→и) and digits (0→о, 3→з, 4→ч, 6→б) inside words; «@»→а, «$»→с; «!», «1», «|» between
  letters → и («п!здец»);
- letters spaced or punctuated apart («б л я», «х.у.й», «б-л-я», «ид и о т»);
- repeated letters («бляяя»).

Roots are matched at the start of a word (after an optional prefix such as «вы», «на», «за»),
never in the middle, which is what keeps ordinary words clean. Documented false-positive guards
(tested): «оскорблять», «употреблять», «корабля», «рубля» (бля inside a word), «хлебать»,
«тебе», «требую», «небо» (еб inside a word), «страхуем», «психует» (ху inside a word),
«мудрый», «мандарин», «командир», «сукно», «сук» (a branch), «бляха», «среда», «странный»,
«лохматый», «колхоз», «хулиган», «художник».
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LOOKALIKE = str.maketrans(
    {
        "a": "а",
        "e": "е",
        "o": "о",
        "p": "р",
        "c": "с",
        "x": "х",
        "y": "у",
        "k": "к",
        "m": "м",
        "t": "т",
        "b": "в",
        "h": "н",
        "u": "и",
        "ё": "е",
        "0": "о",
        "3": "з",
        "4": "ч",
        "6": "б",
        "@": "а",
        "$": "с",
    }
)
#: A token with at least one letter: digits and look-alikes inside it are letters.
_TOKEN = re.compile(r"[\w@$]+")
#: Three or more bits of one or two letters separated by spaces or punctuation: «б л я»,
#: «х.у.й», «ид и о т» (joined, they are checked as one word).
_SPACED = re.compile(r"(?<![\w@$])(?:[\w@$]{1,2}[\s._\-*,]{1,3}){2,}[\w@$]{1,2}(?![\w@$])")

_PREFIX = (
    r"(?:за|вы|у|до|на|по|от|про|при|раз|рас|из|съ|въ|подъ|объ|отъ|взъ|о|обо|пере|недо|долбо"
    r"|ни|не)?"
)

#: (name, pattern on one normalised word). Obscenities, then insults.
_ROOTS: tuple[tuple[str, str], ...] = (
    ("хуй", r"(?:на|по|от|до|за|ни|вы|о)?ху(?:й|е|и|я|ю)(?!р)\w*"),
    ("пизд", _PREFIX + r"пизд\w*"),
    ("еб", _PREFIX + r"еб(?:(?:а|у|л|н|е|и|ы|ок|уч|ищ|ош)\w*)?"),
    ("бля", _PREFIX + r"бля(?!х|шк)\w*"),
    ("муд", r"муд(?:ак|ач|ил|озвон|оеб|ень)\w*"),
    ("пидор", r"(?:пид[оа]р|пидр|педик|педераст|педрил)\w*"),
    ("залуп", r"залуп\w*"),
    ("гандон", r"г[ао]ндон\w*"),
    ("шлюх", r"(?:шлюх|шалав)\w*"),
    ("дроч", _PREFIX + r"дроч\w*"),
    ("говно", r"(?:г[ао]вн|дерьм)\w*"),
    (
        "срать",
        r"(?:на|об|обо|за|вы|по)?(?:срать|срал|срала|срали|сраный|сраная|сраное|сранн\w*"
        r"|срет|сруть|засранец|засранка)",
    ),
    ("сука", r"(?:сука|суки|суке|суку|сукой|сучка|сучки|сучар\w*|сучий|сучье|сучья|сучонок)"),
    ("манда", r"(?:манда|манды|манде|манду|мандой)"),
    ("дебил", r"дебил\w*"),
    ("идиот", r"идиот\w*"),
    ("дурак", r"(?:дурак\w*|дура|дуры|дурой|дурочка|придур\w*)"),
    ("урод", r"урод(?!ил|ин\b)\w*"),
    ("мразь", r"мраз\w*"),
    ("тварь", r"(?:тварь|твари|тварью|тварина)"),
    ("чмо", r"(?:чмо|чмошник\w*|чмырь)"),
    ("ублюдок", r"ублюд\w*"),
    ("кретин", r"кретин\w*"),
    ("дегенерат", r"(?:дегенерат\w*|имбецил\w*|даун|дауны|дауна)"),
    ("сволочь", r"сволоч\w*"),
    ("гнида", r"(?:гнида|гниды|гниде|гниду|гнидой|падла|падлы|падлой|скотин\w*)"),
    ("лох", r"(?:лох|лохи|лоха|лохов|лошара|лошары|лошок)"),
    ("козёл", r"(?:козел|козлы|козлина|козлы)"),
)
_ROOT_RE = [(name, re.compile(rf"^{pattern}$")) for name, pattern in _ROOTS]
#: Words a root pattern would catch but that are not obscene.
_ALLOWED = frozenset({"худой", "хуже", "хуи"})


@dataclass(frozen=True, slots=True)
class Finding:
    word: str
    root: str


def _letters(text: str) -> str:
    """Look-alikes and digits inside words made Cyrillic, repeated letters collapsed."""

    def word(m: re.Match[str]) -> str:
        token = m.group(0)
        if not re.search(r"[^\W\d_]|[@$]", token):
            return token  # a number stays a number
        return token.translate(_LOOKALIKE)

    return re.sub(r"(\w)\1+", r"\1", _TOKEN.sub(word, text))


def _prepare(text: str) -> str:
    return re.sub(r"(?<=\w)[!1|](?=\w)", "и", text.casefold())


def normalise(text: str) -> str:
    """Lower case, «ё»→«е», spaced-apart letters joined, look-alikes and digits inside words
    made Cyrillic, repeated letters collapsed."""
    text = _SPACED.sub(lambda m: re.sub(r"[\s._\-*,]", "", m.group(0)), _prepare(text))
    return _letters(text)


def _words(text: str) -> list[str]:
    """The words to check: every word, and for letters spaced apart each way of reading the
    run from one of its bits to its end («ну ты и д е б и л» → …, «дебил»)."""
    text = _prepare(text)
    words = re.findall(r"[а-я]+", _letters(text))
    for run in _SPACED.finditer(text):
        bits = [b for b in re.split(r"[\s._\-*,]+", run.group(0)) if b]
        for i in range(len(bits) - 2):
            # a spaced-out word is short: 12 bits are plenty, and keep this linear
            words += re.findall(r"[а-я]+", _letters("".join(bits[i : i + 12])))
    return words


def profanity(text: str) -> list[Finding]:
    """Obscene words and insults in ``text`` (empty if clean)."""
    if not isinstance(text, str) or not text:
        return []
    found = []
    for token in _words(text[:20000]):
        if token in _ALLOWED:
            continue
        for name, pattern in _ROOT_RE:
            if pattern.match(token):
                found.append(Finding(token, name))
                break
    return found


# --- reveals of night actions (G2) -----------------------------------------------------------

_REVEAL = re.compile(
    r"(?<![\w])(?:"
    r"провер\w*|чекнул\w*|лечил\w*|лечила|вылечил\w*|хилил\w*|лечу|"
    r"стрелял\w*|выстрел\w*|стрельнул\w*|убил\w*|"
    r"кнопк\w*|часами|часы|книг\w*|ролев\w*|удар\w*|"
    r"я\s+(?:ком|комиссар|док|доктор|маньяк|ман|мафия|маф|мирн\w*|мж)|"
    r"мо[йеяи]\s+(?:ход|действи\w*|проверк\w*|выстрел\w*|цель)|"
    r"(?:я\s+)?отправил\w*"
    r")(?![\w])"
)


def reveal(text: str) -> list[str]:
    """Words that talk about night actions or roles (G2: forbidden between a night's close
    and its publication). A hint for the GM, not a verdict."""
    if not isinstance(text, str) or not text:
        return []
    folded = text[:20000].casefold().replace("ё", "е")
    return [m.group(0) for m in _REVEAL.finditer(folded)]
