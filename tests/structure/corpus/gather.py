"""How the real-world schema corpus was gathered (run by hand, never by the test suite).

Sources (both public, permissively licensed, see SOURCES.md and licenses/):

- SchemaStore/schemastore: ``src/schemas/json/<name>.json`` with the positive test documents in
  ``src/test/<name>/`` (JSON, YAML and TOML; converted to JSON here);
- python-jsonschema/check-jsonschema: the SchemaStore-derived schemas it vendors in
  ``src/check_jsonschema/builtin_schemas/vendor/`` and the positive examples in
  ``tests/example-files/hooks/positive/<name>/``;
- the ``model_json_schema()`` of a few types of the openai Python SDK (pydantic models people
  hand to structured-output helpers), when the ``openai`` package is installed (bench extra).

Usage (the two repositories as bare git mirrors)::

    python tests/structure/corpus/gather.py SCHEMASTORE_GIT CHECK_JSONSCHEMA_GIT

It rewrites schemas/, examples/ and SOURCES.md beside it. The SchemaStore selection is the list
below (chosen to cover every draft and the keywords the converter treats specially: if/then/else,
allOf, dependencies, patternProperties, not, const, anchors, tuple items, draft-04 booleans,
propertyNames, unevaluatedProperties, external refs), at most ~60 KB each so the suite stays fast.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
MAX_EXAMPLES = 3

SCHEMASTORE = [
    "abc-inventory-module-data-2.0.0", "abc-supply-plan-11.2.0", "agripparc-1.2", "aih-org-policy",
    "aiproj-1.9", "appsettings", "appsscript", "aws-cdk-appconfig-featureflags-1.0.0",
    "azure-iot-edge-deployment-2.0", "azure-iot-edgeagent-deployment-1.0",
    "azure-iot-edgehub-deployment-1.2", "babelrc", "claude-code-keybindings", "codex-hooks",
    "commitlintrc", "component", "component-detection-manifest", "csscomb", "dart-build",
    "docs-mcp-manifest", "embrace-config-schema-1.0.0", "evidence-bundle", "flatpak-manifest",
    "foundryvtt-system-manifest", "function", "gaspar-3.0", "grunt-clean-task",
    "jovo-language-model", "jshintrc", "jsone", "jsonld", "knowledge-unit", "kustomization",
    "language-configuration", "libman", "license-report-config", "mdxlintrc",
    "minecraft-custom-main-menu-mod", "minecraft-item-modifier", "ninjs-1.4", "now",
    "openweather.current", "openweather.roadrisk", "package.manifest", "packer", "popxf-1.0",
    "prettierrc", "project", "radiohound-v0", "remarkrc", "rust-toolchain", "s3-bucket-cors",
    "settings.job", "size-limit", "solution-filter", "sourcemap-v3", "specif-1.1",
    "templatesources", "truescript", "vespertide-model", "vim-addon-info", "yamllint",
    "youtrack-app",
]
# check-jsonschema's vendored schemas, minus renovate (AGPL) and snapcraft (GPL), and
# azure-pipelines (1.6 MB; the bench builds its big schema from the corpus instead).
VENDOR = [
    "bamboo-spec", "bitbucket-pipelines", "buildkite", "changie", "circle-ci", "citation-file-format",
    "cloudbuild", "codecov", "compose-spec", "dependabot", "drone-ci", "github-actions",
    "github-discussion", "github-issue-config", "github-issue-forms", "github-workflows", "gitlab-ci",
    "meltano", "mergify", "readthedocs", "taskfile", "travis", "woodpecker-ci",
]
VENDOR_LICENSES = {
    "bitbucket-pipelines": "bitbucket-pipelines", "buildkite": "buildkite", "changie": "changie",
    "citation-file-format": "citation-file-format", "compose-spec": "compose-spec", "gitlab-ci": "gitlab",
    "meltano": "meltano", "readthedocs": "readthedocs", "taskfile": "task",
}


# Test documents skipped, with the reason.
SKIP_EXAMPLES = {
    # Its documents match none (or several) of the binding oneOf alternatives under jsonschema;
    # SchemaStore lists the schema under ajvNotStrictMode.
    "function": "documents invalid against their own schema",
}


class _Yaml12Loader(yaml.SafeLoader):
    """YAML 1.2 booleans: only true/false (YAML 1.1 would read the key `on:` of a workflow as true)."""


_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", __import__("re").compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def load_any(name: str, text: str):
    if name.endswith(".json"):
        return json.loads(text)
    if name.endswith((".yaml", ".yml", ".cff")) or "." not in name.rsplit("/", 1)[-1]:
        return yaml.load(text, Loader=_Yaml12Loader)  # noqa: S506 - a SafeLoader subclass
    if name.endswith(".toml"):
        return tomllib.loads(text)
    return None


OPENAI_TYPES = {
    "openai-ChatCompletion": "openai.types.chat:ChatCompletion",
    "openai-ChatCompletionMessage": "openai.types.chat:ChatCompletionMessage",
    "openai-CompletionUsage": "openai.types:CompletionUsage",
    "openai-Batch": "openai.types:Batch",
    "openai-FileObject": "openai.types:FileObject",
    "openai-Embedding": "openai.types:Embedding",
    "openai-Moderation": "openai.types:Moderation",
    "openai-FineTuningJob": "openai.types.fine_tuning:FineTuningJob",
}


def openai_types(schemas: Path) -> list[str]:
    import importlib

    try:
        import openai
    except ImportError:
        return []
    rows = []
    for name, spec in OPENAI_TYPES.items():
        module, cls = spec.split(":")
        model = getattr(importlib.import_module(module), cls)
        (schemas / f"{name}.json").write_text(json.dumps(model.model_json_schema(), indent=1) + "\n")
        rows.append(f"| `{name}.json` | `{spec}.model_json_schema()`, openai=={openai.__version__} (PyPI) | 0 | Apache-2.0 (openai-python) |")
    return rows


def main(store: str, check: str) -> None:
    schemas, examples = HERE / "schemas", HERE / "examples"
    licenses = HERE / "licenses"
    for folder in (schemas, examples, licenses):
        folder.mkdir(exist_ok=True)
    (licenses / "LICENSE.schemastore").write_text(git(store, "show", "HEAD:LICENSE"))
    for lic in sorted(set(VENDOR_LICENSES.values())):
        (licenses / f"LICENSE.{lic}").write_text(git(check, "show", f"HEAD:src/check_jsonschema/builtin_schemas/vendor/licenses/LICENSE.{lic}"))
    store_rev = git(store, "rev-parse", "HEAD").strip()
    check_rev = git(check, "rev-parse", "HEAD").strip()
    rows = []
    jobs = [(n, store, f"src/schemas/json/{n}.json", f"src/test/{n}", "SchemaStore/schemastore", store_rev) for n in SCHEMASTORE]
    jobs += [
        (n, check, f"src/check_jsonschema/builtin_schemas/vendor/{n}.json", f"tests/example-files/hooks/positive/{n}", "python-jsonschema/check-jsonschema", check_rev)
        for n in VENDOR
    ]
    for name, repo, path, test_dir, slug, rev in jobs:
        (schemas / f"{name}.json").write_text(git(repo, "show", f"HEAD:{path}"))
        kept = []
        listing = [] if name in SKIP_EXAMPLES else git(repo, "ls-tree", "--name-only", "HEAD", test_dir + "/").split()
        for item in sorted(listing):
            if len(kept) >= MAX_EXAMPLES:
                break
            try:
                value = load_any(item, git(repo, "show", f"HEAD:{item}"))
            except Exception:  # noqa: BLE001 - a document in a format we do not read (json5, ...)
                continue
            if value is None:
                continue
            out = examples / name
            out.mkdir(exist_ok=True)
            target = out / (item.rsplit("/", 1)[-1].replace(".", "_") + ".json")
            target.write_text(json.dumps(value, indent=1, ensure_ascii=False, default=str) + "\n")
            kept.append(item)
        license = "licenses/LICENSE.schemastore (Apache-2.0)" if name not in VENDOR_LICENSES else f"licenses/LICENSE.{VENDOR_LICENSES[name]}"
        rows.append(f"| `{name}.json` | https://github.com/{slug}/blob/{rev}/{path} | {len(kept)} from `{test_dir}/` | {license} |")
    rows += openai_types(schemas)
    lines = [
        "# Real-world schema corpus: sources",
        "",
        "Copied unchanged from public repositories by `gather.py` (see its docstring). Example",
        "documents were converted from YAML/TOML to JSON; nothing else was edited.",
        "",
        "| schema | source | examples | licence |",
        "|---|---|---|---|",
        *rows,
        "",
        "Pydantic models (written for this project, in `pydantic_models.py`) cover the shapes",
        "Python users generate schemas from: nested models with descriptions, optional fields,",
        "enums, literals, unions, lists of models, dicts, recursion, constrained types.",
        "",
    ]
    (HERE / "SOURCES.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
