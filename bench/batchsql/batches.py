#!/usr/bin/env python3
# batches.py LOG [N]: the group-commit batches in a sqlcapture log (each
# query that inserts into orders): how many, their orders (distinct order
# numbers), bytes per order, the sizes; with N, the text of the first batch of
# N orders (replay it with batchsql).
import re, sys
from collections import Counter
log = sys.argv[1]; want = int(sys.argv[2]) if len(sys.argv) > 2 else 0
txt = open(log, 'rb').read().decode('utf-8', 'replace')
recs = re.split(r'(?m)^=== (\d+) bytes\n', txt)
sizes = Counter(); tot_b = tot_o = 0; shown = False
for i in range(1, len(recs), 2):
    n, body = int(recs[i]), recs[i + 1]
    if 'INSERT INTO orders' not in body:
        continue
    k = len(set(re.findall(r"'(\d{26})'", body)))
    sizes[k] += 1; tot_b += n; tot_o += k
    if k == want and not shown:
        print(body.rstrip('\n')); shown = True
if not want:
    print('batches', sum(sizes.values()), 'orders', tot_o, 'bytes/order %.0f' % (tot_b / tot_o),
          'mean size %.1f' % (tot_o / sum(sizes.values())))
    print(sorted(sizes.items()))
