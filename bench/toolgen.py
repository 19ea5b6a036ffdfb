"""Synthetic tool bundles for the benchmarks: small (~4 KB unpacked) Matimo
`http` tools with a README of words from a fixed vocabulary, so search
queries have something to find. Bundles are real gzip'd tars that go through
the registry's full publish path (bundle rules, definition validation).

Standard library only.
"""

import gzip
import io
import random
import tarfile

# A fixed vocabulary of made-up but pronounceable words (deterministic).
_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "fi", "do", "ge", "ha", "jo"]
_rng = random.Random(7)
VOCABULARY = sorted({"".join(_rng.choice(_SYLLABLES) for _ in range(_rng.randint(2, 4))) for _ in range(3000)})
TOPICS = ["weather", "calendar", "invoice", "search", "translate", "github", "slack", "email", "database",
          "storage", "payments", "maps", "news", "stocks", "crypto", "recipes", "music", "video", "notes", "tasks"]


def tool_name(i: int) -> str:
    return f"bench-tool-{i:06d}"


def definition(name: str, version: str, rng: random.Random) -> str:
    topic = rng.choice(TOPICS)
    words = " ".join(rng.choice(VOCABULARY) for _ in range(25))
    params = []
    for p in range(6):
        params.append(
            f"  param_{p}:\n"
            f"    type: string\n"
            f"    description: '{' '.join(rng.choice(VOCABULARY) for _ in range(8))}'\n"
            f"    required: {'true' if p < 2 else 'false'}\n"
        )
    return (
        f"name: {name}\n"
        f"version: '{version}'\n"
        f"description: 'bench {topic} tool: {words}'\n"
        f"tags: [bench, {topic}]\n"
        f"parameters:\n{''.join(params)}"
        f"execution:\n"
        f"  type: http\n"
        f"  method: GET\n"
        f"  url: 'https://api.example.com/{topic}/{name}'\n"
        f"  query_params:\n"
        f"    q: '{{param_0}}'\n"
        f"output_schema:\n"
        f"  type: object\n"
        f"  properties:\n"
        f"    result:\n"
        f"      type: string\n"
    )


def readme(name: str, rng: random.Random) -> str:
    lines = [f"# {name}", ""]
    for _ in range(30):
        lines.append(" ".join(rng.choice(VOCABULARY) for _ in range(12)))
    return "\n".join(lines) + "\n"


def pack(files: dict) -> bytes:
    """A deterministic bundle: sorted entries, fixed metadata, USTAR format."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for path in sorted(files):
            data = files[path].encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), compresslevel=6, mtime=0)


def bundle(i: int, version: str = "1.0.0", salt: str = "") -> bytes:
    """Bundle number `i` (same i and version → same bytes)."""
    name = tool_name(i)
    rng = random.Random(f"{i}/{version}/{salt}")
    files = {
        "definition.yaml": definition(name, version, rng),
        "README.md": readme(name, rng),
        "toolreg.toml": f'[tool]\nname = "{name}"\nversion = "{version}"\nlicense = "MIT"\n',
    }
    return pack(files)


if __name__ == "__main__":
    b = bundle(1)
    unpacked = sum(len(v) for v in [definition(tool_name(1), "1.0.0", random.Random(0)), readme(tool_name(1), random.Random(0))])
    print(f"bundle: {len(b)} bytes compressed, ~{unpacked} bytes unpacked; vocabulary {len(VOCABULARY)} words")
