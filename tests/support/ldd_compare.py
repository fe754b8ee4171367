"""The dependency list `ldd` prints and the same list from `cclforge inspect
--json`, in one form, so that the two can be compared line for line: each
object once where it was first loaded, 'name => path' or 'name => not
found', the interpreter as a bare path after the object that needed it first.
Used by tests/validate/debian_roots.sh and tests/fixtures/dist/ldd_agrees.py."""


def parse_ldd(stdout):
    """ldd's output as that list."""
    out = []
    for line in stdout.splitlines():
        line = line.strip()
        if " => " in line:
            name, rest = line.split(" => ", 1)
            out.append(name + " => " + ("not found" if rest.startswith("not found") else rest.split(" (0x")[0]))
        elif line.startswith("/") and " (0x" in line:
            out.append(line.split(" (0x")[0])
    return out


def ours_lines(target, strip=lambda p: p):
    """An inspect --json target as that list; strip maps our paths to ldd's
    (a root's prefix taken off)."""
    nodes, objs = target["nodes"], target["objects"]
    interp = next((i for i, o in enumerate(objs) if o["is_interp"]), -1)
    after = interp - 1 if interp > 0 else -1
    out = []
    if after == 0:
        out.append(strip(objs[interp]["path"]))
    for i, n in enumerate(nodes[1:], 1):
        name = n["expanded"] or n["needed"]
        if n["object"] < 0:
            out.append(name + " => not found")
            continue
        o = objs[n["object"]]
        if o["node"] != i or o["is_interp"]:
            continue
        p = strip(o["path"])
        out.append(p if name == p else name + " => " + p)
        if n["object"] == after:
            out.append(strip(objs[interp]["path"]))
    return out
