"""The fixed task suite of the real-model evaluation (issue 18): chat, structure, Benjy vs coding.

Data only; ``eval.py`` runs it. Every case says how its success is checked mechanically:

- chat: the turn ends BLOCKED with a real ``respond`` call, the message matches every pattern of
  ``facts`` (case-insensitive regular expressions), the ``tools`` were called, and a
  ``file`` the prompt asked for has the asked content;
- structure: ``vance structure --json`` ends with ``status`` (default ok) and, for ok, its
  ``data`` equals ``expect`` (strings compared case-folded with whitespace collapsed; in text
  mode, where the schema's property names are the builder model's choice, the leaf values are
  compared as a multiset instead);
- coding: ``check`` (a Python script, run from the workspace by the harness, from a pristine copy
  outside it) exits 0 after the run. The workspace also holds a copy of it, readable by the model.
  ``reference`` is a solution the suite's own test (tests/realmodel/test_suite.py) checks the
  check with; the model never sees it.

Changing a case changes what the figures mean: add a case rather than edit one, and say so in
the figures' table.
"""

from __future__ import annotations

# --- chat (Arthur, `vance chat -p`) -----------------------------------------------------------

CHAT: list[dict] = [
    {
        "id": "greeting",
        "prompt": "Hello! Who are you, in one sentence?",
        "facts": [r"arthur|vance|assistant"],
    },
    {
        "id": "greeting-fr",
        "prompt": "Bonjour ! Peux-tu te présenter en une phrase, en français ?",
        "facts": [r"je suis|assistant|bonjour"],
    },
    {
        "id": "arithmetic",
        "prompt": "What is 17 times 23? Answer with the number.",
        "facts": [r"\b391\b"],
    },
    {
        "id": "file-question",
        "files": {"notes.md": "# Notes\n\nThe meeting with Dana is on Thursday at 15:00 in room B12.\n"},
        "prompt": "Read notes.md: when and where is the meeting with Dana?",
        "facts": [r"thursday", r"15[:.]00|3\s*pm", r"b\s?12"],
        "tools": ["file_read"],
    },
    {
        "id": "file-config",
        "files": {
            "pyproject.toml": '[project]\nname = "tiny"\nversion = "0.4.2"\nrequires-python = ">=3.10"\n',
        },
        "prompt": "Which version of the project is declared in pyproject.toml?",
        "facts": [r"0\.4\.2"],
        "tools": ["file_read"],
    },
    {
        "id": "file-list",
        "files": {"alpha.txt": "a\n", "beta.md": "b\n", "gamma.csv": "x,y\n1,2\n"},
        "prompt": "Which files are in this folder? List their names.",
        "facts": [r"alpha\.txt", r"beta\.md", r"gamma\.csv"],
        "tools": ["file_list"],
    },
    {
        "id": "two-tool-list-read",
        "files": {"todo.txt": "1. Renew the passport\n2. Call the plumber\n", "readme.md": "nothing here\n"},
        "prompt": "Look at the files in this folder and tell me what the todo file asks me to do.",
        "facts": [r"passport", r"plumber"],
        "tools": ["file_list", "file_read"],
    },
    {
        "id": "two-tool-compare",
        "files": {"a.txt": "417\n", "b.txt": "398\n"},
        "prompt": "a.txt and b.txt each hold a number. Read both: which file holds the larger number, and what is it?",
        "facts": [r"a\.txt", r"\b417\b"],
        "tools": ["file_read"],
        "min_tool_calls": 2,
    },
    {
        "id": "file-question-de",
        "files": {"notiz.txt": "Der Schlüssel liegt unter der blauen Vase im Flur.\n"},
        "prompt": "Was steht in notiz.txt? Wo liegt der Schlüssel?",
        "facts": [r"vase"],
        "tools": ["file_read"],
    },
    {
        "id": "file-question-es",
        "files": {"reunion.txt": "La reunión con el equipo de ventas es el lunes a las 10:30.\n"},
        "prompt": "¿Qué dice el archivo reunion.txt? ¿Cuándo es la reunión?",
        "facts": [r"lunes|monday", r"10[:.]30"],
        "tools": ["file_read"],
    },
    {
        "id": "csv-lookup",
        "files": {"prices.csv": "item,price\nlamp,24.50\nchair,79.00\ndesk,199.00\n"},
        "prompt": "What does a lamp cost according to prices.csv?",
        "facts": [r"24[.,]50?\b"],
        "tools": ["file_read"],
    },
    {
        "id": "file-write",
        "prompt": "Create a file named hello.txt in this folder containing exactly this line: Hello from Vance",
        "facts": [],
        "file": {"path": "hello.txt", "matches": r"^\s*Hello from Vance\s*$"},
        # Arthur has no file_write: it delegates (process_spawn) and relays the worker's report.
        "timeout_factor": 2.0,
    },
]

