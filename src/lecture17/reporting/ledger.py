"""The ledger: every number the lecture quotes, where ours comes from, and whether they agree.

`report/ledger/*.yaml` holds one entry per claim, in the lecture's order (the files sort by the
lecture script they mostly cover); `report/ledger/*.py` beside them holds the named predicates
that the vocabulary does not cover (lecture17.reporting.checks).

    - id: C012                     # the reading aid's id where it has one
      section: "§2.3"
      demo: "01.1"                 # whose table our value comes from
      claim: "l'Afrique 给 visite 的权重"
      lecture: "0.614"             # as printed in the lecture
      class: exact
      value: {quantity: weight, where: {query: "l'Afrique", key: visite}}
      fmt: ".3f"
      check: [digits: {}]          # optional: exact, reconstructed and echo default to `digits`

What a class says about a number, and whether it counts as reproduced:
- exact          computed from the lecture's stated inputs by the code the lecture describes;
                 deterministic: every machine prints the same digits.            counted
- reconstructed  computed like exact, from an input reconstructed from the lecture's own digits
                 (its copy lost it: flags F03, F08, F09); honest, not a reproduction.  apart
- echo           a setting or the lecture's own arithmetic, shown back; it cannot disagree
                 with the lecture except by a typo.                           never counted
- precision      an equivalence: our value (the worst seed) is below `bound` (1e-13 default).
- seeded         a sample (random init, training): the lecture's stated trend or bound.
- timing         machine-dependent: shown; "does not hold here" is listed, never agreeing.
- cited          a number of a paper; no code produces it.
`number:` is the lecture's value as a number (the `lecture` reference of the checks) and
`numbers: {name: number}` its other numbers (`lecture.name`), each entered once. `needs: cuda`
marks a claim only a GPU build can check. `expect: differs` marks a claim where the lecture
itself is wrong (with its reading-aid `flag`): reported, not failed by `diff … lecture`.

A selector is {demo (default: the entry's), quantity (a name or a list), where: {label: value}
or a list of such dicts, stat: mean|min|max|std|n_seeds over seeds or seeds (every seed's
value), reduce: min|max|sum over the rows}.

Long on purpose: one data model (an entry, its selectors, its Outcome) with its loader,
validation and evaluation; split, the Outcome would live apart from what builds it.
"""

