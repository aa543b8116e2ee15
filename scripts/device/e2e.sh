#!/usr/bin/env bash
# End to end at 1M on the device: `tau gen1000000.tau2015 --skip-ops --paths 1000`, the
# staged binaries alternated round by round (ROUNDS, default 7), wall ms per round and
# medians; outputs compared with bin/tachyon's. BINS="tachyon ref" picks and orders them.
#   DIR=dev/NAME ROUNDS=7 bash dev/NAME/e2e.sh        [VV=1: one -vv run of each after]
source "$(dirname "$0")/common.sh"
lease
g=$(gen "${GATES:-1000000}")
bins=${BINS:-$(cd "$S/bin" && ls | sort | tr '\n' ' ')}
for b in $bins; do "$S/bin/$b" -q --device gpu tau "$g" --skip-ops --paths 1000 >"/tmp/e2e-$b.out" 2>&1; done
for b in $bins; do cmp -s /tmp/e2e-tachyon.out "/tmp/e2e-$b.out" || say "e2e: $b's output differs from tachyon's"; done
for r in $(seq "${ROUNDS:-7}"); do
    for b in $bins; do
        s=$(date +%s%N)
        "$S/bin/$b" -q --device gpu tau "$g" --skip-ops --paths 1000 >/dev/null 2>&1
        echo $((($(date +%s%N) - s) / 1000000)) >>"/tmp/e2e-$b.ms"
    done
done
for b in $bins; do
    say "e2e 1M $b: median $(median <"/tmp/e2e-$b.ms") ms of $(tr '\n' ' ' <"/tmp/e2e-$b.ms")"
done
rm -f /tmp/e2e-*.ms
if [ "${VV:-0}" = 1 ]; then
    for b in $bins; do
        echo "== $b" >>"$OUT/vv.log"
        "$S/bin/$b" -vv --device gpu tau "$g" --skip-ops --paths 1000 -o /dev/null 2>>"$OUT/vv.log" >/dev/null
    done
fi
