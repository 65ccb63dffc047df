"""Helpers shared by tests in several directories (on the path via pytest's `pythonpath`)."""
