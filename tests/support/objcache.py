#!/usr/bin/env python3
"""objcache.py COMPILER ARGS...: a compiler cache for the tests' own compiles
against torch's headers (the plan's argv, setup.py's and CMake's compiles),
which cclforge's object cache does not see.

A single-source compile (-c SRC -o OBJ) is keyed by the compiler (its path and
`--version`), its arguments less the output and dependency-file options, the
source's bytes (the same source in another copy of a tree is the same object)
and the bytes of every file the preprocessor reads (`COMPILER -M`, so a torch
version or header edit is another key). A -D of a macro that no file read
names cannot change the object and is left out of the key. A key seen before
is a copy of its object, a new one runs the compile as given and keeps its
object; anything else (links, a failed dependency scan) runs as given.

Objects live in $OBJCACHE_DIR (made if missing). With $OBJCACHE_LOG, one line
per compile is appended there: "hit|miss|uncached KEY SOURCE".
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".c")
OPTS_WITH_VALUE = ("-o", "-MF", "-MT", "-MQ")
DEP_FLAGS = ("-MD", "-MMD", "-MP", "-c")


def log(kind, key, src):
    path = os.environ.get("OBJCACHE_LOG")
    if path:
        with open(path, "a") as f:
            f.write("%s %s %s\n" % (kind, key, src))


def run_as_given(cc, args):
    os.execvp(cc, [cc] + args)


def without_outputs(args):
    """The arguments less -o/-MF/-MT/-MQ and their values, -MD/-MMD/-MP and -c."""
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in OPTS_WITH_VALUE:
            skip = True
        elif a not in DEP_FLAGS:
            kept.append(a)
    return kept


def files_read(cc, args):
    """Every file the preprocessor reads for this compile, source first; None on failure."""
    fd, dep = tempfile.mkstemp(prefix="objcache-", suffix=".d")
    os.close(fd)
    try:
        r = subprocess.run([cc] + without_outputs(args) + ["-M", "-MF", dep],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            return None
        text = open(dep).read()
    finally:
        os.unlink(dep)
    text = text.replace("\\\n", " ")
    rule = text.split(":", 1)[1] if ":" in text else ""
    # make's escaping: "\ " is a space inside a name
    return [p.replace("\0", " ") for p in rule.replace("\\ ", "\0").split()]


def compiler_id(cc):
    path = shutil.which(cc) or cc
    r = subprocess.run([path, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return "%s %s" % (os.path.realpath(path), r.stdout.decode(errors="replace"))


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: objcache.py COMPILER ARGS...\n")
        return 2
    cc, args = sys.argv[1], sys.argv[2:]
    srcs = [a for a in args if a.endswith(SOURCE_SUFFIXES) and not a.startswith("-")]
    if "-c" not in args or "-o" not in args or len(srcs) != 1 or not os.environ.get("OBJCACHE_DIR"):
        run_as_given(cc, args)
    src = srcs[0]
    out = args[args.index("-o") + 1]
    depfile = args[args.index("-MF") + 1] if "-MF" in args else None
    deps = files_read(cc, args)
    if deps is None:
        log("uncached", "-", src)
        run_as_given(cc, args)
    texts = [open(src, "rb").read()] + [open(p, "rb").read() for p in deps if p != src]
    key = [compiler_id(cc)]
    for a in without_outputs(args):
        if a == src:
            key.append("<source>")
        elif a.startswith("-D") and not any(re.split(r"[=(]", a[2:])[0].encode() in t for t in texts):
            continue  # a macro no file names
        else:
            key.append(a)
    h = hashlib.sha256(repr(key).encode())
    for t in texts:
        h.update(hashlib.sha256(t).digest())
    key_hex = h.hexdigest()
    cache_dir = os.environ["OBJCACHE_DIR"]
    os.makedirs(cache_dir, exist_ok=True)
    cached = os.path.join(cache_dir, key_hex + ".o")
    if os.path.isfile(cached):
        shutil.copyfile(cached, out)
        if depfile:
            with open(depfile, "w") as f:
                f.write("%s: %s\n" % (out, " ".join(p.replace(" ", "\\ ") for p in deps)))
        log("hit", key_hex, src)
        return 0
    rc = subprocess.call([cc] + args)
    if rc == 0:
        tmp = "%s.%d.tmp" % (cached, os.getpid())
        shutil.copyfile(out, tmp)
        os.replace(tmp, cached)
        log("miss", key_hex, src)
    return rc


if __name__ == "__main__":
    sys.exit(main())
