"""The Kubernetes API server of the twin (Starlette ASGI app)."""
