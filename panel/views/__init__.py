"""The GM's views, added to Django admin by ``panel.admin.GameAdmin.get_urls``."""
