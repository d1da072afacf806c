// What the corpora's recorders share: Pi 1.6's modules from the recorder's folder, a clock stopped
// at one instant (the time Pi gives new entries and files), and a folder's session files in order.
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** A module of Pi 1.6's `dist/`, e.g. `core/session-manager.js`. */
export function piModule(rel) {
	return import(pathToFileURL(join(here, "node_modules/pi16/dist", rel)).href);
}

/** From now on `new Date()` and `Date.now()` give `iso`; dates built from values are as before. */
export function stopClockAt(iso) {
	const fixed = Date.parse(iso);
	const RealDate = Date;
	globalThis.Date = class extends RealDate {
		constructor(...args) {
			if (args.length === 0) super(fixed);
			else super(...args);
		}
		static now() {
			return fixed;
		}
	};
}

/** The `*.jsonl` files under `dir`, recursively, in name order. */
export function sessionFiles(dir) {
	const out = [];
	for (const name of readdirSync(dir).sort()) {
		const path = join(dir, name);
		if (statSync(path).isDirectory()) out.push(...sessionFiles(path));
		else if (name.endsWith(".jsonl")) out.push(path);
	}
	return out;
}
