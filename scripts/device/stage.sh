#!/usr/bin/env bash
# Stages what a device call needs (run here, in the worktree whose code is measured).
#
#   scripts/device/stage.sh /work/main/dev/NAME [label=/path/to/tachyon ...]
#
# The device tool sends the session's checkout (/work/main), so the stage goes into a
# git-ignored folder of it, carried with `carry: ["dev/NAME"]`. It holds these scripts and
# stage.tar.xz (stripped, so the call stays under the tool's 64 MiB):
#   bin/tachyon      this worktree's release build; bin/LABEL for each reference binary
#   tests/TARGET     the GPU-relevant test binaries (debug profile, as `cargo test` builds)
#   tree/            this worktree's tracked files (the tests' fixtures and testdata)
#   shared/          ../shared's tau2015 and opentimer-examples
#   ROOT, COMMIT     the worktree's path (the test binaries' compiled-in checkout) and HEAD
# On the device: `DIR=dev/NAME bash dev/NAME/check.sh` (or e2e.sh, bench.sh, spefq.sh).
set -euo pipefail
out=${1:?usage: stage.sh /work/main/dev/NAME [label=/path/to/tachyon ...]}
shift
root=$(git rev-parse --show-toplevel)
cd "$root"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/tests" "$stage/tree" "$stage/shared"

cargo build --release -p tachyon-cli
cp target/release/tachyon "$stage/bin/tachyon"
for ref in "$@"; do
    cp "${ref#*=}" "$stage/bin/${ref%%=*}"
done

# The test targets that open a GPU (the rest never reach one) and the crates' lib tests.
cargo test --no-run --message-format=json -p tachyon -p tachyon-cppr -p tachyon-gba \
    -p tachyon-gpu -p tachyon-kernels -p tachyon-paths 2>/dev/null |
    python3 -c '
import json, shutil, sys
GPU_TESTS = {"cppr_brute_force", "gpu_equals_cpu", "gpu_threads", "gpu_twins",
             "incremental_equals_full", "incremental_fuzz", "paths_after_resident",
             "tau2015_golden", "tau2015_paths"}
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") != "compiler-artifact" or not m.get("executable") or not m["profile"]["test"]:
        continue
    t = m["target"]
    name = t["name"] + "-lib" if "lib" in t["kind"] else t["name"]
    if "lib" not in t["kind"] and name not in GPU_TESTS:
        continue
    shutil.copy(m["executable"], sys.argv[1] + "/" + name)
' "$stage/tests"
strip "$stage"/bin/* "$stage"/tests/*

git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$stage/tree"
tar -cf - -C "$root/../shared" tau2015 opentimer-examples 2>/dev/null |
    tar -xf - -C "$stage/shared" ||
    tar -cf - -C /work/shared tau2015 opentimer-examples | tar -xf - -C "$stage/shared"
echo "$root" >"$stage/ROOT"
git rev-parse --short HEAD >"$stage/COMMIT"
git diff --quiet HEAD || echo "+uncommitted" >>"$stage/COMMIT"

mkdir -p "$out"
rm -f "$out"/*.sh
cp scripts/device/*.sh scripts/device/*.awk "$out/"
(cd "$stage" && tar -cf - .) | xz -T0 -6 >"$out/stage.tar.xz"
ls -l "$out"
du -sh "$out"