import importlib.util
import math
import re
import string
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from lecture17.pipeline import aggregate as tables_mod
from lecture17.pipeline import yamlio
from lecture17.reporting import checks
from lecture17.reporting.words import CJK, chinese_part, study_text

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
FLAGS_FILE = "flags.yaml"  # the reading aid's flags F01–F10 explained: not claims
FLAG_TEXT: dict[str, str] = {}  # flag -> its sentence (load_ledger fills it)
# demo -> {quantity, label or label value: how the report's views print it} (load_ledger fills
# it from report/views beside the ledger): a check's sentence names a value by what it is
# ("敏感度 sensitivity（RNN，距离 32，种子中最小）"), never by its selector name ("rnn_32_lo")
VIEW_LABELS: dict[str, dict[str, str]] = {}
# the build's own timing table (provenance.script_seconds: no view shows it)
BUILD_LABELS = {"ms_script": "作业时间之和 ms", "script": "脚本 script"}
STAT_WORDS = {
    "min": "种子中最小 lowest seed",
    "max": "种子中最大 highest seed",
    "std": "种子间标准差 std",
}
STAT_WORDS |= {"n_seeds": "种子数 seeds", "seeds": "每个种子 each seed"}
REDUCE_WORDS = {"min": "其中最小 the smallest", "max": "其中最大 the largest", "sum": "总和 sum"}
REDUCE_WORDS |= {"last": "最后一个 the last"}
ENTRY_KEYS = {
    "id",
    "section",
    "demo",
    "claim",
    "lecture",
    "number",
    "numbers",
    "class",
    "value",
    "values",
    "fmt",
    "bound",
    "check",
    "show",
    "note",
    "flag",
    "expect",
    "needs",
    "decide",
    "shown_as",  # {value: text}: how a coded value reads (a flag 1 shown as "nan")
    "property",  # beyond only: a property of our code (a failure is a bug), not a finding
    "why",  # {text, check}: a likely reason shown only while its own check holds on the data
    "parts",  # one short name per check step: a compound claim says which part holds
    "pair",  # the id of a claim on the same lecture sentence judged another way
    "judges",  # with `pair`: the part of the sentence this claim judges, in a few words
    "ours",  # the study reading's "ours" as words around the values: "L = 8 时 {a[0]}"
    "predict",  # an exercise to predict before it runs: {who, lecture, opposite} (§13)
}
DECIDE_KEYS = {"recorded", "where"}  # (not "on": YAML 1.1 reads it as true)
SELECTOR_KEYS = {"demo", "quantity", "where", "stat", "reduce"}
STAT_KEYS = ("mean", "min", "max", "std", "n_seeds", "seeds")  # over seeds, per row
NEEDS = ("cuda",)
# over the selected rows: "last" is the final row, e.g. a run's final checkpoint (rows by step)
REDUCE = {
    "min": np.min,
    "max": np.max,
    "sum": np.sum,
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
# loading, with every entry validated: a typo names the claim


def load_ledger(path) -> list[dict]:
    """Entries of report/ledger/*.yaml (sorted), their predicates loaded from *.py beside them."""
    path = Path(path)
    files = (
        sorted(f for f in path.glob("*.yaml") if f.name != FLAGS_FILE) if path.is_dir() else [path]
    )
    if path.is_dir() and (path / FLAGS_FILE).exists():
        FLAG_TEXT.update(yamlio.load((path / FLAGS_FILE).read_text(encoding="utf-8")))
    views = (path if path.is_dir() else path.parent).parent / "views"
    if views.is_dir():
        VIEW_LABELS.update(view_labels(views))
    VIEW_LABELS.setdefault("build", {}).update(BUILD_LABELS)
    if not files:
        raise ValueError(f"{path}: no ledger files (*.yaml)")
    for module in [f.with_suffix(".py") for f in files]:
        if module.exists():
            _load_predicates(module)
    entries = []
    for file in files:
        with open(file, encoding="utf-8") as f:
            entries += yamlio.load(f) or []
    ids = set()
    for entry in entries:
        try:
            _validate(entry)
        except (checks.CheckError, ValueError, TypeError, KeyError) as error:
            raise ValueError(f"ledger entry {entry.get('id')!r}: {error}") from None
        if entry["id"] in ids:
            raise ValueError(f"ledger entry {entry['id']!r}: id used twice")
        ids.add(entry["id"])
    pairs = {e["id"]: e["pair"] for e in entries if "pair" in e}
    for e in entries:
        if "judges" in e and "pair" not in e:
            raise ValueError(f"ledger entry {e['id']!r}: `judges` says which part of a pair")
    for one, other in pairs.items():  # a pair names each other: both sentences say it
        if pairs.get(other) != one:
            raise ValueError(f"ledger entry {one!r}: pair {other!r} does not name it back")
    return entries


MODULES: dict = {}  # predicate files loaded so far, by path (each is run once per process)


def _load_predicates(module: Path) -> None:
    key = module.resolve()
    if key in MODULES:
        return
    spec = importlib.util.spec_from_file_location(f"ledger_checks_{module.stem}", module)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    MODULES[key] = mod


def examples() -> dict:
    """The EXAMPLES of every predicate file loaded: {claim id: {"holds": …, "fails": …}}."""
    found = {}
    for mod in MODULES.values():
        found.update(getattr(mod, "EXAMPLES", {}))
    return found


def _validate(entry: dict) -> None:
    unknown = set(entry) - ENTRY_KEYS
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}; expected some of {sorted(ENTRY_KEYS)}")
    for key in ("id", "section", "claim", "lecture", "class"):
        if key not in entry:
            raise ValueError(f"missing key {key!r}")
    if entry["class"] not in CLASSES:
        raise ValueError(f"class {entry['class']!r}; expected one of {CLASSES}")
    if "predict" in entry and (
        not isinstance(entry["predict"], dict)
        or set(entry["predict"]) != {"who", "lecture", "opposite"}
        or not str(entry["section"]).startswith("Ex")
    ):
        raise ValueError("predict must be {who, lecture, opposite}, on an exercise's claim")
    if "property" in entry and (entry["property"] is not True or entry["class"] != "beyond"):
        raise ValueError("property: true marks a beyond claim that states a property of our code")
    if entry.get("needs", NEEDS[0]) not in NEEDS:
        raise ValueError(f"needs {entry['needs']!r}; expected one of {NEEDS}")
    if entry["class"] == "cited" or entry["class"] == "echo" and not _has_values(entry):
        if {"value", "values", "check"} & set(entry):
            raise ValueError("a cited claim has no values and no check")
        return
    selectors = _selectors(entry)
    for name, selector in selectors.items():
        bad = set(selector) - SELECTOR_KEYS
        if bad or "quantity" not in selector:
            raise ValueError(f"selector {name!r}: unknown keys {sorted(bad)} or no quantity")
        if selector.get("stat", "mean") not in STAT_KEYS:
            raise ValueError(f"selector {name!r}: stat must be one of {STAT_KEYS}")
        if selector.get("reduce", "min") not in REDUCE:
            raise ValueError(f"selector {name!r}: reduce must be one of {sorted(REDUCE)}")
        if "demo" not in selector and "demo" not in entry:
            raise ValueError(f"selector {name!r}: no demo (on the selector or the entry)")
    if "decide" in entry:
        _validate_decide(entry)
    for name in _show_names(entry):
        if name not in selectors:
            raise ValueError(f"show names {name!r}, which is not one of {sorted(selectors)}")
    for name in ours_fields(entry.get("ours", "")):
        if name not in selectors:
            raise ValueError(f"ours names {name!r}, which is not one of {sorted(selectors)}")
    checks.validate(steps_of(entry), set(selectors), lecture_numbers(entry))
    if "why" in entry:
        why = entry["why"]
        if not isinstance(why, dict) or set(why) != {"text", "check"}:
            raise ValueError("why must be {text: …, check: [steps]}: a reason and when it holds")
        checks.validate(why["check"], set(selectors), lecture_numbers(entry))
    if "parts" in entry and len(entry["parts"]) != len(steps_of(entry)):
        raise ValueError(
            f"parts names {len(entry['parts'])} parts for {len(steps_of(entry))} steps"
        )
    format(1.0, entry.get("fmt", ".3g"))  # a bad format fails here, not in the report


