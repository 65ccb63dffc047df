"""`curl` and `wget` inside a container, through the twin's data plane.

`curl http://geo:8083/` from `kubectl exec` is how an engineer tells "no such host" from
"connection refused" from "timed out" from "503", so each outcome prints curl's own message and
exit code (6 resolve, 7 connect, 28 timeout, 52 empty reply, 56 reset, 35 TLS, 22 with `-f`) and
takes the simulated time it would (a dropped SYN waits for `--connect-timeout`/`-m` or the
kernel's ~130 s). The name is resolved from the container's own resolv.conf/hosts
(`netdiag.lookup`); the connection and the HTTP exchange go to the data plane
(`twin.services.dataplane.http_request`, or `connect` plus what the listening process serves
when the data plane has no HTTP model for it).

`wget` comes in two flavours: BusyBox (Alpine/BusyBox images: `wget: bad address 'geo'`) and GNU
(Debian: `unable to resolve host address`, exit 4/8).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from http import HTTPStatus

from sregym.twin.dataplane.dns import DnsAnswer
from sregym.twin.machinery.objects import get_path
from sregym.twin.node.shell import Invocation, Program, command, format_date
from sregym.twin.userland.localnet import local_http
from sregym.twin.userland.netdiag import (
    KERNEL_CONNECT_TIMEOUT_MS,
    Connection,
    busybox,
    dataplane,
    lookup,
    open_connection,
    sleep_ms,
)

CURL_VERSION = "8.5.0"
OPENSSL = "OpenSSL/3.0.15"
HTTP_DATE = "%a, %d %b %Y %H:%M:%S GMT"  # RFC 7231 IMF-fixdate


# ================================================================================ requests
@dataclass(frozen=True)
class Url:
    scheme: str
    host: str
    port: int
    path: str

    @property
    def default_port(self) -> bool:
        return self.port == (443 if self.scheme == "https" else 80)

    @property
    def host_header(self) -> str:
        return self.host if self.default_port else f"{self.host}:{self.port}"

    def text(self) -> str:
        return f"{self.scheme}://{self.host_header}{self.path}"


def parse_url(text: str) -> Url | None:
    m = re.fullmatch(r"(?:(\w+)://)?([^/:?#\s]+)(?::(\d*))?([/?#].*)?", text.strip())
    if m is None:
        return None
    scheme = (m.group(1) or "http").lower()
    port = int(m.group(3)) if m.group(3) else (443 if scheme == "https" else 80)
    path = m.group(4) or "/"
    if path.startswith(("?", "#")):
        path = "/" + path
    return Url(scheme, m.group(2), port, path.split("#", 1)[0])


@dataclass
class Exchange:
    """What one HTTP request ended in, from the client's side."""

    dns: DnsAnswer | None
    ip: str = ""
    connected: bool = False
    error: str | None = None  # connection-level: "refused", "timeout", "reset", "tls", "empty", "http09"
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    connect_ms: float = 0.0
    total_ms: float = 0.0


def _fallback_http(call: Invocation, conn: Connection, url: Url, method: str) -> Exchange:
    """The response a process serves when the data plane has no HTTP model: what its listening
    socket declares (probes use the same facts)."""
    exchange = Exchange(None, conn.ip, True, connect_ms=conn.latency_ms)
    raw = conn.raw
    runtime = call.ctx.twin.services.runtime
    found = None
    if runtime is not None and raw is not None:
        found = runtime.listener(str(getattr(raw, "dst_ip", "") or conn.ip),
                                 int(getattr(raw, "target_port", 0) or url.port), "TCP")
    listen = found[2] if found is not None else None
    exchange.total_ms = conn.latency_ms * 2 + 0.5
    if listen is None or listen.http_paths is None:
        exchange.error = "http09" if listen is not None and listen.grpc_health else "empty"
        return exchange
    if url.scheme == "https":
        exchange.error = "tls"
        return exchange
    path = url.path.split("?", 1)[0]
    ok = not listen.http_paths or path in listen.http_paths
    exchange.status = 200 if ok else 404
    exchange.body = "" if method == "HEAD" else ("OK\n" if ok else "404 page not found\n")
    exchange.headers = {"Content-Type": "text/plain; charset=utf-8",
                        "Content-Length": str(len("OK\n" if ok else "404 page not found\n")),
                        "Date": format_date(call.wall_now, HTTP_DATE)}
    return exchange


