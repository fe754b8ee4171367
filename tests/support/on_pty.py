"""on_pty.py CMD...: runs CMD with stdin, stdout and stderr on a new
pseudo-terminal (as a terminal emulator, or Open MPI for each rank, gives
them), writes everything it printed to stdout and exits with its status.

The end of the output is not found by the master's EIO after the child's last
close: under load that EIO has come before the child's last lines were read
(cli.color once saw only doctor's first line). This side keeps its own copy of
the terminal open, so the master never reports EIO, waits for the child, then
reads until the master has nothing left (a non-blocking read pushes the
kernel's pending input before it says EAGAIN)."""
import fcntl
import os
import select
import subprocess
import sys

master, slave = os.openpty()
child = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave, close_fds=True)
out = bytearray()


def read_available():
    while True:
        try:
            chunk = os.read(master, 65536)
        except BlockingIOError:
            return
        if not chunk:
            return
        out.extend(chunk)


fcntl.fcntl(master, fcntl.F_SETFL, fcntl.fcntl(master, fcntl.F_GETFL) | os.O_NONBLOCK)
while child.poll() is None:
    # read as it writes: a child filling the terminal's buffer would block
    select.select([master], [], [], 0.1)
    read_available()
read_available()
os.close(slave)
os.close(master)
status = child.returncode
sys.stdout.buffer.write(out)
sys.exit(status if status >= 0 else 128 - status)
