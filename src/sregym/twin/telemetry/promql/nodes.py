"""Helpers over promql-parser's syntax tree that the parser, the evaluator and the function table
all use; kept in a module of its own, below all three, so none of them imports another for it."""

from __future__ import annotations

import promql_parser


def unwrap(node: promql_parser.Expr) -> promql_parser.Expr:
    """The expression inside any parentheses."""
    while isinstance(node, promql_parser.ParenExpr):
        node = node.expr
    return node


__all__ = ["unwrap"]