def http_exchange(call: Invocation, url: Url, method: str, headers: dict[str, str], body: str | None,
                  connect_timeout_ms: float | None) -> Exchange:
    """Resolve, connect and exchange one request from this container."""
    answer = lookup(call, url.host)
    if not answer.ok or not answer.ips:
        return Exchange(answer, error="dns", total_ms=answer.latency_ms)
    ip = answer.ips[0]
    plane = dataplane(call.ctx.twin)
    conn = open_connection(call, ip, url.port, timeout_ms=connect_timeout_ms)
    if not conn.ok:
        return Exchange(answer, ip, False, conn.error or "timeout", connect_ms=conn.latency_ms,
                        total_ms=answer.latency_ms + conn.latency_ms)
    local = local_http(call, conn.raw, url.scheme, url.port, url.path, method) \
        if getattr(conn.raw, "stage", "") == "loopback" else None
    if local is not None:
        return _from_result(call, answer, ip, conn, local, method)
    if plane is not None and hasattr(plane, "http_request"):
        full = f"{url.scheme}://{ip}:{url.port}{url.path}"
        sent = {"Host": url.host_header, **headers}
        result = plane.http_request(call.ctx.pod, full, method=method, headers=sent, body=body)
        return _from_result(call, answer, ip, conn, result, method)
    exchange = _fallback_http(call, conn, url, method)
    exchange.dns = answer
    exchange.total_ms += answer.latency_ms
    return exchange


def _from_result(call: Invocation, answer: DnsAnswer, ip: str, conn: Connection, result: object,
                 method: str) -> Exchange:
    """The client's view of a data-plane `HttpResult`."""
    exchange = Exchange(answer, ip, True, connect_ms=conn.latency_ms)
    error = getattr(result, "error", None)
    status = int(getattr(result, "status", 0) or 0)
    if error and not status:
        exchange.connected = error not in ("refused", "timeout", "no_route", "unreachable")
        exchange.error = error
    exchange.status = status
    exchange.headers = dict(getattr(result, "headers", None) or {})
    if "Date" in exchange.headers:  # the server's clock is the client's (api/wall_time.py)
        exchange.headers["Date"] = format_date(call.wall_now, HTTP_DATE)
    exchange.body = "" if method == "HEAD" else str(getattr(result, "body", "") or "")
    exchange.total_ms = answer.latency_ms + float(getattr(result, "latency_ms", 0.0) or 0.0)
    return exchange


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


# ====================================================================================== curl
X509_ERRORS = {"x509_expired": "SSL certificate problem: certificate has expired",
               "x509_not_yet_valid": "SSL certificate problem: certificate is not yet valid",
               "x509_unparsable": "SSL certificate problem: unable to get local issuer certificate"}
_CURL_VALUE_SHORT = set("owmXdHAuexrTEFYy")
_CURL_VALUE_LONG = {"--output", "--write-out", "--max-time", "--connect-timeout", "--request", "--data",
                    "--data-raw", "--data-binary", "--data-urlencode", "--header", "--user-agent", "--user",
                    "--retry", "--retry-delay", "--retry-max-time", "--resolve", "--proxy", "--cacert",
                    "--cert", "--key", "--url", "--json", "--referer", "--cookie"}


@dataclass
class CurlOptions:
    silent: bool = False
    show_error: bool = False
    verbose: bool = False
    head: bool = False
    include: bool = False
    fail: bool = False
    output: str | None = None
    write_out: str | None = None
    max_time: float | None = None
    connect_timeout: float | None = None
    method: str | None = None
    data: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    user_agent: str = f"curl/{CURL_VERSION}"
    urls: list[str] = field(default_factory=list)


