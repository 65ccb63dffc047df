"""The userland every container with a shell has: sh, echo, printf, sleep, cat, test, env ...

These are the commands container `command:`/`args:` lines use in practice (busybox/alpine/curl
images and the shells of Debian-based images). Messages follow busybox for the `ash` flavour and
GNU coreutils otherwise, since that is what an operator sees in `kubectl logs`. Exec-only tools
(`ls`, `grep`, `nslookup`, `curl` ...) are registered by other modules with the same decorator.
"""

from __future__ import annotations

import re

from sregym.twin.node.shell import (
    FOREVER,
    Invocation,
    Listen,
    Program,
    Shell,
    Sleep,
    Usage,
    command,
    format_date,
)

_SUFFIX = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _busybox(call: Invocation) -> bool:
    return call.ctx.shell_flavour in ("ash", "")


@command("sh", "ash", "bash", "dash")
def sh(call: Invocation) -> Program:
    """`sh -c 'script' [name [args...]]`, `sh script.sh`, or `sh` reading stdin."""
    args = call.args
    errexit = False
    while args and args[0].startswith("-") and args[0] not in ("-c", "-", "--"):
        if "e" in args[0]:
            errexit = True
        if "c" in args[0]:
            args = ["-c", *args[1:]]
            break
        args = args[1:]
    shell_name = call.argv[0]
    if args and args[0] == "-c":
        if len(args) < 2:
            call.error(f"{shell_name}: -c requires an argument")
            return 2
        script = args[1]
        name = args[2] if len(args) > 2 else shell_name
        shell = Shell(call.ctx, name, args[3:])
    elif args and args[0] not in ("-", "--"):
        path = call.shell.abspath(args[0])
        script_text = call.ctx.files.get(path)
        if script_text is None:
            call.error(f"{shell_name}: can't open '{args[0]}': No such file or directory"
                       if _busybox(call) else f"{shell_name}: 0: cannot open {args[0]}: No such file")
            return 127 if _busybox(call) else 2
        script = script_text
        shell = Shell(call.ctx, args[0], args[1:])
    else:
        # No script: read commands from stdin, which for a container is empty unless
        # `stdin: true`, so the shell exits at once with status 0.
        script = call.stdin
        shell = Shell(call.ctx, shell_name)
    shell.vars.update({k: v for k, v in call.shell.vars.items() if k in call.shell.exported})
    shell.exported = set(call.shell.exported) | set(call.ctx.env)
    shell.errexit = errexit
    shell.offset = call.shell.offset
    # `bash` run from the image's shell speaks bash (here-strings, its messages) until it exits.
    saved_flavour = call.ctx.shell_flavour
    if call.name == "bash":
        call.ctx.shell_flavour = "bash"
    try:
        return (yield from shell.run_source(script))
    finally:
        call.ctx.shell_flavour = saved_flavour
        shell.release()


@command("true")
def true(_call: Invocation) -> int:
    return 0


@command("false")
def false(_call: Invocation) -> int:
    return 1


_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "a": "\a", "b": "\b", "r": "\r", "v": "\v", "f": "\f",
            "e": "\x1b"}


def _unescape(text: str) -> tuple[str, bool]:
    """Backslash escapes of `echo -e`/`printf`; the flag says whether `\\c` stopped output."""
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "c":
                return "".join(out), True
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            if nxt == "0":
                m = re.match(r"0([0-7]{0,3})", text[i + 1:])
                digits = m.group(1) if m else ""
                out.append(chr(int(digits or "0", 8)))
                i += 2 + len(digits)
                continue
        out.append(c)
        i += 1
    return "".join(out), False


@command("echo")
def echo(call: Invocation) -> int:
    args = call.args
    newline, escapes = True, call.ctx.shell_flavour == "dash"
    while args and re.fullmatch(r"-[neE]+", args[0]):
        flags = args.pop(0)
        newline = newline and "n" not in flags
        if "e" in flags:
            escapes = True
        if "E" in flags:
            escapes = False
    text = " ".join(args)
    if escapes:
        text, stopped = _unescape(text)
        newline = newline and not stopped
    call.write(text + ("\n" if newline else ""))
    return 0


