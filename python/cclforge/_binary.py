"""Where the native `cclforge` binary is, for every way pip installs a wheel."""
import os
import sys
import sysconfig

_EXE = "cclforge"


def _user_scripts():
    if sys.version_info >= (3, 10):
        scheme = sysconfig.get_preferred_scheme("user")
    else:
        scheme = "posix_user"
    return sysconfig.get_path("scripts", scheme=scheme)


def candidates():
    """The paths looked at, in order: $CCLFORGE_BIN, this interpreter's scripts
    directory (a venv or the system), the user scheme's (`pip install --user`),
    the prefix this package sits in (`pip install --prefix P`: P/lib/pythonX.Y/
    site-packages/cclforge -> P/bin) and `pip install --target DIR` (DIR/bin)."""
    here = os.path.dirname(os.path.abspath(__file__))
    site = os.path.dirname(here)
    paths = []
    if os.environ.get("CCLFORGE_BIN"):
        paths.append(os.environ["CCLFORGE_BIN"])
    paths.append(os.path.join(sysconfig.get_path("scripts"), _EXE))
    paths.append(os.path.join(_user_scripts(), _EXE))
    paths.append(os.path.normpath(os.path.join(site, "..", "..", "..", "bin", _EXE)))
    paths.append(os.path.join(site, "bin", _EXE))
    return paths


def find():
    """The native binary's path; FileNotFoundError naming every place looked."""
    paths = candidates()
    for p in paths:
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    raise FileNotFoundError(
        "the cclforge binary was not found; looked at: " + ", ".join(paths)
        + " (reinstall the cclforge wheel, or set CCLFORGE_BIN)")
