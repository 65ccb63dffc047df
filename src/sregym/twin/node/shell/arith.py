"""`$((...))`: sh arithmetic on 64-bit integers, evaluated over a Python expression tree."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable

_ARITH_OPS: dict[type, Callable[..., int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Div: operator.floordiv, ast.Mod: operator.mod,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_CMP_OPS: dict[type, Callable[..., bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}


def _int64(value: int) -> int:
    """Wrap to a signed 64-bit integer, as sh's `intmax_t` arithmetic does (and so that
    `$((1<<99999999999))` cannot make a gigabyte-sized Python int)."""
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >= 1 << 63 else value


def eval_arith(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return _int64(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH_OPS:
        left, right = eval_arith(node.left), eval_arith(node.right)
        if isinstance(node.op, ast.LShift | ast.RShift):
            right &= 63  # the shift count as x86-64 masks it: $((1<<64)) is 1
        return _int64(int(_ARITH_OPS[type(node.op)](left, right)))
    if isinstance(node, ast.UnaryOp):
        value = eval_arith(node.operand)
        if isinstance(node.op, ast.USub):
            return _int64(-value)
        if isinstance(node.op, ast.Not):
            return int(not value)
        return value
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP_OPS:
        return int(_CMP_OPS[type(node.ops[0])](eval_arith(node.left), eval_arith(node.comparators[0])))
    if isinstance(node, ast.BoolOp):
        values = [eval_arith(v) for v in node.values]
        return int(all(values) if isinstance(node.op, ast.And) else any(values))
    raise ValueError("unsupported arithmetic")
