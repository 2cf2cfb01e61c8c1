"""Mutations of model files (URDF, MJCF) and CSV inputs (ensemble files,
motions) for the edge fuzzer (fuzz_edges.py, issue 40 item 4).

Every mutator takes a random.Random and returns new content; the content
is bytes at the end (an encoding or binary garbage is a mutation too).
The mutations are the ones a user's file meets: elements deleted or
duplicated, numbers huge, NaN, infinite, negative or not numbers, names
empty or odd, deep nesting, truncation, binary garbage, a byte-order
mark, other encodings and line ends.
"""
import copy
import re
import xml.etree.ElementTree as ET

NUMBERS = ["nan", "NaN", "inf", "-inf", "1e308", "-1e308", "1e-308", "0",
           "-0", "-1", "1e400", "5e-324", "1e20", "-1e20", "1e9", "abc", "",
           "1,5", "0x10", " ", "1e", "+", "1.2.3", "1d0", "\u0663", "-nan",
           "Infinity", "99999999999999999999999"]
NAMES = ["", " ", "j,1", 'a"b', "a\nb", "../x", "../../evil", "/etc/passwd",
         "x" * 5000, "\u00e9l\u00e9ment", "\u540d", "\t", "a b", "a;b",
         "a=b", "a/b", ".", "..", "a\\b", "#a", "a'b", "\u202ename",
         "a\rb", "0", "-1", "ground", "world", "t"]
TEXT_MUTATIONS = ["truncate", "garbage", "bom", "utf16", "latin1", "nul",
                  "cr_only", "crlf", "empty", "binary", "prefix",
                  "double_root", "control"]


def _is_number_list(text):
    toks = text.split()
    if not toks:
        return False
    try:
        for t in toks:
            float(t)
    except ValueError:
        return False
    return True


class XmlCase:
    """A parsed XML model and the mutations applied to it (the names say
    what was done, for the log)."""

    def __init__(self, text):
        # urdfdom and the MJCF reader take "--" inside a comment, which
        # ElementTree refuses: the comments go.
        self.root = ET.fromstring(re.sub(r"<!--.*?-->", "", text,
                                         flags=re.S))
        self.done = []
        self.deeps = []

    def elements(self):
        return [e for e in self.root.iter()]

    def parent_map(self):
        return {c: p for p in self.root.iter() for c in p}

    # --- tree mutations -------------------------------------------------
    def delete(self, rng):
        parents = self.parent_map()
        if not parents:
            return
        e = rng.choice(list(parents))
        parents[e].remove(e)
        self.done.append(f"delete <{e.tag}>")

    def duplicate(self, rng):
        parents = self.parent_map()
        if not parents:
            return
        e = rng.choice(list(parents))
        p = parents[e]
        p.insert(list(p).index(e) + 1, copy.deepcopy(e))
        self.done.append(f"duplicate <{e.tag} {e.get('name', '')}>")

    def number(self, rng):
        spots = [(e, k) for e in self.root.iter() for k, v in e.attrib.items()
                 if _is_number_list(v)]
        if not spots:
            return
        e, k = rng.choice(spots)
        toks = e.get(k).split()
        r = rng.random()
        if r < 0.6:
            i = rng.randrange(len(toks))
            toks[i] = rng.choice(NUMBERS)
        elif r < 0.8:
            scale = rng.choice([1e10, 1e100, 1e300, -1.0, -1e6, 1e-300, 0.0])
            toks = [repr(float(t) * scale) for t in toks]
        elif r < 0.9:
            toks = toks[:-1]
        else:
            toks = toks + ["1"]
        e.set(k, " ".join(toks))
        self.done.append(f"<{e.tag}> {k}={e.get(k)[:40]!r}")

    def name(self, rng):
        keys = ("name", "link", "joint", "body", "class", "childclass",
                "site", "file", "mesh", "material", "body1", "body2")
        spots = [(e, k) for e in self.root.iter() for k in e.attrib
                 if k in keys]
        if not spots:
            return
        e, k = rng.choice(spots)
        e.set(k, rng.choice(NAMES))
        self.done.append(f"<{e.tag}> {k}={e.get(k)[:20]!r}")

    def drop_attribute(self, rng):
        spots = [(e, k) for e in self.root.iter() for k in e.attrib]
        if not spots:
            return
        e, k = rng.choice(spots)
        del e.attrib[k]
        self.done.append(f"<{e.tag}> without {k}")

    def unknown(self, rng):
        e = rng.choice(self.elements())
        if rng.random() < 0.5:
            ET.SubElement(e, rng.choice(["bogus", "joint", "link", "body",
                                         "geom", "inertial", "mass"]))
            self.done.append(f"unknown child of <{e.tag}>")
        else:
            e.set(rng.choice(["bogus", "type", "axis", "pos", "value"]),
                  rng.choice(NUMBERS + ["free", "ball", "slide"]))
            self.done.append(f"attribute on <{e.tag}>")

    def retype(self, rng):
        spots = [e for e in self.root.iter() if "type" in e.attrib]
        if not spots:
            return
        e = rng.choice(spots)
        e.set("type", rng.choice(["revolute", "continuous", "prismatic",
                                  "fixed", "floating", "planar", "hinge",
                                  "slide", "ball", "free", "bogus", "",
                                  "sphere", "box", "mesh", "plane"]))
        self.done.append(f"<{e.tag}> type={e.get('type')}")

    def deep(self, rng):
        e = rng.choice(self.elements())
        depth = rng.choice([20, 98, 99, 100, 101, 500, 5000, 60000])
        tag = rng.choice(["bogus", e.tag, "body", "link"])
        # Spliced into the text by text(): ElementTree's serializer
        # recurses, too deep for it.
        ET.SubElement(e, f"deep{len(self.deeps)}")
        self.deeps.append((tag, depth))
        self.done.append(f"{depth} <{tag}> nested in <{e.tag}>")

    def retag(self, rng):
        e = rng.choice(self.elements())
        e.tag = rng.choice(["joint", "link", "body", "geom", "bogus",
                            "robot", "mujoco", "worldbody", "inertial"])
        self.done.append(f"a tag renamed {e.tag}")

    def grow(self, rng):
        """Many copies of a subtree with fresh names: size limits."""
        parents = self.parent_map()
        if not parents:
            return
        e = rng.choice(list(parents))
        n = rng.choice([10, 100, 1000])
        p = parents[e]
        for i in range(n):
            c = copy.deepcopy(e)
            for x in c.iter():
                for k in ("name", "link"):
                    if k in x.attrib:
                        x.set(k, f"{x.get(k)}_g{i}")
            p.append(c)
        self.done.append(f"{n} copies of <{e.tag}>")

    TREE = ["delete", "duplicate", "number", "number", "number", "name",
            "name", "drop_attribute", "unknown", "retype", "deep", "retag",
            "grow"]

    def mutate(self, rng, n):
        for _ in range(n):
            getattr(self, rng.choice(self.TREE))(rng)

    def text(self):
        text = ET.tostring(self.root, encoding="unicode")
        for k, (tag, depth) in enumerate(self.deeps):
            text = text.replace(f"<deep{k} />", f"<{tag}>" * depth +
                                f"</{tag}>" * depth)
        return text


