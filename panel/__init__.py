"""The GM's side of the project, built on Django admin."""
