"""`sregym twin ...`: run and inspect the emulated cluster."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from sregym.cli import exitcodes
from sregym.cli.validate import Args

app = typer.Typer(help="Run and inspect the emulated Kubernetes cluster (the twin).", no_args_is_help=True)

DEMO_APP = """
apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: demo, labels: {app: web}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}]
        readinessProbe: {httpGet: {path: /, port: 80}}
        resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 128Mi}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 80}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: demo, labels: {app: api}}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: api
        image: nginx:1.27-broken
"""
# Why some demo pods are not Running: a first-time reader must not mistake it for a twin bug.
BROKEN_IMAGE = "nginx:1.27-broken"
DEMO_NOTE = ("note: the api pods ({pods}) are broken on purpose. Their image {image} names a tag that does not "
             "exist, so the kubelet reports ErrImagePull and then ImagePullBackOff while it retries with a "
             "growing back-off, exactly as a real cluster would after a bad image tag (the fault of the "
             "bad-image-tag problems). The web pods are healthy; the kube-system pods are the cluster's own.")


@app.command()
def demo(
    seed: int = typer.Option(0, help="Run seed: same seed, same cluster."),
    seconds: float = typer.Option(60.0, help="Simulated seconds to advance."),
) -> None:
    """Deploy a small sample app into a fresh twin, advance simulated time and print the pods.

    The api Deployment is broken on purpose (an image tag that does not exist); a note after the
    table says so."""
    from sregym.cli.progress import print_fitted
    from sregym.twin import Twin
    from sregym.twin.clock import format_age
    from sregym.twin.machinery.printers import pod_ready, pod_restarts, pod_status

    args = Args("twin demo")
    args.non_negative(seed, "--seed")
    args.non_negative(seconds, "--seconds")
    console = Console()
    twin = Twin(seed=seed)
    twin.apply(DEMO_APP)
    twin.advance(seconds)
    table = Table(title=f"pods after {seconds:g} simulated seconds (seed {seed})")
    for column in ("NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "NODE"):
        table.add_column(column, overflow="fold")
    from sregym.twin.clock import parse_time

    for pod in twin.list("pods"):
        meta = pod["metadata"]
        age = format_age(twin.clock.now - parse_time(meta["creationTimestamp"]))
        table.add_row(meta["namespace"], meta["name"], pod_ready(pod), pod_status(pod),
                      pod_restarts(pod, twin.clock.now), age, pod.get("spec", {}).get("nodeName", "<none>"))
    console.print(table)
    broken = [p["metadata"]["name"] for p in twin.list("pods", "demo")
              if any(c.get("image") == BROKEN_IMAGE for c in p["spec"]["containers"])]
    print_fitted("", DEMO_NOTE.format(pods=", ".join(broken) or "none yet", image=BROKEN_IMAGE))


@app.command()
def up(
    port: int = typer.Option(6443, help="Port of the Kubernetes API server (0: any free port; the kubeconfig names it)."),
    kubeconfig: str = typer.Option("~/.kube/sregym.yaml", help="Where to write the kubeconfig."),
    seed: int = typer.Option(0, help="Run seed: same seed, same cluster (the tokens are new on every start)."),
    speed: float = typer.Option(1.0, help="Simulated seconds per wall second (0: clock paused)."),
    host: str = typer.Option("127.0.0.1", help="Address to listen on (loopback unless you mean to expose "
                                               "the cluster-admin credential's port)."),
    prometheus_port: int = typer.Option(9090, help="Port of the Prometheus HTTP API (-1: off)."),
    loki_port: int = typer.Option(3100, help="Port of the Loki HTTP API (-1: off)."),
    jaeger_port: int = typer.Option(16686, help="Port of the Jaeger query API (-1: off)."),
    app_name: str = typer.Option("", "--app", help="Deploy an application with its workload "
                                 "(e.g. hotel-reservation)."),
) -> None:
    """Serve a fresh twin: the Kubernetes API (HTTPS) plus Prometheus, Loki and Jaeger (HTTP),
    until Ctrl-C or SIGTERM."""
    import contextlib
    from pathlib import Path

    from sregym.twin import Twin
    from sregym.twin.api.kubeconfig import make_tokens, write_kubeconfig
    from sregym.twin.api.serve import TwinServer

    args = Args("twin up")
    args.port(port, "--port", ephemeral=True)
    ports = {"--port": port}
    for option, value in (("--prometheus-port", prometheus_port), ("--loki-port", loki_port),
                          ("--jaeger-port", jaeger_port)):
        args.port(value, option, off=True)
        clash = next((o for o, p in ports.items() if p == value), None)
        if clash is not None and value != -1:
            args.bad(option, f"{value} is already the port of {clash}")
        ports[option] = value
    args.non_negative(seed, "--seed")
    args.non_negative(speed, "--speed")
    args.out_file(Path(kubeconfig), "--kubeconfig")
    if app_name:
        from sregym.apps import list_apps

        args.choice(app_name, "--app", list_apps())
    twin = Twin(seed=seed)
    from sregym.apps import get_app, list_apps

    for name in list_apps():  # the public registry a real cluster pulls from: every app's images
        get_app(name).push_images(twin)
    if app_name:
        from sregym.apps import deploy_app

        deploy_app(twin, app_name)
    tokens = make_tokens()
    obs_ports = {name: p for name, p in (("prometheus", prometheus_port), ("loki", loki_port),
                                          ("jaeger", jaeger_port)) if p >= 0}
    try:
        server = TwinServer(twin, tokens=tokens, host=host, port=port, speed=speed,
                            observability_ports=obs_ports)
    except OSError as exc:
        args.fail(f"cannot listen on {host} (ports {port}, {', '.join(str(p) for p in obs_ports.values())}): "
                  f"{exc.strerror or exc}", exitcodes.ENVIRONMENT)
    try:
        path = write_kubeconfig(Path(kubeconfig), server.url, tokens,
                                ca_pem=server.tls.ca_pem if server.tls else None)
    except OSError as exc:
        args.fail(f"--kubeconfig: cannot write {kubeconfig}: {exc.strerror or exc}", exitcodes.USAGE)
    typer.echo(f"sregym twin (seed {seed}) serving the Kubernetes API at {server.url}, "
               f"clock speed {speed:g}x")
    for name, url in server.observability_urls().items():
        typer.echo(f"{name}: {url}")
    typer.echo(f"export KUBECONFIG={path}")
    warning = public_bind_warning(host)
    if warning:
        typer.echo(warning, err=True)
    import signal

    def _interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    # uvicorn shuts down gracefully on SIGTERM and then re-raises it to the previous handler;
    # turning it into KeyboardInterrupt lets us finish like Ctrl-C (exit 0, "stopped").
    signal.signal(signal.SIGTERM, _interrupt)
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    typer.echo("stopped")


def public_bind_warning(host: str) -> str | None:
    """The warning `up` prints when `host` is not a loopback address: anyone who can reach the
    ports can try the bearer tokens, and the query APIs carry them over plain HTTP."""
    import ipaddress

    if host == "localhost":
        return None
    try:
        if ipaddress.ip_address(host).is_loopback:
            return None
    except ValueError:
        pass  # a host name: it may resolve to a public address
    return (f"warning: listening on {host}, not loopback: the API server accepts a cluster-admin token "
            "(in the kubeconfig) from anyone who can reach it, and Prometheus/Loki/Jaeger receive "
            "tokens over plain HTTP. Bind 127.0.0.1 unless other machines must connect.")
