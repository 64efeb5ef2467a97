"""User-facing errors: each says what went wrong, how to fix it, and which exit code it maps to.

Hierarchy::

    VanceError (exit 1)
    ├── UsageError (exit 2)          bad flags or arguments
    ├── ConfigError                  settings, recipes, missing model
    ├── StoreError                   process files
    │   ├── ProcessLocked            another vance holds the process
    │   ├── CorruptProcessFile       unreadable file, kept untouched
    │   └── ProcessNotFound
    ├── ModelError                   the model call failed for good
    │   ├── TransportError           5xx / 429 / timeout / connection, after retries
    │   └── ModelRequestsForbidden   the test switch is on
    ├── InvalidTransition            a status change the table forbids
    ├── InvalidSchema                not a valid JSON Schema (its $schema draft, default 2020-12)
    └── Interrupted (exit 128+N)     SIGTERM / SIGHUP stopped a turn; the state is saved

Foreign exceptions (httpx, litellm, yaml, pydantic) are translated where they enter, with
``raise ... from exc``, so the CLI only ever sees these.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2


class VanceError(Exception):
    """Base of every error meant for the user."""

    exit_code = EXIT_ERROR

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def said(self) -> str:
        """The message and its fix on one line, for a tool's result or a protocol's error reply
        (where ``render``'s "error:" lines are for a terminal)."""
        return self.message + (f" (fix: {self.hint})" if self.hint else "")

    def render(self) -> str:
        text = f"error: {self.message}"
        if self.hint:
            text += f"\n  fix: {self.hint}"
        # add_note() lines: context a caller adds on the way up (e.g. how to resume the process)
        for note in getattr(self, "__notes__", ()):
            text += f"\n  {note}"
        return text


class UsageError(VanceError):
    exit_code = EXIT_USAGE


class ConfigError(VanceError):
    pass


class StoreError(VanceError):
    pass


class ProcessLocked(StoreError):
    pass


class CorruptProcessFile(StoreError):
    pass


class ProcessNotFound(StoreError):
    pass


class ModelError(VanceError):
    pass


class TransportError(ModelError):
    """The provider could not be reached or kept failing (after the transport retry budget)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = True,
        hint: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.retryable = retryable
        # Seconds the server asked us to wait (Retry-After); the retry loop honours it up to its cap.
        self.retry_after = retry_after


class ModelRequestsForbidden(ModelError):
    pass


class InvalidTransition(VanceError):
    pass


class InvalidSchema(VanceError):
    """A schema that is not a valid JSON Schema of its declared draft (checked before any model call)."""


class Interrupted(VanceError):
    """A stop signal (SIGTERM, SIGHUP) ended the run; the process was saved SUSPENDED."""

    def __init__(self, signame: str, *, signum: int) -> None:
        super().__init__(
            f"interrupted by {signame}; the process state is saved",
            hint="continue with: vance chat --continue, or --resume ID",
        )
        self.signame = signame
        self.exit_code = 128 + signum

    def render(self) -> str:
        return f"{self.message} ({self.hint})"