@command("printf")
def printf(call: Invocation) -> int:
    if not call.args:
        call.error("printf: usage: printf format [arguments]" if not _busybox(call)
                   else "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\n"
                        "Usage: printf FORMAT [ARG]...")
        return 1 if _busybox(call) else 2
    fmt, args = call.args[0], list(call.args[1:])
    status = 0
    out: list[str] = []
    spec = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?([sdiouxXfeEgGcb%])")
    meter = call.ctx.meter()
    while True:
        consumed = 0

        def star(args: list[str]) -> str:
            """A `*` width or precision: the next argument (an invalid number counts as 0)."""
            nonlocal consumed
            value = args[consumed] if consumed < len(args) else ""
            consumed += 1
            try:
                return str(int(value or "0", 0))
            except ValueError:
                return "0"

        def convert(m: re.Match[str], args: list[str] = args) -> str:
            nonlocal consumed, status
            flags, width, precision, conv = m.group(1), m.group(2), m.group(3), m.group(4)
            if conv == "%":
                return "%"
            if width == "*":
                width = star(args)
                if width.startswith("-"):
                    flags, width = flags + "-", width[1:]
            if precision == "*":
                precision = star(args)
                precision = None if precision.startswith("-") else precision
            # The padding is built in the twin's memory: a width past the process's memory is
            # the OOM killer's business (printf '%*s' 999999999).
            meter.need(int(width or 0) + (int(precision or 0) if conv not in "sc" else 0))
            value = args[consumed] if consumed < len(args) else ""
            consumed += 1
            pyfmt = "%" + flags + (width or "") + (f".{precision}" if precision is not None else "")
            if conv in "sc":
                return (pyfmt + "s") % (value[:1] if conv == "c" else value)
            if conv == "b":
                return _unescape(value)[0]
            try:
                number: float = float(value) if conv in "feEgG" else int(value or "0", 0)
            except ValueError:
                call.error(f"printf: invalid number '{value}'")
                status = 1
                number = 0
            return (pyfmt + ("d" if conv in "iu" else conv)) % number

        text = _unescape(fmt)[0]
        out.append(spec.sub(convert, text))
        if consumed == 0 or consumed >= len(args):
            break
        args = args[consumed:]
    call.write("".join(out))
    return status


def parse_duration(text: str) -> float | None:
    """`sleep` argument: seconds with an optional s/m/h/d suffix, or `inf`/`infinity`."""
    if text in ("inf", "infinity", "INF", "Infinity"):
        return FOREVER
    m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)([smhd]?)", text)
    if not m:
        return None
    return float(m.group(1)) * _SUFFIX.get(m.group(2) or "s", 1)


@command("sleep")
def sleep(call: Invocation) -> Program:
    if not call.args:
        call.error("sleep: missing operand" if not _busybox(call) else
                   "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: sleep [N]...")
        return 1
    total = 0.0
    for arg in call.args:
        seconds = parse_duration(arg)
        if seconds is None:
            call.error(f"sleep: invalid number '{arg}'" if _busybox(call)
                       else f"sleep: invalid time interval '{arg}'")
            return 1
        total += seconds
    yield Sleep(total)
    return 0


# A character device every container has whose reads never end. (/dev/urandom is left out: the
# twin's streams are text, which random bytes would not survive intact.)
ENDLESS_DEVICES = ("/dev/zero",)
DEVICE_CHUNK = 64 << 10


def device_bytes(path: str, size: int) -> str:
    """`size` bytes read from an endless device: NULs."""
    return "\0" * max(0, size)


def _read_device(call: Invocation, path: str) -> Program:
    """`cat /dev/zero`: chunk after chunk until something stops the process (the exec's output
    cap or step budget, or the OOM killer when a pipe or `$(...)` holds the stream)."""
    chunk = device_bytes(path, DEVICE_CHUNK)
    while True:
        call.write(chunk)
        yield Sleep(0)


def _cat_error(call: Invocation, path: str, problem: str) -> None:
    if _busybox(call):
        call.error(f"cat: can't open '{path}': {problem}")
    else:
        call.error(f"cat: {path}: {problem}")


@command("cat")
def cat(call: Invocation) -> int | Program:
    paths = [a for a in call.args if not (a.startswith("-") and a != "-")]
    if not paths:
        call.write(call.stdin)
        return 0
    status = 0
    for path in paths:
        if path == "-":
            call.write(call.stdin)
            continue
        full = call.shell.abspath(path)
        content = call.ctx.files.get(full)
        if full in ENDLESS_DEVICES:
            return _read_device(call, full)
        if content is not None:
            call.write(content)
        elif full in call.ctx.directories():  # only when needed: it walks the whole tree
            call.error("cat: read error: Is a directory" if _busybox(call) else f"cat: {path}: Is a directory")
            status = 1
        else:
            _cat_error(call, path, "No such file or directory")
            status = 1
    return status


