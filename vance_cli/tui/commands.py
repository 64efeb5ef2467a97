"""The chat's slash commands: their names, help lines, parsing and completion."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    name: str
    arg: str | None  # "[X]": optional
    help: str

    @property
    def needs_arg(self) -> bool:
        return bool(self.arg) and not self.arg.startswith("[")


COMMANDS: tuple[Command, ...] = (
    Command("help", None, "list the commands and keys"),
    Command("ps", None, "list the processes"),
    Command("attach", "ID", "watch a process live (a Benjy run or a worker): todos, journal, question"),
    Command("new", None, "start a new chat with the same recipe"),
    Command("resume", "[ID]", "switch this chat to another process (no ID: pick one of this folder's chats)"),
    Command("recipe", "NAME", "start a new chat with recipe NAME"),
    Command("model", "[NAME]", "use model NAME for the next turns (no NAME: show the model and the aliases)"),
    Command("copy", None, "copy the last reply to the clipboard"),
    Command("permissions", None, "see the approval rules; /permissions allow|ask|deny|forget RULE changes them"),
    Command("compact", None, "summarise the older turns now (the process file keeps them all)"),
    Command("retry", None, "try the interrupted or failed turn again"),
    Command("clear", None, "clear the screen (the process keeps its history)"),
    Command("quit", None, "leave (the state is on disk: vance chat --continue)"),
)

BY_NAME = {c.name: c for c in COMMANDS}

KEYS_HELP = (
    "Enter send · Ctrl+J or Alt+Enter new line · ↑/↓ history · Ctrl+R search the history · "
    "Tab complete a command or an @path · `@path` attaches a file of the workspace · "
    "Ctrl+C stop the turn (twice: quit) · Ctrl+D on an empty prompt quit · F2 journal · "
    "Esc leave the prompt and back (never stops work) · typing anywhere types in the prompt · "
    "Enter on a message copies it · `\\/` starts a message with `/` · `\\\\` at the end sends one `\\`"
)


def parse(text: str) -> tuple[str, str] | None:
    """("name", "argument") for a slash command line, else None (``\\/...`` is a message)."""
    text = text.strip()
    if not text.startswith("/") or "\n" in text:
        return None
    name, _, arg = text[1:].partition(" ")
    return name.lower(), arg.strip()


def message_text(text: str) -> str:
    """What a typed message sends: a leading ``\\/`` is an escaped ``/`` (not a command)."""
    return text[1:] if text.startswith("\\/") else text


def completions(text: str) -> list[Command]:
    """The commands a partly typed ``/na`` may become (none once an argument is being typed)."""
    if not text.startswith("/") or " " in text or "\n" in text:
        return []
    stem = text[1:].lower()
    return [c for c in COMMANDS if c.name.startswith(stem)]


def complete(text: str) -> str:
    """``text`` completed as far as the matching commands agree (with a space when unique)."""
    matches = completions(text)
    if not matches:
        return text
    if len(matches) == 1:
        return f"/{matches[0].name} "
    names = [c.name for c in matches]
    prefix = names[0]
    for name in names[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    return "/" + prefix if len(prefix) >= len(text) - 1 else text


def help_text() -> str:
    lines = ["**Commands**", ""]
    for c in COMMANDS:
        usage = f"/{c.name}" + (f" {c.arg}" if c.arg else "")
        lines.append(f"- `{usage}`: {c.help}")
    lines += ["", "**Keys**: " + KEYS_HELP]
    return "\n".join(lines)
