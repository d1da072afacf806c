#!/usr/bin/env node
// Records expected.jsonl from Pi 1.6: node record.mjs RECORDER_DIR (the folder `cargo xtask
// recorder` prints), from this folder. Each session file of sample-16, edge and hostile is copied,
// opened with Pi's own `SessionManager.open`, and given a name (`appendSessionInfo`) then a label
// on its first entry (`appendLabelChange`), with the clock stopped; the bytes Pi added to
// the file are recorded, or why it refused. Files Pi rewrites when it opens them (versions 1 and
// 2) are recorded as such: our writer does not write to them.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const { piModule, sessionFiles, stopClockAt } = await import(pathToFileURL(join(resolve(process.argv[2] ?? ""), "recording.mjs")).href);
stopClockAt("2026-02-03T04:05:06.789Z");
const { SessionManager } = await piModule("core/session-manager.js");

const NAMES = ["Renamed", "  spaced out  ", "line\r\nbreaks\n\n\rhere", "ünïcødé 名前 😀", "", "\t tab \t", 'quote " and \\ backslash'];
const LABELS = ["bookmark", "", undefined, "✓ done"];

const corpora = resolve("..");
const lines = [];
let k = 0;
for (const corpus of ["sample-16/sessions", "edge/sessions", "hostile/sessions"]) {
	for (const file of sessionFiles(join(corpora, corpus))) {
		const name = NAMES[k % NAMES.length];
		const label = LABELS[k % LABELS.length];
		k++;
		const tmp = mkdtempSync(join(tmpdir(), "pi-append-"));
		const copy = join(tmp, "s.jsonl");
		copyFileSync(file, copy);
		const before = readFileSync(copy);
		const rec = { file: relative(corpora, file), name, label: label ?? null };
		try {
			const sm = SessionManager.open(copy);
			const opened = readFileSync(copy);
			if (!opened.equals(before) && !(opened.length === before.length + 1 && opened.subarray(0, before.length).equals(before))) {
				rec.rewritten = true;
			} else {
				const target = sm.getEntries().find((e) => typeof e.id === "string")?.id ?? null;
				rec.target = target;
				sm.appendSessionInfo(name);
				if (target !== null) sm.appendLabelChange(target, label);
				const after = readFileSync(copy);
				rec.appended = after.subarray(before.length).toString("utf8");
			}
		} catch (err) {
			rec.error = String(err?.message ?? err).split(copy).join("<file>");
		}
		rmSync(tmp, { recursive: true, force: true });
		lines.push(JSON.stringify(rec));
	}
}
writeFileSync("expected.jsonl", `${lines.join("\n")}\n`);
