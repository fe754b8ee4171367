#!/usr/bin/env bash
# Validates `cclforge inspect --root` against the real loader of other glibc
# releases: makes minimal Debian roots with debootstrap (bullseye glibc 2.31,
# bookworm 2.36, trixie 2.41), then compares `chroot ROOT ldd FILE` with
# `cclforge inspect --root ROOT FILE` on
#   1. every ELF shared object and PIE executable of each root, and
#   2. a library placed in every glibc-hwcaps and legacy hwcaps subdirectory
#      any glibc may search (of an RPATH directory, and of /usr/local/lib
#      through ld.so.cache), removing the loader's pick until the plain
#      directory is left, on this CPU as it is and again with GLIBC_TUNABLES
#      masking AVX2/AVX-512, so an Intel CPU names no platform: the path AMD
#      CPUs take (the tunable names differ before 2.33).
# Not part of CI (it downloads ~60 MB per root); one command for anyone:
#   sudo bash tests/validate/debian_roots.sh [--cache DIR] [--cclforge BIN] [SUITE...]
# Roots are cached in DIR (default ~/.cache/cclforge/debian-roots). Needs root
# (debootstrap, chroot), debootstrap, python3 and a C compiler; exits 77 when
# any is missing or no root can be made (no network), 1 on any difference.
# Results: docs/ldso.md ("Validation against other glibc releases").
set -uo pipefail
cd "$(dirname "$0")/../.."
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/cclforge/debian-roots
CCLFORGE=build/cclforge
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITES=()
while [ $# -gt 0 ]; do
    case $1 in
    --cache) CACHE=$2; shift 2 ;;
    --cclforge) CCLFORGE=$2; shift 2 ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) SUITES+=("$1"); shift ;;
    esac
done
[ ${#SUITES[@]} -eq 0 ] && SUITES=(bullseye bookworm trixie)
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap and chroot)"
for tool in debootstrap chroot python3 cc; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (apt-get install debootstrap)"
done
[ -x "$CCLFORGE" ] || skip "no cclforge binary at $CCLFORGE (build first, or --cclforge BIN)"
CCLFORGE=$(cd "$(dirname "$CCLFORGE")" && pwd)/$(basename "$CCLFORGE")
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cclforge-validate-XXXXXX")
HWDIR=/opt/cclforge-validate
trap 'rm -rf "$WORK"; for s in "${SUITES[@]}"; do rm -rf "$CACHE/$s$HWDIR" "$CACHE/$s/usr/local/lib/cclforge-validate" 2>/dev/null; [ -d "$CACHE/$s/etc" ] && rm -f "$CACHE/$s/usr/local/lib/libcfv_cache.so" && chroot "$CACHE/$s" ldconfig 2>/dev/null; done' EXIT

# The two test libraries, built here without libc so any release loads them.
printf 'int cfv_hw(void){return 1;}\n' >"$WORK/hw.c"
printf 'int cfv_hw(void); int cfv_top(void){return cfv_hw();}\n' >"$WORK/top.c"
cc -shared -fPIC -nostdlib -o "$WORK/libcfv_hw.so" "$WORK/hw.c" -Wl,-soname,libcfv_hw.so || exit 1
cc -shared -fPIC -nostdlib -o "$WORK/libcfv_cache.so" "$WORK/hw.c" -Wl,-soname,libcfv_cache.so || exit 1
cc -shared -fPIC -nostdlib -o "$WORK/libcfv_top.so" "$WORK/top.c" -L"$WORK" -lcfv_hw -Wl,-soname,libcfv_top.so \
    -Wl,--disable-new-dtags,-rpath,$HWDIR/lib || exit 1
cc -shared -fPIC -nostdlib -o "$WORK/libcfv_ctop.so" "$WORK/top.c" -L"$WORK" -lcfv_cache -Wl,-soname,libcfv_ctop.so || exit 1

ran=0
status=0
for suite in "${SUITES[@]}"; do
    root=$CACHE/$suite
    if [ ! -e "$root/.complete" ]; then
        echo "== $suite: debootstrap --variant=minbase into $root (once; cached)"
        rm -rf "$root.tmp"
        if ! nice -n 19 debootstrap --variant=minbase "$suite" "$root.tmp" "$MIRROR" >"$CACHE/$suite.log" 2>&1; then
            echo "   cannot make the $suite root (no network?): see $CACHE/$suite.log"
            rm -rf "$root.tmp"
            continue
        fi
        rm -rf "$root" && mv "$root.tmp" "$root" && touch "$root/.complete"
    fi
    ran=$((ran + 1))
    python3 - "$root" "$suite" "$CCLFORGE" "$WORK" "$HWDIR" <<'PY' || status=1
import json, os, shutil, struct, subprocess, sys

sys.path.insert(0, "tests/support")
from ldd_compare import parse_ldd, ours_lines as shared_ours_lines

root, suite, cclforge, work, hwdir = sys.argv[1:6]

def ldd_lines(path, env=None):
    """chroot ROOT ldd PATH as a list of 'name => path' / 'path' lines, or None."""
    e = dict(os.environ, LC_ALL="C")
    e.pop("LD_LIBRARY_PATH", None)
    e.pop("GLIBC_TUNABLES", None)
    cmd = ["chroot", root, "ldd", path]
    if env:
        cmd = ["chroot", root, "env"] + [f"{k}={v}" for k, v in env.items()] + ["ldd", path]
    r = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=60)
    if "not a dynamic executable" in r.stdout + r.stderr or "statically linked" in r.stdout:
        return None
    return parse_ldd(r.stdout)

