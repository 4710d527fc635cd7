"""Simulated players (``manage.py demo_players``): :mod:`.knowledge` reads what a player
sees, :mod:`.brain` chooses a move, :mod:`.runner` follows the local VK and makes the moves
through the player page's API."""
