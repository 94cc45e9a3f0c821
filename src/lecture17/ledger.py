"""The ledger: every number the lecture quotes, where ours comes from, and whether they agree.

`report/ledger.yaml` holds one entry per claim:

    - id: C012                     # the reading aid's id where it has one
      section: "§2.3"
      demo: "01.1"                 # whose table our value comes from
      claim: "l'Afrique 给 visite 的权重"
      lecture: "0.614"             # as printed in the lecture
      class: exact                 # exact | precision | seeded | timing | cited
      value: {quantity: weight, where: {query: "l'Afrique", key: visite}}
      fmt: ".3f"

How "agrees" is decided, by class:
- exact      our value printed with `fmt` has the lecture's digits (several rows → "(a, b, …)");
             with `holds`, a deterministic relation the lecture states in words must hold;
- precision  an equivalence: our value is below `bound` (default 1e-13);
- seeded     the lecture's stated trend or bound, `holds`, a Python expression over named values
             (`values: {name: selector}`), e.g. "rnn_32 < 1e-4 * rnn_1";
- timing     like seeded, but machine-dependent: shown, never counted as a disagreement;
- cited      a number the lecture cites from a paper; no code produces it.
A selector is {demo (default: the entry's), quantity, where: {label: value}, stat: mean|min|max}.
`needs: cuda` marks a claim only a GPU build can check (demo 06.3): without its table the status
is "needs a GPU", which is not a disagreement, rather than "not built".
`expect: differs` marks a claim where the lecture itself is wrong (with its reading-aid `flag`):
the report still says "differs"; `diff … lecture` does not count it as a failure.
"""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import yaml

CLASSES = ("exact", "precision", "seeded", "timing", "cited")
STATUS = {
    "same": "数字相同 same digits",
    "precision": "机器精度内 within precision",
    "holds": "趋势成立 trend holds",
    "differs": "不同 differs",
    "missing": "未构建 not built",
    "gpu": "需要 GPU needs a GPU",
    "timing": "因机器而异 machine-dependent",
    "cited": "引自论文 cited",
}
DEFAULT_BOUND = 1e-13
ENTRY_KEYS = {
    "id",
    "section",
    "demo",
    "claim",
    "lecture",
    "class",
    "value",
    "values",
    "fmt",
    "bound",
    "holds",
    "show",
    "note",
    "flag",
    "expect",
    "tol",
    "needs",
}
NEEDS = ("cuda",)


@dataclass
class Outcome:
    entry: dict
    status: str  # a key of STATUS
    ours: str = ""
    reason: str = ""
    numbers: dict = field(default_factory=dict)  # name -> float or list of floats, for the diff
    spread: dict = field(default_factory=dict)  # name -> largest max - min over seeds

    @property
    def agrees(self) -> bool:
        return self.status in ("same", "precision", "holds", "timing", "cited", "gpu")


