"""`python -m lecture17 check FILE.py --trained`: a student's torch classes against the lecture.

What a student class must provide (the template's second half says the same):

    MultiHeadAttention(d_model, n_heads)          forward(query, key, value, mask=None)
        -> output (b, n_q, d_model), or (output, weights (b, h, n_q, n_k))
    EncoderLayer(d_model, n_heads, d_ff, norm_first=False)          forward(x, mask=None)
    DecoderLayer(d_model, n_heads, d_ff, norm_first=False)
        forward(x, memory, self_mask=None, memory_mask=None): applies the look-ahead mask itself

Masks as the lecture's: 1/True = may attend, broadcastable to (b, h, n_q, n_k). A constructor
may take `scale` too (exercise 9 builds layers without 1/sqrt(d_k)); one that does not gets
the reference for those layers. Positions (RoPE, ALiBi), the KV cache's K, V and
`load_from_torch` are beyond what a student writes: they run the reference (checker/adapters).
Nothing else of a student class is read: no attribute (`self_attn`, `d_k`, `out_proj`) and no
weight name. A job that needs the reference's internals keeps the control's numbers, and the
summary counts it: `load_from_torch` (the reference's weight layout) and 09.1's head ablation
(it zeroes heads before the reference's W^O).

Two parts:
1. the classes' properties, weight-agnostic, at float64, in seconds (forked children, as the
   numpy blocks'): shapes, weights that sum to 1, order-free keys, the mask kept, causality,
   padding that changes nothing;
2. the trained demos that reach the classes, rebuilt on the reduced protocol of `make mutants`
   and judged against its cached control (mutants/student.py, in a subprocess: the campaign's
   code lives beside src/, in the checkout). It prints the expected time before it starts and
   a progress bar while it runs. Not counted, and said: claims the control cannot decide or
   decides otherwise than the full build, claims on attention weights that a student's layer
   keeps inside it (the demos read the reference's blocks), and a flip that one seed decides
   (with that seed left out the claim keeps the control's verdict: a correct class trains
   another sample, and samples have lagging seeds).
"""

import inspect
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lecture17.checker import child
from lecture17.checker.torch_properties import build, class_properties

SIGNATURES = {
    "MultiHeadAttention": (("d_model", "n_heads"), ("query", "key", "value", "mask")),
    "EncoderLayer": (("d_model", "n_heads", "d_ff"), ("x", "mask")),
    "DecoderLayer": (("d_model", "n_heads", "d_ff"), ("x", "memory")),
}
SECTIONS = {"MultiHeadAttention": "§5.2", "EncoderLayer": "§7.1", "DecoderLayer": "§8.2"}


@dataclass
class TrainedReport:
    path: Path
    status: int = 0
    load_failure: child.Failure | None = None
    problems: dict = field(default_factory=dict)  # class -> what is wrong with its signature
    classes: list = field(default_factory=list)
    properties: list = field(default_factory=list)  # Property
    failures: dict = field(default_factory=dict)  # class -> child.Failure (a crash, a hang)
    build: dict = field(default_factory=dict)  # mutants/student.py's result


