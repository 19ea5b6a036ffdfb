"""The performance goals, checked against a benchmark run's rows.

`bench/run.sh --check` runs the benchmark and then prints every goal that
applies to the configurations it ran as `met` or `MISSED`, so a regression
shows in the next run; `python3 bench/goals.py RESULTS.json` checks a saved
run without running anything. The exit status is 1 when a goal is missed.

A goal names the backend and the tool count it applies to, the row field it
reads (or the ratio of two fields: toolreg's rate to nginx's serving the same bytes),
and the bound.
"""

import json
import sys

# (backend, tools, label, how to read the value, comparison, bound)
# `value` is a field name or ("ratio", a, b) for row[a] / row[b].
GOALS = [
    ("sqlite", 1000, "publish/s (8 clients)", "publish_per_s", ">=", 700),
    ("sqlite", 1000, "metadata GET vs nginx serving the same summaries", ("ratio", "metadata_rps", "nginx_metadata_rps"), ">=", 0.9),
    ("sqlite", 1000, "download vs nginx serving the same bundles", ("ratio", "download_rps", "nginx_download_rps"), ">=", 0.9),
    ("sqlite", 1000, "RSS after the load and the reads (MiB)", "rss_after_mib", "<=", 40),
    ("sqlite", 1000, "start with data (s)", "start_loaded_s", "<=", 0.1),
    ("sqlite", 100000, "publish/s (8 clients)", "publish_per_s", ">=", 2000),
    ("sqlite", 100000, "metadata GET vs nginx serving the same summaries", ("ratio", "metadata_rps", "nginx_metadata_rps"), ">=", 0.9),
    ("sqlite", 100000, "download vs nginx serving the same bundles", ("ratio", "download_rps", "nginx_download_rps"), ">=", 0.9),
    ("sqlite", 100000, "RSS after the load (MiB)", "rss_loaded_mib", "<=", 110),
    ("sqlite", 100000, "peak RSS (MiB)", "rss_peak_mib", "<=", 150),
    ("sqlite", 100000, "start with data (s)", "start_loaded_s", "<=", 0.1),
    ("postgres+s3", 100000, "publish/s (8 clients)", "publish_per_s", ">=", 1000),
    ("postgres+s3", 100000, "metadata GET vs nginx serving the same summaries", ("ratio", "metadata_rps", "nginx_metadata_rps"), ">=", 0.5),
    ("postgres+s3", 100000, "peak RSS (MiB)", "rss_peak_mib", "<=", 256),
    ("postgres+s3", 100000, "start with data (s)", "start_loaded_s", "<=", 0.1),
]


def value_of(how, row):
    if isinstance(how, str):
        return row.get(how)
    a, b = row.get(how[1]), row.get(how[2])
    return a / b if a is not None and b else None


def check(rows):
    """Lines saying each applicable goal's value and verdict, and whether all were met."""
    lines, all_met = [], True
    for backend, n, label, how, op, bound in GOALS:
        row = next((r for r in rows if r.get("backend") == backend and r.get("n") == n), None)
        if row is None:
            continue
        value = value_of(how, row)
        if value is None:
            verdict, all_met = "MISSED (not measured)", False
        else:
            met = value >= bound if op == ">=" else value <= bound
            all_met &= met
            verdict = "met" if met else "MISSED"
        shown = "–" if value is None else f"{value:,.3f}".rstrip("0").rstrip(".")
        lines.append(f"{verdict:>6}  {backend}, {n:,} tools: {label}: {shown} (goal {op} {bound:,})")
    return lines, all_met


def main(path):
    with open(path) as f:
        run = json.load(f)
    lines, all_met = check(run["rows"])
    print("\n".join(lines) if lines else "no goal applies to the configurations in this run")
    return 0 if all_met else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 bench/goals.py RESULTS.json")
    sys.exit(main(sys.argv[1]))
