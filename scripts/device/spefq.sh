#!/usr/bin/env bash
# Re-extraction at 1M in a shell session: the design loaded, timed and queried once
# (`report_worst_paths -numPaths 1000`), then ROUNDS (default 4) rounds of `read_spef` of a
# change file (every 100th net for PCT=1, every 10th for PCT=10; a different offset each
# round, capacitances scaled 1.2-1.5), `update_timing`, `report_worst_paths -numPaths 1000`.
# Per binary in BINS (default: all staged) and DEVICE (default "gpu cpu"): Tcl `time` of
# each step, medians over the rounds; the query outputs compared with the first run's.
#   DIR=dev/NAME PCT=10 bash dev/NAME/spefq.sh       [VV=1: the -vv log of each run]
# Every round's time goes to $OUT/spefq-rounds.txt, the -vv logs to $OUT/spefq-vv.log.
source "$(dirname "$0")/common.sh"
lease
g=$(gen "${GATES:-1000000}")
d=$(dirname "$g")
b=$(basename "$g" .tau2015)
pct=${PCT:-10}
every=$((100 / pct))
rounds=${ROUNDS:-4}
q=/tmp/spefq-$pct.tcl
{
    echo "read_celllib -early $d/${b}_Early.lib"
    echo "read_celllib -late $d/${b}_Late.lib"
    echo "read_verilog $d/$b.v"
    echo "read_spef $d/$b.spef"
    echo "read_timing $d/$b.timing"
    echo "puts \"TIME first-query [time {report_worst_paths -numPaths 1000} 1]\""
    for r in $(seq "$rounds"); do
        c=/tmp/change-$pct-$r.spef
        [ -s "$c" ] || awk -v EVERY=$every -v OFFSET=$((r * 7)) -v SCALE=1.$((r + 1)) \
            -f "$(dirname "$0")/mkchange.awk" "$d/$b.spef" >"$c"
        echo "puts \"TIME read_spef [time {read_spef $c} 1]\""
        echo "puts \"TIME update_timing [time {update_timing} 1]\""
        echo "puts \"TIME report_worst_paths [time {report_worst_paths -numPaths 1000} 1]\""
    done
} >"$q"
say "spefq: $pct% of the nets per change file ($(grep -c '^\*D_NET' /tmp/change-$pct-1.spef) nets), $rounds rounds"
first=
for bin in ${BINS:-$(cd "$S/bin" && ls | sort)}; do
    for dev in ${DEVICE:-gpu cpu}; do
        log=/tmp/spefq-$bin-$dev.log
        vv=-q
        [ "${VV:-0}" = 1 ] && vv=-vv
        "$S/bin/$bin" $vv --device "$dev" shell "$q" >"/tmp/spefq-$bin-$dev.all" 2>"$log"
        grep '^TIME ' "/tmp/spefq-$bin-$dev.all" >>"$log"
        grep -v '^TIME ' "/tmp/spefq-$bin-$dev.all" >"/tmp/spefq-$bin-$dev.out"
        [ "${VV:-0}" = 1 ] && { echo "== $pct% $bin $dev" >>"$OUT/spefq-vv.log"; cat "$log" >>"$OUT/spefq-vv.log"; }
        line="$bin $dev:"
        for step in first-query read_spef update_timing report_worst_paths; do
            ms=$(grep "^TIME $step " "$log" | awk '{print ($4 ~ /^nano/) ? $3 / 1e6 : $3 / 1e3}')
            # every round kept beside the medians
            echo "$pct% $bin $dev $step" $ms >>"$OUT/spefq-rounds.txt"
            line="$line $step $(echo "$ms" | median)"
        done
        say "spefq $pct% ms (medians) $line"
        if [ -z "$first" ]; then first=/tmp/spefq-$bin-$dev.out
        elif ! cmp -s "$first" "/tmp/spefq-$bin-$dev.out"; then say "spefq: $bin $dev's output differs"; fi
    done
done