def text_mutation(rng, data, kind=None):
    """(bytes, what) for one byte-level mutation of UTF-8 bytes."""
    kind = kind or rng.choice(TEXT_MUTATIONS)
    n = len(data)
    if kind == "truncate":
        return data[:rng.randrange(n + 1)], f"truncated to {n} bytes"
    if kind == "garbage":
        i = rng.randrange(n + 1)
        g = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        return data[:i] + g + data[i:], f"garbage at byte {i}"
    if kind == "bom":
        return b"\xef\xbb\xbf" + data, "UTF-8 byte-order mark"
    if kind == "utf16":
        text = data.decode("utf-8", "replace")
        enc = rng.choice(["utf-16", "utf-16-le", "utf-16-be"])
        return text.encode(enc), enc
    if kind == "latin1":
        text = data.decode("utf-8", "replace").replace(
            'name="', 'name="\u00e9', 1).replace("name='", "name='\u00e9", 1)
        return text.encode("latin-1", "replace"), "latin-1 with an accent"
    if kind == "nul":
        i = rng.randrange(n + 1)
        return data[:i] + b"\0" + data[i:], f"NUL at byte {i}"
    if kind == "cr_only":
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r"), "CR only"
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n"), "CRLF"
    if kind == "empty":
        return rng.choice([b"", b"\n", b"   "]), "empty"
    if kind == "binary":
        return (bytes(rng.randrange(256) for _ in range(rng.randint(1, 4096))),
                "binary")
    if kind == "prefix":
        return rng.choice([b"garbage", b"\xff\xfe", b"<", b"<?xml?>",
                           b"\x7fELF"]) + data, "prefix"
    if kind == "double_root":
        return data + data, "the document twice"
    if kind == "control":
        i = rng.randrange(n + 1)
        return data[:i] + bytes([rng.choice([1, 7, 8, 27, 127])]) + data[i:], \
            f"control byte at {i}"
    raise ValueError(kind)


