"""The dataset read by a real engine: runs every query of docs/dataset.md with DuckDB on the datasets of
corpora/ledger and corpora/sample-16, and checks daily costs and tokens, row counts and tool counts against
the commands' own reports. Usage: python3 xtask/duckdb_check.py PATH_TO_SESSION_SCAN"""

import json
import pathlib
import re
import subprocess
import sys
import tempfile

import duckdb

ROOT = pathlib.Path(__file__).resolve().parent.parent
BINARY = sys.argv[1]


def scan(*args):
    out = subprocess.run([BINARY, "-q", "--utc", *args], check=True, capture_output=True)
    return out.stdout


def check(corpus, out):
    sessions = str(ROOT / "corpora" / corpus / "sessions")
    scan("dataset", str(out), sessions)
    db = duckdb.connect()
    db.execute(f"SET file_search_path = '{out}'")
    queries = re.findall(r"```sql\n(.*?)```", (ROOT / "docs/dataset.md").read_text(), re.S)
    assert len(queries) == 10, len(queries)
    for q in queries:
        db.execute(q).fetchall()
    # Daily spend, copies left out: usage daily to the micro-dollar.
    daily = json.loads(scan("usage", "daily", "--json", sessions))
    ours = {
        day: (events, tokens, cost)
        for day, events, tokens, cost in db.execute(
            "SELECT strftime(timestamp AT TIME ZONE 'UTC', '%Y-%m-%d'), count(*), sum(total_tokens), sum(cost) "
            "FROM 'usage/**/*.parquet' WHERE NOT is_copy GROUP BY 1"
        ).fetchall()
    }
    assert len(ours) == len(daily["rows"]), (len(ours), len(daily["rows"]))
    for row in daily["rows"]:
        events, tokens, cost = ours[row["period"]]
        assert events == row["events"], row
        assert tokens == row["totalTokens"], row
        # To the micro-dollar: the same amounts summed in another order differ in the last bits.
        assert abs(cost - row["cost"]) < 5e-7, (cost, row)
    # Row counts: list's sessions, tree's nodes.
    listed = json.loads(scan("list", "--json", sessions))
    assert db.execute("SELECT count(*) FROM 'sessions/**/*.parquet'").fetchone()[0] == len(listed)
    nodes = sum(len(json.loads(l)["nodes"]) for l in scan("tree", "--json", sessions).splitlines())
    assert db.execute("SELECT count(*) FROM 'entries/**/*.parquet'").fetchone()[0] == nodes
    # Tool calls per tool: tools's counts.
    tools = json.loads(scan("tools", "--json", sessions))
    calls = dict(db.execute("SELECT tool, count(*) FROM 'tool_calls/**/*.parquet' WHERE NOT is_copy GROUP BY tool").fetchall())
    assert calls == {t["tool"]: t["calls"] for t in tools["tools"]}, (calls, tools["tools"])
    print(f"duckdb {duckdb.__version__}: {corpus}: 10 queries ran; {len(ours)} days, {len(listed)} sessions, "
          f"{nodes} entries and {len(calls)} tools agree with usage, list, tree and tools")


with tempfile.TemporaryDirectory() as tmp:
    for corpus in ["ledger", "sample-16"]:
        check(corpus, pathlib.Path(tmp) / corpus)
