#!/usr/bin/env bash
# Optional: torch, Stable-Baselines3 and tqdm for the PPO example (python -m bigstep.examples.ppo),
# bench/experiments/ppo_transfer.py and tests/python/test_{sb3,ppo_example}.py (they skip without them).
# Idempotent. PyPI's torch wheel brings its CUDA libraries: ~4.2 GB installed (torch 1.2 GB +
# nvidia-* 3.0 GB); 127 s on the 2-core box on 2026-11-24 (download ~75 MB/s). scripts/test.sh runs it
# in the background beside the C++ build.
set -euo pipefail
PY=${PYTHON:-python3}
if $PY -c "import torch, stable_baselines3, tqdm" 2>/dev/null; then
  echo "torch, stable_baselines3, tqdm: already installed"
else
  nice $PY -m pip install torch stable-baselines3 tqdm
fi
