"""Ollama (``format=``): what llama.cpp's json-schema-to-grammar enforces, and nothing it would misread.

Ollama turns the schema into a grammar with llama.cpp's converter (ollama ``llama/llama.go``
SchemaToGrammar → ``common/json-schema-to-grammar.cpp``; its rules in llama.cpp's
``grammars/README.md``); a schema the converter fails on fails the request. It reads one branch
per node (``SchemaConverter::visit``), which is not JSON Schema:

- an object with ``properties`` and no ``additionalProperties`` is **closed** ("additionalProperties
  defaults to false"): every object the caller left open is sent with ``additionalProperties: true``;
- ``$ref`` and ``anyOf``/``oneOf`` ignore their sibling keywords: the walk merges a ref's asserting
  siblings into its (inlined) target, and spreads the keywords beside an ``anyOf`` into each
  alternative (``spread_alternatives``), both exact;
- a node without ``type`` is read as the one type its keywords belong to (``properties`` → only
  objects, ``pattern`` → only strings, ``{}`` → only objects, a boolean schema or a node with only
  annotations → an error in Ollama's copy): such a node gets the full type list (each type then
  read with its own keywords), "any value" is written as that list;
- ``pattern`` must be ``^...$`` and is translated by hand (``llama_pattern``: anchored where that is
  equivalent, else removed; a final ``$`` also admits the final newline a regex's ``$`` admits);
  ``format`` is enforced for date, time, date-time and uuid by its own rules, of which only date
  admits every valid value (the uuid check takes a fifth hyphen); integer bounds are read as int64
  (a float bound is rounded the safe way here), number bounds not at all;
- ``$ref`` must be a ``#/...`` pointer, read without unescaping: definitions get plain names; a
  ``"$ref"`` key in *any* object is read as a reference (``resolve_refs``): a property named
  ``$ref`` is sent without its object's properties, an enum/const value holding one as its types;
- an open object's "other key" rule (``_not_strings``) writes each byte of the property names as a
  GBNF class: an object with a name outside plain printable ASCII (or with ``"\\]^[``, or a ``-`` that
  the negated class of the next bytes after a common prefix reads as a range) is sent as any object
  (closed, it would forbid the other keys the caller allows).

What it cannot enforce is removed with a downgrade line and checked locally.
"""

from __future__ import annotations

import math
import re
from typing import Any

from vance_cli.llm.output.merge import KEEP_ANNOTATIONS, Downgrade
from vance_cli.llm.output.walker import BASE_KEYWORDS, Family, contains_ref, enum_values_as_types
from vance_cli.schema.nodes import asserting
from vance_cli.schema.refs import def_of, refs_in, rewrite_refs

ALL_TYPES = ["object", "array", "string", "number", "boolean", "null"]  # "any value" for llama.cpp
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_REGEX_ESCAPES = set("^$.[]()|{}*+?")  # what llama.cpp unescapes into a literal
_ANYTHING = r"(.|\n|\r)*"  # any text: llama.cpp's dot is [^\x0A\x0D]
# A regex's "$" also matches before a final newline (the caller's validator takes "abc\n" for
# ^abc$); llama.cpp matches the JSON text, where that newline is the two characters \n.
_FINAL_NEWLINE = r"(\n|..)?"
_INT64 = 2**62
# Bytes llama.cpp's "other key" rule (_not_strings: one GBNF class per byte of each property name,
# the next bytes after a common prefix concatenated into one negated class) writes as the one
# character meant: printable ASCII but for the class syntax ("]", "\\", "^", "[") and the JSON quote
# (a "-" is one too where other bytes follow it in that negated class: see key_rule_ok).
_KEY_RULE_BYTES = frozenset(range(0x20, 0x7F)) - set(b'"\\]^[')
_QUANTIFIER = re.compile(r"\{(\d+)(,(\d*))?\}|\{,(\d+)\}")


def _class_ok(body: str) -> bool:
    """A character class llama.cpp copies into the grammar as it is, matching no character a JSON
    string must escape (``"``, ``\\``, controls: the grammar sees the escaped text)."""
    if not body or body[0] == "^" or any(c in '\\"[' or ord(c) < 0x20 for c in body):
        return False
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            lo, hi = ord(body[i]), ord(body[i + 2])
            if lo > hi or lo <= 0x22 <= hi or lo <= 0x5C <= hi:
                return False
            i += 3
        else:
            i += 1
    return True


