"""The game: pure rules (``gameplay.rules``), models, and the services that write them."""
