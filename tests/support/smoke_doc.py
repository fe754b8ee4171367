#!/usr/bin/env python3
"""A synthetic `cclforge smoke --pattern pairwise --json` document (schema
cclforge.smoke/2): every host pair once, one host slow (its pairs at 1/200 of
the others' busbw, judged bad) and optionally one failing; names from a pattern.
Usage: smoke_doc.py NHOSTS [--slow I] [--failed I] [--names rack|plain|hostile]
       [--sizes B,B,...] [--inconclusive WHY] [--spread X] [--links GBIT] > doc.json
--links: each rank records one IB port of GBIT Gb/s (ranks[].links)"""
import argparse, json, random, sys

p = argparse.ArgumentParser()
p.add_argument("n", type=int)
p.add_argument("--slow", type=int, default=-1)
p.add_argument("--failed", type=int, default=-1)
p.add_argument("--names", default="plain")
p.add_argument("--sizes", default="1048576")
p.add_argument("--inconclusive", default=None)
p.add_argument("--spread", type=float, default=None)
p.add_argument("--links", type=float, default=None)
a = p.parse_args()

def name(i):
    if a.names == "rack":
        return "rack%02d-node%02d" % (i // 32 + 1, i % 32 + 1)
    if a.names == "hostile":
        special = ["<script>alert(1)</script>", "a\"b'c&d", "x+y", "</svg><img src=http://evil/>",
                   "caf\u00e9-\u2603", "n\u0001ctl"]
        return special[i] if i < len(special) else "h%d" % i
    return "node%04d" % (i + 1)

rnd = random.Random(43)
hosts = [name(i) for i in range(a.n)]
sizes = [int(s) for s in a.sizes.split(",")]
big = max(sizes)
out = sys.stdout
js = lambda v: json.dumps(v, separators=(",", ":"))
groups, rows = [], []
gid = 0
bad_pairs = 0
for i in range(a.n):
    for j in range(i + 1, a.n):
        gid += 1
        failed = a.failed in (i, j)
        slow = a.slow in (i, j)
        bw = (0.05 if slow else 10.0) * (0.95 + 0.1 * rnd.random())
        bad = failed or slow
        bad_pairs += bad
        extra = ',"busbw_spread":%g' % a.spread if a.spread is not None else ""
        groups.append('{"id":%d,"label":%s,"nhosts":2,"avg_busbw_gbps":%.4f,"failed":%s,"bad":%s%s}' % (
            gid, js(hosts[i] + "+" + hosts[j]), bw, js(failed), js(bad), extra))
        for b in sizes:
            times = ',"rank_time_us":[{"rank":%d,"time_us":10},{"rank":%d,"time_us":10}]' % (i, j) if a.n <= 64 else ""
            rows.append('{"op":"all_reduce","bytes":%d,"busbw_gbps":%.4f,"ok":%s,"group":%d%s}' % (
                b, bw * b / big, js(not failed), gid, times))
head = {"schema": "cclforge.smoke/2", "role": "supervisor", "backend": "mpi", "launcher": "mpirun",
        "nranks": a.n, "lib_version": "Open MPI v4.1.4", "ok": bad_pairs == 0,
        "verdict": "pairwise: synthetic", "passed": len(rows), "failed": 0, "transports": [],
        "ranks": [{"rank": i, "hostname": h, "device": "host memory", "pid": 1000 + i} for i, h in enumerate(hosts)]}
if a.links:
    for r in head["ranks"]:
        r["links"] = [{"name": "mlx5_0:1", "kind": "ib", "line_gbit": a.links, "capacity_gbps": a.links / 8,
                       "limit": "line"}]
# what the run's search names: the slow and the failing host (nobody when it cannot tell)
head["bad_hosts"] = [] if a.inconclusive else [hosts[i] for i in (a.slow, a.failed) if 0 <= i < a.n]
if a.inconclusive:
    head["conclusive"] = False
    head["inconclusive_why"] = a.inconclusive
out.write(js(head)[:-1])
out.write(',"groups":[')
out.write(",".join(groups))
out.write('],"rows":[')
out.write(",".join(rows))
out.write("]}\n")
