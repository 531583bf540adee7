#!/usr/bin/env bash
# The measurement evidence of a GPU machine, in one go (issue #16): the full suite into a fresh
# store, timed; then benchmarks/stability.py and suite_figures.py on it; then CROSSCHECKS runs
# (3 unless told) of benchmarks/crosscheck.py on the first GPU. Everything goes to OUT_DIR:
#   results/ (the store), run.log (with each workload's wall time at the end), stability.txt,
#   suite_figures.txt, crosscheck-1.txt .. crosscheck-N.txt
# Run it on a quiet machine (nothing else on the GPU or the cores). On one H200 the suite took
# 17.9 min (2026-12-01) and 15.0 min (2026-12-02), each crosscheck run 3.1-3.3 min: all of it
# is 25-28 min, about what one 30-minute device session holds once the machine's start is
# counted; pass CROSSCHECKS=1 there if time is short and run `python3 benchmarks/crosscheck.py
# --device cuda:0` in another session.
#
#   bash benchmarks/evidence.sh OUT_DIR [HOST_NAME] [CROSSCHECKS]
set -u -o pipefail
out=${1:?usage: bash benchmarks/evidence.sh OUT_DIR [HOST_NAME] [CROSSCHECKS]}
host=${2:-$(hostname)}
crosschecks=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export PYTHONUNBUFFERED=1
started=$(date +%s)
python3 -m benchsite run --full --host "$host" --results "$out/results" 2>&1 | tee "$out/run.log"
echo "# full suite: $(( $(date +%s) - started )) s wall" | tee -a "$out/run.log"
python3 "$here/stability.py" "$out/results" > "$out/stability.txt" 2>&1
python3 "$here/suite_figures.py" "$out/results" > "$out/suite_figures.txt" 2>&1
for run in $(seq 1 "$crosschecks"); do
  { echo "# crosscheck run $run, $(date -u +%FT%TZ)"
    time python3 "$here/crosscheck.py" --device cuda:0; } > "$out/crosscheck-$run.txt" 2>&1
  tail -3 "$out/crosscheck-$run.txt"
done