def mutate_xml(rng, text):
    """(bytes, [what was done]) of a mutated XML model."""
    try:
        case = XmlCase(text)
    except (ET.ParseError, ValueError):
        # A seed that is not well-formed XML (some samples are not):
        # byte-level mutations only.
        out, what = text_mutation(rng, text.encode("utf-8"))
        return out, ["not well-formed seed", what]
    case.mutate(rng, rng.choice([1, 1, 1, 2, 2, 3]))
    out = case.text().encode("utf-8")
    if rng.random() < 0.3:
        out, what = text_mutation(rng, out)
        case.done.append(what)
    return out, case.done


# --- CSV ----------------------------------------------------------------
CELLS = ["nan", "inf", "-inf", "1e308", "-1e308", "1e400", "5e-324", "0",
         "-0", "-1", "", " ", "abc", '"', '""', '"a,b"', "1,5", "0x10",
         "1e", "1e-400", "\u0663", "1 2", "#", "9" * 400, "+", "1.2.3"]


def mutate_csv(rng, text, numeric_from=1, grow=50):
    """(bytes, [what]) of a mutated CSV table (header and rows); cells of
    columns numeric_from.. are numbers in the good file; the rows may be
    repeated `grow` times."""
    lines = text.splitlines()
    rows = [ln.split(",") for ln in lines]
    done = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        if not rows or not rows[0] or not all(rows[1:]):
            break  # every column deleted: nothing left to mutate
        r = rng.random()
        if r < 0.3 and len(rows) > 1:
            i = rng.randrange(1, len(rows))
            j = rng.randrange(len(rows[i]))
            rows[i][j] = rng.choice(CELLS)
            done.append(f"cell {i},{j} = {rows[i][j][:20]!r}")
        elif r < 0.4:
            j = rng.randrange(len(rows[0]))
            rows[0][j] = rng.choice(["", "t", rows[0][0], rows[0][-1],
                                     "bogus", " " + rows[0][j], '"x', "é",
                                     rows[0][j].upper()])
            done.append(f"header {j} = {rows[0][j]!r}")
        elif r < 0.5:
            j = rng.randrange(len(rows[0]))
            rows = [row[:j] + row[j + 1:] for row in rows]
            done.append(f"column {j} deleted")
        elif r < 0.58 and len(rows) > 1:
            i = rng.randrange(1, len(rows))
            rows.insert(i, list(rows[i]))
            done.append(f"row {i} duplicated")
        elif r < 0.66 and len(rows) > 1:
            i = rng.randrange(1, len(rows))
            del rows[i]
            done.append(f"row {i} deleted")
        elif r < 0.72 and len(rows) > 2:
            i, k = rng.sample(range(1, len(rows)), 2)
            rows[i], rows[k] = rows[k], rows[i]
            done.append(f"rows {i} and {k} swapped")
        elif r < 0.78 and len(rows) > 1:
            i = rng.randrange(1, len(rows))
            rows[i] = rows[i] + [rng.choice(CELLS)] if rng.random() < 0.5 \
                else rows[i][:-1]
            done.append(f"row {i} has {len(rows[i])} fields")
        elif r < 0.84 and len(rows) > 1:
            scale = rng.choice([1e300, -1.0, 1e-300, 0.0, 1e10])
            j = rng.randrange(numeric_from, len(rows[0])) \
                if len(rows[0]) > numeric_from else 0
            for row in rows[1:]:
                try:
                    row[j] = repr(float(row[j]) * scale)
                except (ValueError, IndexError):
                    pass
            done.append(f"column {j} times {scale}")
        elif r < 0.88:
            rows.insert(rng.randrange(len(rows) + 1),
                        [rng.choice(["#", "", " ", "# comment", "t"])])
            done.append("odd line inserted")
        elif r < 0.92 and len(rows) > 1:
            i = rng.randrange(1, len(rows))
            rows[i] = [c + rng.choice(['"', ' "', "\t"]) for c in rows[i]]
            done.append(f"row {i} quotes and tabs")
        else:
            # Grown once at most (twice made a 300 MB motion whose
            # reading alone took the time limit).
            rows = rows[:1] if rng.random() < 0.5 or len(rows) > 2000 \
                else rows + rows[1:] * grow
            done.append(f"{len(rows) - 1} rows")
    out = ("\n".join(",".join(row) for row in rows) + "\n").encode("utf-8")
    if rng.random() < 0.3:
        out, what = text_mutation(rng, out, rng.choice(
            ["truncate", "garbage", "bom", "utf16", "nul", "cr_only",
             "crlf", "empty", "binary", "control", "latin1"]))
        done.append(what)
    return out, done

