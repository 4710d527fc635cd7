"""The GM panel's forms: they parse and validate; the views hand the result to one service.
``settings``: the game's settings form; ``commands``: the forms of the GM's commands."""

from .commands import (
    ChatLinkForm,
    EndGameForm,
    ExtendForm,
    FlagForm,
    HistoryLookupForm,
    LogFilterForm,
    NightEditForm,
    PlayerAddForm,
    PlayerBulkForm,
    PunishForm,
    ReasonForm,
    ReplaceForm,
    RequiredReasonForm,
    VkUserField,
)
from .communities import ConnectForm, GmAddForm, HistoryForm
from .settings import (
    DurationField,
    GameSettingsForm,
    RemindersField,
    TopicField,
    duration_text,
)

__all__ = [
    "ConnectForm",
    "GmAddForm",
    "HistoryForm",
    "DurationField",
    "GameSettingsForm",
    "RemindersField",
    "TopicField",
    "duration_text",
    "ChatLinkForm",
    "EndGameForm",
    "ExtendForm",
    "FlagForm",
    "HistoryLookupForm",
    "LogFilterForm",
    "NightEditForm",
    "PlayerAddForm",
    "PlayerBulkForm",
    "PunishForm",
    "ReasonForm",
    "ReplaceForm",
    "RequiredReasonForm",
    "VkUserField",
]
