"""The userland `kubectl exec` sessions run in: tools beyond what container commands need.

`sregym.twin.node.shell` interprets commands and `sregym.twin.node.coreutils` registers the basics
(`sh`, `echo`, `cat`, `env`, `printenv`, `hostname`, `tail`, `test` ...). This package adds what
an engineer types into a running container: `ls` (listing.py), the text filters (`head`/`tail`
in headtail.py, `wc` in counting.py, `grep` with posix_regex.py, `sort`/`uniq` in sorting.py, `cut`/
`paste` in columns.py, `tr` in translate.py, `xargs`; options parsed by filteropts.py),
`id`/`whoami`/`pwd`/`uname` (identity.py); builds the container's filesystem (fs.py) and
environment (environment.py); and runs one exec in them (context.py).

Adding a tool (the data-plane work adds `curl`, `wget`, `nc`, `nslookup`, `redis-cli`,
`mongosh`, `psql` ... this way): create a module in this package, it is imported automatically::

    from sregym.twin.node.shell import Invocation, command

    @command("nslookup")
    def nslookup(call: Invocation) -> int:
        twin, pod = call.ctx.twin, call.ctx.pod        # the cluster and the pod exec'd into
        resolv = call.ctx.files["/etc/resolv.conf"]     # what the container's resolver uses
        call.write("Server:\\t\\t10.96.0.10\\n...")       # stdout; call.error(...) for stderr
        return 0                                        # the exit code kubectl reports

- `call.args` is argv without the name, `call.stdin` what was piped in, `call.ctx.env` the
  environment, `call.ctx.files` the readable files (write to it to create files),
  `call.ctx.extras["fs"]` the full tree (`ContainerFS`: dirs, symlinks, modes),
  `call.ctx.shell_flavour` "ash" (BusyBox/Alpine) or "dash" (Debian) to pick message formats.
- A generator command may `yield Sleep(seconds)` to take simulated time (a `curl` timing out
  after `--max-time 5`); an exec runs to completion at once whatever the simulated duration.
- Network tools must resolve through the twin's data plane (DNS via CoreDNS and the pod's
  resolv.conf, Services, endpoints, NetworkPolicies, chaos), never by reading object specs
  directly, so that every fault shows up in exec exactly as in traffic.
- Which images ship a tool: an image entry may list its executables in
  `ImageSpec.extras["binaries"]`; exec then fails with containerd's "executable file not found
  in $PATH" for anything else (e.g. `curl` in a BusyBox image). Without the list every registered
  command is available. Image-specific files go in `ImageSpec.extras["files"]`, environment in
  `extras["env"]`, and the working directory in `extras["workdir"]`.
"""

from __future__ import annotations

from sregym.registry import import_all

# Register every command module of this package (and of the shell's own userland).
import_all(__name__)
