"""The model names Vance shows people are ones the installed litellm knows, and the documented
capability table (docs/models.md) is the table the code uses.

An example name litellm does not know is worse than a typo: litellm guesses the provider's
features for it (an unknown Gemini name got its system prompt sent as user text), so a copied
example silently misbehaves. When litellm is upgraded and drops a name, this fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs import doc_text
from vance_cli.config.settings import NO_MODEL_HINT
from vance_cli.llm.capabilities import default_capabilities
from vance_cli.llm.model_map import model_info

REPO = Path(__file__).resolve().parents[2]
HOSTED = ("openai/", "anthropic/", "gemini/")


def shown_model_names() -> set[str]:
    texts = [
        doc_text(),  # README.md and docs/*.md
        NO_MODEL_HINT,
        (REPO / "vance_cli" / "config" / "defaults.toml").read_text(encoding="utf-8"),
    ]
    names: set[str] = set()
    for text in texts:
        names.update(re.findall(r"VANCE_MODEL=([\w./:-]+)", text))
        names.update(re.findall(r'= "((?:openai|anthropic|gemini|ollama|ollama_chat)/[\w.:-]+)"', text))
    return names


def hosted_names() -> list[str]:
    # openai/llama3.1 and the like are local models behind VANCE_API_BASE, not OpenAI's.
    return sorted(n for n in shown_model_names() if n.startswith(HOSTED) and "llama" not in n and not n.endswith("/"))


def test_the_examples_cover_every_hosted_provider():
    names = hosted_names()
    for prefix in HOSTED:
        assert any(n.startswith(prefix) for n in names), prefix


@pytest.mark.parametrize("name", hosted_names())
def test_every_example_model_is_known_to_the_installed_litellm(name):
    info = model_info(name)
    assert info is not None, f"{name} is not in litellm's model map: use a current name"
    assert info.get("mode") == "chat"
    assert info.get("supports_function_calling") is True, name  # every chat turn ends with a tool call
    assert info.get("supports_system_messages") is not False, name


@pytest.mark.parametrize("name", hosted_names())
def test_the_capability_table_agrees_with_litellms_map_for_every_example(name):
    caps = default_capabilities(name)
    info = model_info(name) or {}
    for flag, cap in (("supports_function_calling", "tools"), ("supports_response_schema", "json_schema"),
                      ("supports_parallel_function_calling", "parallel_tool_calls")):
        if info.get(flag) is not None:
            assert getattr(caps, cap) is info[flag], (name, cap)


# the documented table (docs/models.md): family row -> a model string (and api_base) of that family
ROWS = {
    "openai": ("openai/gpt-5.4-mini", None),
    "anthropic": ("anthropic/claude-haiku-4-5", None),
    "gemini": ("gemini/gemini-2.5-flash", None),
    "ollama": ("ollama_chat/llama3.1", None),
    "other": ("openai/qwen3", "http://localhost:8000/v1"),
}
COLUMNS = ("tools", "json_schema", "strict_json_schema", "json_object", "parallel_tool_calls")


def test_the_documented_capability_table_is_the_codes_table():
    rows = {}
    for line in doc_text().splitlines():
        match = re.match(r"\| (openai|anthropic|gemini|ollama|other) \(", line)
        if match:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[match.group(1)] = [c.startswith("yes") for c in cells[1:]]
    assert set(rows) == set(ROWS)
    for family, (model, base) in ROWS.items():
        caps = default_capabilities(model, base)
        assert caps.family == family
        assert rows[family] == [getattr(caps, c) for c in COLUMNS], family
