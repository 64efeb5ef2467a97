"""Every other provider (llama-server, LM Studio, vLLM, ...): the caller's schema as written, never strict.

A provider of this family may treat ``format`` as an annotation and may not follow a reference:
that only loosens a schema, except where it sits under a negation (see ``relax_negations``).
Ollama has its own family (ollama.py: llama.cpp's grammar reads a schema its own way); an
openai-compatible server that claims strict mode gets OpenAI's rules instead (plan.family_for).
"""

from __future__ import annotations

from typing import Any

from vance_cli.llm.output.merge import Downgrade
from vance_cli.llm.output.walker import Family
from vance_cli.schema.keywords import NOT_SCHEMAS
from vance_cli.schema.refs import has_key
from vance_cli.text import json_pointer


class Other(Family):
    name = "other"
    passthrough = True


PASSTHROUGH = Other()

_MAYBE_UNENFORCED = ("format", "$ref", "$dynamicRef")


def relax_negations(node: Any, where: str, notes: list[str]) -> Any:
    """A schema sent as it is, minus what could turn into a false rejection.

    A provider may treat ``format`` as an annotation (always true) and may not follow a reference.
    That only loosens a schema, except under ``not``, an ``if`` or ``oneOf`` (two branches that
    differ only by a format both match): there it rejects valid answers. Such a ``not`` or
    ``if``/``then``/``else`` is removed and such a ``oneOf`` becomes ``anyOf``; the exact schema is
    still checked locally.
    """
    if isinstance(node, list):
        return [relax_negations(x, f"{where}/{i}", notes) for i, x in enumerate(node)]
    if not isinstance(node, dict):
        return node
    out = {k: (v if k in NOT_SCHEMAS else relax_negations(v, where + json_pointer([k]), notes)) for k, v in node.items()}
    here = where or "(root)"
    if "not" in out and has_key(out["not"], _MAYBE_UNENFORCED):
        del out["not"]
        notes.append(
            Downgrade(here, "not removed (a format or reference in it may not be enforced by the provider; checked locally)")
        )
    if "if" in out and has_key(out["if"], _MAYBE_UNENFORCED):
        for key in ("if", "then", "else"):
            out.pop(key, None)
        notes.append(
            Downgrade(
                here, "if/then/else removed (a format or reference in its condition may not be enforced; checked locally)"
            )
        )
    if isinstance(out.get("oneOf"), list) and has_key({"anyOf": out["oneOf"]}, _MAYBE_UNENFORCED, skip_root=True):
        alternatives = out.pop("oneOf")
        if "anyOf" in out:
            out["allOf"] = [*(out.get("allOf") or []), {"anyOf": alternatives}]
        else:
            out["anyOf"] = alternatives
        notes.append(Downgrade(here, "oneOf relaxed to anyOf (exactly-one checked locally)"))
    return out
