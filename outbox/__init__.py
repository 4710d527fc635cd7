"""The Outbox: how what the services decide reaches VK exactly once.

A service writes Outbox rows (``gameplay.models.Outbox``) in the same transaction as the change
that causes them; the delivery worker (``vkbot.delivery``) drains them. This package is the
machinery between the two, below the services and above the models (it imports neither
``gameplay.services`` nor ``vkbot``):

- :mod:`outbox.queue`: enqueueing the drain job after a commit (rq), at most one waiting;
- :mod:`outbox.leases`: the worker's lease on the rows it claims, and the plan recorded before
  the call to VK;
- :mod:`outbox.outcomes`: what VK answered (sent, retry with backoff, failed);
- :mod:`outbox.flags`: the GM's flags of kind ``delivery`` for messages VK refused;
- :mod:`outbox.ids`: VK's ``random_id``/``guid`` of a row (this database's offset);
- :mod:`outbox.ratelimit`: one request limiter per VK token, shared in Redis by every process
  and every caller of VK (the delivery, the bot's prefetch);
- :mod:`outbox.results`: the keys of a row's ``payload`` and ``result``;
- :mod:`outbox.dbrows`: plain SQL for the busiest writes (the leases' and outcomes' updates,
  and the rows the services' unit of work, :mod:`gameplay.unit_of_work`, inserts together).

The GM's retry button and the link of a chat VK created are services
(``gameplay.services.retries``, ``gameplay.services.settle``).
"""
