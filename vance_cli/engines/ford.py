"""Ford: the tool loop that ends every turn with one `respond` call (structured-engine-output spec).

The loop is a state machine over the persisted process: every step appends to the history and
saves before the next effect runs, and the turn's counters live in ``engine_params[TURN_KEY]``, so a
killed run resumes exactly where it stopped. A read-only tool call whose result never reached the
disk simply runs again; a side-effecting one (``Tool.side_effects``: file_write, exec_run) is
recorded as started before it runs and is never run again: after an interruption its result tells
the model that it was interrupted and that its effects are unknown (at-most-once).

Rules, in the spec's terms:

1. `respond` alone ends the turn: BLOCKED if ``awaiting_user_input`` (default true), else READY.
2. `respond` beside other calls: the others run, `respond` gets a synthetic error, the loop goes on.
3. No tool call: a "VALIDATION CHECK" correction up to ``maxValidationCorrections``. A tool call
   the model wrote in its text (``<tool_call>{...}``, a fenced or bare JSON call naming an offered
   tool) is recovered first and handled as the native call it is (engines/ford_text.py). When
   the budget is spent, the best plain-text reply of the turn is delivered (never an echo of a
   correction or a tool call written out), the process goes BLOCKED, and the journal, the
   message's meta and the status reason say that the model did not follow the protocol; with no
   usable reply the turn ends in a diagnosis.
4. Data relay too brief: a large tool result this turn and a short respond message get one
   correction, never two in a row.
5. Empty replies and malformed tool calls (including a call the provider itself rejected, e.g.
   Groq's ``tool_use_failed``): an immediate, counted correction (never a sleep).
6. Rules 3 and 4 only run when the recipe sets ``validation``.
7. A recipe without `respond`: the legacy path, the final text is the message.
8. ``maxToolIterations`` model calls per turn at most, then a BLOCKED diagnosis. The same call
   with the same result again, nothing changed in between (engines/ford_repeat.py), is told to
   the model and counted as a correction; when the budget is spent the turn ends in a diagnosis.
9. A refusal (the model declines) ends the turn: the refusal is the message, the process BLOCKED.
10. A reply cut off at the output limit (finish_reason "length") raises max_tokens for the rest of
    the turn (twice, up to the model's limit and what its context window leaves; never for a reply
    that repeats itself: llm/room.py), said in the journal.
"""

from __future__ import annotations

import unicodedata
from dataclasses import replace

from vance_cli.config.recipes import Recipe
from vance_cli.engines.base import Engine, TurnState
from vance_cli.engines.compact import (
    KEEP_TURNS,
    SUMMARY_KIND,
    SUMMARY_MAX_TOKENS,
    SUMMARY_PROMPT,
    covered,
    cut_point,
    sent_history,
    summary_input,
)
from vance_cli.engines.ford_repeat import REPEAT_KIND, REPEAT_NOTE, call_text, is_repeat
from vance_cli.engines.ford_schema import FORMAT_KEY, SchemaCalls, resolve_tool_mode
from vance_cli.engines.ford_text import best_candidate, echoes, recover_calls, unusable
from vance_cli.engines.stream_view import StreamView
from vance_cli.errors import ModelError
from vance_cli.events import (
    JournalEvent,
    MessageEvent,
    ToolFinished,
    ToolStarted,
    UsageEvent,
)
from vance_cli.llm.base import ChatRequest, Completion
from vance_cli.llm.context import CHARS_PER_TOKEN, Fit, estimate_tokens, fit, overflow_error, reply_floor, reply_room
from vance_cli.messages import Message, ToolCall
from vance_cli.store.process import Process, Status
from vance_cli.text import shorten
from vance_cli.tools.approval import ALLOW, DENY, REFUSED, Decision, denied_text
from vance_cli.tools.base import MALFORMED, SchemaUnusable, Tool, ToolResult
from vance_cli.tools.respond import RESPOND