def strip(p):
    return p[len(root):] if p and p.startswith(root + "/") else p

def ours_lines(target):
    """The same list from an inspect --json target (ts_ldd_compare's order)."""
    return shared_ours_lines(target, strip)

def inspect(paths, env=None):
    e = dict(os.environ)
    e.pop("LD_LIBRARY_PATH", None)
    e.pop("GLIBC_TUNABLES", None)
    if env:
        e.update(env)
    r = subprocess.run([cclforge, "inspect", "--root", root, "--json", "--no-gpu", "--no-banner",
                        "--ignore-ld-library-path"] + [root + p for p in paths],
                       capture_output=True, text=True, env=e, timeout=600)
    return json.loads(r.stdout)["targets"]

def is_dynamic_elf(path):
    try:
        with open(path, "rb") as f:
            h = f.read(64)
    except OSError:
        return False
    return len(h) == 64 and h[:4] == b"\x7fELF" and h[4] == 2 and struct.unpack_from("<H", h, 16)[0] == 3

ldd_version = subprocess.run(["chroot", root, "ldd", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
want_glibc = ldd_version.rsplit(" ", 1)[-1]

# 1. every shared object and PIE executable of the root
files = []
for d, subdirs, names in os.walk(root):
    rel = d[len(root):] or "/"
    if rel.startswith(("/proc", "/sys", "/dev", hwdir)):
        subdirs[:] = []
        continue
    for n in names:
        p = os.path.join(d, n)
        if not os.path.islink(p) and os.path.isfile(p) and is_dynamic_elf(p):
            files.append(p[len(root):])
files.sort()
targets = []
for i in range(0, len(files), 200):
    targets += inspect(files[i:i + 200])
glibc_seen = {t["loader"]["facts"]["glibc"] for t in targets if t["loader"]}
same = differ = skipped = 0
diffs = []
for path, t in zip(files, targets):
    theirs = ldd_lines(path)
    if theirs is None:
        skipped += 1
        continue
    if t["error"]:
        differ += 1
        diffs.append(f"{path}: cclforge: {t['error']}")
        continue
    ours = ours_lines(t)
    if ours == theirs:
        same += 1
    else:
        differ += 1
        diffs.append(f"{path}:\n  cclforge: {ours}\n  ldd:      {theirs}")
print(f"== {suite} ({ldd_version}); cclforge read glibc {', '.join(sorted(glibc_seen))}"
      f"{'' if glibc_seen == {want_glibc} else ' -- DIFFERS from ' + want_glibc}")
print(f"   every shared object: {len(files)} ELF files, {same} the same as ldd, {differ} different, "
      f"{skipped} that ldd does not list (static)")
for d in diffs[:20]:
    print("   " + d.replace("\n", "\n   "))

# 2. a library in every subdirectory, through an RPATH and through ld.so.cache
subs = [f"glibc-hwcaps/x86-64-v{lv}" for lv in (4, 3, 2)]
for plat in ("haswell", "x86_64", "xeon_phi"):
    names = ["x86_64", "avx512_1", plat, "tls"]
    for m in range(15, 0, -1):
        s = "/".join(names[k] for k in range(3, -1, -1) if m & (1 << k))
        if s not in subs:
            subs.append(s)

def place(base, lib):
    shutil.rmtree(base, ignore_errors=True)
    for s in [""] + subs:
        os.makedirs(os.path.join(base, s), exist_ok=True)
        shutil.copy(os.path.join(work, lib), os.path.join(base, s, lib))

def subdir_of(p, base):
    return os.path.dirname(p)[len(base):].strip("/")

def walk(label, top, lib, base_in_root, env, ldconfig):
    """Removes the loader's pick until the plain directory; returns (picks, differences)."""
    base = root + base_in_root
    place(base, lib)
    picks, bad = [], []
    while True:
        if ldconfig:
            subprocess.run(["chroot", root, "ldconfig"], check=True)
        theirs = ldd_lines(top, env)
        t = inspect([top], env)[0]
        ours = ours_lines(t)
        node = next(n for n in t["nodes"] if n["needed"] == lib)
        pick = subdir_of(strip(node["path"]) or "", base_in_root) if node["path"] else None
        picks.append(pick)
        if ours != theirs:
            bad.append(f"{label}: after {len(picks) - 1} removals cclforge {ours}, ldd {theirs}")
            break
        if not pick:
            break
        os.unlink(os.path.join(base, pick, lib))
    shutil.rmtree(base, ignore_errors=True)
    return picks, bad

shutil.copy(os.path.join(work, "libcfv_top.so"), root + "/usr/lib/libcfv_top.so")
shutil.copy(os.path.join(work, "libcfv_ctop.so"), root + "/usr/lib/libcfv_ctop.so")
runs = [("this CPU", None)]
major, minor = (int(x) for x in want_glibc.split(".")[:2])
if (major, minor) >= (2, 33):
    runs.append(("GLIBC_TUNABLES -AVX2,-AVX512F", {"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-AVX512F"}))
elif (major, minor) >= (2, 29):
    # before 2.33 the platform test reads AVX2_Usable, and AVX512CD's cpuid bit
    runs.append(("GLIBC_TUNABLES -AVX2_Usable,-AVX512CD", {"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2_Usable,-AVX512CD"}))
all_bad = []
for label, env in runs:
    for how, top, lib, base, ldc in (("RPATH", "/usr/lib/libcfv_top.so", "libcfv_hw.so", hwdir + "/lib", False),
                                     ("ld.so.cache", "/usr/lib/libcfv_ctop.so", "libcfv_cache.so",
                                      "/usr/local/lib/cclforge-validate", True)):
        if ldc:
            with open(root + "/etc/ld.so.conf.d/cclforge-validate.conf", "w") as f:
                f.write(base + "\n")
        picks, bad = walk(f"{label}, {how}", top, lib, base, env, ldc)
        if ldc:
            os.unlink(root + "/etc/ld.so.conf.d/cclforge-validate.conf")
            subprocess.run(["chroot", root, "ldconfig"], check=True)
        all_bad += bad
        print(f"   {label}, {how}: {len(picks)} picks, {'all' if not bad else 'NOT all'} the same as ldd: "
              + " > ".join(p if p else "(the directory)" for p in picks[:6]) + (" > ..." if len(picks) > 6 else ""))
os.unlink(root + "/usr/lib/libcfv_top.so")
os.unlink(root + "/usr/lib/libcfv_ctop.so")
for b in all_bad:
    print("   " + b)
sys.exit(1 if differ or all_bad or glibc_seen != {want_glibc} else 0)
PY
done
[ "$ran" -eq 0 ] && skip "no Debian root could be made (network?)"
exit $status
