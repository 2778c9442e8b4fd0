#!/usr/bin/env python3
"""Renders a Chrome/Perfetto trace (LIBOMPTARGET_PROFILE, `omptarget run --trace`) as an SVG
timeline: one row per host thread (nested scopes stacked) and, per device, one row per queue,
each event a box at its time, labelled where it is wide enough. No dependency beyond Python.

usage: scripts/trace_svg.py TRACE.json OUT.svg [--from MS] [--to MS] [--width PX] [--title T]
(rsvg-convert OUT.svg -o OUT.png makes a PNG of it.)
"""
import argparse
import html
import json

COLORS = {
    "Runtime: target exe": "#c9d7ee",
    "Runtime: Data Copy": "#d9e8cf",
    "Kernel Target": "#f4cf8f",
    "HostToDev": "#7aa6da",
    "DevToHost": "#8cc084",
    "Alloc": "#bbbbbb",
    "Free": "#e28b8b",
    "copy host to device": "#3f7fcf",
    "copy device to host": "#4c9a47",
    "alloc": "#9a9a9a",
    "free": "#d0443e",
}
KERNEL = "#e8a33d"


def color(e):
    if e["name"] in COLORS:
        return COLORS[e["name"]]
    if e.get("cat") == "device":
        return KERNEL
    return "#dddddd"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--from", dest="t0", type=float, help="start (ms from the trace's start)")
    ap.add_argument("--to", dest="t1", type=float, help="end (ms)")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--title", default=None)
    a = ap.parse_args()
    with open(a.trace) as f:
        trace = json.load(f)
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X" and not e["name"].startswith("Total ")]
    procs, threads, order = {}, {}, {}
    for e in trace["traceEvents"]:
        if e.get("ph") != "M":
            continue
        if e["name"] == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        elif e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e["name"] == "process_sort_index":
            order[e["pid"]] = e["args"]["sort_index"]
    if not events:
        raise SystemExit("no events in " + a.trace)
    start = min(float(e["ts"]) for e in events)
    t0 = start + (a.t0 or 0) * 1000
    t1 = start + a.t1 * 1000 if a.t1 is not None else max(float(e["ts"]) + float(e["dur"]) for e in events)
    events = [e for e in events if float(e["ts"]) + float(e["dur"]) >= t0 and float(e["ts"]) <= t1]
    # Rows: (pid, tid) lanes, host process first, then devices in their order.
    lanes = {}
    for e in events:
        lanes.setdefault((e["pid"], e["tid"]), []).append(e)
    lane_keys = sorted(lanes, key=lambda k: (order.get(k[0], 0), k[0], threads.get(k, str(k[1]))))
    left, right, top, row_h = 230, 20, 60, 16
    span = max(t1 - t0, 1e-9)
    scale = (a.width - left - right) / span
    rows = []  # (label, process label, [(event, depth)], depth count)
    for k in lane_keys:
        evs = sorted(lanes[k], key=lambda e: (float(e["ts"]), -float(e["dur"])))
        stack, placed = [], []
        for e in evs:
            s, d = float(e["ts"]), float(e["dur"])
            while stack and stack[-1] <= s:
                stack.pop()
            placed.append((e, len(stack)))
            stack.append(s + d)
        depth = 1 + max(p[1] for p in placed)
        rows.append((threads.get(k, "thread %s" % k[1]), procs.get(k[0], "process %s" % k[0]), placed, depth))
    height = top + sum(r[3] * row_h + 8 for r in rows) + 30 * len({r[1] for r in rows}) + 60
    out = []
    w = out.append
    w('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="DejaVu Sans, Arial, sans-serif" font-size="10">' % (a.width, height))
    w('<rect width="100%" height="100%" fill="white"/>')
    title = a.title or "omptarget-rs trace: %s" % a.trace.split("/")[-1]
    w('<text x="10" y="20" font-size="14" font-weight="bold">%s</text>' % html.escape(title))
    # Time axis: about ten ticks at a round step.
    step = 10 ** len(str(int(span / 10))) / 10 if span >= 10 else 1
    for m in (1, 2, 5, 10):
        if span / (step * m) <= 12:
            step *= m
            break
    tick = start + ((t0 - start) // step) * step
    while tick <= t1:
        x = left + (tick - t0) * scale
        if x >= left:
            w('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eeeeee"/>' % (x, top - 8, x, height - 40))
            w('<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%.3g ms</text>' % (x, top - 12, (tick - start) / 1000))
        tick += step
    y = top
    last_proc = None
    for label, proc, placed, depth in rows:
        if proc != last_proc:
            y += 6
            w('<text x="10" y="%d" font-size="12" font-weight="bold">%s</text>' % (y + 10, html.escape(proc)))
            y += 18
            last_proc = proc
        w('<text x="20" y="%d" fill="#333">%s</text>' % (y + 11, html.escape(label)))
        w('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#dddddd"/>' % (left, y + depth * row_h + 3, a.width - right, y + depth * row_h + 3))
        for e, d in placed:
            s = max(float(e["ts"]), t0)
            end = min(float(e["ts"]) + float(e["dur"]), t1)
            x, bw = left + (s - t0) * scale, max((end - s) * scale, 1.0)
            yy = y + d * row_h
            tip = "%s  %.3f ms" % (e["name"], float(e["dur"]) / 1000)
            detail = e.get("args", {})
            if detail:
                tip += "  " + ", ".join("%s=%s" % kv for kv in detail.items())
            w('<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s" stroke="#555" stroke-width="0.3"><title>%s</title></rect>'
              % (x, yy + 1, bw, row_h - 2, color(e), html.escape(tip)))
            name = e["name"]
            if name.startswith("__omp_offloading_"):
                name = "kernel l" + name.rsplit("_l", 1)[-1]
            if bw > 6 * len(name) + 4:
                w('<text x="%.2f" y="%d" fill="#111">%s</text>' % (x + 2, yy + 11, html.escape(name)))
        y += depth * row_h + 8
    # Legend.
    y += 20
    x = 10
    for name, c in list(COLORS.items()) + [("kernel", KERNEL)]:
        w('<rect x="%d" y="%d" width="12" height="10" fill="%s" stroke="#555" stroke-width="0.3"/>' % (x, y, c))
        w('<text x="%d" y="%d">%s</text>' % (x + 16, y + 9, html.escape(name)))
        x += 22 + 6 * len(name)
    w("</svg>")
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
