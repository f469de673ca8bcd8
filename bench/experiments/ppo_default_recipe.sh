#!/usr/bin/env bash
# PPO with the tasks' default recipe, then transfer to Gymnasium v5 as shipped.
#
# Training: `python -m bigstep.examples.ppo --task T --seed S --total-steps STEPS` and nothing else:
# the task file's integrator, dt, order, friction and start perturbation (configs/tasks/T.yaml), the
# example's default PPO settings. Tasks hopper, walker2d, ant; seeds 0 and 1; the two seeds train side
# by side (one core each, nice 19).
# Selection rule (fixed before any MuJoCo evaluation): the policy saved at the end of training is the
# one evaluated; no checkpoint choice, no rerun, every run reported.
# Evaluation: ppo_transfer.py, deterministic actions, 10 episodes x seeds 0 1 2 of Gymnasium's 1000
# env steps, in bigstep PBFD at the training dt (the training simulator, nominal model) and in MuJoCo
# (Hopper-v5 / Walker2d-v5 / Ant-v5 as shipped; the elliptic cone as a diagnostic row). kept = the
# MuJoCo mean return / the bigstep mean return; a run transfers when kept >= 0.8.
#   bash bench/experiments/ppo_default_recipe.sh [train|evaluate|all]     (STEPS, OUT override)
# -> bench/experiments/results/ppo_default_recipe{,_summary}.csv, .png, ppo_default_*_{policy.pt,curve.*}
set -euo pipefail
cd "$(dirname "$0")/../.."
steps=${STEPS:-1000000}
out=${OUT:-out/ppo_default}
tasks=(hopper walker2d ant)
seeds=(0 1)
mode=${1:-all}
mkdir -p "$out"
export PYTHONPATH=build/python

if [ "$mode" = train ] || [ "$mode" = all ]; then
  for s in "${seeds[@]}"; do
    (
      for t in "${tasks[@]}"; do
        echo "train $t seed $s: $out/train_${t}_s$s.log"
        nice -n 19 python3 -m bigstep.examples.ppo --task "$t" --seed "$s" --total-steps "$steps" \
          --out "$out/s$s" >"$out/train_${t}_s$s.log" 2>&1
      done
    ) &
  done
  wait
fi

if [ "$mode" = evaluate ] || [ "$mode" = all ]; then
  policies=() labels=()
  for t in "${tasks[@]}"; do
    for s in "${seeds[@]}"; do
      policies+=("$out/s$s/$t/policy.pt")
      labels+=("default_${t}_s$s")
    done
  done
  python3 bench/experiments/ppo_transfer.py --policy "${policies[@]}" --label "${labels[@]}" \
    --episodes 10 --seeds 0 1 2 --small-dt --ne-dt 0 --mujoco shipped elliptic --keep \
    --training-note "wall time on the shared 2-core VM, two trainings side by side under nice -n 19, 1 torch thread" \
    --out bench/experiments/results/ppo_default_recipe.csv
fi
