"""`python -m cclforge ARGS...` runs the native binary with ARGS (exec, no wrapper)."""
import os
import sys

from ._binary import find


def main():
    exe = find()
    os.execv(exe, [exe, *sys.argv[1:]])


if __name__ == "__main__":
    main()