def parse_curl(args: list[str]) -> CurlOptions | str:
    opts = CurlOptions()
    index = 0

    def value() -> str:
        nonlocal index
        index += 1
        if index >= len(args):
            raise ValueError
        return args[index]

    try:
        while index < len(args):
            arg = args[index]
            if arg.startswith("--"):
                name, eq, inline = arg.partition("=")
                val = inline if eq else (value() if name in _CURL_VALUE_LONG else "")
                _curl_option(opts, name, val)
            elif arg.startswith("-") and len(arg) > 1:
                letters = arg[1:]
                for pos, letter in enumerate(letters):
                    if letter in _CURL_VALUE_SHORT:
                        rest = letters[pos + 1:]
                        _curl_option(opts, "-" + letter, rest if rest else value())
                        break
                    _curl_option(opts, "-" + letter, "")
            else:
                opts.urls.append(arg)
            index += 1
    except ValueError:
        return f"curl: option {args[-1]}: requires parameter"
    return opts


def _curl_option(opts: CurlOptions, name: str, val: str) -> None:
    if name in ("-s", "--silent"):
        opts.silent = True
    elif name in ("-S", "--show-error"):
        opts.show_error = True
    elif name in ("-v", "--verbose"):
        opts.verbose = True
    elif name in ("-I", "--head"):
        opts.head = True
    elif name in ("-i", "--include"):
        opts.include = True
    elif name in ("-f", "--fail"):
        opts.fail = True
    elif name in ("-o", "--output"):
        opts.output = val
    elif name in ("-w", "--write-out"):
        opts.write_out = val
    elif name in ("-m", "--max-time"):
        opts.max_time = float(val)
    elif name == "--connect-timeout":
        opts.connect_timeout = float(val)
    elif name in ("-X", "--request"):
        opts.method = val.upper()
    elif name in ("-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--json"):
        opts.data = val if opts.data is None else opts.data + "&" + val
    elif name in ("-H", "--header"):
        key, _, header_value = val.partition(":")
        opts.headers[key.strip()] = header_value.strip()
    elif name in ("-A", "--user-agent"):
        opts.user_agent = val
    elif name == "--url":
        opts.urls.append(val)


def _write_out(fmt: str, ex: Exchange, url: Url, code: int, message: str) -> str:
    values = {
        "http_code": f"{ex.status:03d}", "response_code": f"{ex.status:03d}",
        "time_total": f"{ex.total_ms / 1000:.6f}", "time_connect": f"{ex.connect_ms / 1000:.6f}",
        "time_namelookup": f"{(ex.dns.latency_ms if ex.dns else 0) / 1000:.6f}",
        "time_starttransfer": f"{ex.total_ms / 1000:.6f}" if ex.status else "0.000000",
        "remote_ip": ex.ip if ex.connected else "", "remote_port": str(url.port) if ex.connected else "",
        "size_download": str(len(ex.body.encode())), "url_effective": url.text(), "url": url.text(),
        "exitcode": str(code), "errormsg": message, "content_type": ex.headers.get("Content-Type", ""),
        "num_connects": "1" if ex.connected else "0", "scheme": url.scheme.upper(),
        "method": "", "http_version": "1.1" if ex.status else "0",
    }
    text = re.sub(r"%\{(\w+)\}", lambda m: values.get(m.group(1), ""), fmt)
    return text.replace("\\n", "\n").replace("\\t", "\t").replace("\\r", "\r")


def _meter(size: int, seconds: float) -> str:
    speed = int(size / seconds) if seconds > 0 else size
    shown = f"{speed}" if speed < 100_000 else f"{speed // 1024}k"
    pct = "100" if size else "  0"
    return (f"{pct} {size:>5}  {pct} {size:>5}    0     0  {shown:>5}      0 --:--:-- --:--:-- --:--:-- {shown:>5}\n")


METER_HEAD = ("  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n"
              "                                 Dload  Upload   Total   Spent    Left  Speed\n")