def _validate_decide(entry: dict) -> None:
    """`decide: {recorded: [07.x, …], where: {…}}`: recorded demos that extend the claim's demo."""
    from lecture17.experiments import DEMOS

    decide = entry["decide"]
    if not isinstance(decide, dict) or set(decide) - DECIDE_KEYS or "recorded" not in decide:
        raise ValueError(f"decide must be a mapping with 'recorded' (and 'where'), got {decide!r}")
    if entry["class"] != "seeded":
        raise ValueError("decide: only a seeded claim is decided on recorded seeds")
    for demo in decide["recorded"]:
        if demo not in DEMOS or DEMOS[demo].kind != "recorded":
            raise ValueError(f"decide: {demo!r} is not a recorded demo")
    demos = {str(s.get("demo", entry.get("demo"))) for s in _selectors(entry).values()}
    if not {DEMOS[d].extends for d in decide["recorded"]} & demos:
        raise ValueError(f"decide: {decide['recorded']} extend none of the demos it reads {demos}")


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
# selecting our numbers from the seed-averaged tables


class MissingTable(LookupError):
    """The table, or the rows a selector names, are not in this build (e.g. a small config)."""


def select(tables: dict, selector: dict, default_demo: str | None = None) -> pd.DataFrame:
    """The rows of a seed-averaged table that a selector names (mean, min, max, n_seeds).

    `quantity` is one name or a list of names (rows in the listed order); `where` is a dict
    (every combination of the listed labels) or a list of dicts (their rows, in that order),
    e.g. one row per head: [{head: who, key: Jane}, {head: where, key: …}].
    """
    demo = str(selector.get("demo", default_demo))
    if demo not in tables:
        raise MissingTable(demo)
    quantities = selector["quantity"]
    where = selector.get("where", {})
    try:
        picked = pd.concat(
            [
                tables_mod.select(tables[demo], q, strict=True, **w)
                for w in (where if isinstance(where, list) else [where])
                for q in (quantities if isinstance(quantities, list) else [quantities])
            ]
        )
    except tables_mod.NoRows as absent:
        raise MissingTable(f"{demo}: {absent}") from None
    except ValueError as error:  # a wrong label name is a ledger bug
        raise ValueError(f"table {demo}: {error}") from None
    if picked.empty:
        raise MissingTable(f"{demo}: {quantities} {where}")
    return picked


