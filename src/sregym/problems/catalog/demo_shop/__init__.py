"""demo-shop: a small built-in app (frontend, catalog, cache, load generator) that needs only the
control plane, so the problem framework can be exercised end to end on any twin."""
