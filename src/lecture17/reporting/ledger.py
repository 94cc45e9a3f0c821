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

This module loads the entries and validates each one; the data model (an entry, its selectors,
its Outcome) is reporting.ledger_entry, the values' names reporting.ledger_labels, and the
evaluation against the tables reporting.ledger_eval. Their names are importable from here.
"""

import importlib.util
from pathlib import Path

from lecture17.pipeline import yamlio
from lecture17.reporting import checks
from lecture17.reporting.ledger_entry import (  # noqa: F401 - the ledger's names, kept here
    AGREES,
    CLASSES,
    COUNTED,
    DEFAULT_BOUND,
    PASSED,
    REDUCE,
    REPRODUCED,
    SELECTOR_KEYS,
    STAT_KEYS,
    STATUS,
    Outcome,
    Shown,
    _has_values,
    _selectors,
    _show_names,
    counts,
    fmt_values,
    lecture_numbers,
    ours_fields,
    ours_words,
    scalar_or_list,
    selectors,
    steps_of,
)
from lecture17.reporting.ledger_eval import (  # noqa: F401 - the ledger's names, kept here
    MissingTable,
    _settings,
    decided_on_recorded,
    evaluate,
    evaluate_all,
    evaluate_protocol,
    per_seed_run_claim,
    recorded_table,
    reproduced,
    robustness_table,
    select,
    summary,
)
from lecture17.reporting.ledger_labels import (  # noqa: F401 - the ledger's names, kept here
    BUILD_LABELS,
    REDUCE_WORDS,
    STAT_WORDS,
    STUDY_NAMES,
    VIEW_LABELS,
    value_label,
    value_labels,
    view_labels,
)

FLAGS_FILE = "flags.yaml"  # the reading aid's flags F01–F10 explained: not claims
FLAG_TEXT: dict[str, str] = {}  # flag -> its sentence (load_ledger fills it)
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
    "span",  # the verbatim text of lecture17.txt this entry judges (whitespace normalised)
    "asserts",  # the quantity or property it asserts within that span: snake_case
    "derivation",  # the lecture computed the number itself ("√4 = 2"): never counted
    "preregistered",  # true: its rule was written before its runs
    "evidence",  # true: its twin (same span and asserts, its `pair`) decides; shown, not counted
}
DECIDE_KEYS = {"recorded", "where"}  # (not "on": YAML 1.1 reads it as true)
NEEDS = ("cuda",)


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
    _validate_twins(entries)
    return entries


def assertion(entry: dict) -> tuple[str, str]:
    """What an entry judges: its span of the lecture (whitespace normalised) and quantity."""
    return " ".join(str(entry.get("span", "")).split()), str(entry.get("asserts", ""))


def _validate_twins(entries: list[dict]) -> None:
    """Two entries on one assertion (the same span and quantity) are twins: they name each
    other as `pair`, exactly one is shown as the other's `evidence`, and a pre-registered one
    decides. More than two on one assertion is refused."""
    twins: dict = {}
    for e in entries:
        twins.setdefault(assertion(e), []).append(e)
    for e in entries:
        group = twins[assertion(e)] if all(assertion(e)) else [e]
        if e.get("evidence") and len(group) != 2:
            raise ValueError(f"ledger entry {e['id']!r}: evidence of what? no twin on its span")
        if len(group) < 2 or group[0] is not e:
            continue
        ids = [t["id"] for t in group]
        if len(group) > 2 or group[0].get("pair") != ids[1]:
            raise ValueError(f"ledger entries {ids}: one assertion, so one pair (`pair`)")
        evidence = [t for t in group if t.get("evidence")]
        if len(evidence) != 1:
            raise ValueError(f"ledger entries {ids}: twins; exactly one is `evidence: true`")
        if evidence[0].get("preregistered"):
            raise ValueError(f"ledger entries {ids}: the pre-registered twin decides")


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


# Long on purpose: one check per key of the entry format (ledger/README.md), in its order,
# each with the message a ledger author reads.
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
    named = _selectors(entry)
    for name, selector in named.items():
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
        if name not in named:
            raise ValueError(f"show names {name!r}, which is not one of {sorted(named)}")
    for name in ours_fields(entry.get("ours", "")):
        if name not in named:
            raise ValueError(f"ours names {name!r}, which is not one of {sorted(named)}")
    checks.validate(steps_of(entry), set(named), lecture_numbers(entry))
    if "why" in entry:
        why = entry["why"]
        if not isinstance(why, dict) or set(why) != {"text", "check"}:
            raise ValueError("why must be {text: …, check: [steps]}: a reason and when it holds")
        checks.validate(why["check"], set(named), lecture_numbers(entry))
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
