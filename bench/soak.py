#!/usr/bin/env python3
"""Soak test (run it through bench/soak.sh): two `toolreg-server` replicas on
one PostgreSQL database and one S3 server (moto) under a bounded mixed load —
publishers, searchers, downloaders, each spread over both replicas — for
--minutes (default 2, at most 10).

Every answer is checked: publishes must be 201; searches 200 with JSON;
metadata 200; downloads 200 with bytes whose SHA-256 equals both
`X-Checksum-Sha256` and the digest the *other* replica listed. The RSS of
both replicas is sampled throughout and printed. Passes (exit 0) only with
0 errors and flat memory: for each replica, the average RSS of the last
quarter is within 20% of the average of the second quarter.
"""

import argparse
import hashlib
import http.client
import json
import multiprocessing as mp
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402
import toolgen  # noqa: E402

PRELOAD = 200


class Client:
    """One keep-alive connection per replica."""

    def __init__(self, urls):
        self.conns = {}
        self.urls = urls

    def request(self, url, method, path, body=None, headers=None):
        host_port = url.split("//", 1)[1]
        for attempt in (0, 1):
            conn = self.conns.get(url)
            if conn is None:
                host, port = host_port.split(":")
                conn = self.conns[url] = http.client.HTTPConnection(host, int(port), timeout=30)
            try:
                conn.request(method, path, body=body, headers=headers or {})
                res = conn.getresponse()
                return res.status, dict((k.lower(), v) for k, v in res.getheaders()), res.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self.conns.pop(url, None)
                if attempt == 1:
                    raise


