"""The ledger's checks as code: a small closed vocabulary, plus named predicates for the rest.

A ledger entry's `check:` is a list of steps; the claim holds when every step holds. Each step
is one word of the vocabulary with its arguments:

    check:
      - order_of: {value: rnn_1}                       # within 10× of the lecture's number
      - below: {value: rnn_32, than: rnn_1, times: 1e-4}
      - decreasing: {value: ju}
      - predicate: decay_continues                     # report/ledger/<part>.py

An argument that names a number is a *reference*: a name of the entry's `values` (our numbers,
selected from the tables), `lecture` (the entry's `number:`, the lecture's number entered once)
or `lecture.NAME` (one of its `numbers:`), `settings.KEY` (the demo's setting in the config, never
retyped), or a plain number (a bound the lecture states in words: "above 90 %" is 0.9).

Every step returns a Finding: `ok` True / False, or None when the data cannot decide (a grid
too coarse to resolve the claim), and one sentence saying what was compared, with the numbers:
a true sentence either way (a failed `below` prints "≥", not "<" after a "not"), each value
named by what it is (Context.labels), never by its name in the ledger.

Long on purpose: the closed vocabulary, one small function per word, beside the evaluator that
runs them.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Finding:
    ok: bool | None  # None: not resolvable with this data
    text: str

    def __post_init__(self):  # numpy's bool_ is not `True`: verdicts compare with `is`
        object.__setattr__(self, "ok", None if self.ok is None else bool(self.ok))


class CheckError(ValueError):
    """A ledger entry's check is malformed (raised when the ledger is loaded)."""


class Context:
    """What a check can read: our named values, the lecture's numbers, the demo's settings."""

    def __init__(
        self,
        values: dict,
        lecture: dict,
        text: str,
        settings: dict | None,
        fmt: str,
        labels: dict | None = None,
    ):
        self.values = {k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in values.items()}
        self.labels = labels or {}  # value name -> what it is, as a sentence names it
        self.lecture = lecture  # {"": the entry's `number`, name: its `numbers`}
        self.text = text  # the lecture's value as printed
        self.settings = settings  # the demo's settings in the build's config
        self.fmt = fmt

    def __getitem__(self, name: str) -> np.ndarray:  # for predicates: v["rnn_1"]
        return self.values[name]

    def get(self, ref) -> np.ndarray:
        if isinstance(ref, bool):
            raise CheckError(f"a boolean is not a number: {ref!r}")
        if isinstance(ref, int | float):
            return np.atleast_1d(float(ref))
        if ref in self.values:
            return self.values[ref]
        if ref == "lecture" or ref.startswith("lecture."):
            return np.atleast_1d(np.asarray(self.lecture[ref.partition(".")[2]], dtype=float))
        if ref.startswith("settings."):
            return np.atleast_1d(np.asarray(self.setting(ref.partition(".")[2]), dtype=float))
        raise CheckError(f"unknown reference {ref!r}")

    def setting(self, path: str):
        """A setting of the demo by its dotted path: "steps", "sizes.gru.hidden"."""
        if self.settings is None:
            raise CheckError(f"settings.{path} needs the build's config; none was given")
        value = self.settings
        for key in path.split("."):
            value = value[key]
        return value

    def show(self, ref) -> str:
        """A reference and its value, as the sentence prints it: "敏感度（RNN，距离 1）= 2.31";
        the lecture's number as "讲义 lecture = …", a setting by its key."""
        value = self.get(ref)
        text = _fmt(value, self.fmt)
        if isinstance(ref, int | float):
            return text
        if ref == "lecture" or ref.startswith("lecture."):
            name = "讲义 lecture" + (f" {ref.partition('.')[2]}" if "." in ref else "")
        elif ref.startswith("settings."):
            name = f"设置 setting {ref.partition('.')[2]}"
        else:
            name = self.labels.get(ref, "我们 ours" if len(self.values) == 1 else ref)
        return f"{name} = {text}"


def _fmt(value: np.ndarray, fmt: str) -> str:
    def one(v):
        return format(v, fmt) if math.isfinite(v) else str(v)

    items = [one(float(v)) for v in np.ravel(value)]
    return items[0] if len(items) == 1 else "(" + ", ".join(items) + ")"


def _times(k: float) -> str:
    return "" if k == 1 else f"{k:g} × "


