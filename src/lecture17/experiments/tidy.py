"""The one table shape every demo returns: label columns, then `quantity` and `value`.

A demo builds its rows with `row` (one measured number and its labels) or `rows` (several
quantities under the same labels), and turns them into its table with `tidy`:

    records = [row("var", np.var(dots, ddof=1), d_k=d_k)]
    records += rows({"max_weight": 0.9, "entropy": 0.4}, d_k=d_k, scaled="scaled")
    return tidy(records, ["d_k", "scaled"])
"""

import numpy as np
import pandas as pd


def row(quantity: str, value, **labels) -> dict:
    """One row of a tidy table: its labels (those that apply to it), the quantity, the value."""
    return {**labels, "quantity": quantity, "value": value}


def rows(values: dict, **labels) -> list[dict]:
    """One row per (quantity, value) of `values`, in its order, all with the same labels."""
    return [row(quantity, value, **labels) for quantity, value in values.items()]


def _is_integer(value) -> bool:
    """An int or numpy integer, never a bool."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _is_number(value) -> bool:
    """An integer (as above) or a float, Python's or numpy's."""
    return _is_integer(value) or isinstance(value, float | np.floating)


def tidy(records: list[dict], labels: list[str]) -> pd.DataFrame:
    """Records -> a tidy table. A label column of integers stays integer even where some rows
    lack it (nullable Int64: written as 8, never 8.0); one of numbers with a float among them
    is float64 (NaN where a row lacks it); any other label keeps its values, with None where a
    row lacks it. `value` is float64."""
    table = pd.DataFrame.from_records(records, columns=[*labels, "quantity", "value"])
    for label in labels:
        present = [r[label] for r in records if r.get(label) is not None]
        if present and all(_is_integer(v) for v in present):
            table[label] = table[label].astype("Int64")
        elif present and all(_is_number(v) for v in present):
            table[label] = table[label].astype(np.float64)
        else:
            table[label] = table[label].astype(object).where(table[label].notna(), None)
    table["value"] = table["value"].astype(np.float64)
    return table
