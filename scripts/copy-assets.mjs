// Copies the Python and JavaScript files kept under src/ (src/sandbox/verdicts/python, .../js,
// src/sandbox/runners/js) into dist/ at the same relative paths, beside the compiled modules that
// read them: tsc copies nothing but what it compiles.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');
const ASSET = /\.(py|cjs)$/;

let copied = 0;
for (const relative of fs.readdirSync(src, { recursive: true })) {
  if (!ASSET.test(relative)) continue;
  const from = path.join(src, relative);
  if (!fs.statSync(from).isFile()) continue;
  const to = path.join(dist, relative);
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(from, to);
  copied++;
}
if (copied === 0) {
  console.error(`copy-assets: no .py or .cjs files under ${src}`);
  process.exit(1);
}