def _relation(ok: bool, holds: str, fails_one: str, fails_all: str, left, *refs) -> str:
    """The operator of a comparison as it came out: `holds` when it held; else `fails_one`
    ("≥" for a failed "<") when every element failed, or `fails_all` ("不都 < not every <")
    when only some did — so the sentence is true either way."""
    if ok:
        return holds
    sizes = [np.size(left), *(np.size(r) for r in refs)]
    return fails_one if max(sizes) == 1 else fails_all


# -----------------------------------------------------------------------------
# the vocabulary: each word is a function of the context and its arguments

VOCABULARY: dict[str, Callable] = {}
ARGUMENTS: dict[str, tuple[set, set]] = {}  # word -> (required, optional) argument names
REFERENCES = {"value", "than", "to", "lo", "hi", "of", "n"}  # arguments that name a number
NUMBERS = {"tol", "times", "factor", "k"}  # arguments that are a plain number


def word(name: str, required: set, optional: set = frozenset()):
    def register(fn):
        VOCABULARY[name] = fn
        ARGUMENTS[name] = (set(required), set(optional))
        return fn

    return register


@word("digits", set(), {"value", "each"})
def digits(c: Context, value=None, each=False) -> Finding:
    """Our value printed with the entry's `fmt` has the lecture's digits (each: every element)."""
    ours = c.values[value] if value else next(iter(c.values.values()))
    printed = _fmt(ours, c.fmt)
    wanted = c.text
    if each:
        items = [format(float(v), c.fmt) for v in ours]
        ok = all(_normalise(i) == _normalise(wanted) for i in items)
        return Finding(ok, f"每个都印成 each prints {wanted}: {printed}")
    ok = _normalise(printed) == _normalise(wanted)
    return Finding(ok, f"印出 printed {printed}，讲义 lecture {wanted}")


@word("below", {"value", "than"}, {"times"})
def below(c: Context, value, than, times=1.0) -> Finding:
    v, bound = c.get(value), float(times) * c.get(than)
    ok = bool(np.all(v < bound))
    rel = _relation(ok, "<", "≥", "不都 < not every <", v, bound)
    return Finding(ok, f"{c.show(value)} {rel} {_times(times)}{c.show(than)}")


@word("above", {"value", "than"}, {"times"})
def above(c: Context, value, than, times=1.0) -> Finding:
    v, bound = c.get(value), float(times) * c.get(than)
    ok = bool(np.all(v > bound))
    rel = _relation(ok, ">", "≤", "不都 > not every >", v, bound)
    return Finding(ok, f"{c.show(value)} {rel} {_times(times)}{c.show(than)}")


@word("between", {"value", "lo", "hi"})
def between(c: Context, value, lo, hi) -> Finding:
    v = c.get(value)
    ok = bool(np.all((c.get(lo) <= v) & (v <= c.get(hi))))
    if ok:
        return Finding(ok, f"{c.show(lo)} ≤ {c.show(value)} ≤ {c.show(hi)}")
    return Finding(
        ok, f"{c.show(value)} 不都在 not every value in [{c.show(lo)}, {c.show(hi)}] 之间"
    )


@word("order_of", {"value"}, {"of", "factor"})
def order_of(c: Context, value, of="lecture", factor=10.0) -> Finding:
    """Same order of magnitude: every element within `factor` of the reference, either way."""
    v, ref = c.get(value), c.get(of)
    ratio = v / ref
    ok = bool(np.all((ratio > 1 / factor) & (ratio < factor)))
    where = "以内 within" if ok else "以外 beyond"
    return Finding(ok, f"{c.show(value)} 在 {c.show(of)} 的 {factor:g} 倍{where} {factor:g}×")


@word("near", {"value", "tol"}, {"to"})
def near(c: Context, value, tol, to="lecture") -> Finding:
    gap = np.abs(c.get(value) - c.get(to))
    ok = bool(np.all(gap <= float(tol)))
    rel = _relation(ok, "≤", ">", "不都 ≤ not every ≤", gap)
    return Finding(ok, f"|{c.show(value)} − {c.show(to)}| {rel} {tol:g}")


def binomial_band(p: float, n: float, k: float = 3.0) -> float:
    """k standard errors of a share p estimated from n independent trials: k·√(p(1 − p)/n)."""
    return k * math.sqrt(p * (1 - p) / n)


