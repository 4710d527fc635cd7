"""Launching the project's processes: ``make run`` (``manage.py serve``) starts the whole
deployment against VK — migrations, static files, then the web (gunicorn), the bot and the
workers under one supervisor; ``make demo`` uses the same supervisor.

- :mod:`ops.supervisor` starts processes, waits until each is ready, prefixes their logs,
  restarts one that exits (with back-off) and stops them all cleanly;
- :mod:`ops.launch` runs each process so that it dies with its supervisor;
- :mod:`ops.serve` checks the operator's configuration and says which processes run;
- :mod:`ops.probes` holds the small port and HTTP checks;
- :mod:`ops.outages` is how every process logs an outage of PostgreSQL, Redis or VK.

This app sits below the features: it imports ``config`` and Django only (never ``gameplay``,
``vkbot`` or ``panel``; it starts their commands as processes), and ``demo`` imports it.
"""
