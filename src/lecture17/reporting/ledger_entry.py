"""A ledger entry and its Outcome: the classes and statuses a claim can have, the entry's
selectors and check steps, the numbers the lecture prints, and how its values are printed.

The data model that the loader (reporting.ledger), the evaluation (reporting.ledger_eval) and
the page's wording (reporting.claims) share; it reads no file and no table.
"""

import math
import re
import string
from dataclasses import dataclass, field

import numpy as np

CLASSES = ("exact", "reconstructed", "echo", "precision", "seeded", "timing", "cited", "beyond")
COUNTED = ("exact", "precision", "seeded")  # the classes a reproduction is counted in
STATUS = {
    "same": "数字相同 same digits",
    "precision": "机器精度内 within precision",
    "holds": "成立 holds",
    "echo": "回显 shown back",
    "differs": "不同 differs",
    "unresolved": "无法分辨 not resolvable",
    "timing": "本机成立 holds here",
    "timing_fails": "不成立（本机）does not hold here",
    "missing": "未构建 not built",
    "gpu": "需要 GPU needs a GPU",
    "cited": "引自论文 cited",
}
AGREES = ("same", "precision", "holds", "echo", "timing", "cited", "gpu")
REPRODUCED = ("same", "precision", "holds")  # what a counted claim must show to count


def counts(entry: dict) -> bool:
    """Whether a claim counts in the headline: one of the lecture's own results, i.e. of a
    counted class, not the lecture's own arithmetic (`derivation`) and not the evidence of a
    twin that decides the same assertion."""
    return entry["class"] in COUNTED and "derivation" not in entry and not entry.get("evidence")


PASSED = {  # status when the checks hold, by class
    "exact": "same",
    "reconstructed": "same",
    "echo": "echo",
    "precision": "precision",
    "seeded": "holds",
    "timing": "timing",
    "beyond": "same",
}
DEFAULT_BOUND = 1e-13
SELECTOR_KEYS = {"demo", "quantity", "where", "stat", "reduce"}
STAT_KEYS = ("mean", "min", "max", "std", "n_seeds", "seeds")  # over seeds, per row
# over the selected rows: "last" is the final row, e.g. a run's final checkpoint (rows by step)
REDUCE = {
    "min": np.min,
    "max": np.max,
    "sum": np.sum,
    "mean": np.mean,
    "last": lambda values, axis=None: np.take(values, -1, axis=axis if axis is not None else 0),
}


@dataclass
class Outcome:
    entry: dict
    status: str  # a key of STATUS
    ours: str = ""
    findings: list = field(default_factory=list)  # checks.Finding, one per step
    numbers: dict = field(default_factory=dict)  # name -> float or list of floats
    cells: list = field(default_factory=list)  # (demo, labels) of every table row it read
    protocol: "Outcome | None" = None  # decided on recorded seeds: the protocol seeds' outcome
    seeds: list = field(default_factory=list)  # the seeds the shown values were averaged over
    detail: list = field(default_factory=list)  # a rate's claim: its steps on all recorded seeds
    why: str = ""  # the entry's `why` text, when its check holds on this data

    @property
    def agrees(self) -> bool:
        return self.status in AGREES

    @property
    def reason(self) -> str:
        """The steps that failed or could not be decided, as sentences ("" when all hold); a
        failed step's sentence says what was expected and what was found (checks.py)."""
        return "；".join(f.text for f in self.findings if f.ok is not True)


# -----------------------------------------------------------------------------
# an entry's selectors, numbers and check steps


def _has_values(entry: dict) -> bool:
    return "value" in entry or "values" in entry


def selectors(entry: dict) -> dict:
    """An entry's named selectors ({name: selector}; one `value` is named "ours")."""
    return _selectors(entry)


def _selectors(entry: dict) -> dict:
    if "values" in entry:
        return entry["values"]
    if "value" in entry:
        return {"ours": entry["value"]}
    raise ValueError("no `value` or `values` to select")


