"""What a job's code is, as hashes: the files it imports whole and the lines it runs.

A recording (record.py) stores these hashes beside its runs, a fingerprint (fingerprint.py)
keys its cache by them, and the workflow passes a job's registry entry and lines as params
(workflow/rules/common.smk): the one definition all three read, below them.
"""

import hashlib
import json
from pathlib import Path

from lecture17.experiments import DEMOS
from lecture17.pipeline.deps import code_parts

# read at parse time, passed to each job as its `registry` param (workflow/rules/common.smk)
REGISTRY_FILE = "src/lecture17/experiments/__init__.py"


def _job_parts(demo: str, root: Path) -> tuple[list[str], dict[str, str]]:
    """deps.code_parts of a demo's job: the files it imports whole, and the lines of the
    experiments modules it runs part of (its function's, and any helper's it imports)."""
    module, function = DEMOS[demo].function.rsplit(".", 1)
    return code_parts(
        f"lecture17.experiments.{module}", function, "lecture17.pipeline.job", root=root
    )


def job_code(demo: str, root: Path = Path(".")) -> list[str]:
    """The code inputs of a demo's jobs: the files they import whole, the registry file left
    out. The experiments modules they run only part of are not among them: those lines are
    the jobs' `code` param (function_code), so that adding or editing another demo of the
    module, or a helper this demo does not use, reruns none of its jobs."""
    return [path for path in _job_parts(demo, root)[0] if path != REGISTRY_FILE]


def registry_entry(demo: str) -> str:
    """The facts of a demo's registry entry that decide what its jobs compute and write."""
    entry = DEMOS[demo]
    return f"{entry.function} timings={','.join(entry.timings)}"


def part_hashes(demo: str, root: Path = Path(".")) -> dict[str, str]:
    """{"<path>::<names>": sha256 of those lines} for the experiments code a demo's jobs run
    only part of: its function's module, and the modules it imports a helper from."""
    parts = _job_parts(demo, root)[1]
    return {key: hashlib.sha256(text.encode()).hexdigest() for key, text in parts.items()}


def function_code(demo: str, root: Path = Path(".")) -> str:
    """One sha256 over part_hashes: the `code` param of a demo's jobs."""
    text = json.dumps(part_hashes(demo, root), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def code_hashes(demo: str, root: Path = Path(".")) -> dict[str, str]:
    hashes = {
        path: hashlib.sha256((Path(root) / path).read_bytes()).hexdigest()
        for path in job_code(demo, root)
    }
    return {**hashes, **part_hashes(demo, root)}
