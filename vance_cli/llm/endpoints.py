"""api_base as each provider's client wants it, whatever form the user wrote it in.

One ``VANCE_API_BASE`` serves every model string, but litellm's providers append different paths:
Anthropic appends ``/v1/messages`` (so ``http://host/v1`` would post to ``/v1/v1/messages``),
Gemini appends ``/models/<m>:generateContent`` (so a bare ``http://host`` loses ``/v1beta``),
Ollama's native API appends ``/api/chat`` (so Ollama's OpenAI-style ``.../v1`` would post to
``/v1/api/chat``), and OpenAI-compatible clients append ``/chat/completions`` (so a pasted
``.../v1/chat/completions`` would be doubled). ``normalize_api_base`` makes each of those right and
leaves every other base as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

_GEMINI_VERSIONS = ("v1", "v1beta", "v1alpha")


def provider_of(model: str) -> str:
    """litellm's provider prefix of a model string ("openai" for bare names)."""
    head, sep, _ = model.strip().partition("/")
    return head.lower() if sep else "openai"


# The hosts a provider's own key belongs to (litellm reads these keys from the environment).
PROVIDER_HOSTS = {
    "openai": ("api.openai.com",),
    "anthropic": ("api.anthropic.com",),
    "gemini": ("generativelanguage.googleapis.com",),
    "mistral": ("api.mistral.ai",),
    "groq": ("api.groq.com",),
    "deepseek": ("api.deepseek.com",),
    "together_ai": ("api.together.xyz",),
    "openrouter": ("openrouter.ai",),
    "xai": ("api.x.ai",),
    "cohere": ("api.cohere.ai", "api.cohere.com"),
}


def foreign_base(model: str, api_base: str | None) -> bool:
    """True when ``api_base`` is set and is not one of the provider's own hosts (PROVIDER_HOSTS):
    the provider's key from the environment must not go there (the person configures a key for it).

    The default is foreign: a provider whose hosts are not listed here (deepinfra, fireworks_ai,
    perplexity, custom_openai, azure, ...) has no host its environment key is known to belong to,
    so any api_base for it gets only ``api_key`` / ``VANCE_API_KEY``, never ``DEEPINFRA_API_KEY``."""
    if not api_base or not api_base.strip():
        return False
    hosts = PROVIDER_HOSTS.get(provider_of(model), ())
    try:
        host = (urlsplit(api_base.strip()).hostname or "").lower()
    except ValueError:
        return True
    return host not in hosts


# The names of environment variables that hold a credential or an account's identity: litellm reads
# such variables for the provider of a model string (WATSONX_TOKEN, OPENAI_ORGANIZATION, AWS_*_KEY,
# GOOGLE_APPLICATION_CREDENTIALS, CLARIFAI_PAT, ...) whatever base the call goes to.
# The OpenAI SDK reads OPENAI_ORG_ID and OPENAI_PROJECT_ID itself (organization=None from litellm).
# A provider's project id is not hidden in general: watsonx cannot make a call without it.
CREDENTIAL_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|ORGANIZATION|(?:^|_)(?:PAT|ORG|ORG_ID|ACCOUNT|ACCOUNT_ID|TENANT|TENANT_ID|CLIENT_ID)(?:_|$)|^OPENAI_PROJECT",
    re.IGNORECASE,
)


def credential_names(environ: Mapping[str, str]) -> frozenset[str]:
    """The variables of ``environ`` a call to a foreign base (``foreign_base``) must not see."""
    return frozenset(name for name in environ if CREDENTIAL_NAME.search(name))


def _strip_suffix(path: str, *suffixes: str) -> str:
    for suffix in suffixes:
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path


def normalize_api_base(model: str, api_base: str | None) -> str | None:
    """``api_base`` with the path the provider's client expects to append to (see the module doc)."""
    if not api_base or not api_base.strip():
        return None
    base = api_base.strip()
    try:
        parts = urlsplit(base)
    except ValueError:
        return base.rstrip("/")
    if not parts.scheme or not parts.netloc:
        return base.rstrip("/")
    path = parts.path.rstrip("/")
    provider = provider_of(model)
    if provider == "anthropic":
        path = _strip_suffix(path, "/v1/messages", "/v1")
    elif provider == "gemini":
        path = _strip_suffix(path, "/openai")  # Gemini's OpenAI endpoint is for openai/ models
        last = path.rsplit("/", 1)[-1]
        if last not in _GEMINI_VERSIONS:
            path += "/v1beta"
    elif provider in ("ollama", "ollama_chat"):
        path = _strip_suffix(path, "/api/chat", "/api/generate", "/v1")
    else:  # OpenAI-compatible: the client appends /chat/completions itself
        path = _strip_suffix(path, "/chat/completions")
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))
