#!/usr/bin/env python3
"""A report as Debian's headless Chromium shows it, for the CLI tests.

  html_page.py render FILE.html PREFIX [WIDTH,HEIGHT]
      opens FILE with the network off (unshare -n when it works) and writes
      PREFIX.dom (the DOM after load, with data-load-ms on <html>: the time
      from navigation to the load event, read from a copy of the page with a
      one-line script added), PREFIX.png (a screenshot) and PREFIX.log
      (Chromium's stderr). Exit 1 when Chromium fails or the page logged
      anything to the console (an error, a refused fetch).
  html_page.py selfcontained FILE.html
      exit 1 when the file references anything outside itself.
  html_page.py eval PREFIX.dom EXPR
      exit 0 when EXPR is true; `q(tag, **attrs)` lists the elements
      (dicts: tag, attrs, text) with those attributes (data_x for data-x).
  html_page.py print PREFIX.dom EXPR
      prints the value of EXPR.
  html_page.py pixels PREFIX.png RRGGBB [TOLERANCE]
      prints how many pixels are within TOLERANCE (default 8) of the colour.
"""
import html.parser
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def render(path, prefix, size="1400,1000"):
    exe = chromium()
    if not exe:
        print("no chromium", file=sys.stderr)
        return 1
    probe = tempfile.mkdtemp(prefix="html-page-")
    try:
        page = os.path.join(probe, "page.html")
        with open(path, "rb") as f:
            body = f.read()
        stamp = (b"<script>addEventListener('load',function(){document.documentElement.setAttribute("
                 b"'data-load-ms',String(performance.now()))})</script>")
        body = body.replace(b"</body>", stamp + b"</body>", 1)
        with open(page, "wb") as f:
            f.write(body)
        net_off = ["unshare", "-n"] if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0 else []
        common = net_off + [exe, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
                            "--user-data-dir=" + os.path.join(probe, "profile"), "--hide-scrollbars"]
        with open(prefix + ".log", "w") as log:
            with open(prefix + ".dom", "w") as dom:
                r = subprocess.run(common + ["--dump-dom", "file://" + page], stdout=dom, stderr=log, timeout=120)
            if r.returncode:
                return 1
            r = subprocess.run(common + ["--screenshot=" + os.path.abspath(prefix + ".png"), "--window-size=" + size,
                                         "file://" + page], stdout=log, stderr=log, timeout=120, cwd=probe)
            if r.returncode or not os.path.exists(prefix + ".png"):
                return 1
        with open(prefix + ".log") as f:
            console = [l for l in f if ":CONSOLE" in l]
        if console:
            sys.stderr.write("".join(console))
            return 1
        return 0
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def selfcontained(path):
    """What a browser would fetch: URL attributes of elements, url() and
    @import in styles, and the elements that load things by themselves."""
    d = Dom()
    d.feed(open(path, encoding="utf-8").read())
    bad = []
    for e in d.elements:
        if e["tag"] in ("iframe", "link", "object", "embed", "base", "frame", "audio", "video", "source", "track"):
            bad.append("<%s>" % e["tag"])
        for k, v in e["attrs"].items():
            if k in URL_ATTRS and not v.strip().startswith(("#", "data:")):
                bad.append("%s=%s" % (k, v))
            if k == "style":
                bad += external_in_css(v)
        if e["tag"] == "style":
            bad += external_in_css(e["text"])
        if e["tag"] == "meta" and e["attrs"].get("http-equiv", "").lower() == "refresh":
            bad.append("meta refresh")
    if bad:
        print("references outside the file:", bad[:10], file=sys.stderr)
        return 1
    return 0


URL_ATTRS = {"src", "href", "xlink:href", "action", "formaction", "srcset", "poster", "data", "background", "ping",
             "manifest", "codebase", "cite", "longdesc"}


def external_in_css(css):
    return [m for m in re.findall(r"url\(\s*['\"]?([^)'\"]*)", css) if not m.startswith(("data:", "#"))] + \
        re.findall(r"@import[^;]*", css)


class Dom(html.parser.HTMLParser):
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements, self.open = [], []

    def handle_starttag(self, tag, attrs):
        e = {"tag": tag, "attrs": {k: (v or "") for k, v in attrs}, "text": ""}
        self.elements.append(e)
        if tag not in self.VOID:
            self.open.append(e)

    def handle_startendtag(self, tag, attrs):
        self.elements.append({"tag": tag, "attrs": {k: (v or "") for k, v in attrs}, "text": ""})

    def handle_endtag(self, tag):
        for i in range(len(self.open) - 1, -1, -1):
            if self.open[i]["tag"] == tag:
                del self.open[i:]
                break

    def handle_data(self, data):
        for e in self.open:
            e["text"] += data


def evaluate(dom_path, expr, show=False):
    d = Dom()
    d.feed(open(dom_path, encoding="utf-8").read())

    def q(tag=None, **attrs):
        want = {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}
        return [e for e in d.elements if (tag is None or e["tag"] == tag)
                and all(e["attrs"].get(k) == v for k, v in want.items())]
    env = {"q": q, "elements": d.elements, "root": d.elements[0] if d.elements else {"attrs": {}}}
    value = eval(expr, env)
    if show:
        print(value)
        return 0
    return 0 if value else 1


def png_pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and ctype in (2, 6), "8-bit RGB or RGBA only"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    raw, stride, prev, out = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.append(bytes(line))
        prev = line
    return w, h, bpp, out


def pixels(path, rgb, tol=8):
    want = bytes.fromhex(rgb)
    w, h, bpp, rows = png_pixels(path)
    n = 0
    for row in rows:
        for x in range(0, w * bpp, bpp):
            if all(abs(row[x + k] - want[k]) <= tol for k in range(3)):
                n += 1
    print(n)
    return 0


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "render":
        sys.exit(render(*args))
    if cmd == "selfcontained":
        sys.exit(selfcontained(args[0]))
    if cmd == "eval":
        sys.exit(evaluate(args[0], args[1]))
    if cmd == "print":
        sys.exit(evaluate(args[0], args[1], True))
    if cmd == "pixels":
        sys.exit(pixels(args[0], args[1], int(args[2]) if len(args) > 2 else 8))
    sys.exit(2)
