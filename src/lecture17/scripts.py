"""The lecture's five scripts (scripts/01_self_attention.py … 05_transformer_vs_rnn.py), run
without Snakemake, and the exercises' edits they carry.

The lecture tells students to run `03_positional_encoding.py` and to edit
`05_transformer_vs_rnn.py` (exercise 8: STEPS = 1500, LENGTHS = [32]). Each script is a thin
entry point: its top holds the settings an exercise edits, as constants that are None (the
config's value, config/config.yaml, the one place of every setting) until a student sets them,
and an EDITS dict that says which setting of which demo each constant replaces:

    STEPS = None  # 05.1's training steps (config: 500, §9.1); exercise 8: 1500
    EDITS = {"05.1": {"settings.train.steps": STEPS}}

Running the script runs its demos' jobs with those edits (run_script) and prints each demo's
tables as the report lays them out. The workflow applies the same edits to the config it
builds from (workflow/rules/common.smk: script_edits, apply_edits), so an exercise done as the
lecture says also changes what `snakemake` builds: exactly the edited demo's jobs rerun, and
a demo that reads its kept models (06.6 reads 05.1's) follows the edit.
"""

import copy
import runpy
import sys
import tempfile
from pathlib import Path

from lecture17.experiments import DEMOS, SCRIPTS
from lecture17.pipeline import yamlio

SCRIPT_FOLDER = "scripts"


def script_path(script: str, root: Path = Path(".")) -> Path:
    """scripts/<script>_<its experiments module>.py, e.g. scripts/05_transformer_vs_rnn.py."""
    modules = [d.module for d in DEMOS.values() if d.script == script and d.function]
    if script not in SCRIPTS or not modules:
        raise ValueError(f"unknown lecture script {script!r}; expected one of {lecture_scripts()}")
    return Path(root, SCRIPT_FOLDER, f"{script}_{modules[0]}.py")


def lecture_scripts() -> list[str]:
    """The lecture's own scripts: those whose demos are the lecture's (01–05)."""
    return [s for s in SCRIPTS if s <= "05"]


def edits_of(path: Path) -> dict[str, dict]:
    """A script's EDITS, the constants left at None dropped: {demo: {key: value}}."""
    namespace = runpy.run_path(str(path), run_name="lecture17.scripts.edits")
    edits = namespace.get("EDITS", {})
    return {
        demo: {key: value for key, value in keys.items() if value is not None}
        for demo, keys in edits.items()
        if any(value is not None for value in keys.values())
    }


def script_edits(root: Path = Path(".")) -> dict[str, dict]:
    """Every lecture script's edits (what a student changed at the top of a script)."""
    found = {}
    for script in lecture_scripts():
        path = script_path(script, root)
        if path.exists():
            found.update(edits_of(path))
    return found


def apply_edits(demos: dict, edits: dict[str, dict]) -> dict:
    """The config's `demos` with the edits made: "settings.train.steps" sets
    demos[demo]["settings"]["train"]["steps"], "grid.seq_len" a grid key's values. A demo that
    reads the edited demo's kept models gets the same edit (the models must be the ones it
    reads). An edit of a demo or a key the config does not have is a ValueError."""
    # one copy per demo: YAML anchors (`train: *train_05`) share one dict between demos
    demos = {demo: copy.deepcopy(spec) for demo, spec in demos.items()}
    for demo, keys in edits.items():
        if demo not in demos:
            raise ValueError(f"an edit names demo {demo!r}, which the config does not run")
        readers = [d for d in demos if DEMOS[d].reads_models == demo]
        for key, value in keys.items():
            for target in [demo, *readers]:
                _set(demos[target], key, value, f"demos[{target!r}]")
    return demos


def _set(block: dict, key: str, value, where: str) -> None:
    *path, last = key.split(".")
    if not path or path[0] not in ("settings", "grid"):
        raise ValueError(f"edit {key!r}: expected settings.<name> or grid.<name>")
    for part in path:
        if not isinstance(block.get(part), dict):
            raise ValueError(f"edit {key!r}: {where} has no {part!r}")
        block = block[part]
    if last not in block:
        raise ValueError(f"edit {key!r}: {where} has no {last!r} there")
    block[last] = value


def run_script(script: str, config_path: Path = Path("config/config.yaml")) -> int:
    """Run one lecture script's demos, every grid point and seed, with its edits, on the CPU,
    and print their tables. No Snakemake: nothing is kept but what is printed."""
    from lecture17.pipeline.aggregate import aggregate, read_runs
    from lecture17.pipeline.csvio import write_csv
    from lecture17.pipeline.job import check_demo, jobs
    from lecture17.reporting.views import as_text, load_views, render_view

    with open(config_path, encoding="utf-8") as f:
        demos = yamlio.load(f)["demos"]
    path = script_path(script)
    edits = edits_of(path)
    demos = apply_edits(demos, edits)
    views = load_views(Path("report/views"))
    chosen = [
        d
        for d, entry in DEMOS.items()
        if entry.script == script and d in demos and "cpu" in demos[d].get("devices", ["cpu"])
    ]
    print(f"代码 {script} {SCRIPTS[script]}（{path}）", flush=True)
    for demo, keys in edits.items():
        print(f"  练习的改动 edits: {demo} {keys}")
    with tempfile.TemporaryDirectory() as work:
        for demo in chosen:
            spec = demos[demo]
            check_demo(demo, spec, "cpu")
            settings = {**spec["settings"], **({"device": "cpu"} if spec.get("grid") else {})}
            runs = []
            for csv, point, seed in jobs(demo, spec, work):
                print(f"  {demo} {point or ''} seed {seed} …", file=sys.stderr, flush=True)
                Path(csv).parent.mkdir(parents=True, exist_ok=True)
                write_csv(_run_one(demo, settings, seed, point, Path(csv), work), Path(csv))
                runs.append(Path(csv))
            table = aggregate(read_runs(runs))
            for view in [v for d in views for v in views[d] if str(v.get("table", d)) == demo]:
                print(f"\n{view['title']}  ({view.get('section', '')})")
                print(as_text(render_view(table, view)))
    return 0


def _run_one(demo: str, settings: dict, seed: int, point: dict, csv: Path, work: str):
    """One job of a script run: a demo that keeps its models (05.1) writes them beside its CSV,
    and one that reads them (05.5) gets those of the same grid point and seed, so the script
    trains each model once (trained again only where the keeping demo did not run)."""
    from lecture17.experiments import kept_models
    from lecture17.pipeline.job import grid_folder, run_demo

    source = DEMOS[demo].reads_models
    kept = Path(work, source, grid_folder(point), f"seed{seed}.csv") if source else None
    models = kept_models.models_path(kept) if kept else None
    models = models if models and models.is_file() else None
    if not DEMOS[demo].keeps_models:
        return run_demo(demo, settings, seed, point, models)
    with kept_models.keeping() as kept_list:
        table = run_demo(demo, settings, seed, point, models)
    kept_models.save(kept_list, kept_models.models_path(csv))
    return table
