"""Project configuration: settings from the environment, URLs, WSGI and ASGI entry points."""