@command("env")
def env(call: Invocation) -> Program:
    args = list(call.args)
    extra: dict[str, str] = {}
    ignore = False
    while args and (args[0] in ("-i", "-") or "=" in args[0]):
        arg = args.pop(0)
        if arg in ("-i", "-"):
            ignore = True
        else:
            key, _, value = arg.partition("=")
            extra[key] = value
    variables = {} if ignore else call.shell.exported_env()
    variables.update(extra)
    if args:
        sub = Shell(call.ctx, call.shell.name)
        sub.vars = dict(variables)
        sub.exported = set(variables)
        sub.offset = call.shell.offset
        try:
            return (yield from sub._invoke(args, {}, call.stdin))
        finally:
            sub.release()
    call.write("".join(f"{k}={v}\n" for k, v in variables.items()))
    return 0


@command("printenv")
def printenv(call: Invocation) -> int:
    variables = call.shell.exported_env()
    if not call.args:
        call.write("".join(f"{k}={v}\n" for k, v in variables.items()))
        return 0
    status = 0
    for name in call.args:
        if name in variables:
            call.write(variables[name] + "\n")
        else:
            status = 1
    return status


@command("hostname")
def hostname(call: Invocation) -> int:
    call.write((call.ctx.hostname or call.ctx.env.get("HOSTNAME", "localhost")) + "\n")
    return 0


@command("date")
def date(call: Invocation) -> int:
    fmt = next((a[1:] for a in call.args if a.startswith("+")), None)
    call.write(format_date(call.wall_now, fmt) + "\n")
    return 0


def _test(call: Invocation, args: list[str]) -> int:
    """`test` / `[`: 0 true, 1 false, 2 on a usage error."""
    files = call.ctx.files

    def unary(op: str, operand: str) -> bool | None:
        path = call.shell.abspath(operand) if operand else ""
        if op == "-z":
            return operand == ""
        if op == "-n":
            return operand != ""
        if op in ("-e", "-r", "-w"):
            return path in files or path in call.ctx.directories()
        if op == "-f":
            return path in files
        if op == "-d":
            return path in call.ctx.directories()
        if op == "-s":
            return bool(files.get(path))
        if op in ("-x", "-L", "-h"):  # an exec's tree (`userland/fs.py`) knows links and modes
            fs = call.ctx.extras.get("fs")
            found = fs.lookup(path, follow_last=op == "-x") if fs is not None and path else None
            if op == "-x":
                return found is not None and bool(found[1].mode & 0o111)
            return found is not None and found[1].kind == "link"
        if op in ("-p", "-S", "-b", "-c", "-t"):
            return False
        return None

    def binary(left: str, op: str, right: str) -> bool | None:
        if op in ("=", "=="):
            return left == right
        if op == "!=":
            return left != right
        if op in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
            try:
                a, b = int(left), int(right)
            except ValueError:
                bad = left if not re.fullmatch(r"-?\d+", left) else right
                raise ValueError(f"{call.name}: {bad}: bad number" if _busybox(call)
                                 else f"{call.name}: {bad}: integer expression expected") from None
            return {"-eq": a == b, "-ne": a != b, "-lt": a < b, "-le": a <= b, "-gt": a > b,
                    "-ge": a >= b}[op]
        return None

    def evaluate(tokens: list[str]) -> bool:
        for joiner in ("-o", "-a"):
            if joiner in tokens[1:-1]:
                index = len(tokens) - 1 - tokens[::-1].index(joiner)
                left, right = evaluate(tokens[:index]), evaluate(tokens[index + 1:])
                return (left or right) if joiner == "-o" else (left and right)
        if not tokens:
            return False
        if tokens[0] == "!" and len(tokens) > 1:
            return not evaluate(tokens[1:])
        if tokens[0] == "(" and tokens[-1] == ")":
            return evaluate(tokens[1:-1])
        if len(tokens) == 1:
            return tokens[0] != ""
        if len(tokens) == 2:
            result = unary(tokens[0], tokens[1])
            if result is None:
                raise ValueError(f"{call.name}: {tokens[0]}: unary operator expected")
            return result
        if len(tokens) == 3:
            result = binary(*tokens)
            if result is None:
                raise ValueError(f"{call.name}: {tokens[1]}: binary operator expected")
            return result
        raise ValueError(f"{call.name}: too many arguments")

    try:
        return 0 if evaluate(args) else 1
    except ValueError as exc:
        call.error(str(exc))
        return 2


