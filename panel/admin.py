"""Admin classes and GM views for the panel."""
