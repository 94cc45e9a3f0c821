"""The attention explorer of the page: tap (or hover, or focus) a query token and read its
weights over the keys, head by head, from a demo's own table.

    explorer(tables["01.1"], title, query="query", key="key", quantity="weight")

The block is rendered in full for its first query, so the page reads without JavaScript (the
weights of one query, and the tables and figures beside it); the page's small inline script
(report/templates/lecture17.html.j2, `.explorer`) redraws the bars for the query chosen. The
weights travel in the block's `data-weights` attribute: queries, keys, heads and, per head, one
row of weights per query, rounded to the three decimals shown. No network, nothing loaded.
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


def explorer(data: dict, title: str, anchor: str, head_names: dict | None = None) -> str:
    """The block (HTML), its first query shown."""
    names = head_names or {}
    heads = [names.get(h, f"头 {h}" if h else "") for h in data["heads"]]
    payload = {**data, "heads": heads}
    buttons = "".join(
        f'<button type="button" data-q="{i}" aria-pressed="{str(i == 0).lower()}">'
        f"{html.escape(q)}</button>"
        for i, q in enumerate(data["queries"])
    )
    panels = "".join(
        _panel(name, data["keys"], data["weights"][h][0]) for h, name in enumerate(heads)
    )
    picker = (
        f'<div class="queries" role="group" aria-label="query">{buttons}</div>'
        if len(data["queries"]) > 1
        else f'<p class="one-query">query：{html.escape(data["queries"][0])}</p>'
    )
    return (
        f'<section class="explorer" id="{anchor}" '
        f'data-weights="{html.escape(json.dumps(payload, ensure_ascii=False), quote=True)}">'
        f'<p class="explorer-title"><b>点一点 Explore</b> {html.escape(title)}</p>'
        f"{picker}"
        f'<div class="panels">{panels}</div></section>'
    )


def _panel(name: str, keys: list, row: list) -> str:
    bars = "".join(
        f'<li><span class="key">{html.escape(k)}</span>'
        f'<span class="bar"><span style="width:{100 * w:.1f}%"></span></span>'
        f'<span class="w">{w:.{DIGITS}f}</span></li>'
        for k, w in zip(keys, row, strict=True)
    )
    head = f'<p class="head">{html.escape(name)}</p>' if name else ""
    return f'<div class="panel">{head}<ol class="bars">{bars}</ol></div>'
