"""Per-line totals of one agent stream (docs/agent-protocol.md), added up in
pure Python, and the text report the IPython extension prints under a cell.

The kernel has no `hotline` binary to ask: the stream the agent wrote to a
private file is read back here, with the same rules as the server's store
(server/profile.c, server/memprof.c): time deltas add per line, memory
deltas are increments (kept = alloc - freed), `kept_pts` are relative to
the line's kept MB at the previous memory delta, and the leak rule is
memprof_analyse's, on the same timelines (docs/memory.md, "Leaks")."""
import json
import math

TIMELINE_POINTS = 64  # as MEMPROF_POINTS: a cell's timeline stays small
FIT_N = 48
MIN_LEAK_MB = 1.0
MAX_LINE_BYTES = 16 << 20  # the protocol's cap on one line


class Line:
    __slots__ = ("py", "nat", "sys", "cpu", "n", "alloc", "freed", "pyalloc",
                 "copy", "peak", "tl")

    def __init__(self):
        self.py = self.nat = self.sys = self.cpu = 0.0
        self.n = 0
        self.alloc = self.freed = self.pyalloc = self.copy = self.peak = 0.0
        self.tl = []  # [(ts, kept MB)]

    @property
    def wall(self):
        return self.py + self.nat + self.sys

    @property
    def kept(self):
        return max(0.0, self.alloc - self.freed)


def _tl_add(tl, t, v):
    """Append (t, v) to a timeline, dropping the point whose neighbours are
    closest in time when full (never the first), as server/memprof.c does."""
    if tl and t <= tl[-1][0]:
        tl[-1] = (tl[-1][0], v)
        return
    if len(tl) == TIMELINE_POINTS:
        drop, best = 1, math.inf
        for i in range(1, len(tl)):
            span = (tl[i + 1][0] if i + 1 < len(tl) else t) - tl[i - 1][0]
            if span < best:
                best, drop = span, i
        del tl[drop]
    tl.append((t, v))


def _step_at(tl, x):
    r = 0.0
    for t, v in tl:
        if t > x:
            break
        r = v
    return r


def _fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx if sxx > 0 else 0.0
    r2 = sxy * sxy / (sxx * syy) if sxx > 0 and syy > 0 else 0.0
    return slope, r2


