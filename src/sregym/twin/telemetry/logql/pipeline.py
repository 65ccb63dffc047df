"""Pipeline stages run over a stream's lines: filters, parsers (json, logfmt, regexp), label
filters, formatting, drop/keep."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from sregym.twin.telemetry.logql.base import Entry, Labels, line_metadata
from sregym.twin.telemetry.logql.syntax import (
    Decolorize,
    DropKeep,
    LabelBool,
    LabelFilter,
    LabelFormat,
    LineFilter,
    LineFormat,
    Parser,
)
from sregym.twin.telemetry.regex import compile_go

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SANITIZE = re.compile(r"[^A-Za-z0-9_]")
_LOGFMT = re.compile(r'([^\s=]+)(?:=("(?:[^"\\]|\\.)*"|\S*))?')

JSON_OBJECT_ERROR = "Value looks like object, but can't find closing '}' symbol"


def _sanitize(key: str) -> str:
    key = _SANITIZE.sub("_", key)
    return f"_{key}" if key and key[0].isdigit() else key


def _flatten(prefix: str, value: Any, out: dict[str, str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}_{_sanitize(k)}" if prefix else _sanitize(k), v, out)
    elif isinstance(value, list):
        out[prefix] = json.dumps(value, separators=(",", ":"))
    elif isinstance(value, bool):
        out[prefix] = "true" if value else "false"
    elif value is None:
        out[prefix] = ""
    elif isinstance(value, float):
        out[prefix] = repr(value) if not value.is_integer() else str(int(value))
    else:
        out[prefix] = str(value)


def _json_path(doc: Any, path: str) -> str | None:
    current = doc
    for part in re.findall(r'[^.\[\]"]+|\[\d+\]|\["[^"]*"\]', path):
        if part.startswith('["'):
            part = part[2:-2]
        elif part.startswith("["):
            if not isinstance(current, list):
                return None
            index = int(part[1:-1])
            if index >= len(current):
                return None
            current = current[index]
            continue
        if not isinstance(current, dict) or part not in current:
            return None
        current = current[part]
    out: dict[str, str] = {}
    _flatten("v", current, out)
    return out.get("v", json.dumps(current, separators=(",", ":")))


def _add_extracted(labels: Labels, stream: Labels, extracted: dict[str, str]) -> None:
    for key, value in extracted.items():
        if not key:
            continue
        target = f"{key}_extracted" if key in stream else key
        labels[target] = value


def _run_parser(stage: Parser, line: str, labels: Labels, stream: Labels) -> None:
    if stage.kind == "regexp":  # RE2, first match; a line that does not match adds nothing
        regex = compile_go(stage.params[0][1])
        match = regex.search(line)
        if match is not None:
            _add_extracted(labels, stream, {name: match.group(name) or ""
                                            for name in regex.groupindex if name})
        return
    if stage.kind == "json":
        try:
            doc = json.loads(line)
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            # Loki walks the line with jsonparser.ObjectEach, whose one answer for anything that
            # is not a well-formed object is its MalformedObjectError.
            labels["__error__"] = "JSONParserErr"
            labels["__error_details__"] = JSON_OBJECT_ERROR
            return
        if stage.params:
            _add_extracted(labels, stream, {k: v for k, path in stage.params
                                            if (v := _json_path(doc, path)) is not None})
            return
        flat: dict[str, str] = {}
        _flatten("", doc, flat)
        _add_extracted(labels, stream, flat)
        return
    extracted: dict[str, str] = {}
    for m in _LOGFMT.finditer(line):
        key, value = m.group(1), m.group(2)
        if value is None:
            if "=" in key or '"' in key:
                labels["__error__"] = "LogfmtParserErr"
                labels["__error_details__"] = f"logfmt syntax error at pos {m.start() + 1} : unexpected '='"
                return
            value = ""
        elif value.startswith('"'):
            try:
                value = json.loads(value)
            except ValueError:
                value = value[1:-1]
        extracted[_sanitize(key)] = value
    if stage.params:
        extracted = {dst: extracted.get(_sanitize(src), "") for dst, src in stage.params
                     if _sanitize(src) in extracted}
    _add_extracted(labels, stream, extracted)


def _eval_label_filter(expr: Any, labels: Labels) -> bool:
    if isinstance(expr, LabelBool):
        left = _eval_label_filter(expr.left, labels)
        if expr.op == "and":
            return left and _eval_label_filter(expr.right, labels)
        return left or _eval_label_filter(expr.right, labels)
    result = expr.test(labels)
    if result is None:
        if "__error__" not in labels:
            labels["__error__"] = "LabelFilterErr"
            labels["__error_details__"] = f"strconv.ParseFloat: parsing {labels.get(expr.name, '')!r}: " \
                                          "invalid syntax"
        return True  # Loki keeps the line, flagged with the error
    return result


_TEMPLATE_FIELD = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")


def _format_template(template: str, labels: Labels, line: str, ts_ns: int) -> str:
    def field_value(m: re.Match[str]) -> str:
        expr = m.group(1)
        parts = [p.strip() for p in expr.split("|")]
        head = parts[0]
        if head == "__line__":
            value = line
        elif head == "__timestamp__":
            value = str(ts_ns)
        elif head.startswith("."):
            value = labels.get(head[1:], "")
        elif head.startswith('"') and head.endswith('"'):
            value = head[1:-1]
        else:
            words = head.split()
            fn, args = words[0], words[1:]
            value = labels.get(args[0][1:], "") if args and args[0].startswith(".") else ""
            parts = [fn, *parts[1:]]
            parts.insert(0, "")
        for fn in parts[1:]:
            fn_name = fn.split()[0] if fn else ""
            value = {"ToUpper": str.upper, "ToLower": str.lower, "upper": str.upper, "lower": str.lower,
                     "Title": str.title, "title": str.title, "TrimSpace": str.strip,
                     "trim": str.strip}.get(fn_name, lambda v: v)(value)
        return value

    return _TEMPLATE_FIELD.sub(field_value, template)


def run_pipeline(stages: list[Any], stream: Labels, entries: Iterable[Entry]) \
        -> Iterable[tuple[Labels, int, str]]:
    """Apply the pipeline; yields (labels, ts_ns, line) of the lines that survive."""
    simple = all(isinstance(s, LineFilter) for s in stages)
    for ts, line in entries:
        metadata = line_metadata(line)
        if simple:
            if all(s.keep(line) for s in stages):
                yield ({**stream, **metadata} if metadata else stream), ts, line
            continue
        labels = {**stream, **metadata} if metadata else dict(stream)
        keep = True
        for stage in stages:
            if isinstance(stage, LineFilter):
                keep = stage.keep(line)
            elif isinstance(stage, Parser):
                _run_parser(stage, line, labels, stream)
            elif isinstance(stage, LabelFilter):
                keep = _eval_label_filter(stage.expr, labels)
            elif isinstance(stage, LineFormat):
                line = _format_template(stage.template, labels, line, ts)
            elif isinstance(stage, LabelFormat):
                for dst, src, is_template in stage.assignments:
                    if is_template:
                        labels[dst] = _format_template(src, labels, line, ts)
                    else:
                        labels[dst] = labels.pop(src, "")
                labels = {k: v for k, v in labels.items() if v != ""}
            elif isinstance(stage, DropKeep):
                if stage.kind == "drop":
                    labels = {k: v for k, v in labels.items() if k not in stage.names}
                else:
                    labels = {k: v for k, v in labels.items() if k in stage.names}
            elif isinstance(stage, Decolorize):
                line = _ANSI.sub("", line)
            if not keep:
                break
        if keep:
            yield {k: v for k, v in labels.items() if v != "" or k == "__error__"}, ts, line
