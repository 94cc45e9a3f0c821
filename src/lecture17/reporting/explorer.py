"""The attention explorer of the page: tap (or hover, or focus) a query token and read its
weights over the keys, head by head, from a demo's own table.

    explorer(tables["01.1"], title, query="query", key="key", quantity="weight")

The block is rendered in full for its first example's first query, so the page reads without
JavaScript (the weights of one query, and the tables and figures beside it); the page's small
inline script (report/templates/lecture17.html.j2, `.explorer`) redraws the bars for the example
and query chosen. The weights travel in the block's `data-weights` attribute, a list of examples
(one for a table of one input; 05.5's few test sequences), each with its queries, keys, heads and,
per head, one row of weights per query, rounded to the three decimals shown. No network, nothing
loaded.
"""

import html
import json

import numpy as np

from lecture17.pipeline.aggregate import select

DIGITS = 3  # the weights as the tables print them


def weights(table, *, key: str, quantity: str, query=None, head=None, where=None, label=""):
    """{queries, keys, heads, weights: [head][query][key]} from a tidy table, in its order.
    query: its label column; None for a table of one query, named by `label`."""
    rows = select(table, quantity, **(where or {}))
    if rows.empty:
        raise ValueError(f"explorer: no rows of {quantity} {where}")
    queries = list(dict.fromkeys(rows[query].astype(str))) if query else [label]
    keys = list(dict.fromkeys(rows[key].astype(str)))
    heads = list(dict.fromkeys(rows[head].astype(str))) if head else [""]
    grid = np.full((len(heads), len(queries), len(keys)), np.nan)
    for r in rows.itertuples(index=False):
        r = r._asdict()
        h = heads.index(str(r[head])) if head else 0
        q = queries.index(str(r[query])) if query else 0
        grid[h, q, keys.index(str(r[key]))] = r["mean"]
    if np.isnan(grid).any():
        raise ValueError(f"explorer: {quantity} {where} is not a full query × key grid per head")
    return {
        "queries": queries,
        "keys": keys,
        "heads": heads,
        "weights": np.round(grid, DIGITS).tolist(),
    }


def explorer(data, title: str, anchor: str, head_names: dict | None = None) -> str:
    """The block (HTML), its first example's first query shown. `data`: one example (weights'
    dict) or a list of them, each with a `label` (the examples to choose from: the same
    number of queries, keys and heads in each)."""
    examples = data if isinstance(data, list) else [data]
    if not examples:
        raise ValueError(f"explorer {anchor}: no example to show")
    shapes = {(len(e["queries"]), len(e["keys"]), tuple(e["heads"])) for e in examples}
    if len(shapes) != 1 or len(examples[0]["queries"]) == 1 < len(examples):
        # the script redraws bars, keys and query buttons, never the heads' names
        raise ValueError(f"explorer {anchor}: the examples differ in their queries, keys or heads")
    names = head_names or {}
    examples = [
        {**e, "heads": [names.get(h, f"头 {h}" if h else "") for h in e["heads"]]} for e in examples
    ]
    first = examples[0]
    mark = (first.get("marks") or [None])[0]  # the key to frame for the first query
    panels = "".join(
        _panel(name, first["keys"], first["weights"][h][0], mark)
        for h, name in enumerate(first["heads"])
    )
    short = all(len(k) <= 3 for e in examples for k in e["keys"])  # heads side by side
    return (
        f'<section class="explorer{" short-keys" if short else ""}" id="{anchor}" '
        f'data-weights="{html.escape(json.dumps(examples, ensure_ascii=False), quote=True)}">'
        f'<p class="explorer-title"><b>点一点 Explore</b> {html.escape(title)}</p>'
        f"{_buttons('e', [e.get('label', '') for e in examples])}"
        f"{_buttons('q', first['queries'])}"
        f'<div class="panels">{panels}</div>'
        f"<noscript><p>（没有 JavaScript：这里只画了第一个）</p></noscript></section>"
    )


ROWS = {"q": ("query", "queries"), "e": ("example", "queries examples")}  # aria-label, class


def _buttons(kind: str, labels: list) -> str:
    """The row of examples or queries to choose from (the first pressed); one query alone is
    named, not offered; one example alone is named by its label, if it has one."""
    name, classes = ROWS[kind]
    if len(labels) == 1:
        said = f"{name}：{labels[0]}" if kind == "q" else labels[0]
        return f'<p class="one-query">{html.escape(said)}</p>' if said else ""
    buttons = "".join(
        f'<button type="button" data-{kind}="{i}" aria-pressed="{str(i == 0).lower()}">'
        f"{html.escape(label)}</button>"
        for i, label in enumerate(labels)
    )
    return f'<div class="{classes}" role="group" aria-label="{name}">{buttons}</div>'


def mirror_marks(n_queries: int, n_keys: int) -> list:
    """The key each query should read in a reversal: query t, key n_keys − 1 − t (the mirror
    position, §9.4); none for a query past the keys (the EOS step)."""
    return [n_keys - 1 - t if t < n_keys else None for t in range(n_queries)]


def _panel(name: str, keys: list, row: list, mark=None) -> str:
    items = []
    for k, (key, w) in enumerate(zip(keys, row, strict=True)):
        framed = ' class="mark"' if k == mark else ""
        items.append(
            f'<li{framed}><span class="key">{html.escape(key)}</span>'
            f'<span class="bar"><span style="width:{100 * w:.1f}%"></span></span>'
            f'<span class="w">{w:.{DIGITS}f}</span></li>'
        )
    bars = "".join(items)
    head = f'<p class="head">{html.escape(name)}</p>' if name else ""
    return f'<div class="panel">{head}<ol class="bars">{bars}</ol></div>'


def by_example(table, spec: dict, column: str, label: str) -> list[dict]:
    """The explorer's examples: one per value of `column` (in the table's order), each named by
    the format `label`."""
    where = spec.get("where", {})
    values = dict.fromkeys(select(table, spec["quantity"], **where)[column].astype(str))
    if not values:
        raise ValueError(f"explorer: no rows of {spec['quantity']} {where}")
    return [
        {
            **weights(table, **{**spec, "where": {**where, column: v}}),
            "label": label.format(v),
        }
        for v in values
    ]
