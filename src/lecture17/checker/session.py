"""One check of a student's file: load it, try each block's properties, rerun the demos.

Three stages, each in forked children (child.py), so that a crash or a hang is a message:
1. load the file and read which of the lecture's blocks it defines, and with what signature;
2. per block: does it run (a template's NotImplementedError means "not written yet"), which
   conventions it follows (checker/conventions.py), and its properties, smallest input first;
3. per analytic demo that reaches a replaced block (callmap): its jobs, as the build runs them
   (pipeline.job.run_job, the reference build's settings and seeds), with the student's blocks
   swapped in (blocks.install), aggregated as the build aggregates them, into a scratch folder.
Demos whose purpose is a timing (the registry's `alone`: 01.5, 06.1, 06.2) do not run: a
correct but slow block is never flagged.
"""

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lecture17.checker import blocks as blocks_mod
from lecture17.checker import child, conventions
from lecture17.checker import properties as props
from lecture17.experiments import DEMOS
from lecture17.pipeline import callmap


@dataclass
class BlockResult:
    name: str
    problem: str = ""  # a signature that cannot be the lecture's block
    implemented: bool = True  # False: every call raised NotImplementedError (the template)
    conventions: list = field(default_factory=list)  # conventions.Convention
    failed: dict = field(default_factory=dict)  # property id -> (size, what was seen)
    held: list = field(default_factory=list)  # property ids that held on every size
    failure: child.Failure | None = None  # a crash or a hang while its properties ran
    probe: list | None = None  # its outputs on fixed inputs (properties.probe), as written
    dtypes: list = field(default_factory=list)  # the float dtypes it returns on them


@dataclass
class DemoResult:
    demo: str
    ran: bool = False
    failure: child.Failure | None = None
    calls: dict = field(default_factory=dict)  # block -> calls that ran the student's code
    fallbacks: dict = field(default_factory=dict)  # block -> {why: calls run by the reference}


def _student_blocks(module) -> dict:
    """{block name: function} that the file itself defines (an imported reference is not)."""
    found = {}
    for name in blocks_mod.BLOCKS:
        fn = getattr(module, name, None)
        if callable(fn) and getattr(fn, "__module__", None) == module.__name__:
            found[name] = fn
    return found


def inspect_file(path: Path) -> dict:
    """Stage 1 (in a child): {block: signature problem or ""}."""
    module = child.load_student(path)
    return {
        name: blocks_mod.signature_problem(name, fn) for name, fn in _student_blocks(module).items()
    }


def _swap(module, name, adapter=None, check_shapes=True):
    return blocks_mod.Swap(
        name, _student_blocks(module)[name], adapt=adapter, check_shapes=check_shapes
    )


def block_properties(path: Path, name: str) -> BlockResult:
    """Stage 2 for one block (in a child)."""
    module = child.load_student(path)
    result = BlockResult(name)
    raw = _swap(module, name, check_shapes=False)
    found = conventions.conventions(name, raw.student)
    result.conventions = [c for c, _ in found]
    adapters = [a for _, a in found if a is not None]
    result.probe = props.probe(name, raw)
    if raw.fallbacks:  # some probe inputs ran the reference (an argument it lacks): no cause
        result.probe = None  # can be shown on them
    result.dtypes = props.probe_dtypes(name, raw)
    swap = _swap(module, name, _chain(adapters))
    tried = False  # a property ran the student's code: NotImplementedError after is a finding
    for prop in props.of(name):
        for size in prop.sizes:
            try:
                seen = prop.check(_strict(swap), size)
                tried = True
            except NotImplementedError:
                if not tried:  # the template's body: the block is not written yet
                    result.implemented = False
                    return result
                seen = "NotImplementedError：这个输入上还没写（讲义的积木在这里有定义）"
            except (blocks_mod.WrongShape, blocks_mod.MissingArgument) as error:
                seen = str(error)
            except BaseException as error:  # noqa: BLE001 - whatever the student's block raises
                failure = child.where(error, path, "crash")
                seen = f"崩溃 crashed: {failure.text}" + (
                    f"（{failure.place}：{failure.source.strip()}）" if failure.line else ""
                )
            if seen:
                result.failed[prop.id] = (size, seen)
                break
        else:
            result.held.append(prop.id)
    return result


