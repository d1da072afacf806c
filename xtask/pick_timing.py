"""Times `session-scan pick` on a store in a real terminal (tmux): when its first row is on the screen, and
when every session is read, with the listing cache cold and then warm. Usage: python3 xtask/pick_timing.py HOME
where HOME/.pi/agent/sessions is the store, e.g. one made by
`cargo xtask corpus --size 150MB --seed 3 --median 3000 --out HOME/.pi/agent/sessions` (12,959 sessions)."""
import subprocess, time, os, shutil, sys
home = sys.argv[1]
cache = __import__("tempfile").mkdtemp()
shutil.rmtree(cache, ignore_errors=True)
bin = str(__import__("pathlib").Path(__file__).resolve().parent.parent / "target/release/session-scan")
total = sum(1 for _ in __import__("pathlib").Path(home, ".pi/agent/sessions").rglob("*.jsonl"))
def run(label):
    subprocess.run(["tmux", "-L", "pb", "kill-server"], capture_output=True)
    t0 = time.perf_counter()
    subprocess.run(["tmux", "-L", "pb", "new-session", "-d", "-s", "t", "-x", "120", "-y", "40",
        f"HOME={home} XDG_CACHE_HOME={cache} {bin} pick --all > /dev/null; sleep 60"], check=True)
    first = done = None
    while time.perf_counter() - t0 < 60:
        s = subprocess.run(["tmux", "-L", "pb", "capture-pane", "-p", "-t", "t"], capture_output=True, text=True).stdout
        lines = s.splitlines()
        if first is None and len(lines) > 1 and lines[1].startswith("›"):
            first = time.perf_counter() - t0
        if first is not None and "reading sessions" not in s and f"{total} sessions" in (lines[0] if lines else ""):
            done = time.perf_counter() - t0
            top = lines[0]
            break
        time.sleep(0.005)
    subprocess.run(["tmux", "-L", "pb", "send-keys", "-t", "t", "Escape"])
    time.sleep(0.3)
    subprocess.run(["tmux", "-L", "pb", "kill-server"], capture_output=True)
    print(f"{label}: first row on screen {first*1000:.0f} ms, all read {done*1000:.0f} ms: {top.split('·')[-1].strip()}")
run("cold cache")
run("warm cache")
run("warm cache")
