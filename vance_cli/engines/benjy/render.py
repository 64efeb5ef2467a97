"""What Benjy writes and shows: the bounded digest, the prompts, journal entries, todos, the synthesis.

Everything here is a pure function of ``benjyState``. The digest is bounded by construction: a
fixed number of criteria, items, queue chips and facts, each clipped, whatever the run's length
(spec §5: a small, structurally stable window for small models, never the raw history).
"""

from __future__ import annotations

from typing import Any

from vance_cli.engines.benjy.state import TERMINAL_ITEM, BenjyState, Item
from vance_cli.text import shorten

GOAL_CHARS = 1500
FIELD_CHARS = 300
TEXT_CHARS = 2000
DIGEST_CRITERIA = 12
DIGEST_ITEMS = 8
OPEN_CHIPS = 8
SOURCE_CHARS = 6000


def clip(text: str | None, limit: int) -> str:
    return shorten((text or "").strip(), limit, tidy=True)


def one_line(text: str | None, limit: int = FIELD_CHARS) -> str:
    return clip(" ".join((text or "").split()), limit)


def tail(text: str | None, limit: int) -> str:
    return shorten((text or "").rstrip(), limit, keep_end=True)


# --- the digest -----------------------------------------------------------------------------------


def _item_line(item: Item) -> str:
    extra = []
    if item.attempts:
        extra.append(f"{item.attempts} attempt{'s' if item.attempts != 1 else ''}")
    if item.escalated:
        extra.append("escalated")
    head = f"#{item.id} [{item.status}{', ' + ', '.join(extra) if extra else ''}] {one_line(item.title, 120)}"
    if item.status not in TERMINAL_ITEM and item.lastError:
        head += f" — last error: {one_line(item.lastError, 200)}"
    elif item.evidence:
        head += f" — {one_line(item.evidence[-1], 160)}"
    return head


