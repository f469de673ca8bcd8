#!/usr/bin/env bash
# Instructions per step (valgrind --tool=callgrind; deterministic on a shared machine) of
# `bigstep run` for each integrator on a few scenes: Ir(N2 steps) - Ir(N1 steps), divided by
# N2 - N1, so start-up and output cancel. Usage:
#   bench/perf/step_instructions.sh [BIGSTEP_BINARY] [LABEL] > out.csv      (default build/bigstep)
# CSV: label,scene,integrator,dt,instructions_per_step
set -euo pipefail
bin=${1:-build/bigstep}
label=${2:-$(git rev-parse --short HEAD 2>/dev/null || echo local)}
command -v valgrind >/dev/null || { echo "bench/perf/step_instructions.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
cd "$(dirname "$0")/../.."
# set, so the CLI does not re-execute itself (batch/omp_wait.h) outside valgrind's view
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ir() {  # scene integrator dt steps -> total instructions
  local dur
  dur=$(python3 -c "print($3 * $4)")
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$bin" run "configs/$1" --quiet --out "$tmp/out" \
    --set "integrator.type=$2" --set "integrator.dt=$3" --set "integrator.duration=$dur" \
    --set metrics.stop_at_rest=false >/dev/null 2>"$tmp/err" || true
  grep -E "^summary:|^totals:" "$tmp/cg" | head -1 | awk '{print $2}'
}
echo "label,scene,integrator,dt,instructions_per_step"
n1=10 n2=30
while read -r scene integ dt; do
  a=$(ir "$scene" "$integ" "$dt" $n1)
  b=$(ir "$scene" "$integ" "$dt" $n2)
  echo "$label,$scene,$integ,$dt,$(( (b - a) / (n2 - n1) ))"
done <<'CASES'
box_slide.yaml pbfd 0.01
chain_floating_ground.yaml pbfd 0.01
chain_floating_ground.yaml pbd 0.01
chain_slope.yaml pbfd 0.01
quadruped_spider.yaml pbfd 0.01
quadruped_spider.yaml ne_lcp 0.002
quadruped_spider.yaml ne_mdp 0.002
quadruped_spider.yaml nmdp_ne 0.01
CASES
