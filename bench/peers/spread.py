"""The spread of the issue-11 target table over several runs of
bench/peers/run.sh: one row per (target, data, reference), with the median
ratio and its range.

  python3 bench/peers/spread.py run1.log run2.log run3.log
"""
import statistics
import sys

rows = {}
order = []
for path in sys.argv[1:]:
    on = False
    for line in open(path):
        if line.startswith("### Targets"):
            on = True
            continue
        if not on or not line.startswith("| ") or line.startswith("| target") or "---" in line:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        target, data, ours, ref, ref_ms, ratio, goal = cells
        key = (target, data, ref, goal)
        if key not in rows:
            rows[key] = []
            order.append(key)
        rows[key].append((float(ours), float(ref_ms), float(ratio.rstrip("x"))))

print(f"Runs: {len(sys.argv) - 1}. Ratios above 1: ours faster.")
print()
print("| target | data | ours (ms, median) | reference | ref (ms, median) | ratio, median (range) | goal |")
print("|---|---|---:|---|---:|---|---|")
for key in order:
    target, data, ref, goal = key
    v = rows[key]
    med = lambda i: statistics.median(x[i] for x in v)
    lo, hi = min(x[2] for x in v), max(x[2] for x in v)
    print(f"| {target} | {data} | {med(0):.2f} | {ref} | {med(1):.2f} | "
          f"{med(2):.2f}x ({lo:.2f}-{hi:.2f}, {len(v)} runs) | {goal} |")