NO_TOOL_CALL_CORRECTION = (
    "VALIDATION CHECK: your previous response had no tool call. Every turn must end with a tool "
    "call: emit the action tool now, or respond now by calling `respond` with your user-facing "
    "message. Never put the answer in plain assistant text."
)
EMPTY_REPLY_CORRECTION = (
    "VALIDATION CHECK: your previous response was empty (neither text nor a tool call). Call the "
    "tool you need now, or call `respond` with your reply."
)
EMPTY_REPLY_CORRECTION_LEGACY = (
    "VALIDATION CHECK: your previous response was empty (neither text nor a tool call). Call the "
    "tool you need now, or answer in text."
)
INTERRUPTED_RESULT = (
    "INTERRUPTED: this `{name}` call was started, but Vance was stopped (Ctrl+C, a signal or a "
    "crash) before it finished. Its effects are unknown: it may have run fully, partly or not at "
    "all. It was NOT run again. Check the current state (for example read or list the files it "
    "would change) before you decide whether to run it again."
)
TURN_ENDED_RESULT = "NOT RUN: the turn ended before this call (the model repeated another call of the same reply)."
# Key in an assistant message's meta: the ids of its side-effecting calls that were started.
STARTED = "started"
# Key in an assistant message's meta: the text its tool calls were recovered from (ford_text.py).
RECOVERED = "recovered_from"
# The kind of a plain-text reply delivered after the correction budget was spent.
PROTOCOL_FALLBACK = "protocol_fallback"
MIXED_RESPOND_ERROR = (
    "ERROR: respond must be the LAST and ONLY tool call in a turn. Your message was NOT shown to the "
    "user. The other tool calls of that reply were executed and their results are now available "
    "in this conversation: read them, then call respond alone in your next reply."
)

# Characters of scripts that carry about a word per character weigh more in the relay check:
# 200 Japanese characters say far more than 200 English ones (PEERS.md).
_WIDE_WEIGHT = 3


