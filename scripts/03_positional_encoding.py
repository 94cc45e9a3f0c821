"""代码 03 · 位置编码 positional encoding（§6）: the lecture's script 03, without Snakemake.

    .venv/bin/python scripts/03_positional_encoding.py

Runs demos 03.1, 03.2, 03.3, 03.4, 03.5 (src/lecture17/experiments/positional_encoding.py) with the settings of
config/config.yaml, every seed and grid point, on the CPU, and prints their tables as the
report lays them out. Nothing is written; `snakemake` builds the same demos into results/.
"""

import sys

from lecture17.scripts import run_script

# Exercise 9 (§13) edits no line here: it sets MultiHeadAttention's default scale=True to
# False in src/lecture17/tiny_transformer.py, then runs this script and reads the first row of
# demo 5's table (03.5, §6.6). The recorded run of exactly that edit is demo 08.2.
EDITS = {}

if __name__ == "__main__":
    sys.exit(run_script("03"))
