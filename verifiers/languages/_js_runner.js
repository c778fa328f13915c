// A warm Node for stdin/stdout programs: one process serves every test of a program.
//
//   node runner.js <solution.js> <heap MB>
//
// Starting Node costs tens of milliseconds; a worker thread, a few. The supervisor sends
// one request per test on descriptor 5 (a 4-byte big-endian length, a JSON header, then
// the test's stdin) and reads the reply on descriptor 6 (the same framing: a header, then
// stdout and stderr). Each test runs the solution as the main module of a worker thread
// of its own (its own heap, globals and event loop; nothing of an earlier test is left in
// it), with its stdin on `process.stdin` and behind `fs.readFileSync(0)` and
// `'/dev/stdin'`, its output collected from the worker's streams.
//
// This process is the program's: the solution can reach it (same uid, same process), so
// nothing here is evidence. The supervisor enforces the time and output limits itself and
// the host judges the output; a program that breaks this runner only fails its own test
// (the runner's end is the test's crash), and the next test gets a new runner.
'use strict';

const fs = require('fs');
const { Worker } = require('worker_threads');

const REQUESTS = 5;
const REPLIES = 6;
const MAX_HEADER = 1 << 20;

const solution = process.argv[2];
const heapMb = Number(process.argv[3]) || 0;

function writeAll(buffer) {
  let offset = 0;
  while (offset < buffer.length) {
    try {
      offset += fs.writeSync(REPLIES, buffer, offset, buffer.length - offset);
    } catch (err) {
      if (err.code === 'EAGAIN') continue;
      throw err;
    }
  }
}

function frame(header, blobs) {
  const body = Buffer.from(JSON.stringify(header), 'utf8');
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body, ...blobs]);
}

// The worker's prelude: the test's stdin behind every way a program reads it, writes to
// descriptors 1 and 2 into the worker's streams (in order with console.log), then the
// solution as the main module (`require.main === module` holds, as under `node file`).
const PRELUDE = `
'use strict';
const fs = require('fs');
const Module = require('module');
const { workerData, parentPort } = require('worker_threads');
parentPort.once('message', (test) => run(Buffer.from(test.input), test.cap));
function run(input, cap) {
let position = 0;
const STDIN = new Set([0, '/dev/stdin', '/proc/self/fd/0', 'dev/stdin']);
const isStdin = (p) => STDIN.has(typeof p === 'object' && p !== null ? String(p) : p);
const readFileSync = fs.readFileSync;
fs.readFileSync = function (p, options) {
  if (!isStdin(p)) return readFileSync.apply(this, arguments);
  const encoding = typeof options === 'string' ? options : options && options.encoding;
  const rest = input.subarray(position);
  position = input.length;
  return encoding ? rest.toString(encoding) : Buffer.from(rest);
};
const readSync = fs.readSync;
fs.readSync = function (fd, buffer, offset, length, where) {
  if (fd !== 0) return readSync.apply(this, arguments);
  if (typeof offset === 'object' && offset !== null) {
    ({ offset = 0, length = buffer.byteLength - offset } = offset);
  }
  offset = offset || 0;
  if (length === undefined) length = buffer.byteLength - offset;
  const n = Math.max(0, Math.min(length, input.length - position));
  const target = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  input.copy(target, offset, position, position + n);
  position += n;
  return n;
};
const writeSync = fs.writeSync;
fs.writeSync = function (fd, data, offset, length) {
  if (fd !== 1 && fd !== 2) return writeSync.apply(this, arguments);
  const stream = fd === 1 ? process.stdout : process.stderr;
  let chunk;
  if (typeof data === 'string') {
    chunk = Buffer.from(data, typeof length === 'string' ? length : 'utf8');
  } else {
    const view = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const start = typeof offset === 'number' ? offset : 0;
    const end = typeof length === 'number' ? start + length : view.length;
    chunk = Buffer.from(view.subarray(start, end));
  }
  stream.write(chunk);
  return chunk.length;
};
// process.stdin: the test's input as a stream that ends (a worker's own stdin stream would
// keep its thread alive when the program never reads it).
const { Readable } = require('stream');
let served = false;
const stdin = new Readable({
  read() {
    if (served) return;
    served = true;
    const rest = input.subarray(position);
    position = input.length;
    if (rest.length) this.push(rest);
    this.push(null);
  },
});
stdin.fd = 0;
stdin.isTTY = false;
Object.defineProperty(process, 'stdin', { configurable: true, enumerable: true, get: () => stdin });
// The output cap, counted as the program writes: a worker's streams are flushed only when
// its event loop turns, so a program printing in a busy loop would otherwise grow without
// bound before anything reached the runner.
const over = new Int32Array(workerData.over);
[process.stdout, process.stderr].forEach((stream, i) => {
  const write = stream.write;
  let written = 0;
  stream.write = function (chunk, encoding) {
    const enc = typeof encoding === 'string' ? encoding : 'utf8';
    written += typeof chunk === 'string' ? Buffer.byteLength(chunk, enc) : (chunk && chunk.length) || 0;
    if (written > cap) {
      Atomics.store(over, i, 1);
      process.exit(1);
    }
    return write.apply(this, arguments);
  };
});
process.argv[1] = workerData.solution;
Module.runMain();
}
`;

