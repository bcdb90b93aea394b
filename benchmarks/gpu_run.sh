#!/usr/bin/env bash
# Run the claim suite on one CUDA device and on the CPU, the same blocks on both, and compare them.
#
# Usage: benchmarks/gpu_run.sh [OUT_DIR]      (from the repository root; OUT_DIR default gpu-run/)
#
# Two runs per side, each in its own pytest session with its own result cache under OUT_DIR:
#   all  every claim at GPU_RUN_BUDGET (default standard)
#   c6   C6 alone at GPU_RUN_C6_BUDGET (default paper: 30 seeds)
# first on GPU_RUN_DEVICE (default cuda), then on the CPU, both on the pool GPU_RUN_POOL (default
# exploratory, so no confirmatory block is spent; confirmatory runs the protocols' blocks). Then
# benchmarks/compare_runs.py compares each pair of JSON sidecars (verdicts, and how far every
# statistic moved), and OUT_DIR/summary.md gathers the wall times, exit codes, the device and the
# differences. A float32 run on a GPU is not the CPU's bits (other kernels, other summation orders):
# the comparison says how far apart they are and whether a verdict moved.
#
# Environment (all optional):
#   GPU_RUN_DEVICE     device of the accelerated side (cuda, cuda:N; cpu for a dry run)   [cuda]
#   GPU_RUN_BUDGET     budget of the all-claims run                                       [standard]
#   GPU_RUN_C6_BUDGET  budget of C6's own run                                              [paper]
#   GPU_RUN_POOL       exploratory or confirmatory                                         [exploratory]
#   GPU_RUN_SEED       base seed (--claim-seed)                                            [0]
#   GPU_RUN_CLAIMS     what the all-claims run collects                                    [claims]
#   GPU_RUN_C6         what the C6 run collects                     [claims/test_c6_depth_residual.py]
#   GPU_RUN_CPU        run: run the CPU side here; DIR: reuse DIR/cpu-all and DIR/cpu-c6 of an
#                      earlier run of this script (C6 at paper is ~5 CPU-hours); skip: no CPU side [run]
#   GPU_RUN_THREADS    torch threads of the CPU side (--claim-threads)                     [2]
#   PYTHON             the interpreter                                                     [python]
# Exit status: 0 when every run produced its JSON sidecar, 1 otherwise (the summary says which).
set -u -o pipefail

OUT=${1:-gpu-run}
DEVICE=${GPU_RUN_DEVICE:-cuda}
BUDGET=${GPU_RUN_BUDGET:-standard}
C6_BUDGET=${GPU_RUN_C6_BUDGET:-paper}
POOL=${GPU_RUN_POOL:-exploratory}
SEED=${GPU_RUN_SEED:-0}
CLAIMS=${GPU_RUN_CLAIMS:-claims}
C6=${GPU_RUN_C6:-claims/test_c6_depth_residual.py}
CPU=${GPU_RUN_CPU:-run}
THREADS=${GPU_RUN_THREADS:-2}
PY=${PYTHON:-python}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

case "$POOL" in exploratory | confirmatory) ;; *)
    echo "gpu_run.sh: GPU_RUN_POOL must be exploratory or confirmatory, got '$POOL'" >&2
    exit 2
    ;;
esac
case "$CPU" in run | skip) ;; *)
    if [ ! -f "$CPU/cpu-all/report.json" ] || [ ! -f "$CPU/cpu-c6/report.json" ]; then
        echo "gpu_run.sh: GPU_RUN_CPU=$CPU: expected $CPU/cpu-all/report.json and $CPU/cpu-c6/report.json" \
            "from an earlier run of this script (or set GPU_RUN_CPU=run or skip)" >&2
        exit 2
    fi
    ;;
esac
if [ "$DEVICE" != cpu ] && ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    echo "gpu_run.sh: GPU_RUN_DEVICE=$DEVICE but torch sees no CUDA device here (GPU_RUN_DEVICE=cpu for a dry run)" >&2
    exit 2
fi
mkdir -p "$OUT"
TIMES="$OUT/times.tsv"
printf 'side\trun\tbudget\tdevice\twall_s\texit\n' >"$TIMES"
status=0

# run SIDE NAME BUDGET DEVICE THREADS PATHS...: one pytest session; its report under OUT/SIDE-NAME/
run() {
    local side=$1 name=$2 budget=$3 device=$4 threads=$5
    shift 5
    local dir="$OUT/$side-$name" start end rc
    mkdir -p "$dir"
    start=$(date +%s.%N)
    "$PY" -m pytest "$@" -q -p no:cacheprovider --claim-budget "$budget" --claim-device "$device" \
        --claim-pool "$POOL" --claim-seed "$SEED" --claim-threads "$threads" \
        --claim-cache-dir "$OUT/cache-$side" --claim-report "$dir/report.md" --claim-figures off \
        >"$dir/pytest.log" 2>&1
    rc=$?
    end=$(date +%s.%N)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$side" "$name" "$budget" "$device" \
        "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')" "$rc" >>"$TIMES"
    if [ ! -f "$dir/report.json" ]; then
        echo "gpu_run.sh: $side-$name wrote no report.json (exit $rc; see $dir/pytest.log)" >&2
        status=1
    fi
}

run gpu all "$BUDGET" "$DEVICE" 1 $CLAIMS
run gpu c6 "$C6_BUDGET" "$DEVICE" 1 $C6
CPU_DIR=$OUT
case "$CPU" in
run)
    run cpu all "$BUDGET" cpu "$THREADS" $CLAIMS
    run cpu c6 "$C6_BUDGET" cpu "$THREADS" $C6
    ;;
skip) CPU_DIR= ;;
*) CPU_DIR=$CPU ;;
esac

SUMMARY="$OUT/summary.md"
{
    echo "# The claim suite on $DEVICE against the CPU"
    echo
    echo "Pool $POOL, base seed $SEED; all claims at $BUDGET, C6 at $C6_BUDGET; written $(date -u +%Y-%m-%dT%H:%M:%SZ)."
    echo
    echo "Device: $("$PY" -c "import torch; print(torch.cuda.get_device_name() if torch.cuda.is_available() else 'no CUDA device')")," \
        "torch $("$PY" -c 'import torch; print(torch.__version__)'); CPU: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
    echo "| side | run | budget | device | wall (s) | exit |"
    echo "|---|---|---|---|---|---|"
    tail -n +2 "$TIMES" | while IFS=$'\t' read -r side name budget device wall rc; do
        echo "| $side | $name | $budget | $device | $wall | $rc |"
    done
    if [ -n "$CPU_DIR" ]; then
        for name in all c6; do
            echo
            echo "## $name: CPU ($CPU_DIR/cpu-$name) against $DEVICE"
            echo
            echo '```'
            if [ -f "$CPU_DIR/cpu-$name/report.json" ] && [ -f "$OUT/gpu-$name/report.json" ]; then
                "$PY" "$HERE/compare_runs.py" "$CPU_DIR/cpu-$name/report.json" "$OUT/gpu-$name/report.json" ||
                    echo "(compare_runs.py failed)"
            else
                echo "(a side wrote no report.json: nothing to compare)"
            fi
            echo '```'
        done
    else
        echo
        echo "No CPU side (GPU_RUN_CPU=skip): nothing compared."
    fi
} >"$SUMMARY"
echo "gpu_run.sh: wrote $SUMMARY"
exit $status
