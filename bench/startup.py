#!/usr/bin/env python3
"""Start-up with N tools: process spawn to the first 200 from /healthz, on a
registry that already holds N tools (the same figure as bench.py's "start
with N tools", without the load and wrk runs around it).

Seeds N tools once through the HTTP API (bench/publish.py, 8 clients) into
--data (and, for PostgreSQL, the database --db), then restarts the server
--restarts times and prints each start-up time, the median, and the phases
the server logged ("toolreg-server listening": migrate_ms, setup_ms,
fill_ms; then "search index open": search_ms, since_start_ms). With
--reuse the seeding is skipped (a kept --data / --db).

    bench/startup.py --backend sqlite --n 100000 --data /tmp/su-sqlite
    bench/startup.py --backend postgres --n 100000 --data /tmp/su-pg --db su_pg
    bench/startup.py --backend postgres --storage s3 ...   # S3 on a moto server

PostgreSQL seeding stores the bundles in local files unless --storage s3
(through moto a publish takes ~10 ms, 100,000 of them ~20 minutes); start-up
reads no bundle, and with --storage s3 --reuse the restarts run against an
S3 bucket (--bucket-objects puts that many small objects in it first, so
that a health check that listed the bucket would pay for its size).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402
import restart  # noqa: E402


def fill_bucket(endpoint, bucket, count):
    body = b"x" * 64
    for i in range(count):
        key = f"{bucket}/registry/bundles/sha256/{i:064x}"
        req = urllib.request.Request(f"{endpoint}/{key}", data=body, method="PUT")
        urllib.request.urlopen(req, timeout=10).read()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    p.add_argument("--storage", choices=["files", "s3"], default="files")
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--data", required=True)
    p.add_argument("--db", default="toolreg_startup")
    p.add_argument("--reuse", action="store_true", help="skip seeding")
    p.add_argument("--restarts", type=int, default=5)
    p.add_argument("--bucket-objects", type=int, default=0)
    p.add_argument("--binary", default=os.path.join(bench.ROOT, "target", "release", "toolreg-server"))
    p.add_argument("args", nargs="*", help="extra server flags (after --)")
    args = p.parse_args()

    os.makedirs(args.data, exist_ok=True)
    env, moto = {}, None
    if args.backend == "postgres":
        if not args.reuse:
            subprocess.run(["dropdb", *bench.PG_ADMIN, "--if-exists", "--force", args.db], check=False)
            subprocess.run(["createdb", *bench.PG_ADMIN, args.db], check=True)
        env["TOOLREG_DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{args.db}"
    if args.storage == "s3":
        moto = bench.Moto(args, args.data, "toolreg-startup")
        if args.bucket_objects:
            bench.log(f"putting {args.bucket_objects} objects in the bucket")
            fill_bucket(moto.endpoint, "toolreg-startup", args.bucket_objects)
        env.update({"TOOLREG_STORAGE": "s3://toolreg-startup/registry", "AWS_ENDPOINT_URL": moto.endpoint,
                    "AWS_ALLOW_HTTP": "true", "AWS_ACCESS_KEY_ID": "bench",
                    "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1"})
    log_path = os.path.join(args.data, "server.log")
    server = bench.Server(args.binary, args.data, env, log_path, extra_args=args.args)
    try:
        if not args.reuse:
            token = server.admin("admin", "create-user", "bench", "--tier", "verified")
            server.start()
            bench.log(f"seeding {args.n} tools")
            pub = bench.publish(server.url, token, 0, args.n)
            bench.log(f"seeded: {json.dumps(pub)}")
            bench.wait_for_search(server.url, args.n, timeout=max(120, args.n / 50))
            server.stop()
        times, phases = [], []
        for _ in range(args.restarts):
            offset = os.path.getsize(log_path) if os.path.exists(log_path) else 0
            times.append(server.start())
            time.sleep(0.3)
            server.stop()
            phases.append(restart.start_phases(log_path, offset))
        for t, ph in zip(times, phases):
            fields = " ".join(f"{k}_ms={v}" for k, v in ph.items())
            print(f"start {t:.3f} s   {fields}")
        print(json.dumps({"backend": args.backend, "storage": args.storage, "n": args.n,
                          "start_s": times, "median_s": statistics.median(times), "phases_ms": phases}))
    finally:
        server.stop()
        if moto:
            moto.stop()


if __name__ == "__main__":
    main()
