"""Run the twin's wire APIs: uvicorn and the simulated clock in ONE asyncio loop.

The twin is single-threaded by design (no locks in the store or the controllers). Request handlers
therefore touch it synchronously inside the loop, and the clock task calls `twin.step()` between
requests, yielding to the loop after every tick. Anything from another thread (a test, a fault
injector running in-process) must go through `TwinServer.call()`, which runs it on the loop.
PromQL and LogQL queries are the exception: they evaluate on worker threads, so the clock and
`call()` first wait (without blocking the loop) until no query runs (see `query_gate`).

Time modes: `speed > 0` paces simulated time to wall time × speed (the wall clock read only to
pace: simulated timestamps still come from the twin's clock); `manual` (speed 0) never advances on
its own, for tests and the stepped conductor (`advance()`). Either way the server's wall anchor
(`wall_time.py`) presents those timestamps on the client's clock, at the wire only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from sregym.twin.api.wall_time import WallAnchor

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from sregym.twin.api.tls import ServingCert
    from sregym.twin.twin import Twin

log = logging.getLogger("sregym.twin.api")
T = TypeVar("T")


OBSERVABILITY_DEFAULT_PORTS = {"prometheus": 9090, "loki": 3100, "jaeger": 16686}


class TwinServer:
    """The API servers of one twin: the Kubernetes API (HTTPS) and, optionally, Prometheus, Loki
    and Jaeger (plain HTTP, each on its own port like the real services), all on one event loop
    with one clock."""

    def __init__(self, twin: Twin, *, tokens: dict[str, str], host: str = "127.0.0.1",
                 port: int = 6443, speed: float = 1.0, app: ASGIApp | None = None,
                 tls: ServingCert | bool = True, log_level: str = "warning",
                 shutdown_grace: float = 2.0,
                 observability_ports: dict[str, int] | None = None,
                 wall: WallAnchor | None = None) -> None:
        """`tls=True` generates a throwaway CA and serving certificate (kubectl sends tokens only
        over TLS); pass a `ServingCert` to reuse one, or False for plain HTTP.
        `observability_ports` (e.g. `{"prometheus": 9090, "loki": 3100, "jaeger": 16686}`, 0 for
        any free port) also serves those query APIs. `wall` presents simulated time on the
        machine's clock at the wire (default: paced or follow by `speed`, see `wall_time`);
        `WallAnchor.fixed()` serves simulated time as stored."""
        self.twin = twin
        self.wall = wall if wall is not None else WallAnchor.for_speed(twin.clock, speed)
        if tls is True:
            from sregym.twin.api.tls import generate

            tls = generate()
        self.tls: ServingCert | None = tls or None
        self.tokens = tokens
        self.host = host
        self.speed = float(speed)
        self.log_level = log_level
        # Seconds to let open connections finish on stop (idle TLS clients hold it to the end).
        self.shutdown_grace = shutdown_grace
        self._app = app
        self._sock = _bind(host, port)
        self.port: int = self._sock.getsockname()[1]
        self._obs_socks: dict[str, socket.socket] = {}
        try:
            for name, obs_port in (observability_ports or {}).items():
                if name not in OBSERVABILITY_DEFAULT_PORTS:
                    raise ValueError(f"unknown observability API {name!r}")
                self._obs_socks[name] = _bind(host, obs_port)
        except BaseException:
            self._sock.close()
            for sock in self._obs_socks.values():
                sock.close()
            raise
        self._obs_server: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._startup_error: BaseException | None = None

    @property
    def url(self) -> str:
        scheme = "https" if self.tls is not None else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"

    def observability_urls(self) -> dict[str, str]:
        """`{"prometheus": "http://127.0.0.1:9090", ...}` for the APIs being served."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return {name: f"http://{host}:{sock.getsockname()[1]}" for name, sock in self._obs_socks.items()}

    @property
    def manual(self) -> bool:
        return self.speed <= 0

    def app(self) -> ASGIApp:
        if self._app is None:
            from sregym.twin.api.kube.server import create_app

            self._app = create_app(self.twin, tokens=self.tokens, wall=self.wall)
        return self._app

    # ------------------------------------------------------------------ run
    async def serve(self) -> None:
        """Serve until stopped (Ctrl-C/SIGTERM when on the main thread, or `stop()`)."""
        import uvicorn

        self.loop = asyncio.get_running_loop()
        from sregym.twin.api.ws_protocol import KubeWebSocketProtocol

        config = uvicorn.Config(self.app(), log_level=self.log_level, lifespan="off",
                                access_log=False, ws=KubeWebSocketProtocol,
                                timeout_graceful_shutdown=self.shutdown_grace,  # type: ignore[arg-type]
                                timeout_keep_alive=30,
                                ssl_certfile=str(self.tls.cert_file) if self.tls else None,
                                ssl_keyfile=str(self.tls.key_file) if self.tls else None)
        self._server = uvicorn.Server(config)
        tasks = [asyncio.create_task(self._clock(), name="sregym-clock"),
                 asyncio.create_task(self._announce_ready(), name="sregym-ready")]
        if self._obs_socks:
            obs_config = uvicorn.Config(self._observability_app(), log_level=self.log_level,
                                        lifespan="off", access_log=False,
                                        timeout_graceful_shutdown=self.shutdown_grace,  # type: ignore[arg-type]
                                        timeout_keep_alive=30)
            self._obs_server = _secondary_server(obs_config)
            tasks.append(asyncio.create_task(
                self._obs_server.serve(sockets=list(self._obs_socks.values())), name="sregym-obs"))
        try:
            await self._server.serve(sockets=[self._sock])
        finally:
            if self._obs_server is not None:
                self._obs_server.should_exit = True
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(tasks[-1], self.shutdown_grace + 1)
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            self._started.set()

    async def _announce_ready(self) -> None:
        """Signal readiness once the port answers; later, end watch streams as soon as a stop
        is requested (Ctrl-C, SIGTERM or `stop()`), so shutdown does not wait for them."""
        while not self._server.started or (self._obs_server is not None and not self._obs_server.started):
            await asyncio.sleep(0.005)
        self._started.set()
        while not self._server.should_exit:
            await asyncio.sleep(0.05)
        self._close_watches()

    def _observability_app(self) -> ASGIApp:
        """One ASGI app for every observability socket, dispatching on the local port."""
        from sregym.twin.api.jaeger import create_jaeger_app
        from sregym.twin.api.loki import create_loki_app
        from sregym.twin.api.prometheus import create_prometheus_app

        factories = {"prometheus": create_prometheus_app, "loki": create_loki_app,
                     "jaeger": create_jaeger_app}
        from sregym.twin.api.obs_time import WallTimeApp

        by_port = {sock.getsockname()[1]: WallTimeApp(factories[name](self.twin, tokens=self.tokens),
                                                      self.wall, name)  # type: ignore[arg-type]
                   for name, sock in self._obs_socks.items()}
        return _PortDispatch(by_port)

    def _close_watches(self) -> None:
        kube = getattr(getattr(self._app, "state", None), "kube", None)
        if kube is not None:
            kube.watches.close_all()

    async def _clock(self) -> None:
        """Pace simulated time to wall time × speed, one tick at a time."""
        if self.manual:
            return
        from sregym.twin.api.query_gate import gate_for

        gate = gate_for(self.twin)
        loop = asyncio.get_running_loop()
        tick = self.twin.clock.tick
        wall0 = loop.time()
        sim0 = self.twin.clock.elapsed
        while True:
            due = sim0 + (loop.time() - wall0) * self.speed
            while self.twin.clock.elapsed + tick <= due:
                await gate.idle()  # never tick under a running query (see query_gate)
                try:
                    self.twin.step()
                except Exception:  # a controller bug must not stop the cluster's clock
                    log.exception("twin step failed")
                await asyncio.sleep(0)  # let waiting requests in between ticks
            next_wall = wall0 + (self.twin.clock.elapsed + tick - sim0) / self.speed
            await asyncio.sleep(max(0.0, next_wall - loop.time()))

    def run(self) -> None:
        """Blocking: serve on the current thread until stopped."""
        asyncio.run(self.serve())

    # --------------------------------------------------- background (tests)
    def start_in_thread(self, timeout: float = 15.0) -> TwinServer:
        """Start serving on a daemon thread; return once the port answers."""
        def target() -> None:
            try:
                asyncio.run(self.serve())
            except BaseException as exc:  # surfaced by start_in_thread
                self._startup_error = exc
                self._started.set()

        self._thread = threading.Thread(target=target, name=f"sregym-api-{self.port}", daemon=True)
        self._thread.start()
        if not self._started.wait(timeout):
            raise RuntimeError("the twin API server did not start in time")
        if self._startup_error is not None:
            raise RuntimeError("the twin API server failed to start") from self._startup_error
        return self

    def call(self, fn: Callable[..., T], *args: Any, timeout: float = 60.0) -> T:
        """Run `fn(*args)` on the server's loop (between requests and ticks, and while no
        query evaluates on a worker thread) and return its result. Safe from any thread; on the
        loop thread itself it just calls `fn`."""
        if self.loop is None or not self.loop.is_running():
            return fn(*args)
        if _on_loop(self.loop):
            return fn(*args)
        from sregym.twin.api.query_gate import gate_for

        gate = gate_for(self.twin)

        async def run() -> T:
            await gate.idle()
            return fn(*args)

        future = asyncio.run_coroutine_threadsafe(run(), self.loop)
        return future.result(timeout)

    def advance(self, seconds: float) -> None:
        """Advance simulated time by `seconds`, on the loop, so watchers see every tick."""
        self.call(self.twin.advance, seconds)

    def stop(self, timeout: float = 10.0) -> None:
        if self._server is not None and self.loop is not None and self.loop.is_running():
            self.loop.call_soon_threadsafe(self._request_exit)
        if self._thread is not None:
            self._thread.join(timeout)
        with contextlib.suppress(OSError):
            self._sock.close()
        for sock in self._obs_socks.values():
            with contextlib.suppress(OSError):
                sock.close()


    def _request_exit(self) -> None:
        """End open watch streams (they would hold the graceful shutdown), then stop."""
        self._close_watches()
        self._server.should_exit = True


class _PortDispatch:
    """Route each connection to the app of the port it arrived on (`scope["server"]`)."""

    def __init__(self, by_port: dict[int, ASGIApp]) -> None:
        self.by_port = by_port

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        server = scope.get("server") or (None, None)
        app = self.by_port.get(server[1]) if server else None
        if app is None:
            app = next(iter(self.by_port.values()))
        await app(scope, receive, send)


def _secondary_server_class() -> type:
    import uvicorn

    class SecondaryServer(uvicorn.Server):
        """A uvicorn server that leaves signal handling to the primary (Kubernetes API) server,
        which stops it when it stops."""

        @contextlib.contextmanager
        def capture_signals(self):  # type: ignore[no-untyped-def, override]
            yield

    return SecondaryServer


def _secondary_server(config: Any) -> Any:
    return _secondary_server_class()(config)


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: without, a response written as headers + body waits for
    # the client's delayed ACK (Nagle), ~40 ms per request on keep-alive connections.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


__all__ = ["TwinServer"]
