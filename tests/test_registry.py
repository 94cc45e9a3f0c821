"""The demo registry (lecture17.experiments.DEMOS) is the one list of demos: the config, the
functions, the views, the figures, the ledger, the rules and the README's map all agree with it,
and every fact it declares (kind, timings) is checked against what the demo does."""

import inspect
from dataclasses import replace

import pytest
import yaml
from conftest import ROOT, TEST_CONFIG

from lecture17.experiments import DEMOS, Demo, rules, runnable
from lecture17.pipeline.job import load_demo, run_demo
from lecture17.reporting import figures, ledger
from lecture17.reporting.reference import MAP_BEGIN, MAP_END, demo_map, splice
from lecture17.reporting.report import load_views


def config_demos(path=ROOT / "config" / "config.yaml") -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))["demos"]


ANALYTIC = [d for d, demo in DEMOS.items() if demo.kind == "analytic"]


def test_the_config_runs_exactly_the_registered_demos():
    assert list(config_demos()) == list(runnable())  # and in id order
    assert set(config_demos(TEST_CONFIG)) <= set(runnable())


@pytest.mark.parametrize("demo", list(runnable()))
def test_each_registered_function_follows_the_contract(demo):
    fn = load_demo(demo)
    params = inspect.signature(fn).parameters.values()
    assert all(p.kind is p.KEYWORD_ONLY and p.default is p.empty for p in params)
    takes_device = "device" in inspect.signature(fn).parameters
    assert takes_device == (DEMOS[demo].kind != "analytic"), DEMOS[demo].kind
    spec = config_demos()[demo]
    assert bool(spec.get("grid")) == takes_device
    assert (spec.get("devices") == ["cuda"]) == (DEMOS[demo].kind == "gpu")


def test_every_view_figure_and_claim_names_a_registered_demo():
    views = load_views(ROOT / "report" / "views")
    assert set(views) == set(DEMOS)  # every demo is shown, nothing else is
    for demo, items in views.items():
        for view in items:
            assert str(view.get("table", demo)) == (DEMOS[demo].reads or demo), view["title"]
    for fig in figures.FIGURES.values():  # a figure belongs to a demo and draws a built table
        assert fig.demo in DEMOS and fig.table in runnable(), fig.name
        assert any(v["section"].startswith(f"§{fig.section}") for v in views[fig.demo]), fig.name
    for entry in ledger.load_ledger(ROOT / "report" / "ledger"):
        if ledger._has_values(entry):
            for selector in ledger._selectors(entry).values():
                assert str(selector.get("demo", entry.get("demo"))) in {*DEMOS, "build"}


def test_rules_group_one_module_and_kind_and_keep_their_names():
    # the rule names are part of the interface (--forcerun, benchmarks/<rule>/, the SLURM
    # profile's per-rule resources): renaming a function must not rename its rule
    names = {name: [d.id for d in demos] for name, demos in rules().items()}
    assert names == {
        "self_attention": ["01.1", "01.2", "01.3", "01.4", "01.5"],
        "scaling_multihead": ["02.1", "02.2", "02.4", "02.5"],
        "lookup_task": ["02.3"],
        "positional_encoding": ["03.1", "03.2", "03.3", "03.4"],
        "pe_ablation": ["03.5"],
        "layers": ["04.1", "04.2", "04.4", "04.5", "04.6"],
        "post_vs_pre_ln": ["04.3"],
        "reversal_comparison": ["05.1"],  # it keeps its models (read by 06.6): its own rule
        "transformer_vs_rnn": ["05.3", "05.4"],
        "beyond": ["06.1", "06.2", "06.4", "06.5"],
        "gpu_step_time": ["06.3"],
        "beam_search_study": ["06.6"],
        "length_extrapolation": ["06.7"],
        "head_study": ["06.8"],
        "robustness_lookup": ["07.1", "07.2"],
        "robustness_pe": ["07.3"],
        "robustness_layers": ["07.4"],
        "robustness_seq2seq": ["07.5", "07.6", "07.7", "07.8"],
        "robustness_extrapolation": ["07.9"],
        "robustness_heads": ["09.1"],
        "exercise_runs_seq2seq": ["08.1"],
        "exercise_runs_pe": ["08.2", "08.3"],
        "exercises": ["13.1"],
    }
    profile = yaml.safe_load((ROOT / "workflow/profiles/slurm/config.yaml").read_text())
    measured = {
        name for name, demos in rules().items() if demos[0].kind != "gpu"
    }  # GPU: in the rule
    assert measured <= set(profile["set-resources"]), "run `make slurm-profile`"
    mixed = replace(DEMOS["02.3"], rule="scaling_multihead")
    with pytest.raises(ValueError, match="mix modules, kinds"):
        rules([*runnable().values(), mixed])
    # a demo that keeps its models writes an output its rule's other demos do not
    keeping = replace(DEMOS["05.3"], keeps_models=True)
    with pytest.raises(ValueError, match="kept / read models"):
        rules([DEMOS["05.4"], keeping])