def load_ledger(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        entries = yaml.safe_load(f)
    ids = set()
    for entry in entries:
        problems = set(entry) - ENTRY_KEYS
        bad_needs = entry.get("needs", NEEDS[0]) not in NEEDS
        if problems or entry.get("class") not in CLASSES or entry.get("id") in ids or bad_needs:
            raise ValueError(
                f"ledger entry {entry.get('id')!r}: unknown keys {sorted(problems)}, "
                f"class must be one of {CLASSES}, needs one of {NEEDS}, ids unique"
            )
        ids.add(entry["id"])
    return entries


# -----------------------------------------------------------------------------
# selecting our numbers from the seed-averaged tables


class MissingTable(LookupError):
    """The table, or the rows a selector names, are not in this build (e.g. a small config)."""


def select(tables: dict, selector: dict, default_demo: str | None) -> pd.DataFrame:
    """The rows of a seed-averaged table that a selector names (mean, min, max, n_seeds).

    `quantity` is one name or a list of names; `where` is a dict (every combination of the
    listed labels) or a list of dicts (their rows, in that order), e.g. one row per head:
    [{head: who, key: Jane}, {head: where, key: …}].
    """
    demo = str(selector.get("demo", default_demo))
    if demo not in tables:
        raise MissingTable(demo)
    table = tables[demo]
    quantities = selector["quantity"]
    if isinstance(quantities, list):  # several quantities, in the listed order
        rows = pd.concat([table[table["quantity"] == q] for q in quantities])
    else:
        rows = table[table["quantity"] == quantities]
    where = selector.get("where", {})
    if isinstance(where, list):
        picked = pd.concat([_filter(rows, w, demo) for w in where])
    else:
        picked = _filter(rows, where, demo)
    if picked.empty:
        raise MissingTable(f"{demo}: {selector['quantity']} {where}")
    return picked


def _filter(rows: pd.DataFrame, where: dict, demo: str) -> pd.DataFrame:
    for label, wanted in where.items():
        if label not in rows.columns:
            raise ValueError(
                f"table {demo} has no label column {label!r}; has {list(rows.columns)}"
            )
        wanted = wanted if isinstance(wanted, list) else [wanted]
        rows = rows[rows[label].isin([str(w) for w in wanted])]
    return rows  # a wrong label name is a ledger bug (ValueError); absent rows are MissingTable


def scalar_or_list(values: np.ndarray):
    return float(values[0]) if len(values) == 1 else [float(v) for v in values]


def fmt_values(values, fmt: str) -> str:
    if isinstance(values, float):
        return format(values, fmt)
    return "(" + ", ".join(format(v, fmt) for v in values) + ")"


# -----------------------------------------------------------------------------
# deciding agreement


def evaluate(entry: dict, tables: dict) -> Outcome:
    cls = entry["class"]
    if cls == "cited":
        return Outcome(entry, "cited")
    try:
        picked = {
            name: (sel, select(tables, sel, entry.get("demo")))
            for name, sel in _selectors(entry).items()
        }
    except MissingTable as missing:
        if entry.get("needs") == "cuda":  # a GPU demo: a CPU build cannot have its table
            return Outcome(
                entry, "gpu", reason="本次构建在 CPU 上 a CPU build: `--config device=cuda`"
            )
        return Outcome(entry, "missing", reason=f"本次构建没有 not in this build: {missing}")
    named = {
        n: scalar_or_list(rows[sel.get("stat", "mean")].to_numpy(float))
        for n, (sel, rows) in picked.items()
    }
    spread = {n: float((rows["max"] - rows["min"]).max()) for n, (_, rows) in picked.items()}
    show = entry.get("show", next(iter(named)))
    # `show` names a value, or is an expression over them (e.g. "[min(band), max(band)]")
    shown = named[show] if show in named else scalar_or_list(np.atleast_1d(_eval(show, named)))
    ours = fmt_values(shown, entry.get("fmt", ".3g"))
    if cls == "exact" and "holds" in entry:  # a deterministic relation the lecture states in words
        same = _holds(entry["holds"], named)
        return Outcome(
            entry,
            "same" if same else "differs",
            ours,
            "" if same else f"不成立 fails: {entry['holds']}",
            named,
            spread,
        )
    if cls == "exact":
        same = _normalise(ours) == _normalise(str(entry["lecture"]))
        return Outcome(entry, "same" if same else "differs", ours, numbers=named, spread=spread)
    if cls == "precision":
        bound = float(entry.get("bound", DEFAULT_BOUND))
        worst = max(np.atleast_1d(shown))
        ok = bool(worst < bound)
        reason = "" if ok else f"{worst:.1e} ≥ {bound:.0e}"
        return Outcome(entry, "precision" if ok else "differs", ours, reason, named, spread)
    holds = _holds(entry["holds"], named)
    if cls == "timing":  # shown, never counted as a disagreement
        reason = "" if holds else f"本机不成立 not here: {entry['holds']}"
        return Outcome(entry, "timing", ours, reason, named, spread)
    reason = "" if holds else f"不成立 fails: {entry['holds']}"
    return Outcome(entry, "holds" if holds else "differs", ours, reason, named, spread)


def _selectors(entry: dict) -> dict:
    if "values" in entry:
        return entry["values"]
    return {"ours": entry["value"]}


def _normalise(text: str) -> str:
    return text.replace(" ", "").replace("−", "-").replace("×", "x")


def _holds(expression: str, named: dict) -> bool:
    return bool(_eval(expression, named))


def _eval(expression: str, named: dict):
    env = {k: np.asarray(v) for k, v in named.items()}
    env.update(
        abs=np.abs,
        all=np.all,
        any=np.any,
        min=np.min,
        max=np.max,
        mean=np.mean,
        log10=np.log10,
        diff=np.diff,
        np=np,
    )
    return eval(expression, {"__builtins__": {}}, env)  # the ledger is project data, not user input


def evaluate_all(entries: list[dict], tables: dict) -> list[Outcome]:
    return [evaluate(entry, tables) for entry in entries]


def summary(outcomes: list[Outcome]) -> pd.DataFrame:
    """Claims per class (rows) and status (columns), for the report's first table."""
    counts = pd.DataFrame(0, index=list(CLASSES), columns=list(STATUS))
    for o in outcomes:
        counts.loc[o.entry["class"], o.status] += 1
    return counts.loc[counts.sum(axis=1) > 0, counts.sum(axis=0) > 0]
