#!/usr/bin/env python3
"""The release archives, byte for byte reproducible: the same staged tree and
SOURCE_DATE_EPOCH give the same bytes (members sorted, one timestamp, modes
0644/0755 only, no owner names, gzip without a name or time).

  pack.py wheel   STAGE PYPKG VERSION OUT.whl
  pack.py tarball STAGE VERSION ARCH OUT.tar.gz

STAGE is a `cmake --install` prefix (bin/cclforge, share/cclforge, share/man);
PYPKG the built Python package (<build>/python/cclforge). A wheel's platform
tags are read from its file name, cclforge-VERSION-py3-none-PLATFORMS.whl
(PLATFORMS dot-separated, as in manylinux_2_17_x86_64.manylinux2014_x86_64):
the name pip matches against the host and the WHEEL file's Tag lines are
then one fact."""
import base64
import gzip
import hashlib
import io
import os
import stat
import sys
import tarfile
import time
import zipfile

SUMMARY = ("Builds, inspects, packages and smoke-tests NCCL/RCCL and the "
           "ProcessGroupNCCL bridge of PyTorch stacks")


def epoch():
    # zip cannot say a time before 1980
    return max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)


def files_under(root):
    out = []
    for d, dirs, names in os.walk(root):
        dirs.sort()
        for n in sorted(names):
            p = os.path.join(d, n)
            if os.path.islink(p) or not os.path.isfile(p):
                sys.exit("pack.py: %s is not a regular file (links are not shipped)" % p)
            out.append(p)
    return out


def mode_of(path):
    return 0o755 if os.stat(path).st_mode & stat.S_IXUSR else 0o644


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def platform_tags(out, version):
    name = os.path.basename(out)
    head = "cclforge-%s-py3-none-" % version
    if not name.startswith(head) or not name.endswith(".whl") or len(name) == len(head) + 4:
        sys.exit("pack.py: %s is not named %sPLATFORMS.whl" % (name, head))
    return name[len(head):-len(".whl")].split(".")


def wheel_members(stage, pypkg, version, platforms):
    data = "cclforge-%s.data" % version
    info = "cclforge-%s.dist-info" % version
    members = []  # (name, bytes, mode)
    for p in files_under(pypkg):
        if "__pycache__" in p or not p.endswith(".py"):
            continue
        members.append(("cclforge/" + os.path.relpath(p, pypkg), open(p, "rb").read(), 0o644))
    exe = os.path.join(stage, "bin", "cclforge")
    members.append((data + "/scripts/cclforge", open(exe, "rb").read(), 0o755))
    for p in files_under(os.path.join(stage, "share")):
        members.append((data + "/data/share/" + os.path.relpath(p, os.path.join(stage, "share")),
                        open(p, "rb").read(), mode_of(p)))
    members.sort()
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md"), encoding="utf-8").read()
    metadata = ("Metadata-Version: 2.1\nName: cclforge\nVersion: %s\nSummary: %s\n"
                "Requires-Python: >=3.6\nClassifier: Operating System :: POSIX :: Linux\n"
                "Classifier: Programming Language :: C\n"
                "Description-Content-Type: text/markdown\n\n%s" % (version, SUMMARY, readme))
    wheel = ("Wheel-Version: 1.0\nGenerator: cclforge scripts/dist/pack.py\nRoot-Is-Purelib: false\n" +
             "".join("Tag: py3-none-%s\n" % p for p in platforms))
    members.append((info + "/METADATA", metadata.encode(), 0o644))
    members.append((info + "/WHEEL", wheel.encode(), 0o644))
    record = [record_line(n, b) for n, b, _ in members] + [info + "/RECORD,,"]
    members.append((info + "/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
    return members


def write_wheel(members, out):
    stamp = time.gmtime(epoch())[:6]
    with zipfile.ZipFile(out + ".tmp", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, data, mode in members:
            zi = zipfile.ZipInfo(name, date_time=stamp)
            zi.create_system = 3
            zi.external_attr = (stat.S_IFREG | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data, compresslevel=9)
    os.replace(out + ".tmp", out)


def write_tarball(stage, version, arch, out):
    top = "cclforge-%s-linux-%s" % (version, arch)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        names = [(os.path.relpath(p, stage), p) for p in files_under(stage)]
        alldirs = set()
        for rel, _ in names:
            d = os.path.dirname(rel)
            while d:
                alldirs.add(d)
                d = os.path.dirname(d)
        def info(name, kind, mode, size=0):
            ti = tarfile.TarInfo(top + ("/" + name if name else ""))
            ti.type, ti.mode, ti.size, ti.mtime = kind, mode, size, epoch()
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = ""
            return ti
        t.addfile(info("", tarfile.DIRTYPE, 0o755))
        for d in sorted(alldirs):
            t.addfile(info(d, tarfile.DIRTYPE, 0o755))
        for rel, p in sorted(names):
            data = open(p, "rb").read()
            t.addfile(info(rel, tarfile.REGTYPE, mode_of(p), len(data)), io.BytesIO(data))
    with open(out + ".tmp", "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=9) as g:
            g.write(buf.getvalue())
    os.replace(out + ".tmp", out)


def main(argv):
    if len(argv) == 5 and argv[0] == "wheel":
        _, stage, pypkg, version, out = argv
        write_wheel(wheel_members(stage, pypkg, version, platform_tags(out, version)), out)
    elif len(argv) == 5 and argv[0] == "tarball":
        _, stage, version, arch, out = argv
        write_tarball(stage, version, arch, out)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
