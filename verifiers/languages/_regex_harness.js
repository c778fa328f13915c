// Regex harness for the JavaScript flavour: one test of a candidate pattern.
// Usage: node regex.js <program_dir> <index>. Writes one JSON record on fd 3.
'use strict';
const fs = require('fs');
const path = require('path');

const [programDir, indexText] = process.argv.slice(2);
const spec = JSON.parse(fs.readFileSync(path.join(programDir, 'spec.json'), 'utf8'));
const pattern = fs.readFileSync(path.join(programDir, 'pattern.txt'), 'utf8');
const index = Number(indexText);

function emit(record) {
  const buffer = Buffer.alloc(256);
  let size = 0;
  try { size = fs.readSync(4, buffer, 0, buffer.length, null); } catch (err) { size = 0; }
  record.nonce = buffer.toString('utf8', 0, size).trim();
  fs.writeSync(3, JSON.stringify(record) + '\n');
}

let compiled;
try {
  const source = spec.mode === 'fullmatch' ? `^(?:${pattern})$`
    : spec.mode === 'match' ? `^(?:${pattern})` : pattern;
  new RegExp(pattern);
  compiled = new RegExp(source);
} catch (err) {
  fs.writeSync(3, JSON.stringify({ event: 'syntax_error', message: String(err.message) }) + '\n');
  process.exit(1);
}
const item = spec.cases[index];
const found = compiled.exec(item.text);
const record = { event: 'case', matched: found !== null };
if (item.groups != null && found !== null) {
  record.groups = found.slice(1).map((g) => (g === undefined ? null : g));
}
if (item.replace != null) {
  record.replaced = item.text.replace(new RegExp(pattern, 'g'), item.replace);
}
emit(record);
