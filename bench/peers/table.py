"""Prints the ratio table from all.tsv (peer, op, dataset, ms per line)."""
import collections
import sys

t = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    peer, op, data, ms = line.rstrip("\n").split("\t")
    t[(op, data)][peer] = float(ms)

ORDER = ["validate", "validate_unflagged", "lookup", "batch_random", "batch", "batch2", "scan50", "statistics"]
LABEL = {
    "validate": "validate (create, full checks)",
    "validate_unflagged": "validate, ordered data not flagged sorted",
    "lookup": "1M point lookups",
    "batch_random": "1M random queries, batch (index), 1 thread",
    "batch": "1M sorted queries, batch, 1 thread",
    "batch2": "1M sorted queries, batch, 2 threads",
    "scan50": "50 lookups, unsorted (scan)",
    "statistics": "statistics",
}
print("| operation | data | ours (ms) | peer | peer (ms) | peer / ours |")
print("|---|---|---:|---|---:|---:|")
for (op, data) in sorted(t, key=lambda k: (k[1], ORDER.index(k[0]) if k[0] in ORDER else 99)):
    row = t[(op, data)]
    ours = row.get("ours")
    if ours is None:
        continue
    for peer, ms in sorted(row.items()):
        if peer == "ours":
            continue
        print(f"| {LABEL.get(op, op)} | {data} | {ours:.2f} | {peer} | {ms:.2f} | {ms / ours:.2f}x |")
    # Peers that measured a related operation under another name.
    if op == "validate":
        for other in ("validate_dup",):
            for peer, ms in sorted(t.get((other, data), {}).items()):
                print(f"| validate vs build with dup operator | {data} | {ours:.2f} | {peer} | {ms:.2f} | {ms / ours:.2f}x |")
    if op in ("batch", "batch_random"):
        for peer, ms in sorted(t.get(("lookup", data), {}).items()):
            if peer not in ("ours", "hurray-core"):
                print(f"| batch vs peer's 1M single lookups | {data} | {ours:.2f} | {peer} | {ms:.2f} | {ms / ours:.2f}x |")
