"""What a long-running process does once when it starts, before it serves anything.

:func:`sync_env_community` records the environment's community (``VK_GROUP_ID`` with its
tokens) as a ``Community`` row, or brings the row up to date, so that the selectors'
credentials are the environment's, tokens rotated in the environment included. The web calls
it from its WSGI/ASGI entry point (``config.wsgi``, ``config.asgi``: once per web process,
``runserver`` too), the rq worker from its ``work()`` (``gameplay.worker``), runbot at its own
start. Not from ``AppConfig.ready``: that runs for every ``manage.py`` command, ``migrate`` on
an empty database included, and Django asks for no queries there.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from django.db import DatabaseError, connection

from gameplay.management.database import error_line
from gameplay.selectors.communities import env_group_id
from gameplay.services.communities import community_sync_env

log = logging.getLogger(__name__)


def _sync(process: str) -> None:
    if env_group_id() is None:
        return  # no environment's community: nothing to record, no query
    try:
        community_sync_env()
    except DatabaseError as error:
        # Not migrated yet, or the database is down: the settings stand in for the row until
        # a process records it (gameplay.selectors.communities.credentials).
        log.warning(
            "%s: could not record the environment's community (VK_GROUP_ID): %s",
            process,
            error_line(error),
        )
    except Exception:  # noqa: BLE001 - a start hook never stops the process it starts
        log.exception("%s: could not record the environment's community (VK_GROUP_ID)", process)
    finally:
        # Nothing opened here outlives the start (no forked child shares it); a caller's open
        # transaction (a test's) is left alone.
        if not connection.in_atomic_block:
            connection.close()


def sync_env_community(process: str) -> None:
    """Record the environment's community on the start of ``process`` (a name for the log);
    a database that cannot be used is logged, not raised: the process starts anyway."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        _sync(process)
        return
    # An ASGI server may import the application inside its event loop, where Django allows
    # no query: the same, in a thread of its own.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(_sync, process).result()
