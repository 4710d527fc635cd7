"""The project's tests. A regular package so that ``tests.*`` is always this one: Petrovich
2.0.1 (a dependency) installs a top-level ``tests`` package of its own into site-packages."""
