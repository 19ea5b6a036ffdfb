#!/usr/bin/env python3
"""Search relevance on the search-bench development set, through a real server.

The set (read from the shared data directory beside the repository, never
copied into it) is 2,101 tools from the Berkeley Function-Calling
Leaderboard and 2,501 requests, each labelled with the tools that answer it.
This script:

  1. starts a fresh `toolreg-server` (SQLite + files, in a temporary data
     directory) and creates an untrusted publisher;
  2. publishes every tool as an MCP tool over `POST /api/v1/tools`: its call
     name verbatim as the MCP `name`, its description and parameter schema,
     and a registry name in `toolreg.toml` derived from the call name the way
     a publisher would write it (below);
  3. waits until search lists every published tool, then sends every request
     as written — no rewriting — as `GET /api/v1/search?q=…&per_page=10`;
  4. writes the run file (one line per request: its id and the tool ids
     ranked) and prints nDCG@10 and Recall@10 over all requests, the live
     (real users' requests) and non-live split and each category, plus the
     latency of the search requests.

The figures can be checked with the set's own scorer:
`python3 ../shared/search-bench/bm25.py --run RUN`.

Registry names: the call name split into words at `.`, `_`, `-` and camelCase
humps, lowercased and joined with `-` (`GeometryPresentation.createPresentation`
-> `geometry-presentation-create-presentation`), cut to 44 characters, padded
with `-tool` below 3 characters and prefixed with `tool-` when it would start
with a digit. The set has many tools that share a call name (23 variants of
`get_current_weather`); as different publishers would, the second one to be
published is `get-current-weather-2`, and so on.

    bench/search-bench.sh [--run RUN] [--out RESULT.json] [--binary PATH]
"""

import argparse
import collections
import concurrent.futures
import http.client
import io
import json
import math
import os
import re
import sys
import tarfile
import gzip
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench import Server, log  # noqa: E402

CUTOFF = 10


def registry_name(call_name):
    """A registry name (`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`, 3-44 characters) for a call name."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", call_name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1-\2", s)
    s = re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")
    if not s or not s[0].isalpha():
        s = "tool-" + s
    if len(s) < 3:
        s += "-tool"
    return s[:44].rstrip("-")


def registry_names(tools):
    """Unique registry names, in the set's order: a repeated one gets `-2`, `-3`, ..."""
    seen = collections.Counter()
    names = []
    for t in tools:
        base = registry_name(t["name"])
        seen[base] += 1
        names.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return names


def bundle(tool, name):
    """A gzip'd tar with the MCP `tool.json` and the `toolreg.toml` naming it."""
    definition = {"name": tool["name"], "description": tool["description"],
                  "inputSchema": tool["parameters"]}
    files = {
        "tool.json": json.dumps(definition, indent=2, ensure_ascii=False).encode(),
        "toolreg.toml": f'[tool]\nname = "{name}"\nversion = "1.0.0"\nlicense = "Apache-2.0"\n'.encode(),
    }
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), compresslevel=6, mtime=0)


class Client:
    """One keep-alive connection to the server."""

    def __init__(self, url, token=None):
        self.url = urllib.parse.urlsplit(url)
        self.token = token
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        headers = dict(headers or {})
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.url.hostname, self.url.port, timeout=60)
            try:
                self.conn.request(method, path, body=body, headers=headers)
                res = self.conn.getresponse()
                return res.status, res.read()
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")


def publish_all(url, token, tools, names, clients):
    """Publishes every tool; returns {status: count} and the first failures."""
    def work(part):
        client = Client(url, token)
        out = []
        for tool, name in part:
            status, body = client.request("POST", "/api/v1/tools", bundle(tool, name),
                                          {"Content-Type": "application/gzip"})
            out.append((name, status, body[:300]))
        return out

    pairs = list(zip(tools, names))
    parts = [pairs[i::clients] for i in range(clients)]
    statuses, failures = collections.Counter(), []
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        for result in pool.map(work, parts):
            for name, status, body in result:
                statuses[status] += 1
                if status != 201 and len(failures) < 5:
                    failures.append(f"{name}: {status} {body!r}")
    return statuses, failures


def wait_listed(url, n, timeout=120):
    client = Client(url)
    t0 = time.monotonic()
    total = -1
    while time.monotonic() - t0 < timeout:
        status, body = client.request("GET", "/api/v1/search?per_page=1")
        if status == 200:
            total = json.loads(body)["total"]
            if total >= n:
                return total
        time.sleep(0.2)
    raise RuntimeError(f"search lists {total} of {n} tools after {timeout} s")


