"""The ledger (report/ledger.yaml) against the code that produces its numbers.

Two kinds of checks, neither needs a build:
- the ledger itself: it loads, ids are unique, classes and flags are valid, every entry names a
  demo that exists and has the fields its class needs;
- the lecture's digits: the deterministic demos run here for seed 0 (a few seconds), go through
  the same CSV → seed-aggregation path as the pipeline, and every `exact` and `precision` entry
  of those demos must agree with the lecture. This is what makes the ledger's digits a test.
Seeded and timing entries are only checked to select existing rows: one seed decides nothing.
"""

from functools import cache
from pathlib import Path

import pytest
import yaml

from lecture17 import ledger
from lecture17.aggregate import aggregate, read_runs
from lecture17.csvio import write_csv
from lecture17.experiments import DEMOS
from lecture17.report import load_views
from lecture17.run import run_demo

ROOT = Path(__file__).resolve().parents[1]
LEDGER = ROOT / "report" / "ledger.yaml"
FLAGS = {f"F{i:02d}" for i in range(1, 11)}  # the reading aid's flags F01–F10
# The demos that run in seconds (no training). The training demos (02.3, 03.5, 04.3, 05.x)
# are checked by the build, not here.
FAST_DEMOS = [
    "01.1",
    "01.2",
    "01.3",
    "01.4",
    "01.5",
    "02.1",
    "02.2",
    "02.4",
    "02.5",
    "03.1",
    "03.2",
    "03.3",
    "03.4",
    "04.1",
    "04.2",
    "04.4",
    "04.5",
    "04.6",
    "13.1",
]
SELECTOR_KEYS = {"demo", "quantity", "where", "stat"}


@cache
def entries() -> list[dict]:
    return ledger.load_ledger(LEDGER)


@cache
def config() -> dict:
    with open(ROOT / "config" / "config.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)["demos"]


def selectors(entry: dict) -> dict:
    if "values" in entry:
        return entry["values"]
    return {"ours": entry["value"]} if "value" in entry else {}


def demos_of(entry: dict) -> set[str]:
    return {str(sel.get("demo", entry.get("demo"))) for sel in selectors(entry).values()}


# -------------------------------------------------------------------------------------------
# The ledger itself


def test_ledger_loads_with_unique_ids_and_valid_classes():
    loaded = entries()  # load_ledger rejects unknown keys, unknown classes and repeated ids
    assert loaded, "the ledger is empty"
    ids = [e["id"] for e in loaded]
    assert len(ids) == len(set(ids))
    assert {e["class"] for e in loaded} <= set(ledger.CLASSES)


@pytest.mark.parametrize("entry", entries(), ids=lambda e: e["id"])
def test_entry_has_the_fields_its_class_needs(entry):
    for key in ("claim", "lecture", "section"):
        assert str(entry.get(key, "")).strip(), f"{entry['id']}: no {key}"
    assert entry["section"].startswith(("§", "Ex")), entry["section"]
    if "flag" in entry:
        assert entry["flag"] in FLAGS and entry.get("note"), f"{entry['id']}: flag without note"
    if "demo" in entry:  # a demo that runs, or one the report shows from another's table (05.2)
        known = set(DEMOS) | set(load_views(ROOT / "report" / "views"))
        assert entry["demo"] in known, f"{entry['id']}: unknown demo {entry['demo']}"
    if entry["class"] == "cited":
        assert not {"value", "values", "holds", "show", "fmt", "bound"} & set(entry)
        return
    assert "demo" in entry, f"{entry['id']}: a computed claim names its demo"
    assert ("value" in entry) != ("values" in entry), "exactly one of value / values"
    for sel in selectors(entry).values():
        assert set(sel) <= SELECTOR_KEYS and "quantity" in sel, sel
        assert sel.get("stat", "mean") in ("mean", "min", "max"), sel
    assert demos_of(entry) <= set(DEMOS)
    if "show" in entry:  # a name, or an expression over the names
        names = set(selectors(entry))
        assert entry["show"] in names or any(n in entry["show"] for n in names), entry["show"]
    if entry["class"] in ("seeded", "timing"):
        assert entry.get("holds"), f"{entry['id']}: a {entry['class']} claim needs `holds`"
    if entry["class"] == "exact" and "holds" not in entry:
        assert "fmt" in entry, f"{entry['id']}: exact digits need the lecture's `fmt`"
    if entry["class"] == "precision":
        assert "holds" not in entry
        assert float(entry.get("bound", ledger.DEFAULT_BOUND)) <= 1e-12


def test_entries_follow_the_lecture_and_exercises_come_last():
    sections = [e["section"] for e in entries()]
    first_exercise = next(i for i, s in enumerate(sections) if s.startswith("Ex"))
    assert all(s.startswith("Ex") for s in sections[first_exercise:])


# -------------------------------------------------------------------------------------------
# The lecture's digits, from the code


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict:
    """Seed-0 tables of the fast demos, through the pipeline's CSV and aggregation code."""
    folder = tmp_path_factory.mktemp("ledger_runs")
    built = {}
    for demo in FAST_DEMOS:
        seed = config()[demo]["seeds"][0]
        path = folder / f"{demo}_seed{seed}.csv"
        write_csv(run_demo(demo, config()[demo]["settings"], seed), path)
        built[demo] = aggregate(read_runs([path]))
    return built


def checked(classes: tuple[str, ...]) -> list[dict]:
    return [e for e in entries() if e["class"] in classes and demos_of(e) <= set(FAST_DEMOS)]


@pytest.mark.parametrize(
    "entry", [e for e in checked(("exact",)) if "holds" not in e], ids=lambda e: e["id"]
)
def test_a_changed_digit_is_caught(entry, tables):
    """The digit comparison is not vacuous: one more digit in the lecture's value differs."""
    assert ledger.evaluate({**entry, "lecture": f"{entry['lecture']}9"}, tables).status == "differs"


@pytest.mark.parametrize(
    "entry", checked(("exact", "precision")), ids=lambda e: f"{e['id']}-{e['class']}"
)
def test_exact_and_precision_claims_agree_with_the_lecture(entry, tables):
    outcome = ledger.evaluate(entry, tables)
    if entry.get("expect") == "differs":  # the lecture's own error (e.g. F02): it must still differ
        assert outcome.status == "differs", f"{entry['id']} now agrees: drop its `expect`"
        return
    assert outcome.status in ("same", "precision"), (
        f"{entry['id']} ({entry['section']}): lecture {entry['lecture']!r}, "
        f"ours {outcome.ours!r}: {outcome.status} {outcome.reason}"
    )


@pytest.mark.parametrize("entry", checked(("seeded", "timing")), ids=lambda e: e["id"])
def test_seeded_and_timing_selectors_name_rows(entry, tables):
    outcome = ledger.evaluate(entry, tables)  # raises if a selector names no row
    assert outcome.status in ledger.STATUS and outcome.status != "missing"
    assert outcome.ours
