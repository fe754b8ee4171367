# `cclforge doctor` and `bridge plan`: an interpreter describes itself and says
# where its packages are, as one JSON object (src/survey/python.c reads it),
# without importing them: importlib.util.find_spec locates a package from
# sys.path without running its __init__ (importing torch takes seconds and may
# fail on a broken install, which is what is being diagnosed). For a dotted
# name it imports only the parent ("nvidia", a namespace package with no code).
import importlib.util, json, os, sys, sysconfig
# Run as a file, Python puts this file's folder first on sys.path where
# `python -c` puts the working directory (''): the path asked about is the
# latter (under -I or PYTHONSAFEPATH neither is there).
if sys.path and sys.path[0] and os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
    sys.path[0] = ''
def locate(name):
    try:
        spec = importlib.util.find_spec(name)
    except Exception:
        return None
    locs = list(spec.submodule_search_locations or []) if spec else []
    return locs[0] if locs else None
print(json.dumps({'executable': sys.executable,
  'version': '%d.%d' % sys.version_info[:2], 'tag': 'cp%d%d' % sys.version_info[:2],
  'ext_suffix': sysconfig.get_config_var('EXT_SUFFIX'), 'include': sysconfig.get_paths().get('include'),
  'torch': locate('torch'), 'nvidia.nccl': locate('nvidia.nccl'),
  'real_executable': os.path.realpath(sys.executable),
  'path': [p for p in sys.path if p and os.path.isdir(p)]}))
