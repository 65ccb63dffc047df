"""Wire APIs of the twin (ASGI apps): Kubernetes, and later Prometheus, Loki and Jaeger."""
