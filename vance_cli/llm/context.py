"""Does a request fit the model's context window? Counted before it is sent, never after a 400.

The count is a stated estimate, not the model's tokenizer: one token per ``CHARS_PER_TOKEN``
characters of the request's wire form (the messages and tool schemas as JSON), rounded up. BPE
tokenizers (GPT, Qwen, Llama) average about four characters of English or JSON per token, so three
over-counts on purpose: a request the estimate lets through does not overflow the server. Nothing
here imports litellm (the direct transport exists to avoid it); litellm's own token counter is not
used, so the figure is the same on both transports.

The window comes from the ModelProfile (``[models."<m>"] context_window`` in config.toml, else
litellm's model map ``max_input_tokens``); a model whose window is unknown is never checked.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from vance_cli.errors import ModelError
from vance_cli.llm.base import ChatRequest
from vance_cli.llm.wire import request_wire

CHARS_PER_TOKEN = 3
# Per message: role and the chat template's markers (<|im_start|>role\n ... <|im_end|>).
TOKENS_PER_MESSAGE = 4


class ContextOverflow(ModelError):
    """A request that cannot fit the model's context window (exit 1, said before any call)."""


def estimate_tokens(request: ChatRequest, model: str = "") -> int:
    """The stated estimate of the request's prompt tokens (see the module docstring)."""
    messages = request_wire(request, model, keep=True)  # the body of this call takes them
    # The characters of every message's JSON: one dumps of the list is that plus "[", "]" and a
    # ", " between messages (one call instead of one per message: a long chat has thousands).
    chars = len(json.dumps(messages, ensure_ascii=False)) - 2 * len(messages) if messages else 0
    chars += sum(len(json.dumps(t.to_openai(), ensure_ascii=False)) for t in request.tools)
    return math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * len(messages)


@dataclass(frozen=True)
class Fit:
    prompt_tokens: int  # the estimate
    budget: int | None  # the window minus the reply's room; None: the window is not known

    @property
    def fits(self) -> bool:
        return self.budget is None or self.prompt_tokens <= self.budget


def reply_room(window: int, max_tokens: int | None) -> int:
    """Tokens kept free for the reply: the request's output limit, at most half the window."""
    return min(max_tokens or window // 4, window // 2)


def reply_floor(window: int) -> int:
    """The least room a reply may be sent with when the prompt leaves less than its full limit:
    1,024 tokens, or an eighth of a small window."""
    return min(1024, window // 8)


def fit(request: ChatRequest, window: int | None, max_tokens: int | None, model: str = "") -> Fit:
    tokens = estimate_tokens(request, model)
    if not window:
        return Fit(tokens, None)
    return Fit(tokens, window - reply_room(window, request.max_tokens or max_tokens))


def overflow_error(model: str, tokens: int, window: int, budget: int) -> ContextOverflow:
    return ContextOverflow(
        f"the request to {model} does not fit its context window: about {tokens:,} prompt tokens "
        f"(estimate), {budget:,} allowed ({window:,} tokens of context, {window - budget:,} kept "
        "for the reply); nothing was sent",
        hint="compact the chat (/compact), start a new one (vance chat without --continue), or use a "
        'model with a larger window (--model; or set [models."<model>"] context_window if the '
        "server has more)",
    )
