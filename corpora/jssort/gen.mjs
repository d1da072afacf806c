// Writes cases.json: arrays of numbers (null stands for NaN) and the order in which Node's
// `Array.prototype.sort((a, b) => a - b)` leaves their indices. Run: node gen.mjs > cases.json
let seed = 12345;
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
const int = (n) => Math.floor(rand() * n);
const cases = [];
const sizes = [64, 65, 100, 127, 128, 129, 200, 255, 256, 500, 1000, 2000];
for (let c = 0; c < 160; c++) {
  // 120 arrays of 64 items or more (merged runs), then 40 shorter ones (one run and insertion).
  const n = c < sizes.length ? sizes[c] : c < 120 ? 64 + int(900) : 2 + int(62);
  const distinct = [2, 5, 20, 1000][int(4)];
  const nan = [0, 0.01, 0.05, 0.3][int(4)];
  const shape = int(4);
  const values = [];
  while (values.length < n) {
    // Long ascending or descending stretches make runs and gallops; random ones make merges.
    const len = shape === 0 ? 1 : 1 + int(shape === 1 ? 8 : 80);
    const start = int(distinct);
    const down = rand() < 0.5;
    for (let k = 0; k < len && values.length < n; k++) {
      values.push(rand() < nan ? null : shape === 3 ? int(distinct) : start + (down ? -k : k));
    }
  }
  const tagged = values.map((v, i) => ({ v: v === null ? NaN : v, i }));
  tagged.sort((a, b) => a.v - b.v);
  cases.push({ values, order: tagged.map((t) => t.i) });
}
process.stdout.write(JSON.stringify(cases) + "\n");