# --- structure (`vance structure --json`) -----------------------------------------------------

_PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}, "city": {"type": "string"}},
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}

STRUCTURE: list[dict] = [
    {
        "id": "flat-person",
        "text": "Ann Lee is 34 years old and lives in Lyon.",
        "schema": _PERSON,
        "expect": {"name": "Ann Lee", "age": 34, "city": "Lyon"},
    },
    {
        "id": "flat-booleans",
        "text": "The flat has 3 rooms and a balcony but no elevator; the rent is 1150 euros per month.",
        "schema": {
            "type": "object",
            "properties": {
                "rooms": {"type": "integer", "minimum": 1},
                "balcony": {"type": "boolean"},
                "elevator": {"type": "boolean"},
                "rent": {"type": "integer", "minimum": 0},
            },
            "required": ["rooms", "balcony", "elevator", "rent"],
            "additionalProperties": False,
        },
        "expect": {"rooms": 3, "balcony": True, "elevator": False, "rent": 1150},
    },
    {
        "id": "enums",
        "text": "Ticket: the Android app freezes when uploading photos. Severity: major.",
        "schema": {
            "type": "object",
            "properties": {
                "platform": {"type": "string", "enum": ["web", "ios", "android", "desktop"]},
                "severity": {"type": "string", "enum": ["critical", "major", "minor", "trivial"]},
            },
            "required": ["platform", "severity"],
            "additionalProperties": False,
        },
        "expect": {"platform": "android", "severity": "major"},
    },
    {
        "id": "enum-array",
        "text": "The article covers Python, testing and CI, in that order.",
        "schema": {
            "type": "object",
            "properties": {
                "tags": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["python", "rust", "testing", "ci", "docs"]},
                    "uniqueItems": True,
                }
            },
            "required": ["tags"],
            "additionalProperties": False,
        },
        "expect": {"tags": ["python", "testing", "ci"]},
    },
    {
        "id": "dates-pattern",
        "text": "Invoice INV-2041 was issued on 5 March 2026 and is due on 4 April 2026.",
        "schema": {
            "type": "object",
            "properties": {
                "invoice": {"type": "string", "pattern": "^INV-[0-9]+$"},
                "issued": {"type": "string", "format": "date", "description": "YYYY-MM-DD"},
                "due": {"type": "string", "format": "date", "description": "YYYY-MM-DD"},
            },
            "required": ["invoice", "issued", "due"],
            "additionalProperties": False,
        },
        "expect": {"invoice": "INV-2041", "issued": "2026-03-05", "due": "2026-04-04"},
    },
    {
        "id": "numbers-constraints",
        "text": "Order: 3 chairs at 49.90 EUR each, plus 12 EUR shipping.",
        "schema": {
            "type": "object",
            "properties": {
                "quantity": {"type": "integer", "minimum": 1},
                "unit_price": {"type": "number", "exclusiveMinimum": 0},
                "shipping": {"type": "number", "minimum": 0},
                "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
            },
            "required": ["quantity", "unit_price", "shipping", "currency"],
            "additionalProperties": False,
        },
        "expect": {"quantity": 3, "unit_price": 49.9, "shipping": 12, "currency": "EUR"},
    },
    {
        "id": "nested-object",
        "text": "Maria Rossi lives at Via Roma 12, 00184 Rome, Italy.",
        "schema": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "address": {
                    "type": "object",
                    "properties": {
                        "street": {"type": "string", "description": "street and number"},
                        "postcode": {"type": "string"},
                        "city": {"type": "string"},
                        "country": {"type": "string"},
                    },
                    "required": ["street", "postcode", "city", "country"],
                    "additionalProperties": False,
                },
            },
            "required": ["name", "address"],
            "additionalProperties": False,
        },
        "expect": {
            "name": "Maria Rossi",
            "address": {"street": "Via Roma 12", "postcode": "00184", "city": "Rome", "country": "Italy"},
        },
    },
    {
        "id": "nested-array",
        "text": "Please ship 2 of item A-17, 1 of item B-02 and 6 of item C-33.",
        "schema": {
            "type": "object",
            "properties": {
                "lines": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "item": {"type": "string", "pattern": "^[A-Z]-[0-9]{2}$"},
                            "quantity": {"type": "integer", "minimum": 1},
                        },
                        "required": ["item", "quantity"],
                        "additionalProperties": False,
                    },
                }
            },
            "required": ["lines"],
            "additionalProperties": False,
        },
        "expect": {
            "lines": [{"item": "A-17", "quantity": 2}, {"item": "B-02", "quantity": 1}, {"item": "C-33", "quantity": 6}]
        },
    },
    {
        "id": "nested-array-dates",
        "text": "Action items: Tom sends the quote by 2026-05-10; Priya books the room by 2026-05-07.",
        "schema": {
            "type": "object",
            "properties": {
                "actions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "owner": {"type": "string"},
                            "due": {"type": "string", "format": "date"},
                        },
                        "required": ["owner", "due"],
                        "additionalProperties": False,
                    },
                }
            },
            "required": ["actions"],
            "additionalProperties": False,
        },
        "expect": {"actions": [{"owner": "Tom", "due": "2026-05-10"}, {"owner": "Priya", "due": "2026-05-07"}]},
    },
    {
        "id": "named-manual",
        # examples/schemas/expense.json with its manual (EUR for €, taxis are travel, the total
        # paid including the tip), added to the case's user scope with `vance schemas add`.
        "text": "Taxi from the airport on 14 March 2026, paid to CityCab: 42.50 € including the tip.",
        "named": "expense",
        "expect": {
            "merchant": "CityCab",
            "date": "2026-03-14",
            "amount": 42.5,
            "currency": "EUR",
            "category": "travel",
        },
    },
    {
        "id": "named-bundled",
        "text": "Jane Doe, CTO at Initech, London. Mail: jane.doe@example.com",
        "named": "contact",
        "expect": {
            "name": "Jane Doe",
            "role": "CTO",
            "organization": "Initech",
            "location": "London",
            "email": "jane.doe@example.com",
        },
    },
    {
        "id": "need-more-input-manual",
        # The manual says: a date without a year is not enough, ask for it.
        "text": "Lunch at Chez Marcel on 14 March, 23 EUR.",
        "named": "expense",
        "status": "need-more-input",
    },
    {
        "id": "need-more-input-required",
        "text": "Bob called about the offer and will call back.",
        "schema": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "email": {"type": "string", "format": "email", "description": "the caller's e-mail address"},
            },
            "required": ["name", "email"],
            "additionalProperties": False,
        },
        "status": "need-more-input",
    },
    {
        "id": "text-mode",
        "text": "In Oslo it is 7 degrees Celsius today.",
        "describe": "city (string), temperature in degrees Celsius (integer)",
        "expect_values": ["Oslo", 7],
    },
    {
        "id": "text-mode-2",
        "text": "Ada Lovelace was born in 1815 in London.",
        "describe": "name (string), birth year (integer), birthplace (string)",
        "expect_values": ["Ada Lovelace", 1815, "London"],
    },
]