def scalar_or_list(values: np.ndarray):
    values = np.atleast_1d(values)
    return float(values[0]) if len(values) == 1 else [float(v) for v in values]


def ours_fields(template: str) -> list[str]:
    """The values an `ours` template names ("L = 8 时 {a[0]}，均值 {b.mean}" -> a, b)."""
    fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    if any(not f for f in fields):
        raise ValueError(f"ours {template!r}: an empty {{}} names no value")
    return [re.split(r"[.\[]", f, maxsplit=1)[0] for f in fields]


class Shown:
    """A value in an `ours` template, printed in its claim's format: "{x}" the value (a list in
    brackets), "{x[0]}", "{x[-1]}" one element, "{x.mean}", "{x.min}", "{x.max}" a summary."""

    def __init__(self, value, fmt: str):
        self.value, self.fmt = value, fmt

    def __format__(self, spec: str) -> str:
        return fmt_values(self.value, self.fmt)

    def __getitem__(self, i) -> "Shown":
        return Shown(float(list(self.value)[int(i)]), self.fmt)

    def _summary(self, fn) -> "Shown":
        return Shown(float(fn(np.atleast_1d(self.value))), self.fmt)

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
    words = template.format(**{n: Shown(numbers[n], fmt) for n in names})
    return re.sub(r"都在 (\S+) 到 \1 之间", r"都是 \1", words)  # a range that is one number


def fmt_values(values, fmt: str) -> str:
    if isinstance(values, float):
        return _format(values, fmt)
    return "(" + ", ".join(_format(v, fmt) for v in values) + ")"


def _format(value: float, fmt: str) -> str:
    return format(value, fmt) if math.isfinite(value) else str(value)


# -----------------------------------------------------------------------------
# deciding agreement


def evaluate(entry: dict, tables: dict, settings: dict | None = None) -> Outcome:
    """One claim: select our numbers, run its checks, and name the status.

    `settings` is the config's `demos` mapping (for `settings.KEY` references), or None. A
    claim with `decide: {recorded: [07.x, …], where: {labels}}` is decided on those recorded
    seeds (decided_on_recorded); its protocol outcome is kept beside (Outcome.protocol).
    """
    if "decide" in entry:
        return decided_on_recorded(entry, tables, settings)
    return evaluate_protocol(entry, tables, settings)


