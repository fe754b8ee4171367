#!/usr/bin/env bash
# Member names that become one file, against CPython as the oracle: for every
# code point of U+00A0..U+017F and of the combining marks U+0300..U+036F (its
# NFC and NFD forms, upper and lower case beside an ASCII spelling), and for
# random names over ASCII letters, Latin-1/Latin Extended-A letters and
# combining marks, the pairs `wheel verify` rejects are exactly the pairs
# whose unicodedata.normalize("NFD", name).lower() are equal, each named with
# the member it collides with (the range docs/security.md claims: marks of one
# combining class, so NFD's reordering never applies).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || t_skip "python3 is not installed"
W=$T_TMP/names
mkdir -p "$W"
while IFS= read -r line; do
    case "$line" in
    "ok - "*) T_PASS=$((T_PASS + 1)); echo "$line" ;;
    "not ok - "*) T_FAIL=$((T_FAIL + 1)); echo "$line" ;;
    *) echo "$line" ;;
    esac
done < <(python3 - "$CCLFORGE" "$W" <<'PY'
import base64, hashlib, json, os, random, re, subprocess, sys, unicodedata, zipfile
cclforge, out = sys.argv[1], sys.argv[2]
SHOWN = 50  # problems a check shows word for word
def digest(d):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
def key(name):
    return unicodedata.normalize("NFD", name).lower()
def write(path, dist, names):
    di = "%s-1.0.dist-info" % dist
    files = [(n, b"%d\n" % i) for i, n in enumerate(names)]
    files += [(di + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
              (di + "/METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % dist).encode())]
    rec = "".join("%s,%s,%d\n" % (n, digest(d), len(d)) for n, d in files) + di + "/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as z:
        for n, d in files:
            z.writestr(n, d)
        z.writestr(di + "/RECORD", rec)
def expected(names):
    first, pairs = {}, []
    for n in names:
        k = key(n)
        if k in first:
            pairs.append((first[k], n))
        else:
            first[k] = n
    return pairs
def check(label, dist, names):
    names = list(dict.fromkeys(names))  # a name twice is zip's duplicate, another check
    path = os.path.join(out, "%s-1.0-py3-none-any.whl" % dist)
    write(path, dist, names)
    want = expected(names)
    assert len(want) <= SHOWN, label
    p = subprocess.run([cclforge, "wheel", "verify", "--json", path], capture_output=True)
    doc = json.loads(p.stdout.decode())
    zipc = [c for c in doc["checks"] if c["name"] == "zip"][0]
    got = re.findall(r"'([^']*)' and '([^']*)' (?:both install|differ only|are one name)", zipc["detail"])
    more = re.search(r"and (\d+) more", zipc["detail"])
    why = []
    if more:
        why.append("more than %d problems: %s" % (SHOWN, more.group(0)))
    if sorted(got) != sorted(want):
        missed = sorted(set(want) - set(got))
        extra = sorted(set(got) - set(want))
        why.append("missed %d pair(s) %s; flagged %d pair(s) CPython keeps apart %s"
                   % (len(missed), [ascii(x) for x in missed[:5]], len(extra), [ascii(x) for x in extra[:5]]))
    if (p.returncode == 0) != (not want):
        why.append("exit %d with %d expected pair(s)" % (p.returncode, len(want)))
    print(("not ok - " if why else "ok - ") + "%s: %d names, %d pairs, as CPython's NFD + lower()" %
          (label, len(names), len(want)))
    for w in why:
        print("  " + w)
# every code point of the range, alone in its directory with its forms
groups = []
for cp in list(range(0xa0, 0x180)) + list(range(0x300, 0x370)):
    c = chr(cp)
    forms = {c, unicodedata.normalize("NFD", c), unicodedata.normalize("NFC", c), c.upper(), c.lower()}
    base = unicodedata.normalize("NFD", c)[0]
    if base.isascii():
        forms |= {base, base.upper(), base.lower()}
    d = "n/u%04x/" % cp
    groups.append([d + "x" + f + ".py" for f in sorted(forms)])
chunk, k = [], 0
for g in groups:
    if len(expected(chunk + g)) > 45:
        check("code points, part %d" % k, "cp%d" % k, chunk)
        chunk, k = [], k + 1
    chunk += g
check("code points, part %d" % k, "cp%d" % k, chunk)
# random names: collisions across letters, precomposed forms and marks
rnd = random.Random(29)
letters = "aAeEiIoOsSyYuUnNcC" + "".join(chr(c) for c in range(0xc0, 0x180) if chr(c).isalpha())
marks = [chr(c) for c in (0x300, 0x301, 0x302, 0x303, 0x304, 0x306, 0x307, 0x308, 0x30a, 0x30b, 0x30c, 0x340, 0x341, 0x344)]
for t in range(30):
    names = []
    while True:
        s = "".join(rnd.choice(letters) + (rnd.choice(marks) if rnd.random() < 0.4 else "") for _ in range(rnd.randint(1, 2)))
        cand = names + ["r/" + s + ".py"]
        if len(expected(list(dict.fromkeys(cand)))) > 40 or len(cand) > 400:
            break
        names = cand
    check("random names, set %d" % t, "rnd%d" % t, names)
PY
)
t_end