@command("curl")
def curl(call: Invocation) -> Program:
    parsed = parse_curl(list(call.args))
    if isinstance(parsed, str):
        call.error(parsed)
        call.error("curl: try 'curl --help' or 'curl --manual' for more information")
        return 2
    opts = parsed
    if not opts.urls:
        call.error("curl: try 'curl --help' or 'curl --manual' for more information")
        return 2
    url = parse_url(opts.urls[0])
    if url is None or url.scheme not in ("http", "https"):
        scheme = opts.urls[0].split("://", 1)[0] if "://" in opts.urls[0] else opts.urls[0]
        call.error(f'curl: (1) Protocol "{scheme}" not supported')
        return 1
    method = opts.method or ("HEAD" if opts.head else "POST" if opts.data is not None else "GET")
    show_errors = not opts.silent or opts.show_error
    tty = bool(call.ctx.extras.get("tty"))
    meter = not opts.silent and not opts.verbose and (not tty or opts.output is not None)
    limits = [t * 1000 for t in (opts.connect_timeout, opts.max_time) if t is not None]
    connect_limit = min(limits) if limits else KERNEL_CONNECT_TIMEOUT_MS
    headers = {"User-Agent": opts.user_agent, "Accept": "*/*", **opts.headers}
    if opts.data is not None:
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    ex = http_exchange(call, url, method, headers, opts.data, connect_limit)
    code, message = 0, ""
    verbose: list[str] = []
    dns = ex.dns
    if ex.error == "dns":
        if opts.max_time is not None and dns is not None and dns.latency_ms >= opts.max_time * 1000:
            code, message = 28, f"Resolving timed out after {int(opts.max_time * 1000)} milliseconds"
            ex.total_ms = opts.max_time * 1000
        else:
            code, message = 6, f"Could not resolve host: {url.host}"
        verbose.append(f"* {message}")
    else:
        verbose.append(f"*   Trying {ex.ip}:{url.port}...")
        if not ex.connected:
            elapsed = int(ex.connect_ms) + (1 if ex.error == "timeout" else 0)
            if ex.error == "timeout" and limits:
                code = 28
                message = (f"Failed to connect to {url.host} port {url.port} after {elapsed} ms: Timeout was reached"
                           if opts.connect_timeout is not None and opts.connect_timeout * 1000 <= connect_limit
                           else f"Connection timed out after {elapsed} milliseconds")
            else:
                code = 7
                message = f"Failed to connect to {url.host} port {url.port} after {elapsed} ms: Couldn't connect to server"
                reason = {"refused": "Connection refused", "timeout": "Connection timed out",
                          "no_route": "No route to host", "unreachable": "No route to host"}.get(ex.error or "",
                                                                                               "Connection refused")
                verbose.append(f"* connect to {ex.ip} port {url.port} from "
                               f"{get_path(call.ctx.pod, 'status', 'podIP', default='0.0.0.0')} port 48412 failed: {reason}")
            verbose.append(f"* {message}")
            verbose.append("* Closing connection")
        else:
            verbose.append(f"* Connected to {url.host} ({ex.ip}) port {url.port}")
            if opts.max_time is not None and ex.total_ms > opts.max_time * 1000:
                code = 28
                message = f"Operation timed out after {int(opts.max_time * 1000) + 1} milliseconds with 0 bytes received"
                ex.total_ms = opts.max_time * 1000
            elif ex.error == "tls":
                code, message = 35, f"{OPENSSL}: error:0A00010B:SSL routines::wrong version number"
            elif ex.error in X509_ERRORS:  # curl exit 60: the peer's certificate failed verification
                code, message = 60, X509_ERRORS[ex.error]
            elif ex.error in ("reset",):
                code, message = 56, "Recv failure: Connection reset by peer"
            elif ex.error == "http09":
                code, message = 1, "Received HTTP/0.9 when not allowed"
            elif ex.error in ("empty",) or (ex.error and not ex.status):
                code, message = 52, "Empty reply from server"
            verbose.append(f"> {method} {url.path} HTTP/1.1")
            verbose.append(f"> Host: {url.host_header}")
            verbose.extend(f"> {k}: {v}" for k, v in headers.items())
            verbose.append("> ")
            if ex.status and code == 0:
                verbose.append(f"< HTTP/1.1 {ex.status} {_reason(ex.status)}")
                verbose.extend(f"< {k}: {v}" for k, v in ex.headers.items())
                verbose.append("< ")
                if opts.fail and ex.status >= 400:
                    code, message = 22, f"The requested URL returned error: {ex.status}"
            if code == 0:
                verbose.append(f"* Connection #0 to host {url.host} left intact")
            elif code != 22:
                verbose.append(f"* {message}")
                verbose.append("* Closing connection")
    yield from sleep_ms(ex.total_ms)
    if opts.verbose:
        call.write("\n".join(verbose) + "\n", "stderr")
    if meter:
        call.write(METER_HEAD, "stderr")
        call.write(_meter(len(ex.body.encode()) if code == 0 else 0, ex.total_ms / 1000), "stderr")
    if code == 0 or code == 22:
        head = ""
        if opts.head or opts.include:
            head = f"HTTP/1.1 {ex.status} {_reason(ex.status)}\r\n" + "".join(
                f"{k}: {v}\r\n" for k, v in ex.headers.items()) + "\r\n"
        payload = head + ("" if code == 22 else ex.body)
        if opts.output is not None and opts.output != "-":
            if opts.output != "/dev/null":
                call.ctx.files[call.shell.abspath(opts.output)] = payload
        else:
            call.write(payload)
    if opts.write_out is not None:
        call.write(_write_out(opts.write_out, ex, url, code, message))
    if code and show_errors:
        call.error(f"curl: ({code}) {message}")
    return code


