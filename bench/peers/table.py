"""Prints the ratio table from all.tsv (peer, op, dataset, ms per line)."""
import collections
import sys

t = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    peer, op, data, ms = line.rstrip("\n").split("\t")
    t[(op, data)][peer] = float(ms)

ORDER = ["validate", "validate2", "validate_unflagged", "lookup", "lookup_first", "lookup_index", "lookup_values",
         "probe", "probe_index",
         "batch_random", "batch_random2", "batch_values", "batch_values2", "batch", "batch2",
         "scan50", "statistics"]
LABEL = {
    "validate": "validate (create, full checks)",
    "validate2": "validate, 2 threads",
    "lookup_index": "1M point lookups, HURRAY_COO_INDEX",
    "lookup_values": "1M point lookups, HURRAY_COO_INDEX_VALUES",
    "batch_values": "1M random queries, batch (index with values), 1 thread",
    "batch_values2": "1M random queries, batch (index with values), 2 threads",
    "batch_random2": "1M random queries, batch (index), 2 threads",
    "validate_unflagged": "validate, ordered data not flagged sorted",
    "lookup": "1M point lookups",
    "lookup_first": "1M point lookups, first use (directory built)",
    "probe": "1M inline probes (hurray_coo_probe.h), no index",
    "probe_index": "1M inline probes (hurray_coo_probe.h), HURRAY_COO_INDEX",
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
    if op in ("lookup_index", "lookup_values", "probe", "probe_index"):
        for peer, ms in sorted(t.get(("lookup", data), {}).items()):
            if peer not in ("ours", "ours (Rust call)"):
                print(f"| {LABEL[op]} vs peer's lookups | {data} | {ours:.2f} | {peer} | {ms:.2f} | {ms / ours:.2f}x |")
    if op in ("batch", "batch_random", "batch_values"):
        for peer, ms in sorted(t.get(("lookup", data), {}).items()):
            if peer not in ("ours", "hurray-core"):
                print(f"| batch vs peer's 1M single lookups | {data} | {ours:.2f} | {peer} | {ms:.2f} | {ms / ours:.2f}x |")


def ms(op, data, peer):
    return t.get((op, data), {}).get(peer)


def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "n/a"


print()
print("### Targets of issue 11 (ratios above 1: ours faster; ours = C calls through the header)")
print()
print("| target | data | ours (ms) | reference | ref (ms) | ratio | goal |")
print("|---|---|---:|---|---:|---:|---|")
datas = sorted({d for (_, d) in t})
for d in datas:
    li, ln = ms("lookup_index", d, "ours"), ms("lookup", d, "ours")
    lv = ms("lookup_values", d, "ours")
    for peer, goal in (("eigen", ">= 1x"), ("graphblas", ">= 2x")):
        p = ms("lookup", d, peer)
        if li and p:
            print(f"| 1. single lookups, index | {d} | {li:.1f} | {peer} lookup | {p:.1f} | {ratio(p, li)} | {goal} |")
        if lv and p:
            print(f"| 1. single lookups, index with values | {d} | {lv:.1f} | {peer} lookup | {p:.1f} | {ratio(p, lv)} | {goal} |")
    p = ms("lookup", d, "hurray-core")
    if ln and p:
        print(f"| 1. single lookups, no index | {d} | {ln:.1f} | hurray-core lookup | {p:.1f} | {ratio(p, ln)} | >= 2x |")
    lf = ms("lookup_first", d, "ours")
    if lf and p:
        print(f"| 1. single lookups, no index, first use | {d} | {lf:.1f} | hurray-core lookup | {p:.1f} | {ratio(p, lf)} | >= 2x |")
    b1, b2 = ms("batch_random", d, "ours"), ms("batch_random2", d, "ours")
    p = ms("lookup", d, "eigen")
    if b1 and p:
        print(f"| 2. batch, 1 thread | {d} | {b1:.1f} | eigen single lookups | {p:.1f} | {ratio(p, b1)} | >= 2x |")
    if b1 and b2:
        print(f"| 2. batch, 2 threads / 1 | {d} | {b2:.1f} | ours, 1 thread | {b1:.1f} | {ratio(b1, b2)} | >= 1.7x |")
    bv1, bv2 = ms("batch_values", d, "ours"), ms("batch_values2", d, "ours")
    if bv1 and p:
        print(f"| 2. batch (index with values), 1 thread | {d} | {bv1:.1f} | eigen single lookups | {p:.1f} | {ratio(p, bv1)} | >= 2x |")
    if bv1 and bv2:
        print(f"| 2. batch (index with values), 2 threads / 1 | {d} | {bv2:.1f} | ours, 1 thread | {bv1:.1f} | {ratio(bv1, bv2)} | >= 1.7x |")
    v, v2, st = ms("validate", d, "ours"), ms("validate2", d, "ours"), ms("validate", d, "c-stream")
    if "unsorted" not in d and v and st:
        print(f"| 3. sorted validation | {d} | {v:.2f} | C stream of the index | {st:.2f} | {ratio(st, v)} | >= 0.8x |")
    if "unsorted" in d and v:
        peers = {p: x for p, x in t.get(("validate", d), {}).items()
                 if p not in ("ours", "ours (Rust call)", "c-stream", "baseline")}
        if peers:
            fastest = min(peers, key=peers.get)
            print(f"| 4. unsorted validation | {d} | {v:.2f} | fastest peer ({fastest}) | {peers[fastest]:.2f} | {ratio(peers[fastest], v)} | >= 3x |")
    if v and v2:
        print(f"| 3/4. validation, 2 threads / 1 | {d} | {v2:.2f} | ours, 1 thread | {v:.2f} | {ratio(v, v2)} | >= 1.7x |")
