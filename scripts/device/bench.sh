#!/usr/bin/env bash
# Speed on the device at 1M (about 2 minutes): the full update over the resident GPU state
# against the CPU backend (`bench-full --reps 5`), edit+query pairs (`bench-edits`), change
# files of growing size CPU against GPU with the crossover (`bench-resident`).
#   DIR=dev/NAME bash dev/NAME/bench.sh      [M5=1: bench-full at 5M too]
source "$(dirname "$0")/common.sh"
lease
g=$(gen "${GATES:-1000000}")
"$T" --device gpu bench-full "$g" --reps 5 >"$OUT/bench-full.log" 2>&1
say "bench-full 1M: $(tail -3 "$OUT/bench-full.log" | tr '\n' ' ')"
if [ "${M5:-0}" = 1 ]; then
    "$T" --device gpu bench-full "$(gen 5000000)" --reps 3 >"$OUT/bench-full-5m.log" 2>&1
    say "bench-full 5M: $(tail -3 "$OUT/bench-full-5m.log" | tr '\n' ' ')"
fi
"$T" --device gpu bench-edits "$g" --edits 1000 >"$OUT/bench-edits.log" 2>&1
say "bench-edits 1M: $(tail -4 "$OUT/bench-edits.log" | tr '\n' ' ')"
timeout 300 "$T" --device gpu bench-resident "$g" >"$OUT/bench-resident.log" 2>&1
say "bench-resident 1M: $(grep -E 'size|crossover' "$OUT/bench-resident.log" | tr '\n' ' ')"
