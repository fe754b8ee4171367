#!/usr/bin/env bash
# `wheel verify` streams the members on a pool of workers (CCLFORGE_WHEEL_JOBS,
# src/pkg/wheel_stream_pool.c), dealt largest first; the report must be the
# one-worker report byte for byte. Real zips made here with Python's zipfile,
# real ELF members linked here (copied into the layout by the workers):
#   many: 3,000 members, large ones at the end (dealt first), one stored
#         member deep inside with a flipped data byte (its CRC-32 fails), one
#         whose bytes differ from RECORD's digest; found with every worker
#         count, and text and JSON identical across 1, 2, 3 and 8 workers;
#   noisy: 400 members of which 120 fail their CRC, spread out: more than the
#         50 problems shown word for word, so which 50 are shown (the first in
#         archive order) and the "and N more" count must not depend on which
#         worker finished first;
# then the threads are seen to exist (strace counts the clones) and a bad
# CCLFORGE_WHEEL_JOBS is refused by name. Run once per inflate engine
# (cli.wheel_parallel.zlib, .isal).
. "$(dirname "$0")/lib.sh"
t_inflate_engine

for tool in cc python3 cmp; do
    command -v "$tool" >/dev/null || t_skip "$tool is not installed (scripts/deps.sh installs it)"
done

W=$T_TMP/wheels
mkdir -p "$W"
if ! python3 - "$W" <<'PY'; then
import base64, hashlib, os, random, struct, subprocess, sys, zipfile
out = sys.argv[1]
TAG = "cp311-cp311-manylinux_2_17_x86_64"
rng = random.Random(30)

def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

def so(name, source):
    src = os.path.join(out, name + ".c")
    open(src, "w").write(source)
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", os.path.join(out, name), src], check=True)
    return open(os.path.join(out, name), "rb").read()

