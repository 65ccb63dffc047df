"""ingress-nginx in the twin: its installation (`install.py`), its program (`program.py`) and the
controller that turns Ingress objects into its routes, certificates, reloads and access log
(`controller.py`). Which backend a request goes to is decided in `dataplane/ingress_routes.py`.
"""
