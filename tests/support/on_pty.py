"""on_pty.py CMD...: runs CMD with stdin, stdout and stderr on a new
pseudo-terminal (as a terminal emulator, or Open MPI for each rank, gives
them), writes everything it printed to stdout and exits with its status."""
import os
import subprocess
import sys

master, slave = os.openpty()
child = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave, close_fds=True)
os.close(slave)
out = bytearray()
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: the child's side of the pty was closed
        break
    if not chunk:
        break
    out += chunk
status = child.wait()
sys.stdout.buffer.write(out)
sys.exit(status if status >= 0 else 128 - status)
