#!/usr/bin/env python3
"""The toolreg benchmark suite (run it through bench/run.sh).

For each backend (SQLite + local files; PostgreSQL + S3 on a Garage server,
or on moto with --s3 moto) and each size N, on loopback only:

  1. start a fresh `toolreg-server` (release build) and time the start-up;
  2. publish N synthetic ~4 KB tools over the HTTP API with 8 concurrent
     clients (bench/publish.py) -> publish/s;
  3. wait until search sees all N tools;
  4. read the server's data directory through once (page cache), then
     wrk: metadata GET and bundle download of random tools among the N
     (the working set cycles through all of them), search latency
     (1 connection: p50/p99) and search throughput (16 connections);
  5. RSS after the load, after the reads, peak RSS, and the start-up time
     of a restart with N tools in the database.

nginx serving the same bytes from disk, measured with the same wrk settings
in the same run, is the physical limit: the N tool summaries the server
sent and the N bundles that were published, one file each at the server's
paths, asked for at random like the server's (its files read through
once before its run too). Prints a Markdown table and
writes it to --out.
"""

import argparse
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import toolgen  # noqa: E402
import goals  # noqa: E402
import restart  # noqa: E402

LUA = os.path.join(HERE, "wrk", "scenario.lua")
PG_ADMIN = ["-h", "127.0.0.1", "-p", "5432", "-U", "postgres"]


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as res:
        return res.status, res.read()


def rss_kib(pid, field="VmRSS"):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Server:
    """One `toolreg-server serve` process."""

    def __init__(self, binary, data, env, log_path, extra_args=(), wrapper=()):
        self.binary, self.data, self.env, self.log_path = binary, data, env, log_path
        self.extra_args = list(extra_args)
        # A command the server runs under (valgrind, for scripts/symbol-order).
        self.wrapper = list(wrapper)
        self.proc = None
        self.url = None

    def command_env(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLREG_", "AWS_"))}
        env.update(self.env)
        env["TOOLREG_DATA_DIR"] = self.data
        return env

    def admin(self, *args):
        out = subprocess.run([self.binary, *args], env=self.command_env(), capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise RuntimeError(f"toolreg-server {' '.join(args)} failed: {out.stderr}")
        return out.stdout.strip()

    def start(self):
        """Start and return the seconds until /healthz answered 200."""
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        logf = open(self.log_path, "a")
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [*self.wrapper, self.binary, "serve", "--listen", f"127.0.0.1:{port}", "--rate-limit-publish", "0",
             "--rate-limit-tokens", "0", *self.extra_args],
            env=self.command_env(), stdout=subprocess.DEVNULL, stderr=logf)
        while True:
            try:
                status, _ = http_get(self.url + "/healthz", timeout=1)
                if status == 200:
                    return time.monotonic() - t0
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"toolreg-server exited at start-up; see {self.log_path}")
            if time.monotonic() - t0 > 60:
                raise RuntimeError("toolreg-server did not start within 60 s")
            time.sleep(0.002)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def rss_mib(self):
        return rss_kib(self.proc.pid) / 1024

    def peak_rss_mib(self):
        return rss_kib(self.proc.pid, "VmHWM") / 1024


def wrk(url, scenario, seconds, connections, threads=2, n=1, words=None):
    env = dict(os.environ, BENCH_SCENARIO=scenario, BENCH_N=str(n))
    if words:
        env["BENCH_WORDS"] = words
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", LUA, url]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    for line in out.stdout.splitlines():
        if line.startswith("BENCH_JSON "):
            r = json.loads(line[len("BENCH_JSON "):])
            r["rps"] = r["requests"] / (r["duration_us"] / 1e6)
            r["errors"] = r["connect"] + r["read"] + r["write"] + r["status"] + r["timeout"]
            return r
    raise RuntimeError(f"wrk gave no result: {out.stdout}\n{out.stderr}")