def message_weight(text: str) -> int:
    """Length in 'Latin-equivalent' characters: East Asian wide characters count three times."""
    return sum(_WIDE_WEIGHT if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


class FordEngine(Engine):
    # Messages, status changes and journal lines describe state: they are emitted only once that
    # state is on disk (Engine._persist), so a reader never sees what a crash could take back.
    name = "ford"
    # How the open turn asks for tool calls: None (native) or by schema (set by run_turn).
    _schema: SchemaCalls | None = None

    # --- the public entry point -------------------------------------------------------------

    async def run(self, process: Process) -> None:
        """Drain the inbox turn by turn until it is empty (an open turn, e.g. after a crash, first).

        A message that arrived while a turn ran (or while the process waited, BLOCKED) is taken
        in by the next turn, whatever the last turn's ``awaiting_user_input`` said.
        """
        while True:
            turn = TurnState.of(process)
            if not turn.open:
                if not process.inbox:
                    return
                self._open_turn(process, turn)
            try:
                await self.run_turn(process)
            except AwaitingApproval as wait:
                self._wait_for_approval(process, wait)
                return

    def _wait_for_approval(self, process: Process, wait: AwaitingApproval) -> None:
        """Nobody said yes (chat -p without a flag, a dismissed question): the call is not run and
        the turn stays open, BLOCKED; the next drive (resume, the next message) asks again."""
        turn = TurnState.of(process)
        turn.awaiting_approval = wait.tool
        turn.store(process)
        self._journal(process, f"{wait.tool} was not run: it waits for your approval (the turn is kept)", "warning")
        self._set_status(process, Status.BLOCKED, f"approval needed: {wait.tool}")
        self._persist(process)

    # --- one turn ---------------------------------------------------------------------------

    def _open_turn(self, process: Process, turn: TurnState) -> None:
        for item in process.inbox:
            process.history.append(
                Message(role="user", content=item.content, meta={"inbox_id": item.id, "kind": item.kind})
            )
        process.inbox.clear()
        turn = TurnState(open=True)
        turn.store(process)
        self._set_status(process, Status.RUNNING)
        self._persist(process)

    async def run_turn(self, process: Process) -> None:
        recipe = Recipe.model_validate(process.recipe)
        if recipe.compact is not None and self.deps.model.capabilities.compact_prompt:
            # A small model gets the recipe's compact prompt and tool subset (issue 18); the
            # grant stays the recipe's own, this only narrows what the model is offered.
            recipe = recipe.compacted()
            self._journal(process, f"compact prompt for a small model (capabilities.compact_prompt): tools {', '.join(recipe.tool_names())}")
        tools, warnings = await self.deps.tools.pool(recipe.tool_names())
        for warning in warnings:
            self._journal(process, warning, "warning")
        if tools and not self.deps.model.capabilities.tools:
            # A model configured without tool calling can only answer in text: the legacy path.
            self._journal(process, "the model has no tool calling (capabilities.tools = false): legacy text path", "warning")
            tools = {}
        self._schema = self._schema_calls(process, tools)
        turn = TurnState.of(process)
        turn.awaiting_approval = None  # driven again: ask again
        if process.status != Status.RUNNING:
            self._set_status(process, Status.RUNNING)
        while turn.open:
            pending = _pending_calls(process.history)
            if pending is not None:
                await self._handle_calls(process, recipe, tools, turn, *pending)
            else:
                if turn.iterations >= recipe.maxToolIterations:
                    self._end_blocked_diagnosis(
                        process,
                        turn,
                        f"I stopped after {turn.iterations} model calls in this turn without a final "
                        f"answer (the recipe's maxToolIterations is {recipe.maxToolIterations}). "
                        "Tell me how to continue, or narrow the request.",
                        reason="maxToolIterations reached",
                    )
                else:
                    completion = await self._call_model(process, recipe, tools, turn)
                    self._handle_completion(process, recipe, tools, turn, completion)
                    pending = _pending_calls(process.history)
                    if pending is not None and all(c.name == RESPOND for c in pending[0].tool_calls):
                        # respond has no effect outside the process: decide it in the same save as
                        # the reply that carries it (one fsync per plain turn instead of two)
                        await self._handle_calls(process, recipe, tools, turn, *pending)
            turn.store(process)
            self._persist(process)

    def _schema_calls(self, process: Process, tools: dict[str, Tool]) -> SchemaCalls | None:
        """How this turn asks for its calls when the model's tool_mode resolves to "schema"
        (engines/ford_schema.py); None for native tool calls (and for a turn without tools)."""
        caps = self.deps.model.capabilities
        if not tools or resolve_tool_mode(caps) != "schema":
            return None
        remembered = process.engine_params.get(FORMAT_KEY)
        schema = SchemaCalls.for_turn([t.spec() for t in tools.values()], caps, remembered)
        if remembered != schema.mode:
            process.engine_params[FORMAT_KEY] = schema.mode
            self._journal(
                process,
                f"tool calls by schema (tool_mode {caps.tool_mode}, {caps.family}): one JSON object per reply, "
                f"asked for with {schema.mode}",
            )
        return schema

    async def _call_model(self, process: Process, recipe: Recipe, tools: dict[str, Tool], turn: TurnState) -> Completion:
        request = self._build_request(process, recipe, tools, turn)
        if not self._fit(request).fits:  # before the call is counted
            request = await self._compacted_request(process, recipe, tools, turn)
        turn.iterations += 1
        turn.store(process)
        while True:
            try:
                completion = await self._ask(process, request)
                break
            except ModelError as exc:
                # A provider that rejects the schema's response format: the next format down, for
                # the rest of the process (the call is not counted again).
                from vance_cli.llm.output.json_call import format_rejected

                if self._schema is None or not format_rejected(exc):
                    raise
                rejected = self._schema.mode
                if self._schema.step_down() is None:
                    raise
                process.engine_params[FORMAT_KEY] = self._schema.mode
                self._journal(
                    process,
                    f"tool calls by schema: {rejected} rejected by the provider ({shorten(exc.message, 120)}); "
                    f"now {self._schema.mode}",
                    "warning",
                )
                request = self._build_request(process, recipe, tools, turn)
        if self._schema is not None and not echoes(completion.text or "", self._turn_corrections(process, recipe)):
            completion = self._schema.read(completion)
        usage = completion.usage
        if usage.calls == 0:
            usage = usage.model_copy(update={"calls": 1})
        process.usage.add(usage)
        self.deps.bus.emit(
            UsageEvent(process.id, usage.calls, usage.prompt_tokens, usage.completion_tokens, usage.cost)
        )
        return completion

    async def _ask(self, process: Process, request: ChatRequest) -> Completion:
        if not self.deps.stream:
            return await self.deps.model.complete(request)
        if self._schema is not None:
            # the reply is a JSON call object, not text for the person: streamed, not shown
            return await self.deps.model.stream(request, lambda _delta: None)
        view = StreamView(process.id, process.usage.calls + 1, self.deps.bus.emit)
        return await self.deps.model.stream(request, view.feed)

    def _build_request(
        self, process: Process, recipe: Recipe, tools: dict[str, Tool], turn: TurnState, *, shorten_old: bool = False
    ) -> ChatRequest:
        messages = self._request_messages(process, recipe, shorten_old=shorten_old)
        purpose = "worker" if process.parent else "chat"  # the call type picks the temperature
        if self._schema is not None:
            return ChatRequest(
                messages=self._schema.wire(messages),
                response_format=self._schema.plan.response_format,
                max_tokens=turn.max_tokens,
                purpose=purpose,
            )
        return ChatRequest(
            messages=messages, tools=[t.spec() for t in tools.values()], max_tokens=turn.max_tokens, purpose=purpose
        )

    def _fit(self, request: ChatRequest) -> Fit:
        model = self.deps.model
        return fit(request, model.context_window, model.max_tokens, model.name)

    async def _compacted_request(self, process: Process, recipe: Recipe, tools: dict[str, Tool], turn: TurnState) -> ChatRequest:
        """The request made to fit (engines/compact.py): older tool results shortened, then the older
        turns summarised; one that still cannot fit fails here, before it is sent (ContextOverflow,
        exit 1), instead of as the server's 400 after the call."""
        request = self._build_request(process, recipe, tools, turn, shorten_old=True)
        if self._fit(request).fits:
            self._journal(process, "context: tool results of earlier turns shortened on the wire to fit the model's window")
            return request
        if await self.compact(process):
            request = self._build_request(process, recipe, tools, turn, shorten_old=True)
        result = self._fit(request)
        if not result.fits:
            model = self.deps.model
            window = model.context_window or 0
            left = window - result.prompt_tokens
            if window and left >= reply_floor(window):
                # Half an 8k local window is a lot to keep free for a reply of a few hundred
                # tokens: send with the room that is left rather than refuse (issue 18 review).
                self._journal(
                    process,
                    f"context: about {result.prompt_tokens:,} prompt tokens (estimate) of {window:,}; the reply "
                    f"gets the {left:,} tokens left instead of {window - (result.budget or 0):,}",
                    "warning",
                )
                return request.model_copy(update={"max_tokens": left})
            raise overflow_error(model.name, result.prompt_tokens, window, window - reply_floor(window) if window else 0)
        return request

    async def compact(self, process: Process, *, keep_turns: int = KEEP_TURNS) -> bool:
        """Summarise the turns before the last ``keep_turns`` user messages in one model call, kept
        as a summary entry of the history (nothing is deleted); False when nothing is left to
        summarise. ``/compact`` calls it on demand."""
        cut = cut_point(process.history, keep_turns)
        if cut is None:
            return False
        model = self.deps.model
        window = model.context_window
        budget = window - reply_room(window, SUMMARY_MAX_TOKENS) if window else 8000
        prompt = Message(role="system", content=SUMMARY_PROMPT)
        room = max(1000, (budget - estimate_tokens(ChatRequest(messages=[prompt])) - 50) * CHARS_PER_TOKEN)
        before = covered(process.history)
        request = ChatRequest(
            messages=[prompt, Message(role="user", content=summary_input(process.history, cut, room))],
            max_tokens=SUMMARY_MAX_TOKENS,
            purpose="summary",
        )
        completion = await model.complete(request)
        usage = completion.usage if completion.usage.calls else completion.usage.model_copy(update={"calls": 1})
        process.usage.add(usage)
        self.deps.bus.emit(UsageEvent(process.id, usage.calls, usage.prompt_tokens, usage.completion_tokens, usage.cost))
        text = (completion.text or "").strip()
        if not text:
            raise ModelError(
                "compaction failed: the model returned an empty summary",
                hint="try again, or start a new chat (vance chat without --continue)",
            )
        process.history.append(Message(role="system", content=text, meta={"kind": SUMMARY_KIND, "covers": cut}))
        self._journal(
            process, f"context compacted: {cut - before} earlier messages summarised (the process file keeps them all)"
        )
        self._persist(process)
        return True

    def _request_messages(self, process: Process, recipe: Recipe, *, shorten_old: bool = False) -> list[Message]:
        system = "\n\n".join(p for p in (recipe.systemPrompt, recipe.promptPrefix) if p)
        out = [Message(role="system", content=system)] if system else []
        for m in sent_history(process.history, shorten_old=shorten_old):
            # Corrections are system notes in the history; on the wire they travel as user messages
            # because Anthropic, Gemini and many local chat templates reject or hoist a system
            # message in the middle of a conversation.
            if m.role == "system":
                out.append(Message(role="user", content=m.content))
            elif m.role == "assistant" and not m.tool_calls and not (m.content or "").strip():
                # an empty reply stays in the history, not on the wire: Anthropic rejects empty
                # text blocks, and the correction that follows says what happened
                continue
            else:
                out.append(m)  # as it is: its meta never reaches the wire (Message.to_openai)
        return out

    def _handle_completion(
        self, process: Process, recipe: Recipe, tools: dict[str, Tool], turn: TurnState, completion: Completion
    ) -> None:
        if completion.refusal:
            self._end_refused(process, turn, completion.refusal)
            return
        if completion.truncated:
            self._more_room(process, turn, completion)
        text = (completion.text or "").strip()
        calls = completion.tool_calls
        if not calls and text and tools and self._recovered(process, recipe, tools, completion):
            return
        if calls:
            # Recorded first; the calls run on the next pass of the loop, after this is on disk.
            process.history.append(completion.as_message())
            return
        if not text:
            process.history.append(Message(role="assistant", content=completion.text or "", meta={"kind": "empty"}))
            text = EMPTY_REPLY_CORRECTION if RESPOND in tools else EMPTY_REPLY_CORRECTION_LEGACY
            self._correct(process, recipe, turn, text, "empty reply",
                          exhausted=f"the model returned {turn.corrections + 1} empty or malformed replies in this turn")
            return
        has_respond = RESPOND in tools
        if has_respond and recipe.validation and turn.corrections < recipe.maxValidationCorrections:
            process.history.append(Message(role="assistant", content=completion.text, meta={"kind": "no_tool_call"}))
            correction = self._schema.correction() if self._schema is not None else NO_TOOL_CALL_CORRECTION
            self._correct(process, recipe, turn, correction, "no tool call")
            return
        if has_respond and recipe.validation:  # corrections spent
            process.history.append(Message(role="assistant", content=completion.text, meta={"kind": "no_tool_call"}))
            self._deliver_fallback(process, recipe, tools, turn)
            return
        # Legacy path (no respond in the recipe) or validation off: deliver the text.
        process.history.append(Message(role="assistant", content=completion.text, meta={"delivered": True}))
        self._deliver(process, turn, completion.text or "", awaiting=True)

    def _recovered(self, process: Process, recipe: Recipe, tools: dict[str, Tool], completion: Completion) -> bool:
        """A tool call the model wrote in its text (engines/ford_text.py), recorded as the call it
        is; True when one was found. Only offered names count, and the calls then run as native
        ones: arguments validated, respond rules, at-most-once effects. An echo of a correction is
        never a source of calls (it may quote the call shape)."""
        if echoes(completion.text or "", self._turn_corrections(process, recipe)):
            return False
        found = recover_calls(completion.text or "", tools)
        if found is None:
            return False
        message = completion.as_message()
        message.content = found.prose or None
        message.tool_calls = found.calls
        message.meta = {RECOVERED: completion.text}
        process.history.append(message)
        names = ", ".join(c.name for c in found.calls)
        self._journal(process, f"tool call recovered from the model's text ({found.where}): {names}")
        return True

    def _turn_corrections(self, process: Process, recipe: Recipe) -> list[str]:
        """Every correction text this turn sent or could send: what an echo is measured against."""
        history = process.history
        start = max((i for i, m in enumerate(history) if m.role == "user"), default=-1) + 1
        sent = [m.content or "" for m in history[start:] if m.meta.get("kind") == "correction"]
        own = [NO_TOOL_CALL_CORRECTION, EMPTY_REPLY_CORRECTION, recipe.dataRelayCorrection.text]
        if self._schema is not None:
            own.append(self._schema.correction())
        return sent + own

    def _deliver_fallback(self, process: Process, recipe: Recipe, tools: dict[str, Tool], turn: TurnState) -> None:
        """The correction budget is spent and the model never called `respond`: deliver the best
        plain-text reply of the turn (ford_text.best_candidate), never an echo of a correction or
        a tool call written out, and say plainly that the model did not follow the protocol (the
        journal, the delivered message's meta, the status reason). With no usable reply the turn
        ends in a diagnosis instead."""
        history = process.history
        start = max((i for i, m in enumerate(history) if m.role == "user"), default=-1) + 1
        last_result = max((i for i in range(start, len(history)) if history[i].role == "tool"), default=-1)
        candidates = [
            (i, history[i].content or "", i > last_result)
            for i in range(start, len(history))
            if history[i].role == "assistant" and history[i].meta.get("kind") == "no_tool_call"
        ]
        corrections = self._turn_corrections(process, recipe)
        names = list(tools)
        choice = best_candidate(candidates, corrections, names)
        skipped = [
            f"reply {n}: {why}"
            for n, (_, text, _) in enumerate(candidates, start=1)
            if (why := unusable(text, corrections, names)) is not None
        ]
        why_not = f" (not delivered: {'; '.join(skipped)})" if skipped else ""
        if choice is None:
            self._end_blocked_diagnosis(
                process,
                turn,
                "The model did not follow the tool protocol: it never called `respond`, and none of its "
                f"{len(candidates)} plain-text replies is an answer{why_not}. Try again, rephrase, or "
                "switch models with --model (a model with tool calling, or tool_mode = \"schema\" "
                "for a local llama.cpp server).",
                reason="the model did not follow the tool protocol",
            )
            return
        index, text = choice
        number = next(n for n, c in enumerate(candidates, start=1) if c[0] == index)
        note = (
            f"the model did not follow the tool protocol: no `respond` call after {turn.corrections} "
            f"corrections; its plain-text reply {number} of {len(candidates)} is delivered as the message{why_not}"
        )
        history[index].meta.update({"delivered": True, "kind": PROTOCOL_FALLBACK, "note": note})
        self._journal(process, note, "warning")
        turn.open = False
        turn.store(process)
        self._emit(MessageEvent(process.id, text, awaiting_user_input=True))
        self._set_status(process, Status.BLOCKED, "awaiting user input; the model did not follow the tool protocol")

    def _correct(
        self, process: Process, recipe: Recipe, turn: TurnState, text: str, what: str, exhausted: str | None = None
    ) -> None:
        if turn.corrections >= recipe.maxValidationCorrections:
            self._end_blocked_diagnosis(
                process,
                turn,
                f"I could not produce a valid reply: {exhausted or what} "
                f"(maxValidationCorrections is {recipe.maxValidationCorrections}). "
                "Try again, rephrase, or switch models with --model.",
                reason=f"correction budget spent ({what})",
            )
            return
        turn.corrections += 1
        process.history.append(Message(role="system", content=text, meta={"kind": "correction", "rule": what}))
        self._journal(process, f"correction {turn.corrections}/{recipe.maxValidationCorrections}: {what}", "warning")

    async def _handle_calls(
        self,
        process: Process,
        recipe: Recipe,
        tools: dict[str, Tool],
        turn: TurnState,
        assistant: Message,
        done_ids: set[str],
    ) -> None:
        calls = assistant.tool_calls
        responds = [c for c in calls if c.name == RESPOND and RESPOND in tools]
        others = [c for c in calls if c not in responds]
        malformed = False
        for call in others:
            if call.id in done_ids:
                continue
            result = await self._run_at_most_once(process, tools, assistant, call)
            repeat = result.data != MALFORMED and self._is_repeat(process, tools, call, result)
            if result.data == MALFORMED:
                malformed = True
            elif result.ok and not repeat:
                turn.max_tool_chars = max(turn.max_tool_chars, len(result.content))
                # new data since the last relay correction: the next brief reply may be corrected again
                turn.relay_corrected_last = False
            if repeat:
                note = REPEAT_NOTE.format(name=call.name)
                self._append_result(process, call, replace(result, content=f"{result.content}\n\n{note}"), meta={"kind": REPEAT_KIND})
                self._count_repeat(process, recipe, turn, call)
            else:
                self._append_result(process, call, result)
            turn.store(process)
            self._persist(process)
            if not turn.open:  # the repeat ended the turn: the reply's other calls do not run,
                # but each gets a result, or the next request would carry calls with no answer (a 400)
                answered = {m.tool_call_id for m in process.history if m.role == "tool"}
                for rest in calls:
                    if rest.id not in answered and rest.id not in done_ids:
                        self._append_result(process, rest, ToolResult(content=TURN_ENDED_RESULT, ok=False))
                self._persist(process)
                return
        if others or len(responds) > 1:
            for call in responds:
                if call.id not in done_ids:
                    self._append_result(process, call, ToolResult(content=MIXED_RESPOND_ERROR, ok=False))
                    self._journal(process, "respond rejected: it was not the only tool call of its reply", "warning")
            if malformed:
                self._count_malformed(process, recipe, turn)
            return
        if not responds:
            return
        call = responds[0]
        if call.id in done_ids:  # resumed after the respond result was written: the turn is over
            return
        try:
            if call.error:  # the provider rejected the call the model made (Groq's tool_use_failed)
                raise ValueError(call.error)
            args = call.parsed_arguments()
        except ValueError as exc:
            args, problem = {}, str(exc)
        else:
            problems = tools[RESPOND].validate(args)
            problem = "; ".join(problems) if problems else None
        if problem:
            self._append_result(process, call, _malformed_result(RESPOND, problem))
            self._count_malformed(process, recipe, turn)
            return
        message = args["message"]
        awaiting = bool(args.get("awaiting_user_input", True))
        relay = recipe.dataRelayCorrection
        if (
            recipe.validation
            and relay.enabled
            and not turn.relay_corrected_last
            and turn.max_tool_chars >= relay.minToolResultChars
            and message_weight(message) <= relay.maxMessageChars
        ):
            correction = relay.text.format(tool_chars=turn.max_tool_chars, message_chars=len(message))
            self._append_result(process, call, ToolResult(content=correction, ok=False), meta={"kind": "correction", "rule": "data relay"})
            turn.relay_corrected_last = True
            self._journal(process, "correction: the respond message did not relay the tool result", "warning")
            return
        self._append_result(process, call, ToolResult(content="delivered"), meta={"delivered": True})
        self._deliver(process, turn, message, awaiting=awaiting)

    def _is_repeat(self, process: Process, tools: dict[str, Tool], call: ToolCall, result: ToolResult) -> bool:
        side_effects = {name for name, tool in tools.items() if tool is not None and tool.side_effects}
        if call.name in side_effects and result.ok:
            return False  # a command run again is a new run (a poll, a retry): only a failure repeats
        return is_repeat(process.history, call, result.content, side_effects)

    def _count_repeat(self, process: Process, recipe: Recipe, turn: TurnState, call: ToolCall) -> None:
        """The same call with the same result again (engines/ford_repeat.py): a counted correction;
        when the budget is spent the turn ends in a diagnosis instead of running to the cap."""
        if turn.corrections >= recipe.maxValidationCorrections:
            self._end_blocked_diagnosis(
                process,
                turn,
                f"I stopped this turn: the model kept making the same call ({call_text(call)}) and got "
                "the same result each time, so calling again could not help. Tell me how to continue, "
                "rephrase the request, or switch models with --model.",
                reason=f"the model repeated the same call ({call.name})",
            )
            return
        turn.corrections += 1
        self._journal(
            process,
            f"correction {turn.corrections}/{recipe.maxValidationCorrections}: repeated call {call_text(call)} with the same result",
            "warning",
        )

    def _count_malformed(self, process: Process, recipe: Recipe, turn: TurnState) -> None:
        if turn.corrections >= recipe.maxValidationCorrections:
            self._end_blocked_diagnosis(
                process,
                turn,
                f"I could not produce a valid reply: the model sent malformed tool calls "
                f"{turn.corrections + 1} times in this turn (maxValidationCorrections is "
                f"{recipe.maxValidationCorrections}). Try again or switch models with --model.",
                reason="correction budget spent (malformed tool call)",
            )
            return
        turn.corrections += 1
        self._journal(process, f"correction {turn.corrections}/{recipe.maxValidationCorrections}: malformed tool call", "warning")

    async def _run_at_most_once(
        self, process: Process, tools: dict[str, Tool], assistant: Message, call: ToolCall
    ) -> ToolResult:
        """Run ``call``; a side-effecting call is on disk as started before it runs, and a call
        found started without a result (the run was interrupted) is reported, not run again."""
        started: list[str] = assistant.meta.get(STARTED, [])
        if call.id in started:
            self._journal(
                process, f"{call.name} was interrupted before it finished: not run again, its effects are unknown", "warning"
            )
            self.deps.bus.emit(ToolFinished(process.id, call.id, call.name, False, "interrupted; not run again"))
            return ToolResult(content=INTERRUPTED_RESULT.format(name=call.name), ok=False)
        tool = tools.get(call.name)
        approved_by = None
        if tool is not None and (tool.needs_approval or tool.ruled) and self.deps.approvals is not None:
            args = _valid_arguments(tool, call)
            if args is not None:  # a malformed call is answered as such below, never asked about
                decision = await self._approve(process, tool, call, args)
                if decision.verdict in (DENY, REFUSED):
                    verb = "denied" if decision.verdict == DENY else "refused"
                    self._journal(process, f"{call.name} {verb} ({decision.by}): not run", "warning")
                    text = denied_text(call.name, decision) if decision.verdict == DENY else f"ERROR: {decision.reason}"
                    self.deps.bus.emit(ToolFinished(process.id, call.id, call.name, False, shorten(text, 120, one_line=True), len(text)))
                    return ToolResult(content=text, ok=False)
                if decision.verdict != ALLOW:
                    raise AwaitingApproval(call.name, decision.reason or "it needs your approval")
                approved_by = decision.by
        if tool is not None and tool.side_effects:
            assistant.meta[STARTED] = [*started, call.id]
            self._persist(process)
        return await self._run_tool(process, tools, call, approved_by=approved_by)

    async def _approve(self, process: Process, tool: Tool, call: ToolCall, args: dict) -> Decision:
        ctx = replace(self.deps.tool_context, call_id=call.id)
        decision, _ = await self.deps.approvals.approve(
            process, tool, call.id, args, ctx, host=self.deps.host, untrusted=self.deps.untrusted is not None
        )
        return decision

    async def _run_tool(
        self, process: Process, tools: dict[str, Tool], call: ToolCall, *, approved_by: str | None = None
    ) -> ToolResult:
        tool = tools.get(call.name)
        if call.error:  # the provider rejected the call the model made (Groq's tool_use_failed)
            result = _malformed_result(call.name, call.error)
        elif tool is None:
            result = ToolResult(
                content=f"ERROR: unknown tool '{call.name}'. Available tools: {', '.join(tools)}.", ok=False, data=MALFORMED
            )
        else:
            try:
                call.parsed_arguments()
            except ValueError as exc:
                return _malformed_result(call.name, str(exc))
            self.deps.bus.emit(ToolStarted(process.id, call.id, call.name, call.arguments))
            ctx = replace(self.deps.tool_context, call_id=call.id)
            if approved_by is not None:
                ctx = replace(ctx, extra={**ctx.extra, "approved_by": approved_by})
            result = await tool.invoke(call.arguments, ctx)
        self.deps.bus.emit(ToolFinished(process.id, call.id, call.name, result.ok, shorten(result.content, 120, one_line=True), len(result.content)))
        return result

    def _append_result(self, process: Process, call: ToolCall, result: ToolResult, meta: dict | None = None) -> None:
        process.history.append(
            Message(
                role="tool",
                tool_call_id=call.id,
                name=call.name,
                content=result.content,
                meta={"ok": result.ok, **(meta or {})},
            )
        )

    # --- ending a turn ----------------------------------------------------------------------

    def _deliver(self, process: Process, turn: TurnState, message: str, *, awaiting: bool) -> None:
        turn.open = False
        turn.store(process)
        self._emit(MessageEvent(process.id, message, awaiting_user_input=awaiting))
        if awaiting:
            self._set_status(process, Status.BLOCKED, "awaiting user input")
        else:
            self._set_status(process, Status.READY, "respond: not awaiting user input")

    def _end_blocked_diagnosis(self, process: Process, turn: TurnState, diagnosis: str, *, reason: str) -> None:
        process.history.append(Message(role="assistant", content=diagnosis, meta={"delivered": True, "kind": "diagnosis"}))
        self._journal(process, f"turn ended: {reason}", "error")
        turn.open = False
        turn.store(process)
        self._emit(MessageEvent(process.id, diagnosis, awaiting_user_input=True))
        self._set_status(process, Status.BLOCKED, reason)

    def _more_room(self, process: Process, turn: TurnState, completion: Completion) -> None:
        """A reply cut off at the output limit: the rest of this turn asks with twice the room (up to
        the model's limit). The reply itself is handled as it is (a cut-off call is malformed and
        corrected); truncation is said in the journal, never taken for a format problem."""
        from vance_cli.llm.room import more_room_for

        model = self.deps.model
        room = completion.max_tokens or turn.max_tokens or model.max_tokens
        grown = more_room_for(completion, room, output_limit=model.max_output_tokens, context_window=model.context_window)
        bigger = grown.tokens
        limit = f"max_tokens {room}" if room else "the output limit"
        if bigger is None:
            self._journal(process, f"the reply was cut off at {limit}; {grown.reason}", "warning")
            return
        turn.max_tokens = bigger
        self._journal(process, f"the reply was cut off at {limit}; the next call gets max_tokens {bigger}", "warning")

    def _end_refused(self, process: Process, turn: TurnState, refusal: str) -> None:
        """The model declined: its refusal is the turn's message (shown and kept), and the process
        waits for the person; a correction would only press the model to do what it refused."""
        process.history.append(Message(role="assistant", content=refusal, meta={"delivered": True, "kind": "refusal"}))
        self._journal(process, "the model refused to answer; its refusal ends the turn", "warning")
        turn.open = False
        turn.store(process)
        self._emit(MessageEvent(process.id, refusal, awaiting_user_input=True))
        self._set_status(process, Status.BLOCKED, "the model refused")

    def _journal(self, process: Process, text: str, level: str = "info") -> None:
        self._emit(JournalEvent(process.id, text, level))


def _pending_calls(history: list[Message]) -> tuple[Message, set[str]] | None:
    """The last assistant message with tool calls whose results are not all recorded yet."""
    done: set[str] = set()
    for m in reversed(history):
        if m.role == "tool":
            if m.tool_call_id:
                done.add(m.tool_call_id)
            continue
        if m.role == "assistant" and m.tool_calls:
            if any(c.id not in done for c in m.tool_calls):
                return m, done
        return None
    return None


class AwaitingApproval(Exception):
    """A call needs the person's yes and nobody gave it: the turn pauses (BLOCKED), kept open."""

    def __init__(self, tool: str, reason: str) -> None:
        super().__init__(f"{tool}: {reason}")
        self.tool = tool
        self.reason = reason


def _valid_arguments(tool: Tool, call: ToolCall) -> dict | None:
    """The call's arguments when they parse and validate; None for a malformed call."""
    if call.error:
        return None
    try:
        args = call.parsed_arguments()
    except ValueError:
        return None
    try:
        if not isinstance(args, dict) or tool.validate(args):
            return None
    except SchemaUnusable:  # Tool.invoke answers it; nothing to ask about
        return None
    return args


def _malformed_result(name: str, problem: str) -> ToolResult:
    return ToolResult(
        content=f"ERROR: malformed call to `{name}`: {problem}. Send the call again with a JSON object that matches the tool's parameters.",
        ok=False,
        data=MALFORMED,
    )
