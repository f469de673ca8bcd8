#!/usr/bin/env bash
# The main job: simulate the box slide and the 10-link chain sliding off a slope with PBFD,
# write trajectory.csv / steps.csv / summary.json and a PNG plot per run under out/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
PY=${PYTHON:-python3}
for scene in box_slide chain_slope; do
  ./build/bigstep run "configs/$scene.yaml" --out "out/demo/$scene"
  $PY tools/plot_run.py "out/demo/$scene"
done
echo "demo results: $(pwd)/out/demo/*/{summary.json,trajectory.csv,plot.png}"