def robustness_table(tables: dict, recorded: list[str], where: dict | None = None):
    """The recorded demos' tables as one (05.3's two models live in 07.6 and 07.7), restricted
    to `where`'s labels (e.g. seq_len 16, the protocol's), whose columns are then dropped. Two
    demos that give the same row (the same labels and quantity) are a ValueError: a claim would
    read it twice."""
    parts = []
    for demo in recorded:
        rows = tables[demo]
        for label, value in (where or {}).items():
            if label not in rows.columns:
                raise ValueError(f"{demo} has no label {label!r} (its labels: {list(rows)})")
            rows = rows[rows[label].astype(str) == str(value)].drop(columns=label)
        parts.append(rows)
    table = pd.concat(parts, ignore_index=True)
    labels = [c for c in table.columns if c not in tables_mod.STAT_COLUMNS]
    table[labels] = table[labels].fillna("")  # a label one demo has and another lacks
    if table.duplicated(labels).any():
        twice = table.loc[table.duplicated(labels), labels].head(1).to_dict("records")
        raise ValueError(f"{recorded} give the same row twice, e.g. {twice}")
    timings = [t for d in recorded for t in tables[d].attrs.get("timings", ())]
    table.attrs = {**tables[recorded[0]].attrs, "timings": frozenset(timings)}
    return table


def recorded_table(tables: dict, recorded: list[str], where: dict | None = None):
    """The recorded demos' tables as one, restricted to `where`'s labels (dropped)."""
    return robustness_table(tables, recorded, where)


def decided_on_recorded(entry: dict, tables: dict, settings: dict | None = None) -> Outcome:
    """The rulebook's "a trained claim is decided on the recorded seeds of its protocol".

    The recorded demos in `decide.recorded` (07.x, fixed files: the same on every machine) stand in
    for the protocol demo they extend. A claim about one run (per_seed_claim: seed means of one
    demo) is judged on each recorded seed alone with its own checks, and holds when the rate
    of seeds on which it holds has its 95 % Wilson interval above 1/2 (a typical run of the
    protocol shows it; rates.decide), differs below, is not resolvable in between. A claim
    about the seeds' spread (min, max, seeds) is judged once, on all the recorded seeds. The
    default build's protocol seeds are evaluated too and kept as `protocol`: shown, never
    deciding."""
    from lecture17.experiments import DEMOS
    from lecture17.reporting.rates import decide

    protocol = evaluate_protocol(entry, tables, settings)
    recorded = list(entry["decide"]["recorded"])
    replaced = {DEMOS[d].extends for d in recorded}
    if missing := [d for d in recorded if d not in tables]:
        finding = checks.Finding(None, f"本次构建没有记录的运行 not recorded here: {missing}")
        return Outcome(entry, "missing", findings=[finding], protocol=protocol)
    table = recorded_table(tables, recorded, entry["decide"].get("where"))
    plain = {k: v for k, v in entry.items() if k != "decide"}
    if not per_seed_run_claim(plain):
        whole = evaluate_protocol(plain, {**tables, **dict.fromkeys(replaced, table)}, settings)
        whole.protocol = protocol
        return whole
    statuses = [
        evaluate_protocol(
            plain, {**tables, **dict.fromkeys(replaced, tables_mod.seed_table(table, s))}, settings
        ).status
        for s in tables_mod.table_seeds(table)
    ]
    judged = [s for s in statuses if s in ("holds", "differs")]
    if not judged:
        text = f"记录的 {len(statuses)} 个种子都无法分辨 no recorded seed decides"
        finding, ok = checks.Finding(None, text), None
    else:
        k = sum(s == "holds" for s in judged)
        ok, text = decide(k, len(judged))
        finding = checks.Finding(
            ok, f"记录的种子里讲义的话成立的 recorded seeds on which it holds: {text}"
        )
    status = "unresolved" if ok is None else "holds" if ok else "differs"
    whole = evaluate_protocol(plain, {**tables, **dict.fromkeys(replaced, table)}, settings)
    return Outcome(
        entry,
        status,
        whole.ours,
        [finding],
        whole.numbers,
        protocol.cells + whole.cells,
        protocol,
        whole.seeds,
        whole.findings,
        whole.why,
    )


