"""Where `usage` and ccusage differ on one store, part by part: ccusage counts assistant messages only, in every
file (a fork's copies of its parent's messages again); `usage` counts every source Pi counts and each spend once.
Reads ccusage's and our daily reports, writes the dataset and breaks the difference down with DuckDB; fails when
the parts do not add up to the difference within a cent.

Usage: python3 xtask/ccusage_reconcile.py CCUSAGE SESSION_SCAN STORE
(`cargo xtask bench-reference` installs ccusage under target/reference; `cargo xtask bench-dataset` makes the
bench store.)"""

import json
import subprocess
import sys
import tempfile

import duckdb

ccusage, binary, store = sys.argv[1:4]
cc = json.loads(subprocess.run([ccusage, "pi", "daily", "--json", "--offline", "--timezone", "UTC", "--pi-path", store],
                               check=True, capture_output=True).stdout)
ours = json.loads(subprocess.run([binary, "-q", "--utc", "usage", "daily", "--json", store], check=True,
                                 capture_output=True).stdout)
cc_total = cc["totals"]["totalCost"]
our_total = ours["totals"]["cost"]
with tempfile.TemporaryDirectory() as out:
    subprocess.run([binary, "-q", "dataset", out, store], check=True, capture_output=True)
    db = duckdb.connect()
    db.execute(f"SET file_search_path = '{out}'")
    rows = db.execute("SELECT source, is_copy, count(*), sum(cost) FROM 'usage/**/*.parquet' GROUP BY ALL").fetchall()
parts = []
assistant_all = sum(c for s, _, _, c in rows if s == "assistant")
copies = sum(c for s, k, _, c in rows if s == "assistant" and k)
parts.append(("assistant messages copied by forks and clones (ccusage counts them again)", -copies,
              sum(n for s, k, n, _ in rows if s == "assistant" and k)))
for source in sorted({s for s, _, _, _ in rows if s != "assistant"}):
    label = {"usage": "usage entries", "toolResult": "tool result usage", "compaction": "compaction usage",
             "branch_summary": "branch summary usage", "session_summary": "session summary usage"}.get(source, source)
    parts.append((f"{label} (ccusage does not read it)", sum(c for s, k, _, c in rows if s == source and not k),
                  sum(n for s, k, n, _ in rows if s == source and not k)))
residual = our_total - cc_total - sum(p[1] for p in parts)
print(f"| | events | dollars |\n|---|---:|---:|")
print(f"| ccusage pi daily | | {cc_total:,.2f} |")
for name, cost, n in parts:
    print(f"| {'+' if cost >= 0 else '-'} {name} | {n:,} | {abs(cost):,.2f} |")
print(f"| = session-scan usage daily | {ours['totals']['events']:,} | {our_total:,.2f} |")
print(f"(assistant usage in every file, by the dataset: {assistant_all:,.4f}; ccusage: {cc_total:,.4f}; "
      f"unexplained: {residual:+.6f})")
assert abs(assistant_all - cc_total) < 0.01, "ccusage's total is not the assistant usage of every file"
assert abs(residual) < 0.01, f"the parts leave {residual:+.4f} unexplained"