def _chain(adapters):
    """One adapter from several (a block in two conventions): the first is outermost."""
    if not adapters:
        return None
    if len(adapters) == 1:
        return adapters[0]
    first, rest = adapters[0], _chain(adapters[1:])

    def adapt(student, pos, kw):
        return first(lambda *p, **k: rest(student, p, k), pos, kw)

    return adapt


def _strict(swap):
    """The swap, but a call that would run the reference raises NotImplementedError instead:
    a property must test the student's code, or say that it could not."""

    def call(*args, **kwargs):
        before = dict(swap.fallbacks)
        result = swap(*args, **kwargs)
        new = [why for why, n in swap.fallbacks.items() if n != before.get(why, 0)]
        if "NotImplementedError" in new:
            raise NotImplementedError
        if new:  # an argument the student's function does not take: the lecture's block does
            raise blocks_mod.MissingArgument(
                f"你的 {swap.name} 不接受{new[0]}（讲义的有），这条性质在你的函数上测不了"
            )
        return result

    call.swap = swap  # what a property reads of the calls (blocks.Swap.mutated)
    return call


def run_demo(path: Path, demo: str, spec: dict, scratch: Path, swaps_for: dict) -> dict:
    """Stage 3 for one demo (in a child): its jobs with the student's blocks swapped in."""
    import sys

    from lecture17.pipeline.job import jobs, run_job

    module = child.load_student(path)
    swaps = {name: _swap(module, name, _chain(adapters)) for name, adapters in swaps_for.items()}
    modules = [m for key, m in sys.modules.items() if key.startswith("lecture17.experiments")]
    blocks_mod.install(swaps, modules)
    try:
        for out, point, seed in jobs(demo, spec, str(scratch / "runs")):
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            run_job(demo, spec["settings"], seed, point, Path(out))
    except blocks_mod.WrongShape as error:
        raise child.StudentError(child.where(error, path, "shape")) from None
    except BaseException as error:  # noqa: BLE001 - whatever the student's code raises
        raise child.StudentError(child.where(error, path, "crash")) from None
    return {
        "calls": {n: s.calls for n, s in swaps.items()},
        "fallbacks": {n: dict(s.fallbacks) for n, s in swaps.items()},
    }


def aggregate_demo(demo: str, scratch: Path) -> Path:
    """The demo's table, as the build's aggregate rule writes it."""
    from lecture17.pipeline.aggregate import aggregate, read_runs
    from lecture17.pipeline.csvio import write_with_timing

    runs = sorted((scratch / "runs" / demo).glob("**/seed*.csv"))
    stable = [p for p in runs if not p.name.endswith(".timing.csv")]
    timed = [p for p in runs if p.name.endswith(".timing.csv")]
    timings = set(read_runs(timed)["quantity"]) if timed else set()
    out = scratch / "tables" / f"{demo}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_with_timing(aggregate(read_runs(stable + timed)), out, timings)
    return out


def analytic_demos(replaced, config_demos: dict) -> list[str]:
    """The demos to rerun: analytic, not a timing's, configured, reaching a replaced block."""
    candidates = [
        d
        for d, demo in DEMOS.items()
        if demo.kind == "analytic" and not demo.alone and d in config_demos
    ]
    return callmap.demos_reaching(replaced, candidates)


def preload(demos) -> None:
    """Import what the demos import lazily (torch), once, before the children fork."""
    import importlib

    for demo in demos:
        module = DEMOS[demo].function.rsplit(".", 1)[0]
        importlib.import_module(f"lecture17.experiments.{module}")
    if demos:  # most of them compare with PyTorch: import it once, not in every child
        import torch

        torch.set_num_threads(1)


class Scratch:
    """A temporary folder for the demos' runs and tables, removed afterwards."""

    def __enter__(self) -> Path:
        self.path = Path(tempfile.mkdtemp(prefix="lecture17-check-"))
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)