# ====================================================================================== wget
@command("wget")
def wget(call: Invocation) -> Program:
    args = list(call.args)
    quiet, output, timeout, spider, data = False, None, None, False, None
    headers: dict[str, str] = {}
    urls: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        nxt = args[index + 1] if index + 1 < len(args) else ""
        if arg in ("-O", "-T", "--header", "--post-data", "-U", "--user-agent", "-t", "--tries"):
            if arg == "-O":
                output = nxt
            elif arg == "-T":
                timeout = float(nxt or 0)
            elif arg == "--header":
                key, _, val = nxt.partition(":")
                headers[key.strip()] = val.strip()
            elif arg == "--post-data":
                data = nxt
            index += 2
            continue
        if arg.startswith("--timeout="):
            timeout = float(arg.split("=", 1)[1])
        elif arg.startswith("--post-data="):
            data = arg.split("=", 1)[1]
        elif arg == "--spider":
            spider = True
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            letters = arg[1:]
            if "q" in letters:
                quiet = True
            if "O" in letters:
                rest = letters[letters.index("O") + 1:]
                if rest:
                    output = rest
                else:
                    output = nxt
                    index += 1
            if "T" in letters:
                timeout = float(nxt or 0)
                index += 1
        elif arg in ("--quiet",):
            quiet = True
        elif not arg.startswith("-"):
            urls.append(arg)
        index += 1
    bb = busybox(call)
    if not urls:
        call.error("BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: wget [-cqS] "
                   "[--spider] [-O FILE] [-o LOGFILE] [--header STR] [--post-data STR | --post-file FILE] "
                   "[-Y on/off] [-P DIR] [-U AGENT] [-T SEC] URL..." if bb else
                   "wget: missing URL\nUsage: wget [OPTION]... [URL]...")
        return 1
    url = parse_url(urls[0])
    if url is None:
        call.error(f"wget: bad address '{urls[0]}'" if bb else f"{urls[0]}: Invalid URL")
        return 1
    method = "HEAD" if spider else ("POST" if data is not None else "GET")
    limit = timeout * 1000 if timeout else (900_000.0 if bb else KERNEL_CONNECT_TIMEOUT_MS)
    sent = {"User-Agent": "Wget" if bb else "Wget/1.21.3", "Accept": "*/*", **headers}
    ex = http_exchange(call, url, method, sent, data, limit)
    yield from sleep_ms(min(ex.total_ms, limit))
    name = output or (url.path.rstrip("/").rsplit("/", 1)[-1] or "index.html")
    to_stdout = output == "-"
    if bb:
        return _busybox_wget(call, url, ex, quiet, to_stdout, name, spider, timeout)
    return _gnu_wget(call, url, ex, quiet, to_stdout, name, spider, timeout)


def _save(call: Invocation, body: str, to_stdout: bool, name: str) -> None:
    if to_stdout:
        call.write(body)
    elif name != "/dev/null":
        call.ctx.files[call.shell.abspath(name)] = body


