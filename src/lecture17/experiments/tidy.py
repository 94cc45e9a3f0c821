"""The one table shape every demo returns: label columns, then `quantity` and `value`."""

import numpy as np
import pandas as pd


def tidy(records: list[dict], labels: list[str]) -> pd.DataFrame:
    """Records -> a tidy table. A label column of integers stays integer even where some rows
    lack it (nullable Int64: written as 8, never 8.0); any other label keeps its values, with
    None where a row lacks it. `value` is float64."""
    table = pd.DataFrame.from_records(records, columns=[*labels, "quantity", "value"])
    for label in labels:
        present = [r[label] for r in records if r.get(label) is not None]
        if present and all(
            isinstance(v, int | np.integer) and not isinstance(v, bool) for v in present
        ):
            table[label] = table[label].astype("Int64")
        else:
            table[label] = table[label].astype(object).where(table[label].notna(), None)
    table["value"] = table["value"].astype(np.float64)
    return table
