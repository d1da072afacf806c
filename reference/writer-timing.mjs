#!/usr/bin/env node
// Pi 1.6's writer costs on one session, in process: node writer-timing.mjs FILE APPENDS opens a
// copy of FILE with SessionManager.open (best of 3), then appends APPENDS user messages one by
// one with appendMessage, and prints JSON: openMs, appendUs (the median append), entries.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { piModule } from "./recording.mjs";

const [file, appendsArg] = process.argv.slice(2);
const appends = Number(appendsArg ?? 1000);
const { SessionManager } = await piModule("core/session-manager.js");
const dir = mkdtempSync(join(tmpdir(), "pi-writer-timing-"));
const copy = join(dir, "session.jsonl");
copyFileSync(file, copy);
let openMs = Infinity;
let sm;
for (let i = 0; i < 3; i++) {
	const t = performance.now();
	sm = SessionManager.open(copy);
	openMs = Math.min(openMs, performance.now() - t);
}
const entries = sm.getEntryCount();
const times = [];
for (let i = 0; i < appends; i++) {
	const t = performance.now();
	sm.appendMessage({ role: "user", content: "one more question about the code", timestamp: 1772400000000 });
	times.push((performance.now() - t) * 1000);
}
rmSync(dir, { recursive: true, force: true });
times.sort((a, b) => a - b);
process.stdout.write(`${JSON.stringify({ openMs: Number(openMs.toFixed(1)), appendUs: Number(times[Math.floor(times.length / 2)].toFixed(1)), entries })}\n`);