def _show_names(entry: dict) -> list:
    show = entry.get("show", [])
    return [show] if isinstance(show, str) else list(show)


def lecture_numbers(entry: dict) -> dict:
    numbers = {name: float(v) for name, v in entry.get("numbers", {}).items()}
    if "number" in entry:
        numbers[""] = float(entry["number"])
    return numbers


def steps_of(entry: dict) -> list:
    if "check" in entry:
        return entry["check"]
    cls = entry["class"]
    if cls in ("exact", "reconstructed", "echo"):
        return [{"digits": {}}]
    if cls == "precision":
        first = next(iter(_selectors(entry)))
        return [{"below": {"value": first, "than": float(entry.get("bound", DEFAULT_BOUND))}}]
    raise ValueError(f"a {cls} claim needs a `check`")


# -----------------------------------------------------------------------------
# our numbers, printed in the claim's format


def scalar_or_list(values: np.ndarray):
    values = np.atleast_1d(values)
    return float(values[0]) if len(values) == 1 else [float(v) for v in values]


def ours_fields(template: str) -> list[str]:
    """The values an `ours` template names ("L = 8 时 {a[0]}，均值 {b.mean}" -> a, b; "{a.per_b}",
    "{a.minus_b}" -> a, b)."""
    fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    if any(not f for f in fields):
        raise ValueError(f"ours {template!r}: an empty {{}} names no value")
    names = [re.split(r"[.\[]", f, maxsplit=1)[0] for f in fields]
    return names + [m for f in fields for m in re.findall(r"\.(?:per|minus)_(\w+)", f)]


class Shown:
    """A value in an `ours` template, printed in its claim's format: "{x}" the value (a list in
    brackets), "{x[0]}", "{x[-1]}" one element, "{x.mean}", "{x.min}", "{x.max}" a summary,
    "{x.per_y}" x / y element by element (a ratio: one decimal), "{x.minus_y}" x − y."""

    def __init__(self, value, fmt: str, others: dict | None = None):
        self.value, self.fmt, self.others = value, fmt, others or {}

    def __format__(self, spec: str) -> str:
        return fmt_values(self.value, self.fmt)

    def __getitem__(self, i) -> "Shown":
        return Shown(float(list(self.value)[int(i)]), self.fmt)

    def __getattr__(self, name: str) -> "Shown":
        kind, _, other = name.partition("_")
        if kind not in ("per", "minus") or other not in self.__dict__.get("others", {}):
            raise AttributeError(name)
        a, b = np.atleast_1d(self.value).astype(float), np.atleast_1d(self.others[other])
        if kind == "per":
            return Shown(a / b.astype(float), ".1f", self.others)
        return Shown(a - b.astype(float), self.fmt, self.others)

    def _summary(self, fn) -> "Shown":
        return Shown(float(fn(np.atleast_1d(self.value))), self.fmt, self.others)

    mean = property(lambda self: self._summary(np.mean))
    min = property(lambda self: self._summary(np.min))
    max = property(lambda self: self._summary(np.max))


def ours_words(entry: dict, numbers: dict) -> str:
    """An entry's `ours` template filled with its values ("" without one)."""
    template = entry.get("ours")
    if not template:
        return ""
    fmt, names = entry.get("fmt", ".3g"), ours_fields(template)
    if any(n not in numbers for n in names):  # a claim not built here: nothing to say
        return ""
    words = template.format(**{n: Shown(numbers[n], fmt, numbers) for n in names})
    return re.sub(r"都在 (\S+) 到 \1 之间", r"都是 \1", words)  # a range that is one number


def fmt_values(values, fmt: str) -> str:
    if isinstance(values, float):
        return _format(values, fmt)
    return "(" + ", ".join(_format(v, fmt) for v in values) + ")"


def _format(value: float, fmt: str) -> str:
    return format(value, fmt) if math.isfinite(value) else str(value)