@word("within_se", {"value", "n"}, {"of", "k"})
def within_se(c: Context, value, n, of="lecture", k=3.0) -> Finding:
    """A measured share within k binomial standard errors (n trials) of a chance level."""
    v, p, trials = c.get(value), float(c.get(of)[0]), float(np.prod(c.get(n)))
    band = binomial_band(p, trials, k)
    worst = float(np.max(np.abs(v - p)))
    rel = "≤" if worst <= band else ">"
    return Finding(
        worst <= band,
        f"{c.show(value)} 离 {p:g} 最远 at most {worst:.4f} from it {rel} {k:g} 个标准误 standard "
        f"errors = {band:.4f}（{trials:,.0f} 次 trials）",
    )


@word("sampled", {"value", "sd", "n", "unit"}, {"n_test", "of", "n_lecture"})
def sampled(c: Context, value, sd, n, unit, n_test=None, of="lecture", n_lecture=1) -> Finding:
    """Rulebook R4, a trained number quoted as a number: our mean of n seeds against the
    lecture's mean of n_lecture, within half a unit of its printed digits plus 4 standard errors
    of the difference, σ √(1/n + 1/n_lecture), σ the seeds' spread — for a share, at least the
    binomial error of one run on n_test samples (√(p(1 − p)/n_test) at the lecture's p); without
    n_test (a quantity that is not a share, an entropy) the seeds' spread alone."""
    ours, spread = c.get(value), c.get(sd)
    seeds, p = c.get(n), float(c.get(of)[0])
    half = float(unit) / 2
    binomial = 0.0
    if n_test is not None:
        binomial = math.sqrt(max(p * (1 - p), 0.0) / float(np.prod(c.get(n_test))))
    sigma = np.maximum(spread, binomial)
    tol = half + 4 * sigma * np.sqrt(1 / seeds + 1 / float(n_lecture))
    gap = np.abs(ours - p)
    return Finding(
        bool(np.all(gap <= tol)),
        f"{c.show(value)}（{', '.join(f'{k:.0f}' for k in np.atleast_1d(seeds))} 个种子的平均 "
        f"seed mean）离讲义 {p:g} 差 {', '.join(f'{g:.3f}' for g in np.atleast_1d(gap))}，"
        f"容差 tolerance {', '.join(f'{t:.3f}' for t in np.atleast_1d(tol))}"
        f"（半个末位 + 4 个标准误 half a unit + 4 SE，{n_lecture} 个讲义种子 lecture seeds）"
        + ("" if np.all(gap <= tol) else "：超出容差 beyond it"),
    )


@word("equal", {"value", "to"})
def equal(c: Context, value, to) -> Finding:
    v, ref = c.get(value), c.get(to)
    ok = v.shape == ref.shape and bool(np.all(v == ref)) or ref.size == 1 and bool(np.all(v == ref))
    rel = _relation(ok, "=", "≠", "不都 = not every =", v, ref)
    return Finding(ok, f"{c.show(value)} {rel} {c.show(to)}")


@word("vanishes", {"value"}, {"tol"})
def vanishes(c: Context, value, tol=1e-15) -> Finding:
    """Our value is 0 in exact arithmetic, so in floating point every element is at most `tol`
    in size: a bound of rounding, chosen from the computation's conditioning (the entry says
    how). A correct implementation that rounds in another order keeps it; a slip does not."""
    worst = float(np.max(np.abs(c.get(value)), initial=0.0))
    ok = worst <= tol
    name = c.labels.get(value, value)
    return Finding(
        ok,
        f"{name} = {worst:.1e} {'≤' if ok else '>'} {tol:.0e}"
        "（舍入误差以内就是 0 zero up to rounding）",
    )


@word("decreasing", {"value"})
def decreasing(c: Context, value) -> Finding:
    words = ("逐个减小 strictly decreasing", "不是逐个减小 not strictly decreasing")
    return _trend(c, value, np.diff(c.get(value)) < 0, *words)


@word("increasing", {"value"})
def increasing(c: Context, value) -> Finding:
    words = ("逐个增大 strictly increasing", "不是逐个增大 not strictly increasing")
    return _trend(c, value, np.diff(c.get(value)) > 0, *words)


