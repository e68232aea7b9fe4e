"""The table of bench/peers/file.sh, from the C driver's lines on stdin."""
import sys

print(f"{'file':34} {'nnz':>9} {'idx MB':>7} {'open+get':>10} {'open+perm':>10} "
      f"{'stream':>9} {'hot sum':>9} {'read()':>9} {'stream/ours':>11} {'hot/ours':>8}")
for line in sys.stdin:
    f, nnz, b, og, op, s, hot, cp = line.split()
    og, op, s, hot, cp = map(float, (og, op, s, hot, cp))
    name = f.rsplit("/", 1)[-1]
    print(f"{name:34} {int(nnz):9d} {int(b) / 1e6:7.1f} {og * 1e3:8.2f}ms {op * 1e3:8.3f}ms "
          f"{s * 1e3:7.2f}ms {hot * 1e3:7.2f}ms {cp * 1e3:7.2f}ms {s / og:11.2f} {hot / og:8.2f}")
