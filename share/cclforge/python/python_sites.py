# `cclforge wheel verify --system-site-packages`: the package directories this
# interpreter imports from (src/pkg/wheel_python_sites.c), one a line:
# sys.path's directories, less the standard library and its extension modules
# (a zip or a missing entry is no directory). Run isolated (python -I).
import os, sys, sysconfig
paths = sysconfig.get_paths()
std = {os.path.realpath(paths[k]) for k in ('stdlib', 'platstdlib')}
std |= {os.path.join(s, 'lib-dynload') for s in list(std)}
seen = set()
for p in sys.path:
    r = os.path.realpath(p) if p else ''
    if r and r not in std and r not in seen and os.path.isdir(r):
        seen.add(r)
        print(r)