def digest(state: BenjyState, *, focus: int | None = None, max_stagnation: int = 0, max_reflect: int = 0) -> str:
    """The controller's view of the run: bounded whatever the number of items or tasks."""
    lines = [f"Goal: {clip(state.goal, GOAL_CHARS)}", f"Task type: {state.taskType or '(not interpreted yet)'}"]
    if state.criteria:
        order = {"open": 0, "fail": 1, "pass": 2}
        shown = sorted(state.criteria, key=lambda c: (order[c.status], c.id))[:DIGEST_CRITERIA]
        lines.append("Criteria:")
        lines += [f"  C{c.id} [{c.status}] {one_line(c.text, 200)}" for c in sorted(shown, key=lambda c: c.id)]
        if len(state.criteria) > len(shown):
            lines.append(f"  (+{len(state.criteria) - len(shown)} more criteria)")
    counts: dict[str, int] = {}
    for item in state.items:
        counts[item.status] = counts.get(item.status, 0) + 1
    if state.items:
        lines.append("Items: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
        window: list[Item] = []
        focus_item = state.item(focus)
        if focus_item is not None:
            window.append(focus_item)
        for item in state.items:  # the open work first, oldest first
            if len(window) >= DIGEST_ITEMS:
                break
            if item.status not in TERMINAL_ITEM and item not in window:
                window.append(item)
        for item in reversed(state.items):  # then the most recent finished ones
            if len(window) >= DIGEST_ITEMS:
                break
            if item not in window:
                window.append(item)
        lines += ["  " + _item_line(i) for i in sorted(window, key=lambda i: i.id)]
    if state.queue:
        lines.append("Queued: " + chips(state))
    if state.lastCheck is not None:
        where = f"item #{state.lastCheck.item}" if state.lastCheck.item is not None else "final workspace"
        lines.append(f"Last check ({where}): {'passed' if state.lastCheck.passed else 'FAILED'} — {one_line(state.lastCheck.fact, 200)}")
    if state.notes:
        lines.append("Recent facts:")
        lines += [f"  - {n}" for n in state.notes]
    c = state.counters
    lines.append(
        f"Counters: stagnation {c.stagnation}/{max_stagnation or '?'}, reflect verdicts without DONE "
        f"{c.reflectNo}/{max_reflect or '?'}, worker spawns {c.workerSpawns}, checks {c.checks}"
    )
    return "\n".join(lines)


def chips(state: BenjyState, limit: int = OPEN_CHIPS) -> str:
    out = []
    if state.inFlight is not None:
        out.append(f"`DO #{state.inFlight.item} (running)`")
    out += [f"`{t.chip}`" for t in state.queue[:limit]]
    more = len(state.queue) - limit
    if more > 0:
        out.append(f"+{more} more")
    return " · ".join(out) if out else "—"


# --- prompts --------------------------------------------------------------------------------------


def interpret_prompt(state: BenjyState, *, task_types: list[str], max_items: int, sources: list[tuple[str, str]], reset_reason: str | None) -> str:
    lines = [f"Goal:\n{clip(state.goal, GOAL_CHARS)}", "", f"Allowed task types: {', '.join(task_types)}."]
    if max_items >= 1:
        lines.append(f"Give at most {max_items} items in this first batch; later batches come after them.")
    for ref, text in sources:
        lines += ["", f"Criteria source {ref}:", clip(text, SOURCE_CHARS)]
    if reset_reason is not None:
        lines += ["", "The previous plan was reset: " + one_line(reset_reason, 500), "State so far:", digest(state)]
    return "\n".join(lines)


def criteria_for(state: BenjyState, item: Item) -> list:
    ids = set(item.criteria)
    if ids:
        return [c for c in state.criteria if c.id in ids][:DIGEST_CRITERIA]
    return state.criteria[:DIGEST_CRITERIA]


def evaluate_prompt(state: BenjyState, item: Item) -> str:
    lines = [
        f"Goal (context): {clip(state.goal, 600)}",
        "",
        f"Item #{item.id}: {one_line(item.title, 200)}",
        clip(item.description, TEXT_CHARS),
        "",
        "Worker's report:",
        clip(item.summary or "(none)", TEXT_CHARS),
    ]
    facts = [e for e in item.evidence if e.startswith("check ")]
    if facts:
        lines += ["", "Mechanical check (ground truth): " + facts[-1]]
        last = state.lastCheck
        if last is not None and last.item == item.id and last.passed:
            lines.append("The check passed: what it tests is established, do not judge it again. Judge only "
                         "what the check cannot show (criteria or parts of the item it does not test).")
    crit = criteria_for(state, item)
    if crit:
        lines += ["", "Criteria (use these ids):"] + [f"  C{c.id}: {one_line(c.text, 200)}" for c in crit]
    lines += ["", "Judge the item's result against the criteria: pass, fail or needs_change, with reasons."]
    return "\n".join(lines)


def reflect_prompt(state: BenjyState, **limits: int) -> str:
    return digest(state, **limits) + "\n\nHas the goal been achieved? Answer yes, partially or no; list the gaps."


TRIGGER_TEXT = {
    "check_failed": "The mechanical check failed for an item.",
    "item_cap": "An item reached its attempt cap.",
    "worker_ended": "A worker ended without a reply.",
    "message": "A new message arrived during the run.",
    "answer": "The person answered a question.",
    "reflect_gaps": "The reflection found gaps: the goal is not achieved yet.",
    "queue_empty": "The queue is empty but items are still open.",
    "final_check_failed": "Every item is finished but the check command fails on the final workspace.",
}


def route_prompt(state: BenjyState, payload: dict[str, Any], item_id: int | None, **limits: int) -> str:
    trigger = payload.get("trigger", "")
    lines = [digest(state, focus=item_id, **limits), "", f"Branch: {trigger} — {TRIGGER_TEXT.get(trigger, '')}"]
    if item_id is not None:
        lines.append(f"Item: #{item_id}")
    if payload.get("error"):
        lines += ["Error:", tail(payload["error"], TEXT_CHARS)]
    if payload.get("gaps"):
        lines += ["Gaps:"] + [f"  - {one_line(g, 300)}" for g in payload["gaps"][:DIGEST_ITEMS]]
    if payload.get("question"):
        lines += ["Question asked:", clip(payload["question"], TEXT_CHARS)]
    for key in ("text", "answer"):
        if payload.get(key):  # an open dialog turn: verbatim (clipped only when huge)
            lines += ["Message (verbatim):" if key == "text" else "Answer (verbatim):", clip(payload[key], TEXT_CHARS)]
    lines += ["", "Decide the queue operation."]
    return "\n".join(lines)


def doer_prompt(state: BenjyState, item: Item, *, attempt: int, cap: int, error: str | None) -> str:
    """A worker's pristine first message: the item, its criteria, and on a retry the error context."""
    lines = [
        "You work on one item of a larger task.",
        "",
        f"Overall goal (context only): {clip(state.goal, 600)}",
        "",
        f"Your item (#{item.id}): {item.title}",
    ]
    if item.description:
        lines.append(clip(item.description, TEXT_CHARS))
    crit = criteria_for(state, item)
    if crit:
        lines += ["", "Acceptance criteria that concern this item:"] + [f"- {one_line(c.text, 300)}" for c in crit]
    if error:
        lines += ["", f"This is attempt {attempt} of {cap}. The previous attempt did not pass:", tail(error, TEXT_CHARS),
                  "Fix what is described above."]
    lines += [
        "",
        "Work in the workspace with your tools. When the item is finished, call `respond` once with a "
        "short summary of what you did (files changed, how to verify it) and awaiting_user_input=false.",
    ]
    return "\n".join(lines)


# --- journal, todos, synthesis --------------------------------------------------------------------


def journal_entry(records: list[str], state: BenjyState) -> str:
    """Records (``HEADER: text``, header bold) and the open worklist as inline code chips."""
    out = []
    for record in records:
        head, sep, rest = record.partition(": ")
        out.append(f"**{head}:** {rest}" if sep else f"**{record}**")
    out.append(f"**Open:** {chips(state)}")
    return "\n\n".join(out)


_TODO_STATUS = {"open": "open", "in_progress": "in_progress", "done": "done", "failed": "failed"}


def todo_of(item: Item) -> dict[str, str] | None:
    """One item's todo (None for a dropped item): id = item id, sequential and never reused."""
    if item.status not in _TODO_STATUS:
        return None
    return {"id": str(item.id), "text": one_line(item.title, 120), "status": _TODO_STATUS[item.status]}


def todos(state: BenjyState) -> list[dict[str, str]]:
    """The todo projection of the whole state (empty once DONE)."""
    if state.outcome == "done":
        return []
    return [t for t in map(todo_of, state.items[state.todoFrom:]) if t is not None]


def synthesis(state: BenjyState) -> str:
    """The final report: goal, criteria with evidence, items, counters and tokens; no model call."""
    return report(state)


def blocked_report(state: BenjyState, status_reason: str | None = None) -> str:
    """The report of a BLOCKED run: what it waits on (the question or the diagnosis), then the same body."""
    if state.pendingQuestion is not None:
        head = ["## Question", state.pendingQuestion.text.strip()]
    else:
        head = ["## Diagnosis", (state.diagnosis or status_reason or "(none recorded)").strip()]
    return report(state, title="# Benjy report · BLOCKED", head=head)


def report(state: BenjyState, *, title: str = "# Benjy report", head: list[str] | None = None) -> str:
    """Goal, [what the run waits on,] criteria with evidence, items, the last check, counters; no model call."""
    c = state.counters
    lines = [title, "", f"**Goal:** {clip(state.goal, GOAL_CHARS)}", f"**Task type:** {state.taskType}", ""]
    if head:
        lines += [*head, ""]
    lines.append("## Criteria")
    if not state.criteria:
        lines.append("- (none)")
    for crit in state.criteria:
        src = f" (source: {crit.sourceRef})" if crit.sourceRef else ""
        ev = f" — {one_line(crit.evidence, 200)}" if crit.evidence else ""
        lines.append(f"- [{crit.status}] {one_line(crit.text, 300)}{src}{ev}")
    lines += ["", "## Items"]
    for item in state.items:
        if item.status == "dropped":
            continue
        att = f" ({item.attempts} attempt{'s' if item.attempts != 1 else ''}{', escalated' if item.escalated else ''})"
        ev = f" — {'; '.join(one_line(e, 160) for e in item.evidence[-2:])}" if item.evidence else ""
        lines.append(f"- #{item.id} [{item.status}] {one_line(item.title, 200)}{att}{ev}")
    dropped = sum(1 for i in state.items if i.status == "dropped")
    if dropped:
        lines.append(f"- ({dropped} item{'s' if dropped != 1 else ''} replaced by a split, revise or reset)")
    if state.lastCheck is not None:
        where = f"item #{state.lastCheck.item}" if state.lastCheck.item is not None else "the final workspace"
        lines += ["", f"**Last check** ({where}): {'passed' if state.lastCheck.passed else 'FAILED'} — {one_line(state.lastCheck.fact, 240)}"]
    lines += [
        "",
        "## Counters",
        f"- tasks {c.tasks} · worker spawns {c.workerSpawns} · checks {c.checks} · questions {c.questions}",
        f"- controller calls {c.controllerCalls} · controller tokens {c.controllerTokens} · worker tokens {c.workerTokens}",
    ]
    return "\n".join(lines)