def _positional(fn, count: int) -> bool:
    """Whether fn takes `count` positional arguments (after self)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    return len(required) <= count <= len(positional)


def inspect_classes(path: Path) -> dict[str, str]:
    """In a child: {class name: "" or what is wrong} for the lecture's classes the file
    defines."""
    from torch import nn

    module = child.load_student(path)
    found = {}
    for name, (init_args, forward_args) in SIGNATURES.items():
        cls = getattr(module, name, None)
        if not isinstance(cls, type):
            continue
        if not issubclass(cls, nn.Module):
            found[name] = f"{name} 要是 torch.nn.Module 的子类 must subclass nn.Module"
        elif not _positional(cls.__init__, len(init_args) + 1):
            found[name] = f"{name}({', '.join(init_args)}) 的构造函数 constructor 不接受这些参数"
        elif not _positional(cls.forward, len(forward_args) + 1):
            found[name] = f"{name}.forward({', '.join(forward_args)}) 不接受这些参数"
        elif _not_written(cls, name):
            continue  # the template's NotImplementedError: the reference's
        else:
            found[name] = ""
    return found


def _not_written(cls, name: str) -> bool:
    """Whether building the class raises NotImplementedError (the template left as it is)."""
    try:
        build(cls, name)
    except NotImplementedError:
        return True
    except Exception:  # noqa: BLE001 - a crash is the properties' to report
        return False
    return False


def check_classes(path: Path, timeout: float = 60.0) -> TrainedReport:
    """Part 1: load, signatures, properties. status 2 unusable, 3 no class, 1 a property
    fails or a class crashes, 0 otherwise (so far)."""
    report = TrainedReport(Path(path))
    status, found = child.run(inspect_classes, Path(path), timeout=timeout)
    if status == "failed":
        report.load_failure, report.status = found, 2
        return report
    report.problems = {n: p for n, p in found.items() if p}
    report.classes = [n for n, p in found.items() if not p]
    if report.problems:
        report.status = 2
        return report
    if not report.classes:
        report.status = 3
        return report
    calls = [(class_properties, (Path(path), name)) for name in report.classes]
    for name, (status, value) in zip(
        report.classes, child.run_many(calls, timeout, 2), strict=True
    ):
        if status == "failed":
            report.failures[name] = value
        else:
            report.properties += value
    if report.failures or any(not p.ok for p in report.properties):
        report.status = 1
    return report


def run_build(report: TrainedReport, cores: int, root: Path) -> TrainedReport:
    """Part 2, in a subprocess of the checkout (python -m mutants.student)."""
    out = Path(tempfile.mkdtemp(prefix="lecture17-trained-")) / "result.json"
    command = [sys.executable, "-m", "mutants.student", str(report.path.resolve())]
    command += ["--json", str(out), "--cores", str(cores), "--classes", *report.classes]
    done = subprocess.run(command, cwd=root)
    if done.returncode != 0 or not out.is_file():
        report.build = {"failed": True, "log": f"python -m mutants.student exit {done.returncode}"}
    else:
        report.build = json.loads(out.read_text(encoding="utf-8"))
    if report.build.get("failed") or report.build.get("flips"):
        report.status = max(report.status, 1)
    return report


def lines(report: TrainedReport) -> list[str]:
    """The terminal summary, in Chinese."""
    out = [f"检查 check --trained：{report.path}"]
    if report.load_failure:
        f = report.load_failure
        return out + [f"文件载入失败 does not load（第 {f.line} 行）：{f.text}"]
    for name, problem in report.problems.items():
        out.append(f"✗ {name}：{problem}（讲义的签名见 --template）")
    if report.status == 3:
        return out + ["没有找到 MultiHeadAttention、EncoderLayer 或 DecoderLayer：没有替换任何类"]
    out += _class_lines(report)
    if not report.build:
        return out
    return out + [""] + _build_lines(report.build)


def _class_lines(report: TrainedReport) -> list[str]:
    """Part 1 of the summary: each class, its crash if any, its properties."""
    out = []
    for name in report.classes:
        out.append(f"\n{SECTIONS[name]} {name}")
        if name in report.failures:
            f = report.failures[name]
            out.append(f"  ✗ 运行出错 {f.kind}（第 {f.line} 行）：{f.text}")
        for p in (p for p in report.properties if p.cls == name):
            detail = "" if p.ok or not p.detail else f"：{p.detail}"
            out.append(f"  {'✓' if p.ok else '✗'} {p.name}{detail}")
    return out


def _build_lines(b: dict) -> list[str]:
    """Part 2 of the summary: the trained demos' build (`report.build`)."""
    if b.get("failed"):
        return [
            "✗ 训练的演示构建失败 the trained demos' build failed:",
            b.get("log", "")[-1500:],
        ]
    out = [
        "训练的演示 trained demos（缩短的协议 reduced protocol，200 步）："
        f"重跑 {len(b.get('rerun', []))} 个作业，用时 {b.get('seconds', 0):.0f} s"
        f"（预计 {b.get('estimate_s')} s）"
    ]
    if b.get("reference"):
        out.append(
            f"  {len(b['reference'])} 个作业用参考实现（它们读参考的内部：load_from_torch、"
            "09.1 的去掉注意力头 head ablation）：数字是对照的"
        )
    for row in b.get("flips", []):
        out.append(
            f"  ✗ {row['id']} {row['section']}「{row['text'][:60]}」 讲义 {row['lecture']} · "
            f"参考 {row['reference_value']}（{row['reference_status']}）· "
            f"你的 {row['student_value']}（{row['student_status']}）"
        )
    if not b.get("flips"):
        out.append("  ✓ 没有一条计入的结论改变 no counted claim changed")
    if b.get("excluded_flips"):
        words = {
            "blind": "对照定不了",
            "short": "200 步时还看不出",
            "hidden": "注意力权重在你的层里面，演示拿不到",
            "one_seed": "只差一个种子：正确的实现也会有落后的种子",
        }
        said = ", ".join(f"{c}（{words[k]}）" for c, k in b["excluded_flips"].items())
        out.append(f"  不判 not judged: {said}")
    if b.get("noise_flips"):
        out.append(f"  换一台 CPU 也会变，不算 resampling: {', '.join(b['noise_flips'])}")
    if b.get("cells"):
        out.append(
            f"  {len(b['cells'])} 个数字超出种子间的差异 beyond seed variation"
            f"（见 {b.get('folder')}/mutants-diff.txt）"
        )
    return out


def as_json(report: TrainedReport) -> str:
    data = {
        "file": str(report.path),
        "status": report.status,
        "load_failure": report.load_failure.__dict__ if report.load_failure else None,
        "problems": report.problems,
        "classes": report.classes,
        "properties": [p.__dict__ for p in report.properties],
        "failures": {n: f.__dict__ for n, f in report.failures.items()},
        "build": report.build,
    }
    return json.dumps(data, ensure_ascii=False, indent=1)
