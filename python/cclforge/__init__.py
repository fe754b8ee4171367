"""cclforge: the native `cclforge` command and the Python side a plugin's build uses.

The command is the native binary the wheel installs as a script (no Python on
its start-up path); this package only finds it (`cclforge.binary()`), runs it
(`python -m cclforge`) and, in `cclforge.build`, asks it for bridge plans.
"""
from ._binary import find as binary
from ._version import __version__

__all__ = ["binary", "__version__"]