def _translatable(inner: str) -> bool:
    """Whether llama.cpp's ``_visit_pattern`` turns ``inner`` (the part between ``^`` and ``$``)
    into a grammar that admits the JSON text of every string the regex matches.

    Kept to a plain subset: literals (not ``"``, ``\\`` or controls), the escapes it unescapes,
    classes without escapes or negation, groups (``(?:`` too), ``|``, ``* + ? {n,m}`` after an
    atom, and ``.`` only as ``.*`` or ``.+`` (a JSON escape is two characters of the text)."""
    i, depth, atom = 0, 0, False
    n = len(inner)
    empty = True  # nothing yet in this alternative (an empty one, "()" or "a|", is no grammar)
    while i < n:
        c = inner[i]
        if c in "|)" and empty:
            return False
        empty = c in "(|"
        if c == "\\":
            # (an escaped character joins the literal before it: a quantifier after it would
            # repeat the whole run, "ab\\.*" read as ("ab.")*)
            if inner[i + 1 : i + 2] not in _REGEX_ESCAPES or i + 1 >= n or inner[i + 2 : i + 3] in ("*", "+", "?", "{"):
                return False
            i, atom = i + 2, False
        elif c == ".":
            if inner[i + 1 : i + 2] not in ("*", "+") or inner[i + 2 : i + 3] in ("*", "+", "?", "{"):
                return False
            i, atom = i + 2, False
        elif c == "[":
            end = inner.find("]", i + 1)
            if end < 0 or not _class_ok(inner[i + 1 : end]):
                return False
            i, atom = end + 1, True
        elif c == "(":
            if inner[i + 1 : i + 2] == "?":
                if inner[i + 2 : i + 3] != ":":
                    return False
                i += 2
            i, depth, atom = i + 1, depth + 1, False
        elif c == ")":
            depth -= 1
            if depth < 0:
                return False
            i, atom = i + 1, True
        elif c == "|":
            i, atom = i + 1, False
        elif c in "*+?":
            if not atom:
                return False
            i, atom = i + 1, False
        elif c == "{":
            m = _QUANTIFIER.match(inner, i)
            if not atom or m is None:
                return False
            i, atom = m.end(), False
        elif c in '^$]}"' or ord(c) < 0x20:
            return False
        else:
            i, atom = i + 1, True
    return depth == 0 and not empty


