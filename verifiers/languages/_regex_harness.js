// Regex harness for the JavaScript flavour.
// Usage: node regex.js <program_dir> <index>: one test of the candidate pattern, one JSON
// record on fd 3. node regex.js <program_dir> probe: a JSON request on stdin
// ({patterns, mode, texts}) and, on stdout, whether each pattern compiles and which texts
// it matches, so that the Python harness can check its automata against V8 itself.
'use strict';
const fs = require('fs');
const path = require('path');

const [programDir, indexText] = process.argv.slice(2);

function wrap(pattern, mode) {
  // The pattern alone must compile: a wrapper must not balance a stray parenthesis.
  new RegExp(pattern);
  const source = mode === 'fullmatch' ? `^(?:${pattern})$`
    : mode === 'match' ? `^(?:${pattern})` : pattern;
  return new RegExp(source);
}

if (indexText === 'probe') {
  const request = JSON.parse(fs.readFileSync(0, 'utf8'));
  const answer = request.patterns.map((pattern) => {
    let compiled;
    try {
      compiled = wrap(pattern, request.mode);
    } catch (err) {
      return { error: String(err.message) };
    }
    return { matched: request.texts.map((text) => compiled.test(text)) };
  });
  process.stdout.write(JSON.stringify(answer));
  process.exit(0);
}

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
  compiled = wrap(pattern, spec.mode);
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
