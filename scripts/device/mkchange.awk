# A SPEF change file from a design's SPEF: every EVERY-th net from OFFSET (its header
# kept), capacitances (and the net's total) scaled by SCALE.
#   awk -v EVERY=10 -v OFFSET=3 -v SCALE=1.3 -f mkchange.awk design.spef >change.spef
BEGIN { n = -1; keep = 1 }
/^\*D_NET / {
    n++
    keep = (n % EVERY == OFFSET % EVERY)
    if (keep) { printf "%s %s %.4f\n", $1, $2, $3 * SCALE }
    incap = 0
    next
}
/^\*CAP/ { incap = 1; if (keep) print; next }
/^\*(RES|END|CONN)/ { incap = 0; if (keep) print; next }
{
    if (!keep) next
    if (incap && NF >= 3) { $NF = sprintf("%.4f", $NF * SCALE) }
    print
}
