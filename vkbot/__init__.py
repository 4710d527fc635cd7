"""The VK side: vkbottle handlers, the VK client that delivers the Outbox, ``manage.py runbot``."""
