#!/usr/bin/env bash
# The one prepared run for a session that is lent a GPU (the workplace's `device` tool): the
# CUDA tests, demo 06.3 on the GPU (recorded for CPU builds under report/measured/06.3), and the
# step-time benchmark on the GPU, our models vs PyTorch's, at both sizes of 06.3.
#
#   device run:  bash bench/gpu_session.sh            (timeout_s 540; files come back in $OUT)
#   then here:   tar -xf <files_at>/06.3.tar -C report/measured
#                make report && make reference        (the CPU build aggregates the recorded runs)
#                and quote <files_at>/step_time.txt in bench/README.md
#
# The GPU machine has PyTorch, pandas, PyYAML, pytest and hypothesis, but no Snakemake:
# `python -m lecture17 run 06.3 --device cuda` runs the demo's jobs exactly as its rule would.
# Files come back flat (no '=' in their names), hence the tar of the Hive-style folders.
set -uo pipefail
: "${OUT:?OUT: the folder whose files come back}"
cd "$(dirname "$0")/.."
export PYTHONPATH=src PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
status=0
log="$OUT/gpu_session.log"
{
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
                                    torch.cuda.get_device_name())'
    echo "== CUDA tests"
    python3 -m pytest -q -p no:cacheprovider -m "not slow" -k "cuda or gpu" \
        tests/test_training.py tests/test_tiny_transformer.py tests/test_torch_models.py \
        tests/experiments/test_training_demos.py tests/experiments/test_transformer_vs_rnn.py \
        tests/experiments/test_beyond.py || status=1
    echo "== 06.3 on the GPU"
    time python3 -m lecture17 run 06.3 --device cuda --results "$OUT/measured" || status=1
} >"$log" 2>&1
if [ -d "$OUT/measured/06.3" ]; then
    tar -C "$OUT/measured" -cf "$OUT/06.3.tar" 06.3 && rm -rf "$OUT/measured"
fi
{
    echo "== bench/step_time.py: 06.3's small size, fp32"
    python3 bench/step_time.py --device cuda --lengths 32 128 512 2048 \
        --warmup 3 --repeats 10 --block 2 || status=1
    echo "== bench/step_time.py: 06.3's base size, bf16 autocast"
    python3 bench/step_time.py --device cuda --lengths 32 128 512 2048 \
        --d-model 512 --n-heads 8 --d-ff 2048 --emb-dim 512 --hidden 512 --precision bf16 \
        --warmup 3 --repeats 10 --block 2 || status=1
} >"$OUT/step_time.txt" 2>&1
cat "$log" "$OUT/step_time.txt"
exit "$status"