def worker(kind, index, urls, token, stop, results, rate):
    rng = random.Random(f"{kind}{index}")
    client = Client(urls)
    counts = {"requests": 0, "errors": 0}
    failures = []
    next_version = 1
    interval = 1.0 / rate

    def fail(msg):
        counts["errors"] += 1
        if len(failures) < 5:
            failures.append(msg)

    while not stop.is_set():
        t0 = time.monotonic()
        a, b = rng.sample(urls, 2)
        try:
            if kind == "publisher":
                # New versions of the preloaded tools, alternating replicas.
                i = rng.randrange(PRELOAD)
                version = f"1.{index + 1}.{next_version}"
                next_version += 1
                status, _, body = client.request(a, "POST", "/api/v1/tools", toolgen.bundle(i, version),
                                                 {"Authorization": f"Bearer {token}",
                                                  "Content-Type": "application/gzip"})
                counts["requests"] += 1
                if status != 201:
                    fail(f"publish {toolgen.tool_name(i)}@{version} on {a}: {status} {body[:200]!r}")
            elif kind == "searcher":
                q = rng.choice(toolgen.VOCABULARY)
                status, _, body = client.request(a, "GET", f"/api/v1/search?q={q}&per_page=10")
                counts["requests"] += 1
                if status != 200 or "hits" not in json.loads(body):
                    fail(f"search {q} on {a}: {status} {body[:200]!r}")
            else:
                # Metadata on one replica, download from the other, digests must agree.
                name = toolgen.tool_name(rng.randrange(PRELOAD))
                status, _, body = client.request(a, "GET", f"/api/v1/tools/{name}")
                counts["requests"] += 1
                if status != 200:
                    fail(f"metadata {name} on {a}: {status} {body[:200]!r}")
                else:
                    v = rng.choice(json.loads(body)["versions"])
                    status, headers, data = client.request(b, "GET", f"/api/v1/tools/{name}/{v['version']}/download")
                    counts["requests"] += 1
                    digest = hashlib.sha256(data).hexdigest()
                    if status != 200:
                        fail(f"download {name}@{v['version']} on {b}: {status} {data[:200]!r}")
                    elif digest != v["sha256"] or headers.get("x-checksum-sha256") != digest:
                        fail(f"download {name}@{v['version']} on {b}: digest {digest}, listed {v['sha256']}, "
                             f"header {headers.get('x-checksum-sha256')}")
        except (OSError, http.client.HTTPException, ValueError, KeyError) as e:
            fail(f"{kind}: {e.__class__.__name__}: {e}")
        spare = interval - (time.monotonic() - t0)
        if spare > 0:
            time.sleep(spare)
    results.put({"kind": kind, **counts, "failures": failures})


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=2.0)
    p.add_argument("--binary", default=os.path.join(bench.ROOT, "target", "release", "toolreg-server"))
    p.add_argument("--publishers", type=int, default=2)
    p.add_argument("--searchers", type=int, default=2)
    p.add_argument("--downloaders", type=int, default=2)
    p.add_argument("--rate", type=float, default=40.0, help="requests per second per worker (at most)")
    args = p.parse_args()
    if not 0 < args.minutes <= 10:
        p.error("--minutes must be more than 0 and at most 10")

    work = tempfile.mkdtemp(prefix="toolreg-soak-")
    db = f"toolreg_soak_{os.getpid()}"
    subprocess.run(["createdb", *bench.PG_ADMIN, db], check=True)
    moto = bench.Moto(args, work, "toolreg-soak")
    replicas = []
    try:
        env = {"TOOLREG_DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{db}",
               "TOOLREG_STORAGE": "s3://toolreg-soak", "AWS_ENDPOINT_URL": moto.endpoint, "AWS_ALLOW_HTTP": "true",
               "AWS_ACCESS_KEY_ID": moto.access_key, "AWS_SECRET_ACCESS_KEY": moto.secret_key, "AWS_REGION": "us-east-1"}
        for name in ("a", "b"):
            replicas.append(bench.Server(args.binary, os.path.join(work, name), env, os.path.join(work, f"{name}.log")))
        token = replicas[0].admin("admin", "create-user", "soak", "--tier", "verified")
        for r in replicas:
            r.start()
        urls = [r.url for r in replicas]
        pub = bench.publish(urls[0], token, 0, PRELOAD)
        if pub["errors"]:
            raise RuntimeError(f"preload failed: {pub}")
        bench.wait_for_search(urls[1], PRELOAD, 60)
        bench.log(f"soak: {PRELOAD} tools preloaded; {args.minutes} min of mixed load on {urls}")

        stop = mp.Event()
        results = mp.Queue()
        procs = []
        for kind, count in (("publisher", args.publishers), ("searcher", args.searchers),
                            ("downloader", args.downloaders)):
            for i in range(count):
                rate = min(args.rate, 10.0) if kind == "publisher" else args.rate
                procs.append(mp.Process(target=worker, args=(kind, i, urls, token, stop, results, rate)))
        for proc in procs:
            proc.start()
        duration = args.minutes * 60
        step = max(1.0, duration / 48)
        samples = []
        t0 = time.monotonic()
        print(f"{'t (s)':>7} {'RSS A (MiB)':>12} {'RSS B (MiB)':>12}")
        while time.monotonic() - t0 < duration:
            time.sleep(step)
            sample = (time.monotonic() - t0, replicas[0].rss_mib(), replicas[1].rss_mib())
            samples.append(sample)
            print(f"{sample[0]:7.1f} {sample[1]:12.1f} {sample[2]:12.1f}", flush=True)
        stop.set()
        parts = [results.get() for _ in procs]
        for proc in procs:
            proc.join()

        requests = sum(r["requests"] for r in parts)
        errors = sum(r["errors"] for r in parts)
        by_kind = {}
        for r in parts:
            by_kind[r["kind"]] = by_kind.get(r["kind"], 0) + r["requests"]
        q = len(samples) // 4
        verdicts = []
        for idx, name in ((1, "A"), (2, "B")):
            second = sum(s[idx] for s in samples[q:2 * q]) / max(1, q)
            last = sum(s[idx] for s in samples[-q:]) / max(1, q)
            flat = abs(last - second) <= 0.2 * second
            verdicts.append(flat)
            print(f"replica {name}: second-quarter RSS {second:.1f} MiB, last-quarter {last:.1f} MiB "
                  f"({(last / second - 1) * 100:+.1f}%) -> {'flat' if flat else 'NOT FLAT'}")
        print(f"requests: {requests} ({', '.join(f'{k} {v}' for k, v in sorted(by_kind.items()))}) in "
              f"{duration:.0f} s = {requests / duration:.0f}/s; errors: {errors}")
        for r in parts:
            for f in r["failures"]:
                print(f"  error: {f}")
        ok = errors == 0 and all(verdicts) and q > 0
        # Nothing corrupt at the end either.
        for r in replicas:
            r.stop()
        out = subprocess.run([args.binary, "verify"], env=replicas[0].command_env(), capture_output=True, text=True)
        print(f"verify: exit {out.returncode}: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else ''}")
        ok = ok and out.returncode == 0
        print("SOAK PASSED" if ok else "SOAK FAILED")
        return 0 if ok else 1
    finally:
        for r in replicas:
            r.stop()
        moto.stop()
        subprocess.run(["dropdb", *bench.PG_ADMIN, "--if-exists", "--force", db], check=False, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