def publish(url, token, start, count, clients=8, client="rust"):
    cmd = [sys.executable, os.path.join(HERE, "publish.py"), "--url", url, "--token", token,
           "--start", str(start), "--count", str(count), "--clients", str(clients), "--client", client]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise RuntimeError(f"publish.py failed: {out.stdout}\n{out.stderr}")


def wait_for_search(url, n, timeout):
    """Seconds until search for `bench` (in every description) reports n tools."""
    t0 = time.monotonic()
    total = -1
    while time.monotonic() - t0 < timeout:
        try:
            _, body = http_get(url + "/api/v1/search?q=bench&per_page=1")
            total = json.loads(body)["total"]
            if total >= n:
                return time.monotonic() - t0
        except (urllib.error.URLError, OSError, KeyError, ValueError):
            pass
        time.sleep(0.1)
    raise RuntimeError(f"search reports {total} of {n} tools after {timeout} s")


class Moto:
    """moto's S3 server (a Python emulator): what the test suite uses."""

    access_key = secret_key = "bench"

    def __init__(self, args, workdir, bucket):
        port = free_port()
        self.proc = subprocess.Popen(["moto_server", "-H", "127.0.0.1", "-p", str(port)],
                                     stdout=open(os.path.join(workdir, "moto.log"), "a"), stderr=subprocess.STDOUT)
        self.endpoint = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                http_get(self.endpoint + "/")
                break
            except (urllib.error.URLError, OSError):
                time.sleep(0.05)
        else:
            raise RuntimeError("moto_server did not start")
        req = urllib.request.Request(f"{self.endpoint}/{bucket}", method="PUT")
        urllib.request.urlopen(req, timeout=10).read()

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