def _top_level_bar(inner: str) -> bool:
    depth, i = 0, 0
    while i < len(inner):
        c = inner[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = inner.find("]", i + 1) + 1 or len(inner)
            continue
        depth += c == "("
        depth -= c == ")"
        if c == "|" and depth == 0:
            return True
        i += 1
    return False


def llama_pattern(pattern: Any) -> str | None:
    """``pattern`` as llama.cpp can take it (``^...$``, admitting every string the pattern
    matches), or None where that cannot be said: an unanchored side is filled with any text."""
    if not isinstance(pattern, str):
        return None
    start = pattern.startswith("^")
    end = pattern.endswith("$") and not pattern.endswith("\\$")
    inner = pattern[1 if start else 0 : len(pattern) - 1 if end else len(pattern)]
    if not _translatable(inner):
        return None
    if (start or end) and _top_level_bar(inner):
        return None  # ^a|b is (^a)|b
    if start and end:
        return pattern[:-1] + _FINAL_NEWLINE + "$"
    return "^" + ("" if start else _ANYTHING) + f"({inner})" + (_FINAL_NEWLINE if end else _ANYTHING) + "$"


class Ollama(Family):
    name = "ollama"
    supported = BASE_KEYWORDS | {
        "const", "pattern", "format", "minItems", "maxItems", "minLength", "maxLength", *_BOUNDS,
    }
    # llama.cpp's own rule for date admits every valid value (its time and date-time rules take
    # no lowercase "z", no leap second, only three fraction digits: not sent).
    # uuid is not: jsonschema's uuid check takes a fifth hyphen, llama.cpp's rule is 8-4-4-4-12.
    formats = frozenset({"date"})
    spread_alternatives = True
    no_strict = (
        "Ollama has no strict mode: llama.cpp's grammar enforces the schema sent, whose objects stay as open as "
        "yours; what the grammar cannot enforce is listed below and checked locally"
    )

    def value_ok(self, key: str, value: Any) -> bool:
        if not super().value_ok(key, value):
            return False
        if key == "pattern":
            return llama_pattern(value) is not None
        if key in _BOUNDS or key in ("minLength", "maxLength", "minItems", "maxItems"):
            return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        return True

    def tidy(self, provider: dict[str, Any], notes: list[str]) -> dict[str, Any]:
        """The walked schema written the way llama.cpp reads it (see the module docstring)."""
        provider = enum_values_as_types(
            provider, notes, lambda v: not contains_ref(v, in_values=True), 'llama.cpp reads a "$ref" key in any object as a reference'
        )
        defs = dict(provider.get("$defs") or {})
        body = {k: v for k, v in provider.items() if k != "$defs"}
        if "#" in refs_in(body) | refs_in(list(defs.values())):
            # "#" alone is an unsupported ref: the root becomes a definition.
            root = next(f"root{i}" if i else "root" for i in range(len(defs) + 1) if (f"root{i}" if i else "root") not in defs)
            defs[root] = body
            body = {"$ref": f"#/$defs/{root}"}
            defs = {k: rewrite_refs(v, lambda r: f"#/$defs/{root}" if r == "#" else r) for k, v in defs.items()}
        names = _plain_names(defs)
        missing: set[str] = set()

        def ref(r: str) -> str:
            name = def_of(r)
            if name in names:
                return f"#/$defs/{names[name]}"
            missing.add(r)
            return r

        tidy = _Tidy(notes, missing)
        out = tidy.node(rewrite_refs(body, ref), "")
        if defs:
            out["$defs"] = {names[k]: tidy.node(rewrite_refs(v, ref), f"/$defs/{names[k]}") for k, v in defs.items()}
        return out


def key_rule_ok(names: list[str]) -> str | None:
    """The first property name llama.cpp's "other key" rule of an open object cannot write as a
    sound grammar (None: every name is fine): a byte outside ``_KEY_RULE_BYTES``, or a ``-`` that
    the negated class of the bytes following a common prefix reads as a range (``[^"-a]``)."""
    following: dict[bytes, set[int]] = {}
    for name in names:
        raw = name.encode("utf-8")
        if any(b not in _KEY_RULE_BYTES for b in raw):
            return name
        for i, b in enumerate(raw):
            following.setdefault(raw[:i], set()).add(b)
    for prefix, nxt in following.items():
        if 0x2D in nxt and max(nxt) > 0x2D:
            return next(n for n in names if n.encode("utf-8").startswith(prefix + b"-"))
    return None


def _plain_names(defs: dict[str, Any]) -> dict[str, str]:
    """Definition names llama.cpp resolves as written and names its rules after without clashes."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in defs:
        base = re.sub(r"[^A-Za-z0-9]", "", name) or "def"
        plain, i = base, 1
        while plain.lower() in taken:
            plain, i = f"{base}{i}", i + 1
        taken.add(plain.lower())
        out[name] = plain
    return out


class _Tidy:
    def __init__(self, notes: list[str], missing: set[str]) -> None:
        self.notes = notes
        self.missing = missing

    def note(self, where: str, why: str) -> None:
        line = Downgrade(where or "(root)", why, sent=True)
        if line not in self.notes:
            self.notes.append(line)

    def node(self, node: Any, where: str) -> Any:
        if node is True or node == {}:
            return {"type": list(ALL_TYPES)}
        if node is False:
            self.note(where, "a false schema sent as any value (llama.cpp takes no boolean schemas; checked locally)")
            return {"type": list(ALL_TYPES)}
        if not isinstance(node, dict):
            return node
        annotations = {k: v for k, v in node.items() if k in KEEP_ANNOTATIONS}
        if isinstance(node.get("$ref"), str):
            if node["$ref"] in self.missing:
                self.note(where, f"$ref {node['$ref']} not resolvable inside the schema; sent unconstrained (checked locally)")
                return {**annotations, "type": list(ALL_TYPES)}
            return {**annotations, "$ref": node["$ref"]}  # llama.cpp reads only the ref
        if isinstance(node.get("anyOf"), list):
            beside = sorted(asserting(node) - {"anyOf"})
            if beside:  # (the walk spreads them into the alternatives; none should be left)
                self.note(where, f"{', '.join(beside)} beside anyOf removed (llama.cpp reads only the alternatives; checked locally)")
            return {**annotations, "anyOf": [self.node(a, f"{where}/anyOf/{i}") for i, a in enumerate(node["anyOf"])]}
        out = dict(node)
        if "type" not in out and "const" not in out and "enum" not in out:
            out["type"] = list(ALL_TYPES)  # llama.cpp would read an untyped node as one type
        t = out.get("type")
        types = [t] if isinstance(t, str) else list(t) if isinstance(t, list) else []
        if isinstance(out.get("properties"), dict) and "$ref" in out["properties"]:
            for k in ("properties", "required", "additionalProperties"):
                out.pop(k, None)
            self.note(where, 'properties removed: one is named "$ref", which llama.cpp reads as a reference '
                      "(sent as any object; checked locally)")
        if isinstance(out.get("properties"), dict):
            out["properties"] = {k: self.node(v, f"{where}/properties/{k}") for k, v in out["properties"].items()}
        extra = out.get("additionalProperties")
        if isinstance(extra, dict):
            out["additionalProperties"] = self.node(extra, f"{where}/additionalProperties")
        elif extra is None and isinstance(out.get("properties"), dict):
            out["additionalProperties"] = True  # open, as the caller's schema is: llama.cpp closes it otherwise
        if isinstance(out.get("properties"), dict) and out.get("additionalProperties", False) is not False:
            odd = key_rule_ok(list(out["properties"]))
            if odd is not None:  # closing it would forbid the other keys the caller allows: any object
                for k in ("properties", "required", "additionalProperties", "patternProperties"):
                    out.pop(k, None)
                self.note(where, f"properties removed: llama.cpp's rule for other keys cannot exclude the property "
                          f"name {odd!r} (non-ASCII or GBNF class syntax), and closing the object would forbid the "
                          "other keys it allows (sent as any object; checked locally)")
        if "items" in out:
            if out["items"] is False:
                out["items"], out["maxItems"] = {"type": list(ALL_TYPES)}, 0
            else:
                out["items"] = self.node(out["items"], f"{where}/items")
        elif "minItems" in out or "maxItems" in out:
            out["items"] = {"type": list(ALL_TYPES)}  # llama.cpp counts items only beside an items schema
        if "pattern" in out:
            anchored = llama_pattern(out["pattern"])
            if anchored is None:  # (value_ok keeps only those it can take)
                del out["pattern"]
            elif anchored != out["pattern"]:
                self.note(where, f"pattern sent as {anchored} (llama.cpp matches the JSON text whole; the same strings, "
                          "and a final newline where the pattern ends in $; checked locally)")
                out["pattern"] = anchored
        bounds = [k for k in _BOUNDS if k in out]
        if bounds and "integer" not in types:
            for k in bounds:
                del out[k]
            self.note(where, f"{', '.join(bounds)} removed (llama.cpp bounds only integers; checked locally)")
        elif bounds:
            low = [math.ceil(out["minimum"])] if "minimum" in out else []
            low += [math.floor(out["exclusiveMinimum"]) + 1] if "exclusiveMinimum" in out else []
            high = [math.floor(out["maximum"])] if "maximum" in out else []
            high += [math.ceil(out["exclusiveMaximum"]) - 1] if "exclusiveMaximum" in out else []
            for k in bounds:
                del out[k]
            low = [v for v in low if abs(v) < _INT64]  # read as int64 by llama.cpp
            high = [v for v in high if abs(v) < _INT64]
            if low:
                out["minimum"] = max(low)
            if high:
                out["maximum"] = min(high)
        for k in ("minLength", "maxLength", "minItems", "maxItems"):
            if isinstance(out.get(k), float):
                out[k] = math.ceil(out[k]) if k.startswith("min") else math.floor(out[k])
        return out


OLLAMA = Ollama()
