from importlib import import_module

from django.apps import AppConfig


class GameplayConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "gameplay"
    verbose_name = "Игры"

    def ready(self) -> None:
        # Refusals carry their facts; their Russian texts live in templates/messages/refusals.
        from gameplay import messages
        from gameplay.rules import errors

        errors.use_texts(messages.refusal)
        # A game's own theme text that does not render is replaced by the theme's, and its GM
        # is told with a moderation flag.
        from gameplay import themes
        from gameplay.services.moderation import theme_text_flag

        themes.use_reporter(theme_text_flag)
        # The deployment's system checks (manage.py check --deploy) register on import.
        import_module("gameplay.checks")
