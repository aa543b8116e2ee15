# Sourced by the device scripts (on the device machine, from the repository root):
# unpacks $DIR/stage.tar.xz into /tmp/stage once per machine and sets the test
# environment. `say` prints a line and keeps it in $OUT/summary.txt.
set -uo pipefail
DIR=${DIR:?DIR=dev/NAME: the staged folder, carried}
S=/tmp/stage
if [ ! -f "$S/.unpacked-$(stat -c %Y "$DIR/stage.tar.xz")" ]; then
    rm -rf "$S" && mkdir -p "$S"
    xz -dc "$DIR/stage.tar.xz" | tar -xf - -C "$S"
    touch "$S/.unpacked-$(stat -c %Y "$DIR/stage.tar.xz")"
fi
# The test binaries find their fixtures through the checkout path they were built in.
ROOT=$(cat "$S/ROOT")
if [ ! -e "$ROOT/Cargo.toml" ]; then
    mkdir -p "$(dirname "$ROOT")"
    rm -rf "$ROOT"
    ln -sfn "$S/tree" "$ROOT"
fi
export TACHYON_SHARED=$S/shared TACHYON_REQUIRE_SHARED=1 TACHYON_REQUIRE_GPU=1
T=$S/bin/tachyon
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
say() { echo "$*"; echo "$*" >>"$OUT/summary.txt"; }
# The lease: leases of one kind differ in speed, so every figure names what it ran on.
lease() {
    say "lease: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | head -1);" \
        "$(nproc) cpus; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2);" \
        "thp $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null);" \
        "commit $(tr '\n' ' ' <"$S/COMMIT")"
}
# gen GATES: a generated design in /tmp/gGATES (made once per machine).
gen() {
    [ -f "/tmp/g$1/gen$1.tau2015" ] || "$T" -q gen --gates "$1" --seed 1 --out "/tmp/g$1" >/dev/null 2>&1
    ls /tmp/g$1/*.tau2015 | head -1
}
# median of the numbers on standard input
median() { sort -n | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
