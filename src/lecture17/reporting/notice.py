"""The "what to notice" line under a table or figure of the study reading (注意看).

A view (report/views/*.yaml) or a figure (report/notices.yaml) says what to read in it:

    notice:
      values:                       # selectors on the view's table, as the ledger's `values`
        mw: {quantity: max_weight, where: {d_k: 256}}
        sat: {quantity: fraction_saturated, where: {d_k: 256}, fmt: ".0%"}
      say:                          # the first branch whose `if` holds; the last has none
        - if: "mw > 0.9"
          say: "不缩放时 d_k = 256 的平均最大权重 {mw}，{sat} 的行已经饱和：softmax 几乎成了 argmax"
        - say: "不缩放时 d_k = 256 的平均最大权重只有 {mw}：softmax 还没有饱和"

So every number in the line is a cell of the table it sits under, and the words that follow
the numbers are chosen by them: change the table and the line changes (tests/reporting/
test_notice.py). A view's `where` applies to its notice's selectors too. Conditions are
comparisons of the values and numbers (`and`, `or`, `not`, + - * /, abs, min, max); a value
of several rows is a list there (min/max/mean of it) and "(a, b, …)" in the text unless the
template picks `{x[0]}`, `{x.min}`, `{x.max}` or `{x.mean}` (ledger_entry.Shown).
"""

import ast
import operator

import numpy as np

from lecture17.reporting.ledger_entry import Shown, ours_fields
from lecture17.reporting.ledger_eval import _reduce, select

KEYS = {"values", "say"}
SELECTOR_KEYS = {"quantity", "where", "stat", "reduce", "fmt", "demo"}
BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}
BINARY |= {ast.Div: operator.truediv}
COMPARE = {ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le}
COMPARE |= {ast.Eq: operator.eq, ast.NotEq: operator.ne}
FUNCTIONS = {"abs": abs, "min": np.min, "max": np.max, "mean": np.mean}


class NoticeError(ValueError):
    """A notice that names a value it does not define, or a condition it cannot read."""


def validate(notice: dict, where: str) -> None:
    """Raise on a notice that could only fail at render time (unknown keys, unnamed values)."""
    if unknown := set(notice) - KEYS:
        raise NoticeError(f"{where}: unknown notice keys {sorted(unknown)}; expected {KEYS}")
    values = notice.get("values", {})
    for name, selector in values.items():
        if unknown := set(selector) - SELECTOR_KEYS:
            raise NoticeError(f"{where}: value {name}: unknown keys {sorted(unknown)}")
    for branch in branches(notice):
        for name in ours_fields(branch["say"]):
            if name not in values:
                raise NoticeError(f"{where}: '{branch['say']}' names {name}, not in values")
        if "if" in branch:
            condition(branch["if"], {n: 1.0 for n in values})  # parses, names known


def branches(notice: dict) -> list[dict]:
    say = notice["say"]
    return [{"say": say}] if isinstance(say, str) else list(say)


def line(notice: dict, table, view_where: dict | None = None, fmt=".3g") -> str:
    """The line, or "" when the table lacks what it reads (a small build)."""
    numbers, shown = {}, {}
    for name, selector in notice.get("values", {}).items():
        selector = {**selector, "where": _where(view_where or {}, selector.get("where", {}))}
        try:
            rows = select({"t": table}, selector, "t")
        except LookupError:
            return ""
        values = np.atleast_1d(_reduce(selector, rows))
        numbers[name] = float(values[0]) if len(values) == 1 else values
        quantity = selector["quantity"]
        first = quantity[0] if isinstance(quantity, list) else quantity
        own = selector.get("fmt") or _fmt_of(fmt, first)
        shown[name] = Shown(numbers[name] if len(values) == 1 else list(values), own)
    for branch in branches(notice):
        if "if" not in branch or condition(branch["if"], numbers):
            names = ours_fields(branch["say"])
            return branch["say"].format(**{n: shown[n] for n in names})
    return ""


def _where(view: dict, own):
    """The view's `where` under the selector's own (a dict, or a list of dicts: their rows)."""
    if isinstance(own, list):
        return [{**view, **w} for w in own]
    return {**view, **own}


def _fmt_of(fmt, quantity) -> str:
    if isinstance(fmt, dict):
        return fmt.get(quantity, ".3g")
    return fmt or ".3g"


def condition(text: str, numbers: dict) -> bool:
    """A branch's `if`, evaluated on the values (no Python beyond comparisons and arithmetic)."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as error:
        raise NoticeError(f"condition {text!r}: {error.msg}") from None
    return bool(_eval(tree.body, numbers, text))


def _eval(node, numbers: dict, text: str):
    match node:
        case ast.Constant(value=int() | float() as v):
            return v
        case ast.Name(id=name):
            if name not in numbers:
                raise NoticeError(f"condition {text!r}: {name} is not a value of the notice")
            return numbers[name]
        case ast.UnaryOp(op=ast.USub(), operand=x):
            return -_eval(x, numbers, text)
        case ast.UnaryOp(op=ast.Not(), operand=x):
            return not _eval(x, numbers, text)
        case ast.BinOp(left=a, op=op, right=b) if type(op) in BINARY:
            return BINARY[type(op)](_eval(a, numbers, text), _eval(b, numbers, text))
        case ast.BoolOp(op=ast.And(), values=xs):
            return all(_eval(x, numbers, text) for x in xs)
        case ast.BoolOp(op=ast.Or(), values=xs):
            return any(_eval(x, numbers, text) for x in xs)
        case ast.Compare(left=a, ops=ops, comparators=rest):
            left = _eval(a, numbers, text)
            for op, b in zip(ops, rest, strict=True):
                if type(op) not in COMPARE:
                    break
                right = _eval(b, numbers, text)
                if not np.all(COMPARE[type(op)](left, right)):
                    return False
                left = right
            else:
                return True
        case ast.Call(func=ast.Name(id=fn), args=[x]) if fn in FUNCTIONS:
            return float(FUNCTIONS[fn](_eval(x, numbers, text)))
    raise NoticeError(f"condition {text!r}: only comparisons, arithmetic and abs/min/max/mean")