def test_a_registry_entry_is_checked():
    with pytest.raises(ValueError, match="kind"):
        Demo("09.1", "m.f", "§9", "t", kind="trained")
    with pytest.raises(ValueError, match="names the demo it reads"):
        Demo("09.2", "", "§9", "t", kind="view")
    assert Demo("09.3", "m.f", "§9", "t", kind="training").rule == "f"
    assert Demo("09.4", "m.f", "§9", "t").rule == "m"


def timing_problems(demo: str, quantities) -> list[str]:
    """What is wrong with a demo's declared timings, given the quantities one run returned: a
    declared one it never returns (a typo), or an undeclared one named like a timing (`ms`,
    `ms_…`), which would land in the CSV that must be byte-identical between builds."""
    declared, returned = set(DEMOS[demo].timings), set(quantities)
    problems = [f"declared, never returned: {q}" for q in sorted(declared - returned)]
    looks_timed = {q for q in returned if q == "ms" or q.startswith("ms_")}
    problems += [f"named like a timing, not declared: {q}" for q in sorted(looks_timed - declared)]
    return problems


@pytest.mark.parametrize("demo", ANALYTIC)
def test_declared_timings_are_what_the_demo_measures(demo):
    spec = config_demos(TEST_CONFIG).get(demo) or config_demos()[demo]  # small sizes if any
    table = run_demo(demo, spec["settings"], spec["seeds"][0])
    assert timing_problems(demo, table["quantity"]) == []


def test_a_timing_typo_or_an_undeclared_timing_is_caught():
    returned = ["ms_per_layer", "ms_growth_per_doubling", "flops", "mse_loss"]
    assert timing_problems("01.5", returned) == []  # mse_loss is no timing
    assert timing_problems("01.5", ["ms_per_layer", "flops"]) == [
        "declared, never returned: ms_growth_per_doubling"
    ]
    assert timing_problems("01.4", ["sensitivity", "ms_forward"]) == [
        "named like a timing, not declared: ms_forward"
    ]


def test_a_quantity_named_ms_is_not_a_timing_unless_declared(tmp_path):
    import pandas as pd

    from lecture17.pipeline.csvio import timing_path, write_with_timing

    table = pd.DataFrame({"quantity": ["mse_loss", "ms_per_step"], "value": [0.5, 3.0]})
    write_with_timing(table, tmp_path / "seed0.csv", ("ms_per_step",))
    assert list(pd.read_csv(tmp_path / "seed0.csv")["quantity"]) == ["mse_loss"]
    assert list(pd.read_csv(timing_path(tmp_path / "seed0.csv"))["quantity"]) == ["ms_per_step"]


def test_the_readme_demo_map_is_generated_from_the_registry():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert splice(readme, demo_map(), MAP_BEGIN, MAP_END) == readme, (
        "README's demo map is stale: run `make reference`"
    )
    for demo in DEMOS:
        assert demo in demo_map()