def per_seed_run_claim(entry: dict) -> bool:
    """A claim about one run's numbers: every value a seed mean (no `stat`)."""
    return all("stat" not in s for s in _selectors(entry).values())


def evaluate_protocol(entry: dict, tables: dict, settings: dict | None = None) -> Outcome:
    """One claim on the tables as given (the protocol's seeds, or a recorded table)."""
    cls = entry["class"]
    if cls == "cited":
        return Outcome(entry, "cited")
    if cls == "echo" and not _has_values(entry):  # the lecture's arithmetic, no table
        return Outcome(entry, "echo")
    try:
        picked = {
            name: (sel, select(tables, sel, entry.get("demo")))
            for name, sel in _selectors(entry).items()
        }
    except MissingTable as missing:
        if entry.get("needs") == "cuda":  # a GPU demo: a CPU build cannot have its table
            finding = checks.Finding(None, "本次构建在 CPU 上 a CPU build: `--config device=cuda`")
            return Outcome(entry, "gpu", findings=[finding])
        finding = checks.Finding(None, f"本次构建没有 not in this build: {missing}")
        return Outcome(entry, "missing", findings=[finding])
    named = {n: _reduce(sel, rows) for n, (sel, rows) in picked.items()}
    cells = [
        (str(sel.get("demo", entry.get("demo"))), key)
        for sel, rows in picked.values()
        for key in _row_keys(rows)
    ]
    fmt = entry.get("fmt", ".3g")
    shown = np.concatenate([np.atleast_1d(named[n]) for n in _show_names(entry) or [*named][:1]])
    ours = fmt_values(scalar_or_list(shown), fmt)
    if "shown_as" in entry:  # a coded value shown as what it means, the badge judging that
        ours = "、".join(str(entry["shown_as"].get(float(v), format(v, fmt))) for v in shown)
    demo_settings = _settings(settings, entry)
    context = checks.Context(
        named,
        lecture_numbers(entry),
        str(entry["lecture"]),
        demo_settings,
        fmt,
        labels=value_labels(entry),
    )
    findings = checks.run(steps_of(entry), context)
    ok = checks.verdict(findings)
    if ok is None:
        status = "unresolved"
    elif ok:
        # an exact (or beyond) claim judged by a check of its own (within 3 SE, equal to
        # another cell, below a bound) rather than by its printed digits holds; it does not
        # show "the same digits"
        steps = [checks.parse_step(step) for step in entry.get("check", [])]
        explicit = cls in ("exact", "reconstructed", "beyond") and steps
        explicit = explicit and not any(map(_to_lecture, steps))
        status = "holds" if explicit else PASSED[cls]
    else:
        status = "timing_fails" if cls == "timing" else "differs"
    numbers = {n: scalar_or_list(v) for n, v in named.items()}
    shown_rows = [picked[n][1] for n in _show_names(entry) or [*picked][:1]]
    seeds = sorted(
        {s for rows in shown_rows if "seeds" in rows for s in tables_mod.table_seeds(rows)}
    )
    why = ""
    if "why" in entry and checks.verdict(checks.run(entry["why"]["check"], context)):
        why = entry["why"]["text"]
    return Outcome(entry, status, ours, findings, numbers, cells, seeds=seeds, why=why)


def _to_lecture(step: tuple[str, dict]) -> bool:
    """Whether a check step compares with the lecture's own number (its digits, or `equal` /
    `near` to `lecture…`; a bound such as `between` is not): an exact claim passing such a step
    shows the same digits."""
    word, args = step
    return (
        word == "digits"
        or word in ("equal", "near")
        and any(isinstance(v, str) and v.startswith("lecture") for v in (args or {}).values())
    )


