"""More room for a reply cut off at the output limit, only when more room can help (issue 18).

A reply that stopped at ``max_tokens`` (``finish_reason`` "length") is asked again with twice the
room, but not when

- it repeats itself: a small model in a loop (SmolLM2-135M wrote the same lines until it hit 4,096
  tokens and was then given 8,192) would only loop longer; that is a loop, not truncation;
- the model's context window leaves no more: prompt and reply share the window, so the room is at
  most the window minus the prompt (the server's own ``prompt_tokens``, else the whole window);
- the model's output limit (litellm's map) is reached.

Both the chat loop (engines/ford.py) and the JSON calls (llm/output/json_call.py) ask here.
"""

from __future__ import annotations

from dataclasses import dataclass

from vance_cli.llm.base import Completion

# The most characters of a reply's end looked at for a loop, and the least a loop must cover.
_TAIL = 4000
_MIN_LOOP_CHARS = 200
_MIN_REPEATS = 4


def repeats_itself(text: str) -> bool:
    """The reply ends in a loop: one unit (a phrase, a line, a block of lines) repeated at least
    ``_MIN_REPEATS`` times back to back over at least ``_MIN_LOOP_CHARS`` characters, or most of
    its lines are one line. Whitespace at the very end is ignored."""
    tail = text[-_TAIL:].rstrip()
    if len(tail) < _MIN_LOOP_CHARS:
        return False
    for period in range(1, len(tail) // _MIN_REPEATS + 1):
        span = max(period * _MIN_REPEATS, _MIN_LOOP_CHARS)
        if span > len(tail):
            break
        window = tail[-span:]
        if window == (window[-period:] * (span // period + 1))[-span:]:
            return True
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    if len(lines) >= 8:
        most = max(lines.count(line) for line in set(lines))
        return most * 2 > len(lines)
    return False


@dataclass(frozen=True)
class Room:
    tokens: int | None  # the next call's max_tokens; None: no more room is given
    reason: str  # why not (empty when more room is given)


def _reply_text(completion: Completion) -> str:
    return (completion.text or "") + "".join(call.arguments for call in completion.tool_calls)


def more_room_for(
    completion: Completion,
    current: int | None,
    *,
    output_limit: int | None,
    context_window: int | None,
) -> Room:
    """The room the next call gets after ``completion`` was cut off at ``current`` tokens."""
    from vance_cli.llm.model_map import DEFAULT_MAX_TOKENS

    if repeats_itself(_reply_text(completion)):
        return Room(None, "the reply repeats itself (a loop, not truncation): no more room")
    base = current or DEFAULT_MAX_TOKENS
    cap = output_limit or max(4 * DEFAULT_MAX_TOKENS, base)
    why = "the model's output limit"
    if context_window:
        prompt = max(0, completion.usage.prompt_tokens)
        left = context_window - prompt
        if left < cap:
            cap, why = left, f"what the context window leaves ({context_window:,} tokens, {prompt:,} of them the prompt)"
    bigger = min(2 * base, cap)
    if bigger <= base:
        return Room(None, f"no more room: {why}")
    return Room(bigger, "")
