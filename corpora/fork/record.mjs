#!/usr/bin/env node
// Records expected.jsonl from Pi 1.6: node record.mjs RECORDER_DIR (the folder `cargo xtask
// recorder` prints), from this folder. Each session file of sample-16, edge and hostile is copied
// into a folder of its own and opened with Pi's own `SessionManager.open`; `createBranchedSession`
// (Pi's /fork) is asked for its leaf and, on a fresh copy, for the entry halfway along its branch;
// and `forkFrom` (pi --fork) copies it whole for another cwd; the clock stopped.
// Recorded: the new file's name, whether Pi wrote it (a branch without a conversation is written
// only later), its new ids, its header's cwd and parent path, its length and SHA-256; or why Pi
// refused or failed. Files Pi rewrites when it opens them are marked.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { basename, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const { piModule, sessionFiles, stopClockAt } = await import(pathToFileURL(join(resolve(process.argv[2] ?? ""), "recording.mjs")).href);
stopClockAt("2026-02-03T04:05:06.789Z");
const { SessionManager } = await piModule("core/session-manager.js");

/** `forkFrom(copy, "/home/u/elsewhere", DIR)`: the whole session copied under a new header. */
function forkFrom(file) {
	const dir = mkdtempSync(join(tmpdir(), "pi-fork-"));
	const copy = join(dir, "s.jsonl");
	copyFileSync(file, copy);
	const rec = {};
	try {
		const sm = SessionManager.forkFrom(copy, "/home/u/elsewhere", join(dir, "target"));
		const made = sm.getSessionFile();
		rec.name = basename(made);
		rec.written = existsSync(made);
		rec.sessionId = sm.getSessionId();
		rec.parentSession = sm.getHeader()?.parentSession ?? null;
		rec.cwd = sm.getHeader()?.cwd ?? null;
		rec.labelIds = [];
		const bytes = rec.written ? readFileSync(made) : null;
		rec.length = bytes?.length ?? null;
		rec.sha256 = bytes ? createHash("sha256").update(bytes).digest("hex") : null;
	} catch (err) {
		rec.error = String(err?.message ?? err).split(dir).join("<dir>");
	}
	rmSync(dir, { recursive: true, force: true });
	return rec;
}

function fork(file, pick) {
	if (pick === "copy") return forkFrom(file);
	const dir = mkdtempSync(join(tmpdir(), "pi-fork-"));
	const copy = join(dir, "s.jsonl");
	copyFileSync(file, copy);
	const before = readFileSync(copy);
	const rec = {};
	try {
		const sm = SessionManager.open(copy);
		const opened = readFileSync(copy);
		if (!opened.equals(before) && !(opened.length === before.length + 1 && opened.subarray(0, before.length).equals(before))) {
			rec.rewritten = true;
		} else {
			const branch = sm.getBranch();
			const leaf = pick === "leaf" ? sm.getLeafId() : branch[Math.floor(branch.length / 2)]?.id;
			rec.leaf = leaf === undefined ? "(undefined)" : leaf;
			const made = sm.createBranchedSession(leaf);
			rec.name = basename(made);
			rec.written = existsSync(made);
			// What the test needs to build the same bytes (the new ids, the source's path as Pi
			// wrote it) and to compare them.
			const entries = sm.getEntries();
			rec.sessionId = sm.getSessionId();
			rec.parentSession = sm.getHeader()?.parentSession ?? null;
			rec.cwd = sm.getHeader()?.cwd ?? null;
			rec.labelIds = entries.filter((e) => e.type === "label").map((e) => e.id);
			const bytes = rec.written ? readFileSync(made) : null;
			rec.length = bytes?.length ?? null;
			rec.sha256 = bytes ? createHash("sha256").update(bytes).digest("hex") : null;
		}
	} catch (err) {
		rec.error = String(err?.message ?? err);
	}
	rmSync(dir, { recursive: true, force: true });
	return rec;
}

// A child per file: on some hostile files Pi's getBranch() never ends (parent loops), and the
// child is stopped after 10 s.
if (process.argv[3] === "--child") {
	process.stdout.write(JSON.stringify(fork(process.argv[4], process.argv[5])));
} else {
	const corpora = resolve("..");
	const lines = [];
	for (const corpus of ["sample-16/sessions", "edge/sessions", "hostile/sessions"]) {
		for (const file of sessionFiles(join(corpora, corpus))) {
			for (const pick of ["leaf", "middle", "copy"]) {
				const child = spawnSync(process.execPath, [process.argv[1], process.argv[2], "--child", file, pick], {
					encoding: "utf8",
					timeout: 10000,
					maxBuffer: 1 << 30,
				});
				const rec = child.status === 0 ? JSON.parse(child.stdout) : { error: "Pi did not finish (a parent loop)" };
				lines.push(JSON.stringify({ file: relative(corpora, file), pick, ...rec }));
			}
		}
	}
	writeFileSync("expected.jsonl", `${lines.join("\n")}\n`);
}
