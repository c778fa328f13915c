#!/usr/bin/env bash
# Single-GPU GRPO on code with veRL, rewarded by verifiers (see overrides.py for every knob).
#
#   .venv/bin/verifiers data prepare mbpp -o data/train.parquet
#   .venv/bin/verifiers data prepare humaneval -o data/val.parquet
#   MODEL=Qwen/Qwen2.5-Coder-0.5B-Instruct examples/verl/run_grpo.sh
#
# Multi-GPU: N_GPUS=8 (per node), NNODES=2, TP=2 for the rollout of larger models; every
# node needs bubblewrap (scripts/setup.sh) because rewards run in its local sandbox.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
mapfile -t overrides < <("$python" "$here/overrides.py")
exec "$python" -m verl.trainer.main_ppo "${overrides[@]}" "$@"
