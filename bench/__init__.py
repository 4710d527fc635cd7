"""``make bench``: how the project fares against a naive baseline measured in the same run.

Run with ``python -m bench`` (or ``make bench``); it needs PostgreSQL and Redis
(``BENCH_DATABASE_URL``, default ``postgres://postgres@127.0.0.1:5432/vkmafia_bench``, and
``BENCH_REDIS_URL``, default ``redis://127.0.0.1:6379/15``; both are wiped by the run).

- :mod:`bench.vkrequests` — VK API requests per phase of a 26-player game, the project's
  delivery and the naive one, against the lower bound (:mod:`bench.bound`);
- :mod:`bench.queries` — SQL queries per private-message night action and per board vote,
  through the real ingestion pipeline, with 1 and with 100 games in the database;
- :mod:`bench.e2e` — events per second from the local VK server through ``runbot``, the
  database, the Outbox and a worker back to the local VK server, for 1 and 100 games at once,
  with the peak memory of the bot and the worker;
- :mod:`bench.nightres` — the pure rules' night resolution for 26 players;
- :mod:`bench.naive` — the naive baseline: one VK request per message and recipient, and
  board posts one by one (what vkbottle's ``message.answer`` does for each reply).
"""