def text(n):  # compressible, not trivially: a deflate stream of many blocks
    words = [b"alpha", b"beta", b"gamma", b"delta", b"%d" % rng.randrange(1 << 30)]
    return b" ".join(rng.choice(words) for _ in range(n // 6))

def write(file, files, stored=(), record_lies=()):
    """files: [(name, bytes)]; stored: names kept uncompressed; record_lies: names RECORD gets wrong."""
    di = "hw-1.0.dist-info"
    files = files + [(di + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\nTag: %s\n" % TAG).encode()),
                     (di + "/METADATA", b"Metadata-Version: 2.1\nName: hw\nVersion: 1.0\n")]
    rec = "".join("%s,%s,%d\n" % (n, digest(d + b"x" if n in record_lies else d), len(d)) for n, d in files)
    path = os.path.join(out, file)
    with zipfile.ZipFile(path, "w") as z:
        for n, d in files + [(di + "/RECORD", (rec + di + "/RECORD,,\n").encode())]:
            info = zipfile.ZipInfo(n)
            info.compress_type = zipfile.ZIP_STORED if n in stored else zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16
            info.create_system = 3
            z.writestr(info, d)
    return path

def flip(path, names):
    """One data byte of each stored member flipped in place: headers intact, the CRC-32 now wrong."""
    with zipfile.ZipFile(path) as z:
        infos = [z.getinfo(n) for n in names]
    with open(path, "r+b") as f:
        for i in infos:
            f.seek(i.header_offset + 26)
            name_len, extra_len = struct.unpack("<HH", f.read(4))
            at = i.header_offset + 30 + name_len + extra_len + i.file_size // 2
            f.seek(at)
            b = f.read(1)
            f.seek(at)
            f.write(bytes([b[0] ^ 0x5a]))

ext = so("_core.cpython-311-x86_64-linux-gnu.so", "void *PyInit__core(void) { return 0; }\n")
lib = so("libhelper.so", "int helper(void) { return 42; }\n")

files = [("hw/m%04d.py" % i, text(rng.randrange(200, 4000))) for i in range(2990)]
files[700] = ("hw/_core.cpython-311-x86_64-linux-gnu.so", ext)
files[1400] = ("hw/libhelper.so", lib)
files[2500] = ("hw/deep/corrupt.dat", text(50000))
files[2700] = ("hw/deep/lied.py", text(3000))
files += [("hw/big%d.dat" % i, text(2000000 + 300000 * i)) for i in range(4)]  # the largest, last in the archive
flip(write("many-1.0-%s.whl" % TAG, files, stored={"hw/deep/corrupt.dat"}, record_lies={"hw/deep/lied.py"}),
     ["hw/deep/corrupt.dat"])

files = [("hw/n%03d.dat" % i, text(rng.randrange(1000, 300000))) for i in range(400)]
bad = ["hw/n%03d.dat" % i for i in range(7, 400, 3)][:120]
flip(write("noisy-1.0-%s.whl" % TAG, files, stored=set(bad)), bad)
PY
    bad "the test wheels were made"
    t_end
    exit 1
fi
MANY=$W/many-1.0-cp311-cp311-manylinux_2_17_x86_64.whl
NOISY=$W/noisy-1.0-cp311-cp311-manylinux_2_17_x86_64.whl

# verify WHEEL JOBS: text into $W/<name>.<jobs>.txt, JSON into .json
verify() {
    local name
    name=$(basename "$1" | cut -d- -f1)
    CCLFORGE_WHEEL_JOBS=$2 "$CCLFORGE" wheel verify "$1" >"$W/$name.$2.txt" 2>&1
    echo $? >"$W/$name.$2.rc"
    CCLFORGE_WHEEL_JOBS=$2 "$CCLFORGE" wheel verify --json "$1" >"$W/$name.$2.json" 2>/dev/null
}

for jobs in 1 2 3 8; do verify "$MANY" "$jobs"; done
RC=$(cat "$W/many.1.rc") OUT=$(cat "$W/many.1.json") ERR=
expect_rc 1 "many: the corrupt members fail verify (1 worker)"
expect_engine "many"
expect_json "[k for k in d['checks'] if k['name'] == 'zip' and k['status'] == 'fail' and \"'hw/deep/corrupt.dat': CRC-32 is\" in k['detail']]" \
    "many: the zip check names the member 2,500 deep whose CRC-32 is wrong"
expect_json "[k for k in d['checks'] if k['name'] == 'zip' and k['detail'].count(\"'hw/\") == 1]" \
    "many: and no other member"
expect_json "[k for k in d['checks'] if k['name'] == 'record' and k['status'] == 'fail' and 'hw/deep/lied.py' in k['detail']]" \
    "many: the record check names the member whose digest differs from RECORD's"
expect_json "[k for k in d['checks'] if k['name'] == 'extension' and 'hw/_core' in k['detail']]" \
    "many: the extension module a worker copied into the layout is read as one"
for jobs in 2 3 8; do
    RC=$(cat "$W/many.$jobs.rc") OUT=$(cat "$W/many.$jobs.txt") ERR=
    expect_out "'hw/deep/corrupt.dat': CRC-32 is" "many: $jobs workers report the corrupt member too"
    cmp -s "$W/many.1.txt" "$W/many.$jobs.txt" && ok "many: the text report with $jobs workers is the 1-worker one" ||
        bad "many: the text report with $jobs workers is the 1-worker one ($(diff "$W/many.1.txt" "$W/many.$jobs.txt" | head -5))"
    cmp -s "$W/many.1.json" "$W/many.$jobs.json" && ok "many: the JSON with $jobs workers is the 1-worker one" ||
        bad "many: the JSON with $jobs workers is the 1-worker one"
done

for jobs in 1 2 8; do verify "$NOISY" "$jobs"; done
RC=$(cat "$W/noisy.1.rc") OUT=$(cat "$W/noisy.1.json") ERR=
expect_rc 1 "noisy: 120 corrupt members fail verify"
expect_json "[k for k in d['checks'] if k['name'] == 'zip' and k['detail'].startswith(\"'hw/n007.dat': CRC-32 is\") and k['detail'].endswith('... and 70 more') and k['detail'].count('CRC-32 is') == 50 and \"'hw/n154.dat'\" in k['detail'] and \"'hw/n157.dat'\" not in k['detail']]" \
    "noisy: the first 50 in archive order are shown (n007 ... n154), 70 more counted"
for jobs in 2 8; do
    cmp -s "$W/noisy.1.txt" "$W/noisy.$jobs.txt" && cmp -s "$W/noisy.1.json" "$W/noisy.$jobs.json" &&
        ok "noisy: $jobs workers show the same 50 problems in the same order, text and JSON" ||
        { OUT=$(diff "$W/noisy.1.txt" "$W/noisy.$jobs.txt" | head -5) RC=0 ERR=; bad "noisy: $jobs workers show the same 50 problems in the same order, text and JSON"; }
done

# the pool is real: 4 workers are the calling thread and 3 more
if strace -f -qq -e trace=clone,clone3 -o /dev/null true 2>/dev/null; then
    CCLFORGE_WHEEL_JOBS=4 strace -f -qq -e trace=clone,clone3 -o "$W/clones" "$CCLFORGE" wheel verify "$MANY" >/dev/null 2>&1
    threads=$(grep -c 'CLONE_THREAD' "$W/clones")
    extra=0 # ThreadSanitizer's runtime starts a thread of its own
    ldd "$CCLFORGE" 2>/dev/null | grep -q libtsan && extra=1
    RC=0 OUT="threads started: $threads (the sanitizer's: $extra)" ERR=
    [ "$threads" -eq $((3 + extra)) ] && ok "4 workers: three threads are started beside the calling one" ||
        bad "4 workers: three threads are started beside the calling one"
else
    t_skip_part "strace cannot trace here: the thread count is not checked"
fi

for v in 0 17 abc 2x ""; do
    run env CCLFORGE_WHEEL_JOBS="$v" "$CCLFORGE" wheel verify "$MANY"
    if [ -z "$v" ]; then
        expect_rc 1 "CCLFORGE_WHEEL_JOBS empty is unset: one worker per CPU"
    else
        expect_rc 2 "CCLFORGE_WHEEL_JOBS=$v is refused"
        expect_err "CCLFORGE_WHEEL_JOBS=$v: the number of worker threads for wheel verify, from 1 to 16" \
            "CCLFORGE_WHEEL_JOBS=$v: the error names the variable and the range"
    fi
done
t_end