@command("test")
def test(call: Invocation) -> int:
    return _test(call, list(call.args))


@command("[")
def bracket(call: Invocation) -> int:
    args = list(call.args)
    if not args or args[-1] != "]":
        call.error("[: missing ]")
        return 2
    return _test(call, args[:-1])


@command("yes")
def yes(call: Invocation) -> Program:
    text = " ".join(call.args) or "y"
    while True:
        call.write(text + "\n")
        yield Sleep(0.01)


@command("nc", "netcat")
def netcat(call: Invocation) -> Program:
    """Only the listening form matters for containers: `nc -l -p 8080`, `nc -lk 8080`."""
    args = call.args
    listen = any(a.startswith("-") and "l" in a for a in args)
    if not listen:
        call.error("nc: can't connect to remote host: Connection refused")
        return 1
    port = None
    for index, arg in enumerate(args):
        if arg == "-p" and index + 1 < len(args):
            port = args[index + 1]
        elif arg.isdigit():
            port = arg
    if port is None or not port.isdigit():
        call.error("nc: missing port number")
        return 1
    yield Listen(int(port), "UDP" if "-u" in args else "TCP", http_paths=None,
                 bind_error="nc: bind: Address already in use")
    yield Sleep(FOREVER)
    return 0


@command("httpd")
def httpd(call: Invocation) -> Program:
    """busybox `httpd -f -p PORT -h DIR`: serves the files under DIR (404 for the rest)."""
    args = call.args
    port, home = 80, "/var/www"
    for index, arg in enumerate(args):
        if arg == "-p" and index + 1 < len(args):
            port = int(args[index + 1].rsplit(":", 1)[-1])
        elif arg == "-h" and index + 1 < len(args):
            home = call.shell.abspath(args[index + 1])
    paths = tuple(sorted(p[len(home):] for p in call.ctx.files if p.startswith(home + "/")))
    if "/index.html" in paths:
        paths = ("/", *paths)
    yield Listen(port, http_paths=paths or ("/__none__",))
    if "-f" not in args:
        return 0
    yield Sleep(FOREVER)
    return 0


@command("stress")
def stress(call: Invocation) -> Program:
    """polinux/stress: `--vm N --vm-bytes 150M` allocates and holds memory, `--cpu N` spins."""
    args = list(call.args)
    opts: dict[str, str] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        if arg.startswith("--") and "=" in arg:
            key, _, value = arg[2:].partition("=")
            opts[key] = value
        elif arg.startswith("-") and index + 1 < len(args) and not args[index + 1].startswith("-"):
            key = {"-c": "cpu", "-i": "io", "-m": "vm", "-d": "hdd", "-t": "timeout"}.get(arg, arg.lstrip("-"))
            opts[key] = args[index + 1]
            index += 1
        index += 1
    if not opts:
        call.write("`stress' imposes certain types of compute stress on your system\n\n"
                   "Usage: stress [OPTION [ARG]] ...\n")
        return 1
    cpu, io, vm, hdd = (int(opts.get(k, "0") or 0) for k in ("cpu", "io", "vm", "hdd"))
    vm_bytes = _bytes(opts.get("vm-bytes", "256M"))
    call.write(f"stress: info: [1] dispatching hogs: {cpu} cpu, {io} io, {vm} vm, {hdd} hdd\n")
    yield Usage(memory_bytes=vm * vm_bytes + (1 << 20), cpu_cores=float(cpu + vm) or 0.01)
    timeout = parse_duration(opts["timeout"]) if "timeout" in opts else None
    if timeout is None:
        yield Sleep(FOREVER)
        return 0
    yield Sleep(timeout)
    call.write(f"stress: info: [1] successful run completed in {int(timeout)}s\n")
    return 0


def _bytes(text: str) -> int:
    m = re.fullmatch(r"(\d+)([bBkKmMgG]?)", text.strip())
    if not m:
        return 256 << 20
    unit = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]
    return int(m.group(1)) * unit
