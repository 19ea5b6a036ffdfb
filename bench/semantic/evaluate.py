#!/usr/bin/env python3
"""Offline comparison of lexical search with embeddings on the search-bench set.

Inputs: a deep run of toolreg's own search (`bench/search-bench.sh --depth 100
--run LEXICAL.jsonl`) and the sentence embeddings of the set's tools and
requests (`encode.py`, next to this file). Prints nDCG@10 / Recall@10 (all,
live, non-live) for:

  * lexical: toolreg's search as it answers over HTTP;
  * dense: cosine similarity of the embeddings alone, over every tool;
  * hybrid (RRF): reciprocal-rank fusion of lexical and dense, k = 60, with the
    dense list weighted w;
  * hybrid (rerank): lexical's top K reordered by the embedding similarity
    blended with lexical rank.

When the requests were embedded with `encode.py --sample N`, every ranker is
scored on that sample.

    python3 evaluate.py --lexical LEXICAL.jsonl --tools E_tools.npy --queries E_queries.npy
"""
import argparse
import collections
import json
import math
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CUTOFF = 10


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def ndcg(ranked, gold):
    dcg = sum(1 / math.log2(r + 2) for r, t in enumerate(ranked[:CUTOFF]) if t in gold)
    idcg = sum(1 / math.log2(r + 2) for r in range(min(len(gold), CUTOFF)))
    return dcg / idcg if idcg else 0.0


def recall(ranked, gold):
    return len(gold & set(ranked[:CUTOFF])) / len(gold)


def score(queries, run):
    acc = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for q in queries:
        gold, ranked = set(q["gold"]), run.get(q["id"], [])
        for key in ("all", "live" if q["category"].startswith("live") else "non-live"):
            a = acc[key]
            a[0] += 1
            a[1] += ndcg(ranked, gold)
            a[2] += recall(ranked, gold)
    return "  ".join(f"{k} {a[1] / a[0]:.4f} / {a[2] / a[0]:.4f}"
                     for k, a in sorted(acc.items(), key=lambda kv: kv[0] != "all"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default=os.path.join(ROOT, "..", "shared", "search-bench"))
    ap.add_argument("--lexical", required=True)
    ap.add_argument("--tools", required=True)
    ap.add_argument("--queries", required=True)
    args = ap.parse_args()
    tools = load(os.path.join(args.set, "tools.jsonl"))
    queries = load(os.path.join(args.set, "queries.jsonl"))
    ids = [t["id"] for t in tools]
    lexical = {r["id"]: r["ranked"] for r in load(args.lexical)}
    sample = args.queries + ".ids.json"
    if os.path.exists(sample):
        with open(sample, encoding="utf-8") as f:
            by_id = {q["id"]: q for q in queries}
            queries = [by_id[i] for i in json.load(f)]
        print(f"{len(queries)} requests drawn at random (encode.py --sample)")
    sims = np.load(args.queries) @ np.load(args.tools).T
    dense = {q["id"]: [ids[i] for i in np.argsort(-sims[n])[:100]] for n, q in enumerate(queries)}
    print(f"{'lexical':<28} {score(queries, lexical)}")
    print(f"{'dense':<28} {score(queries, dense)}")
    col = {t: i for i, t in enumerate(ids)}
    for w in (0.5, 1.0, 1.5, 2.0):
        run = {}
        for q in queries:
            fused = collections.defaultdict(float)
            for r, t in enumerate(lexical.get(q["id"], [])):
                fused[t] += 1 / (60 + r + 1)
            for r, t in enumerate(dense[q["id"]]):
                fused[t] += w / (60 + r + 1)
            run[q["id"]] = sorted(fused, key=lambda t: -fused[t])[:CUTOFF]
        print(f"{f'hybrid RRF, dense x{w}':<28} {score(queries, run)}")
    for k in (20, 50):
        for alpha in (0.5, 0.7, 0.9):
            run = {}
            for n, q in enumerate(queries):
                top = lexical.get(q["id"], [])[:k]
                blended = {t: alpha * sims[n, col[t]] + (1 - alpha) * (1 - r / k)
                           for r, t in enumerate(top)}
                run[q["id"]] = sorted(top, key=lambda t: -blended[t])[:CUTOFF]
            print(f"{f'rerank top {k}, alpha {alpha}':<28} {score(queries, run)}")


if __name__ == "__main__":
    main()