def _trend(c: Context, value, steps: np.ndarray, words: str, negated: str) -> Finding:
    if steps.size == 0:  # one value has no trend: a small build, not a verdict
        return Finding(None, f"{c.show(value)}：只有一个值，看不出趋势 one value, no trend")
    ok = bool(np.all(steps))
    return Finding(ok, f"{c.show(value)} {words if ok else negated}")


@word("predicate", {"name"})
def predicate(c: Context, name) -> Finding:
    """A named predicate; its sentence states the condition, so a failed one is marked as the
    condition that was not met (the vocabulary's words print the relation as it came out)."""
    found = PREDICATES[name](c)
    if found.ok is False and not found.text.startswith(NOT_MET):
        return Finding(False, NOT_MET + found.text)
    return found


NOT_MET = "未满足 not met："


def _normalise(text: str) -> str:
    return text.replace(" ", "").replace("−", "-").replace("×", "x")


# -----------------------------------------------------------------------------
# named predicates, defined next to the ledger entries they serve (report/ledger/*.py)

PREDICATES: dict[str, Callable[[Context], Finding]] = {}


def check(fn: Callable[[Context], Finding]):
    """Register a named predicate: a function of the Context that returns a Finding."""
    if fn.__name__ in PREDICATES and PREDICATES[fn.__name__] is not fn:
        raise CheckError(f"predicate {fn.__name__!r} defined twice")
    PREDICATES[fn.__name__] = fn
    return fn


# -----------------------------------------------------------------------------
# validation (at load time) and running (at evaluation time)


def parse_step(step) -> tuple[str, dict]:
    """{word: args} -> (word, args); a bare value name is {value: name}."""
    if not isinstance(step, dict) or len(step) != 1:
        raise CheckError(f"a check step is one {{word: arguments}}, got {step!r}")
    ((name, args),) = step.items()
    if name not in VOCABULARY:
        raise CheckError(f"unknown check word {name!r}; expected one of {sorted(VOCABULARY)}")
    if name == "predicate" and isinstance(args, str):
        args = {"name": args}
    elif not isinstance(args, dict):
        args = {"value": args}
    return name, args


def validate(steps: list, value_names: set, lecture: dict) -> None:
    """Raise CheckError for an unknown word, argument, value name, lecture number or predicate."""
    if not isinstance(steps, list) or not steps:
        raise CheckError("`check` must be a non-empty list of steps")
    for step in steps:
        name, args = parse_step(step)
        required, optional = ARGUMENTS[name]
        unknown, missing = set(args) - required - optional, required - set(args)
        if unknown or missing:
            raise CheckError(
                f"{name}: unknown arguments {sorted(unknown)}, missing {sorted(missing)}; "
                f"expected {sorted(required)} and optionally {sorted(optional)}"
            )
        if name == "predicate" and args["name"] not in PREDICATES:
            raise CheckError(f"unknown predicate {args['name']!r}; define it with @check")
        for key in REFERENCES & set(args):
            _validate_reference(args[key], value_names, lecture)
        for key in NUMBERS & set(args):
            if isinstance(args[key], bool) or not isinstance(args[key], int | float):
                raise CheckError(f"{name}: {key} must be a number, got {args[key]!r}")
        if name == "digits" and args.get("value", next(iter(value_names), None)) not in value_names:
            raise CheckError(f"digits: {args['value']!r} is not one of {sorted(value_names)}")


def _validate_reference(ref, value_names: set, lecture: dict) -> None:
    if isinstance(ref, bool) or not isinstance(ref, int | float | str):
        raise CheckError(f"a reference is a name or a number, got {ref!r}")
    if isinstance(ref, str):
        if ref in value_names or ref.startswith("settings."):
            return
        if ref == "lecture" or ref.startswith("lecture."):
            if ref.partition(".")[2] not in lecture:
                raise CheckError(f"{ref}: the entry has no such lecture number")
            return
        raise CheckError(f"unknown reference {ref!r}; values are {sorted(value_names)}")


def run(steps: list, context: Context) -> list[Finding]:
    findings = []
    for step in steps:
        name, args = parse_step(step)
        findings.append(VOCABULARY[name](context, **args))
    return findings


def verdict(findings: list[Finding]) -> bool | None:
    """False if any step fails, else None if any cannot be resolved, else True."""
    oks = [f.ok for f in findings]
    if False in oks:
        return False
    return None if None in oks else True
