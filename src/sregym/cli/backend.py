"""`--backend twin|kube` and the flags that say which cluster `kube` means, shared by the
commands that run problems (`run`, `check`).

`kube_target` turns the flags into a `KubeTarget` (one line and exit 2 for a bad combination),
with the cluster's ledger directory (`env/kube/leftovers.py`); `cleanup_leftovers` removes
whatever an attempt whose process was killed (Ctrl-C, the watchdog, an earlier run killed
outright) could not remove itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

BACKENDS = ("twin", "kube")


def backend_option() -> Any:
    return typer.Option("twin", "--backend", help="twin (in-process, default) or kube (a cluster reached by "
                                                  "--kubeconfig; see docs/real-cluster.md).")


def kubeconfig_option() -> Any:
    return typer.Option(None, "--kubeconfig", help="--backend kube: kubeconfig with a cluster-admin context.")


def context_option() -> Any:
    return typer.Option(None, "--context", help="--backend kube: the kubeconfig context (default: current).")


def url_option(name: str) -> Any:
    required = " (required)" if name == "prometheus" else ""
    return typer.Option(None, f"--{name}-url", help=f"--backend kube: the {name} HTTP API base URL{required}.")


def speed_option() -> Any:
    return typer.Option(1.0, "--cluster-speed", help="--backend kube: the cluster clock's rate against the wall "
                                                     "(1 for a real cluster; N for `sregym twin up --speed N`).")


def kube_target(command: str, backend: str, kubeconfig: str | None, context: str | None,
                prometheus_url: str | None, loki_url: str | None, jaeger_url: str | None,
                speed: float) -> Any:
    """The `KubeTarget` the flags name, or None for `--backend twin`."""
    from sregym.cli.validate import Args

    args = Args(command)
    args.choice(backend, "--backend", BACKENDS)
    kube_flags = {"--kubeconfig": kubeconfig, "--context": context, "--prometheus-url": prometheus_url,
                  "--loki-url": loki_url, "--jaeger-url": jaeger_url}
    if backend == "twin":
        given = [flag for flag, value in kube_flags.items() if value]
        if given:
            args.bad(given[0], "applies only with --backend kube")
        return None
    if not kubeconfig:
        args.bad("--kubeconfig", "--backend kube needs a kubeconfig")
    if not Path(str(kubeconfig)).expanduser().is_file():
        args.bad("--kubeconfig", f"{kubeconfig} is not a file")
    if not prometheus_url:
        args.bad("--prometheus-url", "--backend kube needs the cluster's Prometheus (the oracles query it)")
    if speed <= 0:
        args.bad("--cluster-speed", "must be positive")
    from sregym.env.kube.leftovers import ledger_home
    from sregym.env.kube.target import KubeTarget

    path = str(Path(str(kubeconfig)).expanduser().resolve())
    return KubeTarget(kubeconfig=path, context=context,
                      prometheus_url=str(prometheus_url), loki_url=loki_url or "", jaeger_url=jaeger_url or "",
                      speed=speed, ledger_dir=str(ledger_home(path, context)))


def stop_on_sigterm() -> None:
    """Turn SIGTERM into KeyboardInterrupt, so the `finally` blocks that clean the cluster run."""
    import signal

    def _interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _interrupt)


def cleanup_leftovers(target: Any) -> None:
    """Remove what attempts of processes no longer alive (killed workers of this command, or an
    earlier run that was killed outright) left on the cluster, saying what; and what stays."""
    from sregym.env.kube.leftovers import remove_leftovers

    def say(line: str) -> None:
        typer.echo(line, err=True)

    failed = remove_leftovers(target, say)
    for line in failed:
        say(f"  could not delete {line}")
    if failed:
        say(f"  the records stay in {target.ledger_dir}; the next run on this cluster tries again")


__all__ = ["BACKENDS", "backend_option", "cleanup_leftovers", "context_option", "kube_target",
           "kubeconfig_option", "speed_option", "stop_on_sigterm", "url_option"]
