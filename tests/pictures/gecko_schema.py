"""A schema check of the Firefox Profiler's gecko profile format, version 32
(the import format: the profiler's src/types/gecko-profile.ts and
docs-developer/gecko-profile-format.md), as `hotline ... --gecko` writes it.

check(profile) returns a list of problems (empty: the file is what the
importer reads): every table has its schema's columns, every index points
into its table, stacks form a tree (a prefix comes before its node),
samples are sorted by time, markers name a known phase, category and
schema. Written from the format's description; it checks more than the
importer needs (sorted samples) because a picture of time needs it."""

FRAME_SCHEMA = {"location": 0, "relevantForJS": 1, "innerWindowID": 2, "implementation": 3,
                "line": 4, "column": 5, "category": 6, "subcategory": 7}
STACK_SCHEMA = {"prefix": 0, "frame": 1}
SAMPLE_SCHEMA = {"stack": 0, "time": 1, "eventDelay": 2}
MARKER_SCHEMA = {"name": 0, "startTime": 1, "endTime": 2, "phase": 3, "category": 4, "data": 5}
META_NUMBERS = ("version", "startTime", "interval", "stackwalk", "debug", "gcpoison",
                "asyncstack", "processType")
THREAD_KEYS = {"name": str, "registerTime": (int, float), "processType": str, "tid": int,
               "pid": int, "markers": dict, "samples": dict, "frameTable": dict,
               "stackTable": dict, "stringTable": list}
COLORS = {"transparent", "purple", "green", "orange", "yellow", "lightblue", "grey", "blue",
          "brown", "magenta", "red", "lightred", "darkgray"}


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _idx(v, n):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < n


def check(p):
    bad = []
    if not isinstance(p, dict):
        return ["not an object"]
    for k in ("meta", "libs", "threads", "pausedRanges", "processes"):
        if k not in p:
            bad.append("no top-level %r" % k)
    meta = p.get("meta", {})
    for k in META_NUMBERS:
        if not _num(meta.get(k)):
            bad.append("meta.%s is not a number" % k)
    if meta.get("version") != 32:
        bad.append("meta.version %r, not 32" % meta.get("version"))
    if "shutdownTime" not in meta or not (meta["shutdownTime"] is None or _num(meta["shutdownTime"])):
        bad.append("meta.shutdownTime is not null or a number")
    cats = meta.get("categories")
    if not isinstance(cats, list) or not cats:
        bad.append("meta.categories is not a non-empty list")
        cats = []
    for c in cats:
        if not isinstance(c.get("name"), str) or c.get("color") not in COLORS or \
                not isinstance(c.get("subcategories"), list) or not c["subcategories"]:
            bad.append("bad category %r" % (c,))
    types = set()
    for s in meta.get("markerSchema", []):
        if not isinstance(s.get("name"), str) or not isinstance(s.get("display"), list) or \
                not isinstance(s.get("data"), list):
            bad.append("bad marker schema %r" % (s,))
        types.add(s.get("name"))
        for f in s.get("data", []):
            if "key" in f and not isinstance(f.get("format"), str):
                bad.append("marker schema field without a format: %r" % (f,))
    if not isinstance(p.get("threads"), list) or not p["threads"]:
        return bad + ["no threads"]
    for ti, t in enumerate(p["threads"]):
        where = "thread %d (%s)" % (ti, t.get("name"))
        for k, ty in THREAD_KEYS.items():
            if not isinstance(t.get(k), ty) or (ty is int and isinstance(t.get(k), bool)):
                bad.append("%s: %s missing or not %s" % (where, k, ty))
        if "unregisterTime" not in t:
            bad.append("%s: no unregisterTime" % where)
        if bad:
            continue
        strings = t["stringTable"]
        if not all(isinstance(s, str) for s in strings):
            bad.append("%s: stringTable holds a non-string" % where)
        ft, st, sm, mk = t["frameTable"], t["stackTable"], t["samples"], t["markers"]
        for name, tab, schema in (("frameTable", ft, FRAME_SCHEMA), ("stackTable", st, STACK_SCHEMA),
                                  ("samples", sm, SAMPLE_SCHEMA), ("markers", mk, MARKER_SCHEMA)):
            if tab.get("schema") != schema:
                bad.append("%s: %s.schema %r" % (where, name, tab.get("schema")))
            if not isinstance(tab.get("data"), list):
                bad.append("%s: %s.data is not a list" % (where, name))
        if bad:
            continue
        nf, ns, nstr = len(ft["data"]), len(st["data"]), len(strings)
        for i, r in enumerate(ft["data"]):
            if len(r) != 8 or not _idx(r[0], nstr) or not isinstance(r[1], bool) or \
                    not (r[4] is None or isinstance(r[4], int)) or \
                    not (r[6] is None or _idx(r[6], len(cats))) or \
                    (r[6] is not None and not _idx(r[7], len(cats[r[6]]["subcategories"]))):
                bad.append("%s: frame %d %r" % (where, i, r))
        for i, r in enumerate(st["data"]):
            if len(r) != 2 or not (r[0] is None or (isinstance(r[0], int) and 0 <= r[0] < i)) or \
                    not _idx(r[1], nf):
                bad.append("%s: stack %d %r (a prefix comes before its node)" % (where, i, r))
        last = None
        for i, r in enumerate(sm["data"]):
            if len(r) < 2 or not (r[0] is None or _idx(r[0], ns)) or not _num(r[1]):
                bad.append("%s: sample %d %r" % (where, i, r))
                continue
            if last is not None and r[1] < last:
                bad.append("%s: sample %d at %r before the previous (%r)" % (where, i, r[1], last))
            last = r[1]
        for i, r in enumerate(mk["data"]):
            if len(r) != 6 or not _idx(r[0], nstr) or r[3] not in (0, 1, 2, 3) or \
                    not _idx(r[4], len(cats)):
                bad.append("%s: marker %d %r" % (where, i, r))
                continue
            if r[3] == 0 and not _num(r[1]):
                bad.append("%s: instant marker %d without a start" % (where, i))
            if r[3] == 1 and not (_num(r[1]) and _num(r[2]) and r[2] >= r[1]):
                bad.append("%s: interval marker %d %r..%r" % (where, i, r[1], r[2]))
            if isinstance(r[5], dict) and r[5].get("type") not in types:
                bad.append("%s: marker %d type %r has no schema" % (where, i, r[5].get("type")))
    return bad


def leaf_names(thread):
    """(time ms, leaf location) of a thread's samples."""
    strings, ft = thread["stringTable"], thread["frameTable"]["data"]
    st = thread["stackTable"]["data"]
    return [(r[1], strings[ft[st[r[0]][1]][0]]) for r in thread["samples"]["data"]
            if r[0] is not None]


def frames_of(thread, stack):
    """The locations of a stack, root first."""
    strings, ft = thread["stringTable"], thread["frameTable"]["data"]
    st = thread["stackTable"]["data"]
    out = []
    while stack is not None:
        out.append(strings[ft[st[stack][1]][0]])
        stack = st[stack][0]
    return out[::-1]
