#!/usr/bin/env python3
"""Publish synthetic tools over the HTTP API with C concurrent clients
(one keep-alive connection each) and print one JSON line:
{"ok", "errors", "seconds", "per_second", "statuses"}.

Every bundle is built before the clock starts, so the figure is the
registry's publish rate, not the bundle generator's. Publishes go through the
real `POST /api/v1/tools` path (body limits, bundle rules, validation, blob
store, one transaction).

The clients are `publisher.rs` (threads of a small std-only Rust program,
built here with `rustc -O` into ~/.cache/toolreg-bench) unless
`--client python` asks for Python processes with `http.client`. The clients
share the machine's cores with the server: the Python ones cost ~0.6 ms of
CPU per publish, the Rust ones ~0.05 ms.

    publish.py --url http://127.0.0.1:8080 --token T --start 0 --count 1000 --clients 8
"""

import argparse
import http.client
import json
import multiprocessing as mp
import os
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toolgen  # noqa: E402


def worker(args, index, barrier, results):
    mine = range(args.start + index, args.start + args.count, args.clients)
    bundles = [(i, toolgen.bundle(i, args.version)) for i in mine]
    url = urllib.parse.urlsplit(args.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    headers = {"Authorization": f"Bearer {args.token}", "Content-Type": "application/gzip"}
    statuses = {}
    ok = errors = 0
    failures = []
    barrier.wait()
    started = time.monotonic()
    for i, body in bundles:
        try:
            conn.request("POST", "/api/v1/tools", body=body, headers=headers)
            res = conn.getresponse()
            text = res.read()
            status = res.status
        except (OSError, http.client.HTTPException) as e:
            status = f"connection: {e.__class__.__name__}"
            conn.close()
            conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
            text = b""
        statuses[str(status)] = statuses.get(str(status), 0) + 1
        if status == 201:
            ok += 1
        else:
            errors += 1
            if len(failures) < 3:
                failures.append(f"{toolgen.tool_name(i)}: {status} {text[:200]!r}")
    results.put({"ok": ok, "errors": errors, "started": started, "finished": time.monotonic(),
                 "statuses": statuses, "failures": failures})


CACHE = os.path.join(os.path.expanduser("~"), ".cache", "toolreg-bench")


def publisher_binary():
    """`publisher.rs` compiled with `rustc -O`, rebuilt when the source is newer."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "publisher.rs")
    binary = os.path.join(CACHE, "publisher")
    if not os.path.exists(binary) or os.path.getmtime(binary) < os.path.getmtime(source):
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run(["rustc", "--edition", "2021", "-O", "-o", binary, source], check=True)
    return binary


def numbered_bundle(args):
    i, version = args
    return toolgen.tool_name(i).encode(), toolgen.bundle(i, version)


def run_rust(args):
    binary = publisher_binary()
    with mp.Pool() as pool:
        bundles = pool.map(numbered_bundle, [(i, args.version) for i in range(args.start, args.start + args.count)],
                           chunksize=256)
    with tempfile.NamedTemporaryFile(prefix="toolreg-bundles-") as f:
        for name, body in bundles:
            f.write(struct.pack("<I", len(name)) + name + struct.pack("<I", len(body)) + body)
        f.flush()
        del bundles
        out = subprocess.run([binary, args.url, args.token, f.name, str(args.clients)],
                             capture_output=True, text=True, check=False)
    if not out.stdout.strip():
        raise RuntimeError(f"publisher failed: {out.stderr}")
    print(out.stdout.strip().splitlines()[-1])
    return out.returncode


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--version", default="1.0.0")
    p.add_argument("--client", choices=["rust", "python"], default="rust")
    args = p.parse_args()
    if args.client == "rust":
        return run_rust(args)
    barrier = mp.Barrier(args.clients)
    results = mp.Queue()
    procs = [mp.Process(target=worker, args=(args, i, barrier, results)) for i in range(args.clients)]
    for proc in procs:
        proc.start()
    parts = [results.get() for _ in procs]
    for proc in procs:
        proc.join()
    seconds = max(r["finished"] for r in parts) - min(r["started"] for r in parts)
    ok = sum(r["ok"] for r in parts)
    statuses = {}
    for r in parts:
        for k, v in r["statuses"].items():
            statuses[k] = statuses.get(k, 0) + v
    out = {"ok": ok, "errors": sum(r["errors"] for r in parts), "seconds": round(seconds, 3),
           "per_second": round(ok / seconds, 1) if seconds > 0 else 0.0, "statuses": statuses,
           "failures": [f for r in parts for f in r["failures"]][:5]}
    print(json.dumps(out))
    return 0 if out["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
