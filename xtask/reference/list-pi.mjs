// Prints what Pi 1.6's own SessionManager lists, as JSON (dates as toISOString(), an Invalid
// Date as null, as JSON.stringify writes them):
//   node list-pi.mjs PACKAGE_DIR all ROOT        listAll() over ROOT (ROOT/--<cwd>--/*.jsonl)
//   node list-pi.mjs PACKAGE_DIR cwd CWD DIR     list(CWD, DIR): DIR is a custom folder to Pi
//   node list-pi.mjs PACKAGE_DIR flat DIR        listAll(DIR): one flat folder
// listAll() reads the agent folder's sessions: a temporary agent folder is made whose
// `sessions` links to ROOT, and the paths it gives are written back under ROOT.
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkg, mode, a, b] = process.argv.slice(2);
const agent = mkdtempSync(join(tmpdir(), "pi-agent-"));
process.env.PI_CODING_AGENT_DIR = agent;
const { SessionManager } = await import(pathToFileURL(join(pkg, "dist/core/session-manager.js")).href);
let rows;
try {
	if (mode === "all") {
		const linked = join(agent, "sessions");
		symlinkSync(a, linked, "dir");
		rows = (await SessionManager.listAll()).map((r) => ({ ...r, path: a + r.path.slice(linked.length) }));
	} else if (mode === "cwd") {
		rows = await SessionManager.list(a, b);
	} else if (mode === "flat") {
		rows = await SessionManager.listAll(a);
	} else {
		throw new Error(`unknown mode ${mode}`);
	}
} finally {
	rmSync(agent, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(rows));
