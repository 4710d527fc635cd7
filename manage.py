#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    from config import offline
    from config.env import EnvError, exit_on_env_error

    if len(sys.argv) > 1:
        offline.declare(sys.argv[1])  # before the settings are read

    try:
        execute_from_command_line(sys.argv)
    except EnvError as error:
        exit_on_env_error(error)


if __name__ == "__main__":
    main()
