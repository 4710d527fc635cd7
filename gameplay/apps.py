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
        # The deployment's system checks (manage.py check --deploy) register on import.
        import_module("gameplay.checks")
