"""`sregym-submit`: how a shell or coding agent makes its submissions.

A command agent runs outside the Python process that holds the attempt, so it cannot call the
submit tools directly. The `command` agent serves them on a loopback HTTP endpoint and puts its
URL and a bearer token in the environment (`SREGYM_SUBMIT_URL`, `SREGYM_SUBMIT_TOKEN`); this
small client (standard library only, so it starts fast) posts to it:

    sregym-submit diagnosis --entity ns/Kind/name [...] --mechanism M --explanation TEXT
    sregym-submit diagnosis --json FILE
    sregym-submit detection --incident yes|no [--started-at TIME] --evidence TEXT
    sregym-submit done
    sregym-submit status

It prints the conductor's answer and exits 0 when the submission was accepted, 1 when it was
refused (the message says why), 2 on a usage or connection problem.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sregym-submit", description="Submit to the running sregym attempt.")
    sub = parser.add_subparsers(dest="action", required=True)
    diag = sub.add_parser("diagnosis", help="submit the diagnosis (ends the diagnosis phase)")
    diag.add_argument("--json", dest="json_file", help="a JSON file with root_cause_entities, mechanism, "
                      "affected_entities, explanation ('-' reads standard input)")
    diag.add_argument("--entity", action="append", default=[], help="root-cause entity namespace/Kind/name "
                      "(repeatable)")
    diag.add_argument("--affected", action="append", default=[], help="affected entity namespace/Kind/name "
                      "(repeatable)")
    diag.add_argument("--mechanism", help="what is wrong, in a few words")
    diag.add_argument("--explanation", default="", help="the evidence and the concrete detail")
    detect = sub.add_parser("detection", help="answer whether there is an incident (ends the detection phase)")
    detect.add_argument("--incident", required=True, choices=("yes", "no"), help="is there an incident now?")
    detect.add_argument("--started-at", help="when it began: RFC 3339, Unix seconds or now-10m")
    detect.add_argument("--evidence", default="", help="what you observed")
    sub.add_parser("done", help="declare the mitigation done (ends the mitigation phase)")
    sub.add_parser("status", help="print the current phase")
    return parser


def diagnosis_payload(args: argparse.Namespace) -> dict[str, Any]:
    """The submit_diagnosis arguments from `--json` or from the flags (flags override)."""
    payload: dict[str, Any] = {}
    if args.json_file:
        text = sys.stdin.read() if args.json_file == "-" else Path(args.json_file).read_text()
        loaded = json.loads(text)
        if not isinstance(loaded, dict):
            raise ValueError("the --json file must hold a JSON object")
        payload.update(loaded)
    if args.entity:
        payload["root_cause_entities"] = list(args.entity)
    if args.affected:
        payload["affected_entities"] = list(args.affected)
    if args.mechanism:
        payload["mechanism"] = args.mechanism
    if args.explanation:
        payload["explanation"] = args.explanation
    # An explicitly empty list (from --json) says "no root cause": nothing is wrong.
    if "root_cause_entities" not in payload or not payload.get("mechanism"):
        raise ValueError("a diagnosis needs at least one --entity and a --mechanism (or a --json file)")
    return payload


def detection_payload(args: argparse.Namespace) -> dict[str, Any]:
    """The submit_detection arguments from the flags."""
    payload: dict[str, Any] = {"incident": args.incident == "yes", "evidence": args.evidence}
    if args.started_at:
        payload["started_at"] = args.started_at
    return payload


def _request(path: str, payload: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
    url = os.environ.get("SREGYM_SUBMIT_URL", "").rstrip("/")
    token = os.environ.get("SREGYM_SUBMIT_TOKEN", "")
    if not url:
        raise ConnectionError("SREGYM_SUBMIT_URL is not set: run this inside an sregym command agent")
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(url + path, data=data, method="POST" if data is not None else "GET",
                                     headers={"Authorization": f"Bearer {token}",
                                              "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as err:
        body = err.read()
        try:
            return err.code, json.loads(body or b"{}")
        except ValueError:
            return err.code, {"message": body.decode(errors="replace")}
    except urllib.error.URLError as err:
        raise ConnectionError(f"cannot reach the sregym attempt at {url}: {err.reason}") from None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.action == "diagnosis":
            status, body = _request("/diagnosis", diagnosis_payload(args))
        elif args.action == "detection":
            status, body = _request("/detection", detection_payload(args))
        elif args.action == "done":
            status, body = _request("/done", {})
        else:
            status, body = _request("/status", None)
    except (ValueError, OSError, ConnectionError) as err:
        print(f"sregym-submit: {err}", file=sys.stderr)
        return 2
    message = body.get("message") or f"phase: {body.get('phase', '?')}"
    print(message, file=sys.stdout if status < 400 else sys.stderr)
    return 0 if status < 400 else 1


if __name__ == "__main__":
    sys.exit(main())
