"""代码 01 · 自注意力 self-attention（§1–§3）: the lecture's script 01, without Snakemake.

    .venv/bin/python scripts/01_self_attention.py

Runs demos 01.1, 01.2, 01.3, 01.4, 01.5 (experiments/self_attention.py) with the settings of
config/config.yaml, every seed and grid point, on the CPU, and prints their tables as the
report lays them out. Nothing is written; `snakemake` builds the same demos into results/.
"""

import sys

from lecture17.scripts import run_script

EDITS = {}  # no exercise edits this script's settings (config/config.yaml holds them)

if __name__ == "__main__":
    sys.exit(run_script("01"))
