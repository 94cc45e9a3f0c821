"""代码 05 · Transformer vs GRU（§9）: the lecture's script 05, without Snakemake.

    .venv/bin/python scripts/05_transformer_vs_rnn.py

Runs demos 05.1, 05.3, 05.4, 05.5 (experiments/transformer_vs_rnn.py) with the settings of
config/config.yaml, every seed and grid point, on the CPU, and prints their tables as the
report lays them out (05.5 decodes with the models 05.1 just trained). Nothing is written;
`snakemake` builds the same demos into results/.
"""

import sys

from lecture17.scripts import run_script

# Exercise 8 (§13): "把 STEPS 从 500 改成 1500，只跑 L = 32（把 LENGTHS 改成 [32]）".
# None keeps config/config.yaml's value (the one place of every setting); `snakemake` reads
# these edits too (lecture17.scripts), so both ways rerun exactly demo 05.1 (and 05.5 and 06.6,
# which read 05.1's models).
STEPS = None  # 05.1's training steps; config: 500 (§9.1). Exercise 8: 1500
LENGTHS = None  # 05.1's sequence lengths L; config: [8, 16, 32]. Exercise 8: [32]

EDITS = {"05.1": {"settings.train.steps": STEPS, "grid.seq_len": LENGTHS}}

if __name__ == "__main__":
    sys.exit(run_script("05"))
