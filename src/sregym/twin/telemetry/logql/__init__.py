"""A LogQL subset with Loki's semantics: parsing and evaluation over log streams.

Supported: stream selectors with `=`, `!=`, `=~`, `!~`; line filters `|=`, `!=`, `|~`, `!~`
(chainable with `or`); `| json` and `| logfmt` (optionally with `label="path"` extractions),
`| regexp "(?P<name>...)"`; every regex is RE2 (`sregym.twin.telemetry.regex`), as in Loki;
label filters with string matchers and numeric comparisons (`==`, `!=`, `>`, `>=`, `<`, `<=`,
numbers, durations and byte sizes), combined with `and`/`,`/`or` and parentheses;
`| line_format "{{.label}}"`, `| label_format new=old`, `| drop`, `| keep`, `| decolorize`;
metric queries `count_over_time`, `rate`, `bytes_over_time`, `bytes_rate`, `absent_over_time`
with `[range]` and `offset`, vector aggregations `sum/avg/min/max/count/stddev/stdvar/topk/
bottomk` with `by`/`without`, and arithmetic between metric expressions and numbers.

Like Loki: extracted labels that collide with stream labels get an `_extracted` suffix, parser
failures add `__error__`/`__error_details__`, line timestamps are nanoseconds, log windows are
[start, end), and range aggregation windows are (t - range, t].

The evaluator is independent of storage: it is handed a `source(matchers)` function returning
`(labels, entries)` pairs, entries as (timestamp ns, line) in time order.

Layout: `lexer` and `parser` build the `syntax` tree (literals read by `units`); `pipeline` runs the
stages over a stream's lines; `streams` answers log queries and counts what was scanned
(`QueryStats`); `metrics` evaluates metric queries; `base` holds what they share.
"""

from __future__ import annotations

from sregym.twin.telemetry.logql.base import Entry, Labels, LogQLError, MetadataLine, Source
from sregym.twin.telemetry.logql.metrics import eval_metric
from sregym.twin.telemetry.logql.parser import is_log_query, parse
from sregym.twin.telemetry.logql.pipeline import run_pipeline
from sregym.twin.telemetry.logql.streams import QueryStats, select_logs
from sregym.twin.telemetry.logql.syntax import LogExpr
from sregym.twin.telemetry.logql.units import parse_duration_ns

__all__ = ["Entry", "Labels", "LogExpr", "LogQLError", "MetadataLine", "QueryStats", "Source", "eval_metric", "is_log_query",
           "parse", "parse_duration_ns", "run_pipeline", "select_logs"]
