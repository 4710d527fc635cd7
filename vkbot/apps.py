from django.apps import AppConfig


class VkbotConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "vkbot"
    verbose_name = "VK bot"