// A worker for one test: it starts (Node's bootstrap, most of its cost), then waits for the
// test's input and runs the solution.
function startWorker() {
  const over = new SharedArrayBuffer(8);
  const options = {
    eval: true,
    workerData: { solution, over },
    stdout: true,
    stderr: true,
    argv: [],
    env: process.env,
  };
  if (heapMb > 0) options.resourceLimits = { maxOldGenerationSizeMb: heapMb };
  const state = {
    worker: new Worker(PRELUDE, options),
    over: new Int32Array(over),
    stdout: [],
    stderr: [],
    outBytes: 0,
    errBytes: 0,
    cap: Infinity,
    exceeded: null,
    failure: null,
    code: null,
    ended: false,
    done: null,
  };
  const worker = state.worker;
  worker.stdout.on('data', (chunk) => {
    state.outBytes += chunk.length;
    if (state.outBytes > state.cap) {
      state.exceeded = state.exceeded || 'stdout';
      worker.terminate();
      return;
    }
    state.stdout.push(chunk);
  });
  worker.stderr.on('data', (chunk) => {
    state.errBytes += chunk.length;
    if (state.errBytes > state.cap) {
      state.exceeded = state.exceeded || 'stderr';
      worker.terminate();
      return;
    }
    state.stderr.push(chunk);
  });
  worker.on('error', (err) => {
    // What Node prints for an uncaught exception (the process would exit with status 1).
    if (err && err.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      state.failure = 'FATAL ERROR: JavaScript heap out of memory\n';
    } else {
      state.failure = `${(err && err.stack) || String(err)}\n`;
    }
  });
  worker.on('exit', (code) => {
    // The streams end after 'exit': read what is left before replying.
    let open = 2;
    const closed = () => {
      open -= 1;
      if (open > 0) return;
      state.code = state.failure !== null && code === 0 ? 1 : code;
      state.ended = true;
      if (state.done) state.done();
    };
    for (const stream of [worker.stdout, worker.stderr]) {
      if (stream.readableEnded || stream.destroyed) closed();
      else {
        stream.once('end', closed);
        stream.once('close', () => {
          if (!stream.readableEnded) closed();
        });
      }
    }
  });
  return state;
}

function runTest(header, stdin, done) {
  const state = startWorker();
  state.cap = Number(header.max_output_bytes) || 1 << 20;
  const cpu = process.cpuUsage();
  state.done = () => {
    const used = process.cpuUsage(cpu);
    let exceeded = state.exceeded;
    if (Atomics.load(state.over, 0)) exceeded = exceeded || 'stdout';
    if (Atomics.load(state.over, 1)) exceeded = exceeded || 'stderr';
    if (state.failure !== null) state.stderr.push(Buffer.from(state.failure));
    const reply = {
      exit_code: state.code,
      output_exceeded: exceeded,
      cpu_s: (used.user + used.system) / 1e6,
    };
    done(reply, state.stdout, state.stderr);
  };
  state.worker.postMessage({ input: stdin, cap: state.cap });
}

// Requests are read as a stream (the event loop serves the running worker meanwhile).
let pending = Buffer.alloc(0);
let busy = false;

function nextRequest() {
  if (busy || pending.length < 4) return;
  const size = pending.readUInt32BE(0);
  if (size > MAX_HEADER) process.exit(2);
  if (pending.length < 4 + size) return;
  const header = JSON.parse(pending.subarray(4, 4 + size).toString('utf8'));
  const length = Number(header.stdin_bytes) || 0;
  if (pending.length < 4 + size + length) return;
  const stdin = Buffer.from(pending.subarray(4 + size, 4 + size + length));
  pending = pending.subarray(4 + size + length);
  busy = true;
  runTest(header, stdin, (reply, stdout, stderr) => {
    const out = Buffer.concat(stdout);
    const err = Buffer.concat(stderr);
    reply.stdout_bytes = out.length;
    reply.stderr_bytes = err.length;
    writeAll(frame(reply, [out, err]));
    busy = false;
    nextRequest();
  });
}

writeAll(frame({ ready: true }, []));
const requests = fs.createReadStream(null, { fd: REQUESTS, highWaterMark: 1 << 16 });
requests.on('data', (chunk) => {
  pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
  nextRequest();
});
requests.on('end', () => process.exit(0));
requests.on('error', () => process.exit(2));