def _busybox_wget(call: Invocation, url: Url, ex: Exchange, quiet: bool, to_stdout: bool, name: str,
                  spider: bool, timeout: float | None) -> int:
    if ex.error == "dns":
        call.error(f"wget: bad address '{url.host}'")
        return 1
    if not quiet:
        call.error(f"Connecting to {url.host_header if not url.default_port else url.host}"
                   f"{'' if not url.default_port else ':' + str(url.port)} ({ex.ip}:{url.port})")
    if not ex.connected:
        if ex.error == "timeout":
            call.error("wget: download timed out" if timeout else
                       f"wget: can't connect to remote host ({ex.ip}): Connection timed out")
        else:
            reason = "No route to host" if ex.error in ("no_route", "unreachable") else "Connection refused"
            call.error(f"wget: can't connect to remote host ({ex.ip}): {reason}")
        return 1
    if ex.error or not ex.status:
        call.error("wget: error getting response: Connection reset by peer" if ex.error == "reset"
                   else "wget: error getting response")
        return 1
    if ex.status >= 400:
        call.error(f"wget: server returned error: HTTP/1.1 {ex.status} {_reason(ex.status)}")
        return 1
    if spider:
        if not quiet:
            call.error("remote file exists")
        return 0
    if not quiet:
        call.error("writing to stdout" if to_stdout else f"saving to '{name}'")
    _save(call, ex.body, to_stdout, name)
    if not quiet:
        size = len(ex.body.encode())
        label = "-" if to_stdout else name
        call.error(f"{label:<20} 100% |********************************| {size:>5}  0:00:00 ETA")
        call.error("written to stdout" if to_stdout else f"'{name}' saved")
    return 0


def _gnu_wget(call: Invocation, url: Url, ex: Exchange, quiet: bool, to_stdout: bool, name: str,
              spider: bool, timeout: float | None) -> int:
    stamp = format_date(call.wall_now, "%Y-%m-%d %H:%M:%S")
    say = (lambda text: None) if quiet else call.error
    say(f"--{stamp}--  {url.text()}")
    if ex.error == "dns":
        say(f"Resolving {url.host} ({url.host})... failed: "
            f"{'Temporary failure in name resolution' if ex.dns and ex.dns.error in ('timeout', 'SERVFAIL') else 'Name or service not known'}.")
        say(f"wget: unable to resolve host address ‘{url.host}’")
        return 4
    say(f"Resolving {url.host} ({url.host})... {ex.ip}")
    if not ex.connected:
        reason = {"timeout": "Connection timed out", "no_route": "No route to host",
                  "unreachable": "No route to host"}.get(ex.error or "", "Connection refused")
        say(f"Connecting to {url.host} ({url.host})|{ex.ip}|:{url.port}... failed: {reason}.")
        return 4
    say(f"Connecting to {url.host} ({url.host})|{ex.ip}|:{url.port}... connected.")
    if ex.error or not ex.status:
        say("HTTP request sent, awaiting response... "
            + ("Read error (Connection reset by peer) in headers." if ex.error == "reset" else "No data received."))
        return 4
    say(f"HTTP request sent, awaiting response... {ex.status} {_reason(ex.status)}")
    if ex.status >= 400:
        say(f"{stamp} ERROR {ex.status}: {_reason(ex.status)}.\n")
        return 8
    size = len(ex.body.encode())
    ctype = ex.headers.get("Content-Type", "text/plain").split(";", 1)[0]
    if spider:
        say(f"Length: {size} [{ctype}]\nRemote file exists.\n")
        return 0
    say(f"Length: {size} [{ctype}]")
    say(f"Saving to: ‘{'STDOUT' if to_stdout else name}’\n")
    _save(call, ex.body, to_stdout, name)
    label = "-" if to_stdout else name
    say(f"{label:<20}100%[===================>]{size:>6}  --.-KB/s    in 0s      \n")
    say(f"{stamp} ({size} B/s) - {'written to stdout' if to_stdout else f'‘{name}’ saved'} [{size}/{size}]\n")
    return 0
