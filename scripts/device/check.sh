#!/usr/bin/env bash
# Correctness on the device (GPU), about 3-4 minutes on an H100:
#   DIR=dev/NAME bash dev/NAME/check.sh          [M5=1: --check-cpu at 5M too; FUZZ=n loops]
# 1. every staged test binary with TACHYON_REQUIRE_GPU=1 and the shared data;
# 2. the incremental fuzz loop (both fuzz tests at once, FUZZ times, 40 sequences);
# 3. `--check-cpu` (every value of both backends compared bitwise) on the 25 TAU designs
#    and at 1M gates (5M with M5=1), also with TACHYON_RC_LAYOUT=device at 1M;
# 4. TAU flows byte for byte: GPU against CPU (`tau` with the .ops, `tau --paths 100`),
#    `--retime incremental` against `--retime full` on the GPU, and every incremental
#    update on the GPU (TACHYON_GPU_MIN_FRONTIER=0, TACHYON_RC_EDITS=device) against CPU,
#    and every one whole there (TACHYON_GPU_WHOLE_FRONTIER=0) against CPU.
# PARTS (default "tests fuzz checkcpu flows") picks the parts. Ends with `check: N failed`.
source "$(dirname "$0")/common.sh"
lease
failed=0
fail() { say "FAIL: $*"; failed=$((failed + 1)); }

part() { case " ${PARTS:-tests fuzz checkcpu flows} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

part tests && for t in "$S"/tests/*; do
    name=$(basename "$t")
    started=$(date +%s%N)
    if (cd "$ROOT" && timeout 400 "$t" -q) >>"$OUT/tests.log" 2>&1; then
        say "test $name: ok ($((($(date +%s%N) - started) / 1000000)) ms)"
    else
        fail "test $name (tests.log)"
    fi
done

part fuzz && for i in $(seq "${FUZZ:-2}"); do
    fuzz=$(ls "$S"/tests/incremental_fuzz)
    (cd "$ROOT" && TACHYON_DIFF_SEQUENCES=40 timeout 300 "$fuzz" -q) >>"$OUT/fuzz.log" 2>&1 ||
        fail "fuzz loop $i (fuzz.log)"
done
part fuzz && say "fuzz loops: ${FUZZ:-2}"

check_cpu() { # label, design, extra args...
    local label=$1 design=$2
    shift 2
    local log=$OUT/checkcpu.log
    echo "== $label" >>"$log"
    if "$T" -q --device gpu tau "$design" --check-cpu --runs 1 "$@" >>"$log" 2>&1; then
        local differ
        differ=$(tail -40 "$log" | grep -o '[0-9]* differ' | awk '{s+=$1} END {print s+0}')
        [ "$differ" = 0 ] || fail "check-cpu $label: $differ differ"
        say "check-cpu $label: $(tail -40 "$log" | grep -o 'compared [0-9]* values' | tail -1), $differ differ"
    else
        fail "check-cpu $label (checkcpu.log)"
    fi
}
part checkcpu && for d in "$S"/shared/tau2015/*/; do
    check_cpu "$(basename "$d")" "$d$(basename "$d").tau2015"
done
if part checkcpu; then
    g1m=$(gen 1000000)
    check_cpu 1M "$g1m"
    TACHYON_RC_LAYOUT=device check_cpu "1M rc-layout=device" "$g1m"
    [ "${M5:-0}" = 1 ] && check_cpu 5M "$(gen 5000000)"
fi

flows=0
same() { # label, command A, command B (strings, run with bash -c)
    bash -c "$2" >/tmp/flow-a 2>>"$OUT/flows.log" || fail "flow $1: A failed"
    bash -c "$3" >/tmp/flow-b 2>>"$OUT/flows.log" || fail "flow $1: B failed"
    if [ ! -s /tmp/flow-a ] || ! cmp -s /tmp/flow-a /tmp/flow-b; then
        fail "flow $1: outputs differ or are empty"
    fi
    flows=$((flows + 1))
}
part flows && for d in "$S"/shared/tau2015/*/; do
    n=$(basename "$d")
    f=$d$n.tau2015
    ops=--skip-ops
    [ -f "$d$n.ops" ] && ops=
    same "$n tau gpu=cpu" "$T -q --device gpu tau $f $ops" "$T -q --device cpu tau $f $ops"
    same "$n paths gpu=cpu" "$T -q --device gpu tau $f --skip-ops --paths 100" \
        "$T -q --device cpu tau $f --skip-ops --paths 100"
    if [ -f "$d$n.ops" ]; then
        same "$n incremental=full" "$T -q --device gpu tau $f --retime incremental" \
            "$T -q --device gpu tau $f --retime full"
        same "$n all-gpu=cpu" \
            "TACHYON_GPU_MIN_FRONTIER=0 TACHYON_RC_EDITS=device $T -q --device gpu tau $f" \
            "$T -q --device cpu tau $f"
        same "$n all-whole=cpu" \
            "TACHYON_GPU_MIN_FRONTIER=0 TACHYON_GPU_WHOLE_FRONTIER=0 $T -q --device gpu tau $f" \
            "$T -q --device cpu tau $f"
    fi
done
part flows && say "flows compared: $flows"
say "check: $failed failed"
