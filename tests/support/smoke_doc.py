#!/usr/bin/env python3
"""A synthetic `cclforge smoke --pattern pairwise --json` document (schema
cclforge.smoke/2): every host pair once, one host slow (its pairs at a tenth of
the others' busbw, judged bad) and optionally one failing; names from a pattern.
Usage: smoke_doc.py NHOSTS [--slow I] [--failed I] [--names rack|plain|hostile]
       [--sizes B,B,...] [--inconclusive WHY] [--spread X] > doc.json"""
import argparse, json, random, sys

p = argparse.ArgumentParser()
p.add_argument("n", type=int)
p.add_argument("--slow", type=int, default=-1)
p.add_argument("--failed", type=int, default=-1)
p.add_argument("--names", default="plain")
p.add_argument("--sizes", default="1048576")
p.add_argument("--inconclusive", default=None)
p.add_argument("--spread", type=float, default=None)
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
groups, rows = [], []
gid = 0
bad_pairs = 0
for i in range(a.n):
    for j in range(i + 1, a.n):
        gid += 1
        failed = a.failed in (i, j)
        slow = a.slow in (i, j)
        bw = (1.0 if slow else 10.0) * (0.95 + 0.1 * rnd.random())
        bad = failed or slow
        bad_pairs += bad
        g = {"id": gid, "round": gid, "label": hosts[i] + "+" + hosts[j], "nranks": 2, "nhosts": 2,
             "tests": len(sizes), "avg_busbw_gbps": bw, "failed": failed, "bad": bad,
             "why": "slow" if slow else ""}
        if a.spread is not None:
            g["busbw_spread"] = a.spread
        groups.append(g)
        for b in sizes:
            r = {"op": "all_reduce", "bytes": b, "busbw_gbps": bw * b / max(sizes), "ok": not failed, "group": gid}
            if a.n <= 64:
                r["rank_time_us"] = [{"rank": i, "time_us": 10.0}, {"rank": j, "time_us": 10.0}]
            rows.append(r)
doc = {"schema": "cclforge.smoke/2", "role": "supervisor", "backend": "mpi", "launcher": "mpirun",
       "nranks": a.n, "lib_version": "Open MPI v4.1.4", "ok": bad_pairs == 0,
       "verdict": "pairwise: synthetic", "passed": len(rows), "failed": 0,
       "ranks": [{"rank": i, "hostname": h, "device": "host memory", "pid": 1000 + i} for i, h in enumerate(hosts)],
       "rows": rows, "groups": groups, "transports": []}
if a.inconclusive:
    doc["conclusive"] = False
    doc["inconclusive_why"] = a.inconclusive
json.dump(doc, sys.stdout, separators=(",", ":"))
