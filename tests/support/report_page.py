#!/usr/bin/env python3
"""Reads a report page as Chromium left it: `cells DOM` prints each SVG cell of
the first matrix as JSON (data-host-a, data-host-b, data-class, data-busbw);
`png FILE CELLS.json CS HOST` checks the picture against the page: every cell
shows its own fill, and HOST's row and column are darker than every ok cell. Only the standard library: PNG decoded by html_page.py."""
import html.parser, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from html_page import png_pixels  # noqa: E402  (one PNG reader for every page test)


class Cells(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.cells, self.svgs, self.scripts, self.imgs, self.load_ms = [], 0, 0, 0, None
        self.in_first = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body" and "data-load-ms" in a:
            self.load_ms = int(a["data-load-ms"])
        if tag == "svg" and "matrix" in (a.get("class") or ""):
            self.svgs += 1
            self.in_first = self.svgs == 1
        if tag == "script":
            self.scripts += 1
        if tag == "img":
            self.imgs += 1
        if tag == "rect" and self.in_first and "data-class" in a:
            cell = {k[5:]: v for k, v in a.items() if k.startswith("data-")}
            cell["fill"] = a.get("fill")
            self.cells.append(cell)

    def handle_endtag(self, tag):
        if tag == "svg":
            self.in_first = False


def dom(path):
    p = Cells()
    p.feed(open(path, encoding="utf-8").read())
    print(json.dumps({"cells": p.cells, "scripts": p.scripts, "imgs": p.imgs, "load_ms": p.load_ms}))


def png(path, cells_path, cs, host):
    """The picture against the page: every cell of the first matrix shows its own
    fill, and every cell of HOST's row and column is darker than every ok cell."""
    cs = int(float(cs))
    cells = json.load(open(cells_path))["cells"]
    order = []
    for c in cells:
        if c["host-a"] not in order:
            order.append(c["host-a"])
    n = len(order)
    w, h, bpp, rows = png_pixels(path)
    px = lambda x, y: tuple(rows[y][x * bpp:x * bpp + 3])
    hexrgb = lambda f: tuple(int(f[k:k + 2], 16) for k in (1, 3, 5))
    near = lambda a, b: all(abs(u - v) <= 3 for u, v in zip(a, b))
    first = hexrgb(cells[0]["fill"])  # row 0, column 1
    origin = None
    for y in range(h - cs):
        for x in range(w - cs):
            if near(px(x, y), first) and all(near(px(x + k, y), first) for k in (1, cs // 3)) and \
                    all(near(px(x, y + k), first) for k in (1, cs // 3)) and not near(px(x, y - 1), first) and \
                    not near(px(x - 1, y), first):
                origin = (x - cs, y)
                break
        if origin:
            break
    if not origin:
        print("the matrix's first cell is not in the picture"); sys.exit(1)
    k, wrong, lum = 0, 0, {}
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            c = cells[k]
            k += 1
            got = px(origin[0] + j * cs + 2, origin[1] + i * cs + 2)
            if not near(got, hexrgb(c["fill"])):
                wrong += 1
            lum[(c["host-a"], c["host-b"])] = (0.2126 * got[0] + 0.7152 * got[1] + 0.0722 * got[2], c["class"])
    mine = [v for (a, b), (v, cl) in lum.items() if host in (a, b)]
    ok = [v for (a, b), (v, cl) in lum.items() if cl == "ok"]
    print(json.dumps({"origin": origin, "cells": k, "wrong": wrong, "host_darkest": max(mine), "ok_lightest": min(ok) if ok else None}))
    sys.exit(0 if not wrong and ok and max(mine) < min(ok) else 1)


if __name__ == "__main__":
    {"cells": lambda: dom(sys.argv[2]), "png": lambda: png(*sys.argv[2:6])}[sys.argv[1]]()