def ndcg(ranked, gold):
    dcg = sum(1 / math.log2(r + 2) for r, t in enumerate(ranked[:CUTOFF]) if t in gold)
    idcg = sum(1 / math.log2(r + 2) for r in range(min(len(gold), CUTOFF)))
    return dcg / idcg if idcg else 0.0


def recall(ranked, gold):
    return len(gold & set(ranked[:CUTOFF])) / len(gold) if gold else 0.0


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))] if values else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default=os.path.join(ROOT, "..", "shared", "search-bench"),
                    help="the search-bench directory (tools.jsonl, queries.jsonl)")
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "debug", "toolreg-server"))
    ap.add_argument("--run", default=os.path.join(tempfile.gettempdir(), "toolreg-search-bench-run.jsonl"),
                    help="where to write the run file")
    ap.add_argument("--out", help="also write the figures here as JSON")
    ap.add_argument("--clients", type=int, default=4, help="concurrent publishers")
    ap.add_argument("--depth", type=int, default=CUTOFF,
                    help="hits asked for per request and written to the run file (at most 100; "
                         "the scores count the first 10): deeper runs feed other rankers, such as a "
                         "fusion with embeddings")
    args = ap.parse_args()

    def load(name):
        with open(os.path.join(args.set, name), encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    tools, queries = load("tools.jsonl"), load("queries.jsonl")
    names = registry_names(tools)
    id_of = dict(zip(names, (t["id"] for t in tools)))

    with tempfile.TemporaryDirectory(prefix="toolreg-search-bench-") as work:
        data = os.path.join(work, "data")
        os.makedirs(data)
        server = Server(args.binary, data, {}, os.path.join(work, "server.log"))
        try:
            token = server.admin("admin", "create-user", "bench", "--tier", "untrusted")
            server.start()
            log(f"publishing {len(tools)} tools to {server.url}")
            t0 = time.monotonic()
            statuses, failures = publish_all(server.url, token, tools, names, args.clients)
            log(f"published in {time.monotonic() - t0:.1f} s: {dict(statuses)}")
            for f in failures:
                log(f"  not published: {f}")
            listed = wait_listed(server.url, statuses[201])
            log(f"search lists {listed} tools; sending {len(queries)} queries")
            client = Client(server.url)
            run, latencies, errors = [], [], collections.Counter()
            for q in queries:
                path = "/api/v1/search?" + urllib.parse.urlencode({"q": q["query"], "per_page": args.depth})
                t = time.monotonic()
                status, body = client.request("GET", path)
                latencies.append(time.monotonic() - t)
                ranked = []
                if status == 200:
                    ranked = [id_of[h["name"]] for h in json.loads(body)["hits"]]
                else:
                    errors[status] += 1
                run.append({"id": q["id"], "ranked": ranked})
        finally:
            server.stop()

    with open(args.run, "w", encoding="utf-8") as f:
        for r in run:
            f.write(json.dumps(r) + "\n")

    ranked_of = {r["id"]: r["ranked"] for r in run}
    groups = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for q in queries:
        gold, ranked = set(q["gold"]), ranked_of[q["id"]]
        part = "live" if q["category"].startswith("live") else "non-live"
        for key in ("all", part, q["category"]):
            g = groups[key]
            g[0] += 1
            g[1] += ndcg(ranked, gold)
            g[2] += recall(ranked, gold)
    figures = {key: {"queries": n, "ndcg@10": round(nd / n, 4), "recall@10": round(rc / n, 4)}
               for key, (n, nd, rc) in groups.items()}
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "load_average": os.getloadavg()[0],
        "tools_published": statuses[201],
        "tools_listed": listed,
        "queries": len(queries),
        "errors": dict(errors),
        "latency_ms": {"p50": round(percentile(latencies, 0.5) * 1000, 2),
                       "p99": round(percentile(latencies, 0.99) * 1000, 2)},
        "figures": figures,
    }
    print(f"| queries | n | nDCG@10 | Recall@10 |\n|---|---:|---:|---:|")
    order = ["all", "live", "non-live"] + sorted(k for k in figures if k not in ("all", "live", "non-live"))
    for key in order:
        f = figures[key]
        print(f"| {key} | {f['queries']:,} | {f['ndcg@10']:.4f} | {f['recall@10']:.4f} |")
    print(f"\n{statuses[201]} tools published, {listed} listed; {len(queries)} queries, "
          f"{sum(errors.values())} not answered 200 {dict(errors) or ''}; "
          f"search p50 {result['latency_ms']['p50']} ms, p99 {result['latency_ms']['p99']} ms over HTTP "
          f"(load average {result['load_average']:.1f}); run file: {args.run}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