def _row_keys(rows: pd.DataFrame) -> list[tuple]:
    """Each row's labels (quantity included): the same key in any build of the table."""
    labels = [c for c in rows.columns if c not in ("demo", *tables_mod.STAT_COLUMNS)]
    return [tuple(r) for r in rows[labels].itertuples(index=False)]


def _reduce(selector: dict, rows: pd.DataFrame) -> np.ndarray:
    if selector.get("stat") == "seeds":  # every seed's value (a rate's sample)
        return _per_seed(selector, rows)
    values = rows[selector.get("stat", "mean")].to_numpy(float)
    if "reduce" in selector:
        return np.atleast_1d(REDUCE[selector["reduce"]](values))
    return values


def _per_seed(selector: dict, rows: pd.DataFrame) -> np.ndarray:
    """stat: seeds. Without `reduce`, every row's per-seed values, row after row; with it, one
    value per seed, reduced over the rows (e.g. the largest of a model's heads, per model)."""
    if "reduce" not in selector:
        return tables_mod.seed_values(rows)
    per_row = [tables_mod.per_seed(text) for text in rows["seeds"]]
    seeds = sorted(per_row[0]) if per_row else []
    if any(sorted(r) != seeds for r in per_row):
        raise ValueError("stat: seeds with reduce needs every row to have the same seeds")
    matrix = np.array([[r[seed] for seed in seeds] for r in per_row], dtype=float)
    return REDUCE[selector["reduce"]](matrix, axis=0)


def _settings(settings: dict | None, entry: dict) -> dict | None:
    """The demo's settings and grid; for a view-only demo (05.2), its first selector's demo."""
    if settings is None:
        return None
    demo = entry.get("demo")
    if demo not in settings:
        demo = next((str(s["demo"]) for s in _selectors(entry).values() if "demo" in s), None)
    if demo not in settings:
        return None
    spec = settings[demo]
    return {**spec.get("settings", {}), **spec.get("grid", {}), "seeds": spec.get("seeds", [])}


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


def view_labels(folder: Path) -> dict[str, dict[str, str]]:
    """demo -> every `labels` entry of its views in report/views (later views win)."""
    out: dict[str, dict[str, str]] = {}
    for file in sorted(Path(folder).glob("*.yaml")):
        for demo, items in (yamlio.load(file.read_text(encoding="utf-8")) or {}).items():
            for view in items or []:
                out.setdefault(str(demo), {}).update(
                    {str(k): str(v) for k, v in (view.get("labels") or {}).items()}
                )
    return out


def _span(values: list) -> str:
    """[1, 2, …, 63] -> "1–63" (consecutive integers); other lists joined with "、"."""
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in values)
    if ints and len(values) > 2 and list(values) == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}–{values[-1]}"
    return "、".join(map(str, values))


# the study reading names a value in Chinese only: a name the views give no Chinese for, and
# one label name (the length of a sequence is "L" on every page of the lecture)
STUDY_NAMES = {
    "seq_len": "L",
    "simulated_chance": "模拟的瞎猜",
    "map": "注意力图上的权重",
    "dot": "点积",
    "sensitivity": "敏感度",
    "ms_per_step": "每步毫秒",
    "model": "",
    "method": "",
    "d_k": "d_k",
    "d_model": "d_model",
}


def _study_word(text: str, token: str) -> str:
    """A view's label as the study reading says it: its Chinese part, no English tail, no
    table-header arrows ("起点 p ↓ 距离 k →" -> "起点 p")."""
    if token in STUDY_NAMES:
        return STUDY_NAMES[token]
    text = text.split("↓")[0].strip()
    if not CJK.search(text):
        return text
    return study_text(chinese_part(text))  # "距离 distance" -> "距离": the term's gloss


