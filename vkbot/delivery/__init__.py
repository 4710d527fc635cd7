"""Delivery of the Outbox to VK: batched, rate-limited, retried, exactly once.

- :mod:`.jobs` — the django-rq job ``drain_outbox`` (enqueued after each commit that queued
  Outbox rows) and :mod:`.drain` — the loop it runs, also behind ``manage.py deliver``, fair
  across communities (each round takes them in turns);
- :mod:`.plan` — which calls a round makes: one text to many players as ``peer_ids``, board
  posts of one topic merged into one comment, the ``random_id``/``guid`` of each row;
- :mod:`.batch` — calls packed into ``execute`` requests of up to 25;
- :mod:`.senders` — which community each row goes out as (``Outbox.group_id``), with which
  tokens; a disconnected community's rows wait;
- :mod:`.transport` — vkbottle clients per token behind ``outbox.ratelimit``, the per-token
  limiter all workers share in Redis;
- :mod:`.outcome` — what VK's answers mean for each row.

The writes on Outbox rows are ``outbox``'s (``gameplay.services.settle`` for a round's outcome).
"""
