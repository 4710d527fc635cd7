"""The one-command demo (``make demo``): the embedded default with every process running —
the GM panel, the local VK server with its player page, the bot, a worker with the scheduler
and simulated players — around a 26-player demo game.

- :mod:`demo.stack` says which processes the demo runs; :mod:`ops.supervisor` (shared with
  ``make run``) starts them in order, waits until each is ready, prefixes their logs and stops
  them all cleanly;
- :mod:`demo.seed` (``manage.py demo_seed``) sets the demo game up, idempotently;
- :mod:`demo.sim` (``manage.py demo_players``) plays the players a person has not taken over,
  talking only to the local VK server;
- :mod:`demo.redis_server` is the Redis stand-in the processes share (fakeredis over TCP).

This app sits outside the layers: it may import ``gameplay``, ``vkbot`` and ``localvk`` (never
``panel``), and nothing imports it. ``manage.py runlocalvk`` (the local VK server configured from
the settings) is one of its commands.
"""