def value_label(selector: dict, demo, study: bool = False) -> str:
    """What a selected value is, in the views' words: its quantity, then its labels, the seed
    statistic and the reduction ("敏感度 sensitivity（model RNN，distance 32，种子中最小）");
    study: in Chinese only ("敏感度（RNN，距离 32）"; the seeds are said by the takeaway)."""
    names = VIEW_LABELS.get(str(selector.get("demo", demo)), {})

    def say(token) -> str:
        if isinstance(token, list):
            return (
                _span(token)
                if not all(isinstance(t, str) for t in token)
                else "、".join(say(t) for t in token)
            )
        text = names.get(str(token), str(token).replace("_", " "))
        return _study_word(text, str(token)) if study else text

    where = selector.get("where", {})
    where = where if isinstance(where, list) else [where]

    def pair(key, value) -> str:  # "不缩放", not "缩放 不缩放": a value that names its key
        k, v = say(key), say(value)
        return v if k and k in v else f"{k} {v}".strip()

    pairs = ("，".join(pair(k, v) for k, v in w.items()) for w in where if w)
    parts = ["；".join(pairs)]
    stat, reduce = selector.get("stat", "mean"), selector.get("reduce")
    if study and stat == reduce and stat in ("min", "max"):  # one extreme, said once
        parts += [f"种子和各项中{'最小' if stat == 'min' else '最大'}"]
    elif study:  # the Chinese part; a reduction's "the largest of the rows" said by the stat
        parts += [
            STAT_WORDS.get(stat, "").split(" ")[0],
            REDUCE_WORDS.get(reduce, "").split(" ")[0],
        ]
    else:
        parts += [STAT_WORDS.get(stat, ""), REDUCE_WORDS.get(reduce, "")]
    detail = "，".join(t for t in parts if t)
    return say(selector["quantity"]) + (f"（{detail}）" if detail else "")


def value_labels(entry: dict, study: bool = False) -> dict[str, str]:
    """name -> value_label for every value of the entry; two values that would read the same
    get their names appended (never silently merged)."""
    selectors = _selectors(entry)
    labels = {n: value_label(sel, entry.get("demo"), study) for n, sel in selectors.items()}
    seen: dict[str, int] = {}
    for label in labels.values():
        seen[label] = seen.get(label, 0) + 1

    def told_apart(n: str, label: str) -> str:
        if seen[label] == 1:
            return label
        if study:  # by the demo it comes from, never by its name in the ledger
            return f"{label}（演示 {selectors[n].get('demo', entry.get('demo'))}）"
        return f"{label} [{n}]"

    return {n: told_apart(n, label) for n, label in labels.items()}


def _show_names(entry: dict) -> list:
    show = entry.get("show", [])
    return [show] if isinstance(show, str) else list(show)


def evaluate_all(entries: list[dict], tables: dict, settings: dict | None = None) -> list:
    outcomes = []
    for entry in entries:
        try:
            outcomes.append(evaluate(entry, tables, settings))
        except (KeyError, ValueError, TypeError, IndexError) as error:  # name the claim
            raise ValueError(
                f"ledger entry {entry['id']!r}: {type(error).__name__}: {error}"
            ) from error
    return outcomes


def summary(outcomes: list[Outcome]) -> pd.DataFrame:
    """Claims per class (rows) and status (columns), for the report's first table."""
    counts = pd.DataFrame(0, index=list(CLASSES), columns=list(STATUS))
    for o in outcomes:
        counts.loc[o.entry["class"], o.status] += 1
    return counts.loc[counts.sum(axis=1) > 0, counts.sum(axis=0) > 0]


def reproduced(outcomes: list[Outcome]) -> dict:
    """How many claims were reproduced, reproduced from a reconstructed input, or shown back."""
    return {
        # a verdict that needs data not built here ("needs a GPU") is never counted as agreeing
        "reproduced": sum(o.entry["class"] in COUNTED and o.status in REPRODUCED for o in outcomes),
        "counted": sum(o.entry["class"] in COUNTED for o in outcomes),
        "reconstructed": sum(o.entry["class"] == "reconstructed" and o.agrees for o in outcomes),
        "echo": sum(o.entry["class"] == "echo" for o in outcomes),
    }
