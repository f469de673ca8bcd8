#!/usr/bin/env bash
# The main job: simulate the box slide, the 10-link chain sliding off a slope and the A1 quadruped
# (its URDF compiled by MuJoCo) standing, with PBFD; write trajectory.csv / steps.csv / summary.json
# and a PNG plot per run under out/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
PY=${PYTHON:-python3}
for scene in box_slide chain_slope a1_stand; do
  render=()
  [ "$scene" = a1_stand ] && render=(--render)  # out/demo/a1_stand/render.gif + filmstrip.png
  ./build/bigstep run "configs/$scene.yaml" --out "out/demo/$scene" "${render[@]}"
  $PY tools/plot_run.py "out/demo/$scene"
done
echo "demo results: $(pwd)/out/demo/*/{summary.json,trajectory.csv,plot.png}, out/demo/a1_stand/render.gif"