# --- Benjy vs the plain `coding` recipe ---------------------------------------------------------

_CHECK_HEAD = '''"""Check for the {name} task: exit 0 when the workspace solves it."""
import os
import sys

sys.path.insert(0, os.getcwd())
failures = []


def expect(label, got, want):
    if got != want:
        failures.append(f"{{label}}: got {{got!r}}, expected {{want!r}}")

'''
_CHECK_TAIL = """
if failures:
    print("FAILED:", *failures[:5], sep="\\n  ")
    sys.exit(1)
print("ok")
"""


def _check(name: str, body: str) -> str:
    return _CHECK_HEAD.format(name=name) + body.strip("\n") + "\n" + _CHECK_TAIL


CODING: list[dict] = [
    {
        "id": "slugify",
        "reference": {
            "slugify.py": 'import re\n\n\ndef slugify(text):\n    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")\n'
        },
        "goal": "Create slugify.py with a function slugify(text) that returns the text lowercased, with every run "
        "of characters other than a-z and 0-9 replaced by one '-', and no '-' at the start or end.",
        "check": _check(
            "slugify",
            """
from slugify import slugify
expect("basic", slugify("Hello World"), "hello-world")
expect("punctuation", slugify("  Hello,   World!  "), "hello-world")
expect("digits", slugify("Top 10 Tips"), "top-10-tips")
expect("dashes", slugify("--a--b--"), "a-b")
""",
        ),
    },
    {
        "id": "fizzbuzz",
        "reference": {
            "fizzbuzz.py": 'def fizzbuzz(n):\n    out = []\n    for i in range(1, n + 1):\n        s = ("Fizz" if i % 3 == 0 else "") + ("Buzz" if i % 5 == 0 else "")\n        out.append(s or str(i))\n    return out\n'
        },
        "goal": "Create fizzbuzz.py with a function fizzbuzz(n) that returns a list of strings for 1..n: 'Fizz' for "
        "multiples of 3, 'Buzz' for multiples of 5, 'FizzBuzz' for multiples of both, else the number.",
        "check": _check(
            "fizzbuzz",
            """
from fizzbuzz import fizzbuzz
expect("n=5", fizzbuzz(5), ["1", "2", "Fizz", "4", "Buzz"])
expect("n=15 last", fizzbuzz(15)[-1], "FizzBuzz")
expect("length", len(fizzbuzz(30)), 30)
""",
        ),
    },
    {
        "id": "roman",
        "reference": {
            "roman.py": 'def to_roman(n):\n    out = ""\n    for v, s in [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]:\n        while n >= v:\n            out += s\n            n -= v\n    return out\n'
        },
        "goal": "Create roman.py with a function to_roman(n) that returns the Roman numeral of an integer from 1 to "
        "3999 as a string, e.g. to_roman(1994) == 'MCMXCIV'.",
        "check": _check(
            "roman",
            """
from roman import to_roman
for n, r in [(1, "I"), (4, "IV"), (9, "IX"), (14, "XIV"), (40, "XL"), (90, "XC"), (400, "CD"), (1994, "MCMXCIV"), (3999, "MMMCMXCIX")]:
    expect(f"to_roman({n})", to_roman(n), r)
""",
        ),
    },
    {
        "id": "csv-summary",
        "reference": {
            "summary.py": 'import csv\n\n\ndef totals(path):\n    out = {}\n    with open(path, newline="") as f:\n        for row in csv.DictReader(f):\n            out[row["region"]] = out.get(row["region"], 0.0) + float(row["amount"])\n    return out\n'
        },
        "files": {"sales.csv": "region,amount\nnorth,10.5\nsouth,4\nnorth,2.5\neast,7\nsouth,1\n"},
        "goal": "Create summary.py with a function totals(path) that reads a CSV file with the columns region and "
        "amount (like sales.csv) and returns a dict mapping each region to the sum of its amounts as a float.",
        "check": _check(
            "csv-summary",
            """
from summary import totals
expect("sales.csv", totals("sales.csv"), {"north": 13.0, "south": 5.0, "east": 7.0})
""",
        ),
    },
    {
        "id": "fix-failing-test",
        "reference": {"calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"},
        "files": {
            "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
            "test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
            "def test_mul():\n    assert mul(2, 3) == 6\n",
        },
        "goal": "The test test_add in test_calc.py fails. Fix the bug in calc.py (not the test) so that both tests pass.",
        "check": _check(
            "fix-failing-test",
            """
from calc import add, mul
expect("add(2, 3)", add(2, 3), 5)
expect("add(-1, 1)", add(-1, 1), 0)
expect("mul(2, 3)", mul(2, 3), 6)
expect("test_calc.py unchanged", open("test_calc.py").read().count("assert add(2, 3) == 5"), 1)
""",
        ),
    },
    {
        "id": "palindrome",
        "reference": {
            "palindrome.py": "def is_palindrome(text):\n    s = [c.lower() for c in text if c.isalnum()]\n    return s == s[::-1]\n"
        },
        "goal": "Create palindrome.py with a function is_palindrome(text) that returns True when the text reads the "
        "same backwards, ignoring case and every character that is not a letter or a digit.",
        "check": _check(
            "palindrome",
            """
from palindrome import is_palindrome
expect("racecar", is_palindrome("Racecar"), True)
expect("sentence", is_palindrome("A man, a plan, a canal: Panama"), True)
expect("not one", is_palindrome("hello"), False)
expect("empty", is_palindrome(""), True)
""",
        ),
    },
    {
        "id": "word-count",
        "reference": {
            "words.py": 'import re\n\n\ndef word_counts(text):\n    out = {}\n    for w in re.findall(r"[a-z]+", text.lower()):\n        out[w] = out.get(w, 0) + 1\n    return out\n'
        },
        "goal": "Create words.py with a function word_counts(text) that returns a dict mapping each word, lowercased, "
        "to how often it occurs; words are runs of letters (a-z, any case), everything else separates them.",
        "check": _check(
            "word-count",
            """
from words import word_counts
expect("simple", word_counts("the cat and the hat"), {"the": 2, "cat": 1, "and": 1, "hat": 1})
expect("case and punctuation", word_counts("Hi! hi, HI."), {"hi": 3})
expect("empty", word_counts(""), {})
""",
        ),
    },
    {
        "id": "parse-duration",
        "reference": {
            "duration.py": 'import re\n\n\ndef parse_duration(text):\n    unit = {"h": 3600, "m": 60, "s": 1}\n    return sum(int(n) * unit[u] for n, u in re.findall(r"(\\d+)([hms])", text))\n'
        },
        "goal": "Create duration.py with a function parse_duration(text) that turns strings like '1h30m', '45s', "
        "'2h' or '1h2m3s' into a number of seconds (an int).",
        "check": _check(
            "parse-duration",
            """
from duration import parse_duration
for text, want in [("45s", 45), ("2h", 7200), ("1h30m", 5400), ("1h2m3s", 3723), ("10m", 600)]:
    expect(repr(text), parse_duration(text), want)
""",
        ),
    },
]