def leak(tl, t_end):
    """memprof_analyse: (likelihood, rate MB/s, kept MB) or None."""
    if len(tl) < 3:
        return None
    t0 = tl[0][0]
    d = t_end - t0
    if d < 0.2:
        return None
    kept = _step_at(tl, t_end)
    vmax = max(v for _, v in tl)
    if kept < MIN_LEAK_MB or kept < 0.8 * vmax:
        return None
    xs = [t0 + d * (k + 0.5) / FIT_N for k in range(FIT_N)]
    ys = [_step_at(tl, x) for x in xs]
    slope, r2 = _fit(xs, ys)
    late, _ = _fit(xs[FIT_N * 2 // 3:], ys[FIT_N * 2 // 3:])
    if slope <= 0 or slope * d < MIN_LEAK_MB:
        return None
    growth = min(1.0, max(0.0, late / slope))
    lik = r2 * growth * (kept / vmax if vmax > 0 else 0.0)
    if r2 < 0.7 or growth < 0.4 or lik < 0.5:
        return None
    return min(lik, 1.0), slope, kept


class Profile:
    """What one stream says, per (file, line)."""

    def __init__(self):
        self.strs = {}
        self.lines = {}  # (path, line) -> Line
        self.samples = 0
        self.t_end = 0.0
        self.peak_mb = 0.0
        self.peak_at = None  # (path, line)
        self.ended = False
        self.errors = []

    def _line(self, f, l):
        key = (self.strs.get(f, "?"), l)
        e = self.lines.get(key)
        if e is None:
            e = self.lines[key] = Line()
        return e

    def feed(self, text):
        """Add one protocol line (str); malformed lines are skipped, as the
        server's reader does."""
        try:
            m = json.loads(text)
        except ValueError:
            return
        if not isinstance(m, dict):
            return
        t = m.get("t")
        if t == "str":
            self.strs[m.get("id")] = m.get("s")
        elif t == "delta":
            self._delta(m)
        elif t == "end":
            self.ended = True
            self.t_end = max(self.t_end, float(m.get("ts") or 0))
        elif t == "error":
            self.errors.append(str(m.get("msg")))

    def _delta(self, m):
        ts = float(m.get("ts") or 0)
        self.t_end = max(self.t_end, ts)
        self.samples += int(m.get("samples") or 0)
        for e in m.get("lines") or ():
            if not isinstance(e, dict):
                continue
            ln = self._line(e.get("f"), int(e.get("l") or 0))
            for k in ("py", "nat", "sys", "cpu"):
                setattr(ln, k, getattr(ln, k) + float(e.get(k) or 0))
            ln.n += int(e.get("n") or 0)
            if "alloc_mb" in e or "freed_mb" in e:
                base = ln.alloc - ln.freed
                for pt in e.get("kept_pts") or ():
                    if isinstance(pt, list) and len(pt) == 2 and pt[0] <= ts:
                        _tl_add(ln.tl, float(pt[0]), max(0.0, base + float(pt[1])))
                ln.alloc += float(e.get("alloc_mb") or 0)
                ln.freed += float(e.get("freed_mb") or 0)
                ln.pyalloc += float(e.get("pyalloc_mb") or 0)
                ln.copy += float(e.get("copy_mb") or 0)
                ln.peak = max(ln.peak, float(e.get("peak_mb") or 0))
                _tl_add(ln.tl, ts, max(0.0, ln.alloc - ln.freed))
        mem = m.get("mem")
        if isinstance(mem, dict) and float(mem.get("peak_mb") or 0) > self.peak_mb:
            self.peak_mb = float(mem["peak_mb"])
            if mem.get("peak_f"):
                self.peak_at = (self.strs.get(mem.get("peak_f")), int(mem.get("peak_l") or 0))

    def drop_file(self, path):
        """Forget a file's lines (the one-line wrapper cell of %%hotline)."""
        for key in [k for k in self.lines if k[0] == path]:
            del self.lines[key]

    def total_wall(self):
        return sum(e.wall for e in self.lines.values())

    def leaks(self):
        """{(path, line): (likelihood, rate MB/s, kept MB)} by the server's rule."""
        out = {}
        for key, e in self.lines.items():
            r = leak(e.tl, self.t_end)
            if r:
                out[key] = r
        return out


def read(path):
    """New Profile from a stream file."""
    p = Profile()
    with open(path, "rb") as f:
        for raw in f:
            if len(raw) > MAX_LINE_BYTES:
                continue
            p.feed(raw.decode("utf-8", "replace"))
    return p


# --- the text report -------------------------------------------------------

BAR = 24
GLYPH = {"py": "\u2588", "nat": "\u2593", "sys": "\u2591"}  # full, dark, light


def bar(e, total):
    """The line's share of the cell's time, split python/native/system."""
    if total <= 0:
        return " " * BAR
    cells = []
    acc = 0.0
    for k in ("py", "nat", "sys"):
        acc += getattr(e, k)
        cells.append((k, int(round(BAR * acc / total))))
    out, done = [], 0
    for k, upto in cells:
        out.append(GLYPH[k] * max(0, upto - done))
        done = max(done, upto)
    return ("".join(out) + " " * BAR)[:BAR]


def _mb(x):
    if x < 0.05:
        return ""
    return "%.1f" % x if x < 100 else "%.0f" % x


def _s(x):
    if x <= 0:
        return ""
    return "%.3f" % x if x < 10 else "%.1f" % x


class Source:
    """How a file is shown: its label, the lines to show and their text.
    offset: added to the file's line numbers (the cell body of %%hotline is
    its line 2 onwards); lines: the text the user sees, or None (linecache)."""

    def __init__(self, label, offset=0, lines=None, whole=False):
        self.label, self.offset, self.lines, self.whole = label, offset, lines, whole


def _sections(prof, sources, max_lines):
    """What both reports show: [(label, rows, more)], rows [(number shown,
    Line or None, source text, leak or None)], more: lines left out."""
    import linecache
    total = prof.total_wall()
    leaks = prof.leaks()
    by_file = {}
    for (path, l), e in prof.lines.items():
        by_file.setdefault(path, {})[l] = e
    order = [p for p in sources if p in by_file or sources[p].whole]
    order += sorted((p for p in by_file if p not in sources),
                    key=lambda p: -sum(e.wall + e.alloc for e in by_file[p].values()))
    out = []
    for path in order:
        src = sources.get(path) or Source(path)
        rows = by_file.get(path, {})
        if src.whole and src.lines is not None:
            nums = list(range(1, len(src.lines) + 1))
        else:
            nums = sorted(l for l, e in rows.items()
                          if e.wall >= 0.005 * max(total, 1e-9) or e.alloc >= 0.05
                          or e.freed >= 0.05)
        if not nums:
            continue
        shown = []
        for l in nums[:max_lines]:
            if src.lines is not None:
                text = src.lines[l - 1] if 0 < l <= len(src.lines) else ""
            else:
                text = linecache.getline(path, l).rstrip("\n")
            shown.append((l + src.offset, rows.get(l), text.rstrip(), leaks.get((path, l))))
        out.append((src.label, shown, max(0, len(nums) - max_lines)))
    return out


def _headline(prof, wall_s, title, total, mem_seen):
    head = "hotline: %s, %.2f s wall, %d samples" % (title, wall_s, prof.samples)
    if total > 0:
        head += ", %.2f s on these lines" % total
    if prof.peak_mb and mem_seen:
        head += "; memory peak %.1f MB" % prof.peak_mb
    return head


def _nothing(prof, wall_s, total, mem_seen):
    """Why the report has no data, or None."""
    if total > 0 or mem_seen:
        return None
    return "(no samples on the cell's lines: %s)" % (
        "it ran for less than a few sampling intervals" if wall_s < 0.05
        else "no profiled file ran; see docs/notebooks.md, which files count")


def format_report(prof, sources, wall_s, title, max_lines=200):
    """The report (str). sources: {path: Source}; files in it come first,
    in its order, showing every line when whole; other files with time or
    memory follow, their lines with data only."""
    total = prof.total_wall()
    mem_seen = any(e.alloc or e.freed for e in prof.lines.values())
    out = [_headline(prof, wall_s, title, total, mem_seen)]
    out.append("  bar: share of the time, %s python  %s native  %s system (waiting)"
               % (GLYPH["py"], GLYPH["nat"], GLYPH["sys"]))
    cols = "  %5s %6s %8s %8s %8s %-*s %8s %8s  %s" % (
        "line", "time%", "python", "native", "system", BAR, "", "alloc MB", "kept MB", "")
    for label, rows, more in _sections(prof, sources, max_lines):
        out.append("")
        out.append("  %s" % label)
        out.append(cols.rstrip())
        for num, e, text, lk in rows:
            if len(text) > 60:
                text = text[:57] + "..."
            if e is None:
                out.append(("  %5d %6s %8s %8s %8s %-*s %8s %8s  %s" % (
                    num, "", "", "", "", BAR, "", "", "", text)).rstrip())
                continue
            pct = "%5.1f%%" % (100 * e.wall / total) if total > 0 and e.wall > 0 else ""
            flag = "  LEAK? +%.1f MB/s" % lk[1] if lk else ""
            out.append(("  %5d %6s %8s %8s %8s %s %8s %8s  %s%s" % (
                num, pct, _s(e.py), _s(e.nat), _s(e.sys), bar(e, total),
                _mb(e.alloc), _mb(e.kept), text, flag)).rstrip())
        if more:
            out.append("  ... %d more lines" % more)
    why = _nothing(prof, wall_s, total, mem_seen)
    if why:
        out.append("  " + why)
    for msg in prof.errors:
        out.append("  agent error: %s" % msg)
    return "\n".join(out)


# --- the HTML report (Jupyter: display_data text/html) ----------------------

HTML_COLORS = {"py": "#e4572e", "nat": "#f3a712", "sys": "#76b0de"}  # python, native, system
HTML_SOURCE_MAX = "60em"  # a source cell never grows past this (ellipsis)


def _esc(text):
    import html
    return html.escape(text, quote=True)


def _html_bar(e, total):
    """The line's share as an inline bar: python, native, system segments."""
    parts = []
    for k in ("py", "nat", "sys"):
        w = 100.0 * getattr(e, k) / total if total > 0 else 0.0
        if w >= 0.05:
            parts.append('<span style="display:inline-block;height:0.8em;width:%.1f%%;'
                         'background:%s"></span>' % (w, HTML_COLORS[k]))
    return ('<span style="display:inline-block;width:6em;background:rgba(128,128,128,0.15);'
            'white-space:nowrap;line-height:0;vertical-align:middle">%s</span>' % "".join(parts))


def format_html(prof, sources, wall_s, title, max_lines=200):
    """The report as an HTML table for a Jupyter front end (text/html of a
    display_data): line, source text, seconds, share with a bar, memory
    when measured. It fits the cell's width: the table takes 100 %, the
    source column the rest, each source line on one line (white-space:
    pre, never wrapped) cut with an ellipsis (its full text in the title)."""
    total = prof.total_wall()
    mem_seen = any(e.alloc or e.freed for e in prof.lines.values())
    num = ("padding:0 0.5em;text-align:right;white-space:nowrap;"
           "font-variant-numeric:tabular-nums")
    src_css = ("padding:0 0.5em;text-align:left;white-space:pre;overflow:hidden;"
               "text-overflow:ellipsis;max-width:%s;font-family:monospace" % HTML_SOURCE_MAX)
    out = ['<div class="hotline-report" style="width:100%;max-width:100%;overflow:hidden">',
           '<div style="font-family:monospace;white-space:pre-wrap;word-break:normal;'
           'overflow-wrap:normal">%s</div>' % _esc(_headline(prof, wall_s, title, total,
                                                            mem_seen))]
    legend = " ".join('<span style="color:%s">\u25a0</span> %s' % (HTML_COLORS[k], n)
                      for k, n in (("py", "python"), ("nat", "native"),
                                   ("sys", "system (waiting)")))
    out.append('<div style="font-size:smaller">bar: share of the time, %s</div>' % legend)
    mem_cols = 2 if mem_seen else 0
    for label, rows, more in _sections(prof, sources, max_lines):
        out.append('<div style="margin-top:0.5em;font-weight:bold">%s</div>' % _esc(label))
        out.append('<table style="width:100%;table-layout:fixed;border-collapse:collapse;'
                   'margin:0">')
        out.append('<colgroup><col style="width:4em"><col><col style="width:5.5em">'
                   '<col style="width:10.5em">%s</colgroup>'
                   % ('<col style="width:6em"><col style="width:6em">' if mem_seen else ""))
        out.append('<thead><tr><th style="%s">line</th><th style="%s">source</th>'
                   '<th style="%s">seconds</th><th style="%s">share</th>%s</tr></thead><tbody>'
                   % (num, src_css, num, num,
                      '<th style="%s">alloc MB</th><th style="%s">kept MB</th>' % (num, num)
                      if mem_seen else ""))
        for n, e, text, lk in rows:
            cells = ['<td style="%s">%d</td>' % (num, n),
                     '<td style="%s" title="%s">%s</td>' % (src_css, _esc(text), _esc(text))]
            if e is None:
                cells.append('<td></td><td></td>' + '<td></td>' * mem_cols)
            else:
                pct = "%.1f%%" % (100 * e.wall / total) if total > 0 and e.wall > 0 else ""
                cells.append('<td style="%s">%s</td>' % (num, _s(e.wall)))
                cells.append('<td style="%s">%s %s</td>' % (
                    num, pct, _html_bar(e, total) if pct else ""))
                if mem_seen:
                    kept = _mb(e.kept)
                    if lk:
                        kept += ' <b title="the server\'s leak rule">LEAK? +%.1f MB/s</b>' % lk[1]
                    cells.append('<td style="%s">%s</td><td style="%s">%s</td>' % (
                        num, _mb(e.alloc), num, kept))
            out.append("<tr>%s</tr>" % "".join(cells))
        if more:
            out.append('<tr><td></td><td colspan="%d">\u2026 %d more lines</td></tr>'
                       % (3 + mem_cols, more))
        out.append("</tbody></table>")
    why = _nothing(prof, wall_s, total, mem_seen)
    if why:
        out.append("<div>%s</div>" % _esc(why))
    for msg in prof.errors:
        out.append("<div>agent error: %s</div>" % _esc(msg))
    out.append("</div>")
    return "\n".join(out)