class Garage:
    """Garage (a Rust S3 server built for production), one node, its
    metadata in SQLite and its data in a fresh directory, with one key and
    one bucket. Its defaults are kept: like moto and like toolreg's local
    files, it does not fsync each object."""

    # Garage's key format: "GK" and 24 hex digits; the secret 64 hex digits.
    access_key = "GK" + "b3" * 12
    secret_key = "5e" * 32

    def __init__(self, args, workdir, bucket):
        self.binary = args.garage
        root = tempfile.mkdtemp(prefix="garage-", dir=workdir)
        s3_port, rpc_port, admin_port = free_port(), free_port(), free_port()
        self.conf = os.path.join(root, "garage.toml")
        with open(self.conf, "w") as f:
            f.write(f"""metadata_dir = "{root}/meta"
data_dir = "{root}/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:{rpc_port}"
rpc_public_addr = "127.0.0.1:{rpc_port}"
rpc_secret = "{'7a' * 32}"

[s3_api]
s3_region = "us-east-1"
api_bind_addr = "127.0.0.1:{s3_port}"
root_domain = ".s3.garage.localhost"

[admin]
api_bind_addr = "127.0.0.1:{admin_port}"
""")
        self.endpoint = f"http://127.0.0.1:{s3_port}"
        self.proc = subprocess.Popen([self.binary, "-c", self.conf, "server"],
                                     stdout=open(os.path.join(workdir, "garage.log"), "a"),
                                     stderr=subprocess.STDOUT, env=dict(os.environ, RUST_LOG="warn"))
        node = self.wait_for("node", "id", "-q").split("@")[0]
        # `node id` reads the key from disk and can answer before the RPC
        # port listens; `status` goes through RPC.
        self.wait_for("status")
        self.cli("layout", "assign", "-z", "dc1", "-c", "10G", node)
        self.cli("layout", "apply", "--version", "1")
        self.cli("key", "import", "--yes", "-n", "bench", self.access_key, self.secret_key)
        self.cli("bucket", "create", bucket)
        self.cli("bucket", "allow", "--read", "--write", "--owner", bucket, "--key", "bench")

    def wait_for(self, *args):
        """Run `garage ARGS` every 50 ms until it succeeds (200 tries);
        return its output."""
        out = None
        for _ in range(200):
            out = subprocess.run([self.binary, "-c", self.conf, *args], capture_output=True, text=True, check=False)
            if out.returncode == 0 and out.stdout.strip():
                return out.stdout.strip()
            if self.proc.poll() is not None:
                raise RuntimeError("garage exited at start-up; see garage.log")
            time.sleep(0.05)
        raise RuntimeError(f"garage {' '.join(args)} did not answer: {out.stdout}{out.stderr}")

    def cli(self, *args):
        out = subprocess.run([self.binary, "-c", self.conf, *args], capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise RuntimeError(f"garage {' '.join(args)} failed: {out.stdout}{out.stderr}")
        return out.stdout

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


S3_SERVERS = {"moto": Moto, "garage": Garage}


def run_config(args, backend, n, workdir, words):
    """One backend at one size; returns a result row."""
    data = os.path.join(workdir, f"{backend}-{n}")
    os.makedirs(data, exist_ok=True)
    env, cleanup = {}, []
    if backend == "postgres+s3":
        db = f"toolreg_bench_{os.getpid()}_{n}"
        subprocess.run(["dropdb", *PG_ADMIN, "--if-exists", "--force", db], check=False, capture_output=True)
        subprocess.run(["createdb", *PG_ADMIN, db], check=True)
        cleanup.append(lambda: subprocess.run(["dropdb", *PG_ADMIN, "--if-exists", "--force", db],
                                              check=False, capture_output=True))
        s3 = S3_SERVERS[args.s3](args, workdir, "toolreg-bench")
        cleanup.append(s3.stop)
        env = {"TOOLREG_DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{db}",
               "TOOLREG_STORAGE": "s3://toolreg-bench", "AWS_ENDPOINT_URL": s3.endpoint,
               "AWS_ALLOW_HTTP": "true", "AWS_ACCESS_KEY_ID": s3.access_key,
               "AWS_SECRET_ACCESS_KEY": s3.secret_key, "AWS_REGION": "us-east-1"}
    server = Server(args.binary, data, env, os.path.join(workdir, f"server-{backend}-{n}.log"),
                    extra_args=args.server_arg)
    row = {"backend": backend, "n": n}
    try:
        token = server.admin("admin", "create-user", "bench", "--tier", "verified")
        row["start_empty_s"] = server.start()
        log(f"{backend} N={n}: started in {row['start_empty_s']:.3f} s; publishing {n} tools with 8 clients")
        pub = publish(server.url, token, 0, n, client=args.publish_client)
        if pub["errors"]:
            raise RuntimeError(f"publish errors: {pub}")
        row["publish_per_s"] = pub["per_second"]
        row["publish_s"] = pub["seconds"]
        log(f"{backend} N={n}: {pub['ok']} publishes in {pub['seconds']} s = {pub['per_second']}/s")
        row["index_catch_up_s"] = wait_for_search(server.url, n, timeout=max(120, n / 50))
        row["rss_loaded_mib"] = server.rss_mib()
        d = args.duration
        read_through(data)
        meta = wrk(server.url, "metadata", d, args.connections, n=n)
        dl = wrk(server.url, "download", d, args.connections, n=n)
        search_lat = wrk(server.url, "search", d, 1, threads=1, words=words)
        search_qps = wrk(server.url, "search", d, args.connections, words=words)
        row.update(metadata_rps=meta["rps"], download_rps=dl["rps"], search_p50_ms=search_lat["p50_us"] / 1000,
                   search_p99_ms=search_lat["p99_us"] / 1000, search_qps=search_qps["rps"],
                   metadata_p99_ms=meta["p99_us"] / 1000, download_p99_ms=dl["p99_us"] / 1000)
        row["errors"] = meta["errors"] + dl["errors"] + search_lat["errors"] + search_qps["errors"]
        row["rss_after_mib"] = server.rss_mib()
        row["rss_peak_mib"] = server.peak_rss_mib()
        ng = nginx_metadata(args, workdir, server.url, n)
        row["nginx_metadata_rps"] = ng["metadata_rps"]
        row["errors"] += ng["errors"]
        log(f"{backend} N={n}: metadata {meta['rps']:.0f} req/s; nginx serving the same {n} summaries "
            f"from files: {ng['metadata_rps']:.0f} req/s")
        ngd = nginx_downloads(args, workdir, n)
        row["nginx_download_rps"] = ngd["download_rps"]
        row["errors"] += ngd["errors"]
        log(f"{backend} N={n}: download {dl['rps']:.0f} req/s; nginx serving the same {n} bundles "
            f"from files: {ngd['download_rps']:.0f} req/s")
        server.stop()
        offset = os.path.getsize(server.log_path)
        # The restart measures toolreg, not the disk's or the other
        # servers' background work after the reads.
        synced, settled = restart.settle()
        row["sync_before_start_s"] = round(synced, 1)
        row["settle_before_start_s"] = round(settled, 1)
        row["start_loaded_s"] = server.start()
        time.sleep(0.5)
        row["rss_restart_mib"] = server.rss_mib()
        # The server writes its log from a background thread: read the
        # start-up line once it has stopped.
        server.stop()
        row["start_loaded_phases_ms"] = restart.start_phases(server.log_path, offset)
        log(f"{backend} N={n}: {json.dumps(row)}")
    finally:
        server.stop()
        for c in reversed(cleanup):
            c()
        # The data directory stays until the whole run ends (with the work
        # directory): removing 100,000 files here would slow the next
        # configuration's publishes (see nginx_metadata).
    return row


class Nginx:
    """nginx (2 workers, sendfile, no access log) serving files from `root`/html."""

    def __init__(self, root):
        self.root = root
        html = os.path.join(root, "html")
        os.makedirs(html, exist_ok=True)
        os.makedirs(os.path.join(root, "logs"), exist_ok=True)
        os.makedirs(os.path.join(root, "tmp"), exist_ok=True)
        # nginx workers may run as an unprivileged user: let them read the files.
        d = html
        while True:
            os.chmod(d, 0o755)
            if d == os.path.dirname(root):
                break
            d = os.path.dirname(d)
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        conf = os.path.join(root, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""worker_processes 2;
pid {root}/nginx.pid;
error_log {root}/logs/error.log warn;
daemon off;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    types {{ application/gzip gz; }}
    default_type application/json;
    client_body_temp_path {root}/tmp;
    proxy_temp_path {root}/tmp;
    fastcgi_temp_path {root}/tmp;
    uwsgi_temp_path {root}/tmp;
    scgi_temp_path {root}/tmp;
    server {{
        listen 127.0.0.1:{port};
        root {html};
        etag on;
    }}
}}
""")
        self.proc = subprocess.Popen(["nginx", "-c", conf, "-p", root],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait_serving(self, path, body):
        for _ in range(200):
            try:
                status, got = http_get(self.url + path)
                if status == 200 and got == body:
                    return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.02)
        raise RuntimeError(f"nginx did not serve {path}")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def read_through(root):
    """Read every file under `root` once, so that the page cache holds what
    the next wrk runs read. A machine may page out file pages nobody used
    for a while (one bench machine runs a DAMON reclaim scheme that pages
    out what went unused for a minute): then the bundles published early in
    a 100,000-tool load come from the disk during the server's reads, while
    nginx's copies were just written. Reading both through first compares
    the servers, not the disk."""
    for dirpath, _, files in os.walk(root):
        for name in files:
            try:
                with open(os.path.join(dirpath, name), "rb") as f:
                    while f.read(1 << 20):
                        pass
            except OSError:
                pass


def nginx_limit(args, root, first_path, first_body, scenario, n):
    """nginx serving the files under `root`/html, asked for at random among
    the N tools by the same wrk script and settings as the server: the rate
    of the same bytes from disk. Waits until `first_path` answers
    `first_body`. The files stay until the whole run ends: on ext4,
    creating files within a few minutes of deleting many (here 100,000)
    makes every inode allocation scan past the recently freed ones
    (`recently_deleted` in the kernel's profile), which more than halved
    the next configuration's publishes/s."""
    nginx = Nginx(root)
    try:
        nginx.wait_serving(first_path, first_body)
        read_through(root)
        return wrk(nginx.url, scenario, args.duration, args.connections, n=n)
    finally:
        nginx.stop()


def nginx_downloads(args, workdir, n):
    """The download figure's limit: nginx serving the N bundles, each from
    its own file at the server's download path. The files are the bytes
    that were published (`toolgen` builds them deterministically), made
    once per N."""
    root = os.path.join(workdir, f"nginx-downloads-{n}")
    tools_dir = os.path.join(root, "html", "api", "v1", "tools")
    if not os.path.exists(os.path.join(tools_dir, toolgen.tool_name(n - 1), "1.0.0", "download")):
        for i in range(n):
            version_dir = os.path.join(tools_dir, toolgen.tool_name(i), "1.0.0")
            os.makedirs(version_dir, exist_ok=True)
            with open(os.path.join(version_dir, "download"), "wb") as f:
                f.write(toolgen.bundle(i))
    r = nginx_limit(args, root, f"/api/v1/tools/{toolgen.tool_name(0)}/1.0.0/download", toolgen.bundle(0),
                    "download", n)
    return {"download_rps": r["rps"], "p99_ms": r["p99_us"] / 1000, "errors": r["errors"]}


def nginx_metadata(args, workdir, server_url, n):
    """The metadata figure's limit: nginx serving the N tool summaries the
    server just sent, each from its own file at the same path
    (/api/v1/tools/NAME)."""
    root = os.path.join(workdir, f"nginx-metadata-{n}")
    tools_dir = os.path.join(root, "html", "api", "v1", "tools")
    os.makedirs(tools_dir, exist_ok=True)
    host = server_url.split("//", 1)[1]
    conn = http.client.HTTPConnection(host, timeout=30)
    first = None
    for i in range(n):
        name = toolgen.tool_name(i)
        conn.request("GET", f"/api/v1/tools/{name}")
        res = conn.getresponse()
        body = res.read()
        if res.status != 200:
            raise RuntimeError(f"GET /api/v1/tools/{name}: {res.status}")
        with open(os.path.join(tools_dir, name), "wb") as f:
            f.write(body)
        first = first or body
    conn.close()
    r = nginx_limit(args, root, f"/api/v1/tools/{toolgen.tool_name(0)}", first, "metadata", n)
    return {"metadata_rps": r["rps"], "p99_ms": r["p99_us"] / 1000, "errors": r["errors"]}


def fmt(v, digits=0):
    if v is None:
        return "–"
    return f"{v:,.{digits}f}"


def table(rows, meta):
    lines = [
        f"toolreg benchmark — {meta['date']}, {meta['mode']} mode, {meta['cpus']} CPUs, {meta['duration']} s per wrk run, "
        f"{meta['connections']} connections, `toolreg-server` release build, 2 HTTP workers, S3 server: {meta['s3']}, "
        f"publish clients: {meta.get('publish_client', 'python')}. "
        f"{meta['note']}",
        "",
        "| backend | tools | publish/s (8 clients) | metadata GET req/s | nginx, same summaries | download req/s | "
        "nginx, same bundles | search p50 / p99 (1 conn) | search QPS | RSS after load | RSS after reads | peak RSS | "
        "start (empty) | start (N tools) | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['backend']} | {r['n']:,} | {fmt(r.get('publish_per_s'))} | {fmt(r.get('metadata_rps'))} | "
            f"{fmt(r.get('nginx_metadata_rps'))} | {fmt(r.get('download_rps'))} | {fmt(r.get('nginx_download_rps'))} | "
            f"{fmt(r.get('search_p50_ms'), 2)} / {fmt(r.get('search_p99_ms'), 2)} ms | "
            f"{fmt(r.get('search_qps'))} | {fmt(r.get('rss_loaded_mib'), 1)} MiB | {fmt(r.get('rss_after_mib'), 1)} MiB | "
            f"{fmt(r.get('rss_peak_mib'), 1)} MiB | "
            f"{fmt(r.get('start_empty_s'), 3)} s | {fmt(r.get('start_loaded_s'), 3)} s | {r.get('errors', '–')} |")
    lines.append("")
    for r in rows:
        lines.append(
            f"- {r['backend']}, {r['n']:,} tools: metadata = {r['metadata_rps'] / r['nginx_metadata_rps']:.3f}× "
            f"nginx serving the same {r['n']:,} summaries from files, download = "
            f"{r['download_rps'] / r['nginx_download_rps']:.3f}× nginx serving the same {r['n']:,} bundles; "
            f"search index caught up {r['index_catch_up_s']:.1f} s after the last publish; RSS right after a "
            f"restart {r['rss_restart_mib']:.1f} MiB.")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=["quick", "full"], default="quick")
    p.add_argument("--sizes", help="comma-separated tool counts (default: 1000 quick, 1000,100000 full)")
    p.add_argument("--backends", default="sqlite,postgres+s3")
    p.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    p.add_argument("--connections", type=int, default=16)
    p.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "toolreg-server"))
    p.add_argument("--s3", choices=sorted(S3_SERVERS), default="garage",
                   help="the S3 server of the PostgreSQL + S3 rows (default: garage; moto is what the tests use)")
    p.add_argument("--garage", default=os.environ.get("GARAGE_BIN", shutil.which("garage") or "garage"),
                   help="the garage binary (default: $GARAGE_BIN, else garage on PATH)")
    p.add_argument("--publish-client", choices=["rust", "python"], default="rust",
                   help="the publish clients: publisher.rs threads or Python processes (publish.py)")
    p.add_argument("--out", default=os.path.join(HERE, "results", "latest.md"))
    p.add_argument("--note", default="")
    p.add_argument("--keep", action="store_true", help="keep the data directories")
    p.add_argument("--server-arg", action="append", default=[],
                   help="a flag for every server, e.g. --server-arg=--search-cache-mib=2 (repeatable)")
    p.add_argument("--check", action="store_true",
                   help="print every goal that applies to this run as met or MISSED; exit 1 if one is missed")
    args = p.parse_args()
    sizes = [int(s) for s in (args.sizes or ("1000" if args.mode == "quick" else "1000,100000")).split(",")]
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    for b in backends:
        if b not in ("sqlite", "postgres+s3"):
            p.error(f"--backends: unknown backend `{b}` (sqlite, postgres+s3)")

    workdir = tempfile.mkdtemp(prefix="toolreg-bench-")
    words = os.path.join(workdir, "words.txt")
    with open(words, "w") as f:
        f.write("\n".join(toolgen.VOCABULARY[::7]) + "\n")
    log(f"work directory {workdir}")
    rows = []
    for backend in backends:
        for n in sizes:
            rows.append(run_config(args, backend, n, workdir, words))
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "mode": args.mode, "cpus": os.cpu_count(),
            "duration": args.duration, "connections": args.connections, "note": args.note,
            "publish_client": args.publish_client,
            "s3": args.s3 if "postgres+s3" in backends else "–"}
    out = table(rows, meta)
    print(out)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(out)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    if args.check:
        lines, all_met = goals.check(rows)
        print("\n".join(lines) if lines else "no goal applies to the configurations in this run")
        return 0 if all_met else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
