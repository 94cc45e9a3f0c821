"""What a claim's values are called: each selector named in the words of the report's views
(its quantity, labels, seed statistic and reduction), for a check's sentence and the study
reading. reporting.ledger.load_ledger fills VIEW_LABELS from report/views beside the ledger.
"""

from pathlib import Path

from lecture17.pipeline import yamlio
from lecture17.reporting.ledger_entry import _selectors
from lecture17.reporting.words import CJK, chinese_part, study_text

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
        parts += [f"所有种子、所有格里{'最小' if stat == 'min' else '最大'}"]
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
