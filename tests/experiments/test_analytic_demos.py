"""What every analytic demo of the registry (kind "analytic": no training, one job per seed)
must satisfy, with its settings from config/config.yaml: the contract (docs/ARCHITECTURE.md), the
same table from the same seed, and report views that find their rows in the demo's table.

What each demo shows is tested against the lecture in its module's file (test_self_attention.py,
test_scaling_multihead.py, test_positional_encoding.py, test_layers.py, test_beyond.py).
"""

import inspect
from functools import cache

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from demos import config, run, untimed

from lecture17.experiments import DEMOS
from lecture17.pipeline.aggregate import aggregate, read_runs
from lecture17.pipeline.csvio import write_csv
from lecture17.pipeline.job import check_settings, load_demo
from lecture17.reporting.views import load_views, render_view

ANALYTIC = [d for d, demo in DEMOS.items() if demo.kind == "analytic"]


@cache
def returned(demo: str) -> pd.DataFrame:
    """The table the demo function itself returns (seed 0), before pipeline.job touches it."""
    return load_demo(demo)(**config()[demo]["settings"], seed=0)


@pytest.mark.parametrize("demo", ANALYTIC)
def test_demo_follows_the_contract(demo):
    fn = load_demo(demo)
    params = inspect.signature(fn).parameters.values()
    assert all(p.kind is p.KEYWORD_ONLY and p.default is p.empty for p in params)
    check_settings(fn, config()[demo]["settings"])  # config = signature, nothing more or less
    table = returned(demo)
    assert list(table.columns[-2:]) == ["quantity", "value"]
    assert table["value"].dtype == np.float64
    assert table["quantity"].str.fullmatch(r"[a-z][a-z0-9_]*").all()


@pytest.mark.parametrize("demo", ANALYTIC)
def test_seeded_demo_is_deterministic(demo):
    """Two runs with seed 0 (the function's own, and pipeline.job's): the same table."""
    again = run(demo).drop(columns=["demo", "seed"])  # what run_demo adds to the function's
    pd.testing.assert_frame_equal(untimed(demo, returned(demo)), untimed(demo, again))


@pytest.mark.parametrize("demo", ANALYTIC)
def test_every_view_selects_rows(demo, tmp_path):
    path = tmp_path / "seed0.csv"
    write_csv(run(demo), path)
    table = aggregate(read_runs([path]))
    views = load_views(ROOT / "report" / "views")[demo]
    assert views
    for view in views:
        rendered = render_view(table, view)
        assert "—" not in rendered, f"{view['title']}: empty cells"
