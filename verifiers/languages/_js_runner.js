// A warm Node for stdin/stdout programs: one process serves every test of a program.
//
//   node [--max-old-space-size=N] runner.js <solution.js> <memory MB>
//
// Starting Node costs tens of milliseconds of CPU; running a test here, a fraction of one.
// The supervisor sends one request per test on descriptor 5 (a 4-byte big-endian length, a
// JSON header, then the test's stdin) and reads the reply on descriptor 6 (the same framing:
// a header, then stdout and stderr). It sends a test only after the reply to the one
// before, and reads every reply as the program's output, nothing more.
//
// Each test calls the solution's CommonJS module function again (compiled once, as Node's
// loader compiles it), in this realm: a vm context would give each test builtins of its own,
// but its global object answers every global name through interceptors, 60 to 300 times
// slower than a real global (a loop on `Math.floor` or an undeclared `i`), which a program
// near its time limit would feel. What a test gets of its own instead: the module's
// `exports`, `module` and `require` (builtins shared; `fs`, `timers`, `process` and
// `console` its own), a `process` (its stdin, stdout, stderr, argv, env, exit and exitCode,
// its listeners), a `console` writing to its output, `fs` calls on descriptors 0, 1 and 2
// and on /dev/stdin served from its input and into its output, and the timers it made. It
// ends as a process would: when its event loop is empty (the runner's own 'beforeExit':
// the runner holds nothing else open, and reads requests blocking), at process.exit, or at
// an uncaught exception or unhandled rejection (printed as Node prints them, status 1);
// its 'beforeExit', 'exit', 'uncaughtException' and 'unhandledRejection' listeners run as
// they would.
//
// Shared state is put back after each test. The runner records, when it starts, the own
// properties (descriptors), prototype and extensibility of the global object, of the
// builtins programs write to (Object.prototype, Array.prototype, Math, JSON, String,
// Buffer, ...) and of the prototypes of what it hands a test (streams, console, timers),
// and compares and restores them after every test: undeclared globals, Math.gcd = ...,
// Array.prototype.sum = ... leave nothing behind. When the program's source names
// prototypes or property definitions (FULL_CHECK), every global's constructor, prototype
// and prototype chain and the builtin modules it loads are recorded and restored too. A
// test that left what cannot be put back (a frozen builtin, a handle, request or timer of
// its own making still open, a listener on the real process, a changed working directory,
// memory grown past half the limit, a module loaded outside the shared builtins) retires
// the runner: its reply says so, and the next test gets a new one. The host sends programs
// that need process-wide state (worker threads, child processes, vm, ES modules, ...) to a
// Node per test instead (`javascript.COLD_ONLY`).
//
// This process is the program's: it can reach all of it (same uid, same process), so
// nothing here is evidence. The supervisor enforces the time and output limits itself and
// the host judges the output; a program that breaks this runner only fails its own test,
// and the runner keeps its own references to what it uses, taken before any program runs.
'use strict';

const fs = require('fs');
const path = require('path');
const util = require('util');
const vm = require('vm');
const EventEmitter = require('events');
const { Readable, Writable } = require('stream');
const { Console } = require('console');
const Module = require('module');
const timers = require('timers');

// --- the runner's own references -----------------------------------------------------------

const {
  apply: ReflectApply,
  defineProperty: ReflectDefineProperty,
  deleteProperty: ReflectDeleteProperty,
  getOwnPropertyDescriptor: ReflectGetOwnPropertyDescriptor,
  getPrototypeOf: ReflectGetPrototypeOf,
  setPrototypeOf: ReflectSetPrototypeOf,
  isExtensible: ReflectIsExtensible,
  ownKeys: ReflectOwnKeys,
} = Reflect;
const ObjectCreate = Object.create;
const ObjectFreeze = Object.freeze;
const ObjectIs = Object.is;
const JSONParse = JSON.parse;
const JSONStringify = JSON.stringify;
const NumberCtor = Number;
const StringCtor = String;
const MathMax = Math.max;
const MathMin = Math.min;
const uncurry = (fn) => (self, ...args) => ReflectApply(fn, self, args);
const RegExpPrototypeExec = uncurry(RegExp.prototype.exec);
const StringPrototypeSlice = uncurry(String.prototype.slice);
const StringPrototypeSplit = uncurry(String.prototype.split);
const StringPrototypeStartsWith = uncurry(String.prototype.startsWith);
const StringPrototypeRepeat = uncurry(String.prototype.repeat);
const BufferFrom = Buffer.from;
const BufferAlloc = Buffer.alloc;
const BufferConcat = Buffer.concat;
const BufferByteLength = Buffer.byteLength;
const BufferIsBuffer = Buffer.isBuffer;
const BufferPrototypeToString = uncurry(Buffer.prototype.toString);
const BufferPrototypeCopy = uncurry(Buffer.prototype.copy);
const BufferPrototypeReadUInt32BE = uncurry(Buffer.prototype.readUInt32BE);
const BufferPrototypeWriteUInt32BE = uncurry(Buffer.prototype.writeUInt32BE);
const TypedArrayPrototype = ReflectGetPrototypeOf(Uint8Array.prototype);
const getter = (object, name) => uncurry(ReflectGetOwnPropertyDescriptor(object, name).get);
const TypedArrayLength = getter(TypedArrayPrototype, 'length');
const TypedArrayBuffer = getter(TypedArrayPrototype, 'buffer');
const TypedArrayByteOffset = getter(TypedArrayPrototype, 'byteOffset');
const TypedArrayByteLength = getter(TypedArrayPrototype, 'byteLength');
const TypedArrayPrototypeSubarray = uncurry(TypedArrayPrototype.subarray);
const ArrayBufferIsView = ArrayBuffer.isView;
const AtomicsWait = Atomics.wait;
const fsReadSync = fs.readSync;
const fsWriteSync = fs.writeSync;
const fsFstatSync = fs.fstatSync;
const fsReadFileSync = fs.readFileSync;
const fsReadFile = fs.readFile;
const fsWriteFileSync = fs.writeFileSync;
const fsAppendFileSync = fs.appendFileSync;
const fsCloseSync = fs.closeSync;
const realProcess = process;
const processCpuUsage = process.cpuUsage;
const processRss = process.memoryUsage.rss;
const processUptime = process.uptime;
const processNextTick = process.nextTick;
const processOn = uncurry(EventEmitter.prototype.on);
const processEventNames = uncurry(EventEmitter.prototype.eventNames);
const processListenerCount = uncurry(EventEmitter.prototype.listenerCount);
const getActiveResourcesInfo = process.getActiveResourcesInfo;
const processCwd = process.cwd;
const emitterEmit = uncurry(EventEmitter.prototype.emit);
const emitterListenerCount = uncurry(EventEmitter.prototype.listenerCount);
const emitterInit = EventEmitter.init;
const inspect = util.inspect;
const isNativeError = util.types.isNativeError;
const promisifyCustom = util.promisify.custom;
const realSetTimeout = setTimeout;
const realSetInterval = setInterval;
const realSetImmediate = setImmediate;
const realClearTimeout = clearTimeout;
const realClearInterval = clearInterval;
const realClearImmediate = clearImmediate;
const isBuiltin = Module.isBuiltin;
const realRequire = require;
const nodeVersion = process.version;

const REQUESTS = 5;
const REPLIES = 6;
const MAX_HEADER = 1 << 20;
//: fs.ReadStream's chunk, the size of each 'data' event of a Node's stdin read from a file.
const CHUNK = 1 << 16;

const solution = path.resolve(process.argv[2]);
const solutionDir = path.dirname(solution);
const memoryMb = NumberCtor(process.argv[3]) || 0;
const source = stripBom(fsReadFileSync(solution, 'utf8'));
const sourceLines = StringPrototypeSplit(source, '\n');
const createRequire = Module.createRequire(solution);

function stripBom(text) {
  return text.charCodeAt(0) === 0xfeff ? StringPrototypeSlice(text, 1) : text;
}

// A program that names prototypes or property definitions may change any builtin: every
// recorded object is then compared property by property after each of its tests.
const FULL_CHECK = new RegExp(
  [
    'prototype|__proto__|PrototypeOf|defineProperty|defineProperties|Reflect|Proxy|Symbol',
    'constructor\\b\\s*[^(\\s]|[\'"`]constructor|Object\\s*\\.\\s*assign|globalThis|\\bglobal\\b',
    'freeze|\\bseal\\b|preventExtensions|\\beval\\b|\\bFunction\\s*\\(|\\bimport\\b|\\bwith\\s*\\(',
  ].join('|'),
);
const fullCheck = RegExpPrototypeExec(FULL_CHECK, source) !== null;

// --- the record of shared state ----------------------------------------------------------

// Each object of the shared realm a test can reach without escaping its own objects: its own
// properties (null-prototype copies of their descriptors), its prototype and extensibility.
const records = [];
const recorded = new WeakSet();
const WeakSetHas = uncurry(WeakSet.prototype.has);
const WeakSetAdd = uncurry(WeakSet.prototype.add);

function copyDescriptor(d) {
  const copy = { __proto__: null };
  if ('value' in d) {
    copy.value = d.value;
    copy.writable = d.writable;
  } else {
    copy.get = d.get;
    copy.set = d.set;
  }
  copy.enumerable = d.enumerable;
  copy.configurable = d.configurable;
  return copy;
}

function isObject(value) {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}

// Record `object` (and its prototype chain): compared after every test if `always`, else
// only after the tests of a program whose source names prototypes (FULL_CHECK).
function record(object, always, chain = true) {
  while (isObject(object) && !WeakSetHas(recorded, object)) {
    WeakSetAdd(recorded, object);
    const keys = ReflectOwnKeys(object);
    const index = { __proto__: null };
    const descriptors = [];
    for (let i = 0; i < keys.length; i++) {
      index[keys[i]] = i;
      descriptors[i] = copyDescriptor(ReflectGetOwnPropertyDescriptor(object, keys[i]));
    }
    records[records.length] = {
      object,
      always,
      keys,
      index,
      descriptors,
      proto: ReflectGetPrototypeOf(object),
      extensible: ReflectIsExtensible(object),
    };
    if (!chain) return;
    object = ReflectGetPrototypeOf(object);
    always = false;
  }
}

// Record a module's exports, the prototypes of the classes it exports, and the objects it
// holds settings in (`util.inspect.defaultOptions`, ...).
function recordModule(exports) {
  record(exports, false);
  const keys = ReflectOwnKeys(exports);
  for (let i = 0; i < keys.length; i++) {
    const d = ReflectGetOwnPropertyDescriptor(exports, keys[i]);
    if (!d || !('value' in d) || !isObject(d.value)) continue;
    record(d.value, false);
    if (typeof d.value === 'function') {
      const p = ReflectGetOwnPropertyDescriptor(d.value, 'prototype');
      if (p && 'value' in p && isObject(p.value)) record(p.value, false);
      const inner = ReflectOwnKeys(d.value);
      for (let j = 0; j < inner.length; j++) {
        const q = ReflectGetOwnPropertyDescriptor(d.value, inner[j]);
        if (q && 'value' in q && typeof q.value === 'object' && q.value !== null) {
          record(q.value, false);
        }
      }
    }
  }
}

function prototypeOfTimer(set, clear) {
  const timer = set(noop, 1);
  clear(timer);
  return ReflectGetPrototypeOf(timer);
}

const IteratorPrototype = ReflectGetPrototypeOf(ReflectGetPrototypeOf([][Symbol.iterator]()));

// What programs write to (Math.gcd = ..., Array.prototype.sum = ..., an undeclared global)
// and what this runner's tests are made of: compared after every test. Object.prototype
// first: the descriptors read later inherit from it.
const ALWAYS = [
  Object.prototype,
  globalThis,
  Function.prototype,
  Object,
  Array,
  Array.prototype,
  Number,
  Number.prototype,
  String,
  String.prototype,
  Boolean.prototype,
  BigInt,
  BigInt.prototype,
  Symbol,
  Symbol.prototype,
  Math,
  JSON,
  Reflect,
  Error,
  Error.prototype,
  Promise,
  Promise.prototype,
  Map,
  Map.prototype,
  Set,
  Set.prototype,
  WeakMap.prototype,
  WeakSet.prototype,
  RegExp,
  RegExp.prototype,
  Date,
  Date.prototype,
  TypedArrayPrototype,
  Uint8Array.prototype,
  Buffer,
  Buffer.prototype,
  IteratorPrototype,
  ReflectGetPrototypeOf([][Symbol.iterator]()),
  EventEmitter.prototype,
  Readable.prototype,
  Writable.prototype,
  ReflectGetPrototypeOf(Readable.prototype),
  Console.prototype,
  Module.prototype,
  prototypeOfTimer(realSetTimeout, realClearTimeout),
  prototypeOfTimer(realSetImmediate, realClearImmediate),
  util.inspect.defaultOptions, // the object behind its getter
];

function recordRealm() {
  for (let i = 0; i < ALWAYS.length; i++) record(ALWAYS[i], true, false);
  if (!fullCheck) return; // the rest is compared only after such a program's tests
  const keys = ReflectOwnKeys(globalThis);
  for (let i = 0; i < keys.length; i++) {
    const d = ReflectGetOwnPropertyDescriptor(globalThis, keys[i]);
    let value = d.value;
    if (keys[i] === 'Buffer') value = Buffer;
    if (value === realProcess || keys[i] === 'console' || !isObject(value)) continue;
    record(value, false);
    if (typeof value === 'function') {
      const p = ReflectGetOwnPropertyDescriptor(value, 'prototype');
      if (p && 'value' in p && isObject(p.value)) record(p.value, false);
    }
  }
  // The intrinsics no global names.
  const hidden = [
    function* generator() {},
    async function asyncFunction() {},
    async function* asyncGenerator() {},
  ];
  for (let i = 0; i < hidden.length; i++) {
    const fnProto = ReflectGetPrototypeOf(hidden[i]);
    record(fnProto, false);
    const p = ReflectGetOwnPropertyDescriptor(fnProto, 'prototype');
    if (p && isObject(p.value)) record(p.value, false);
  }
  record(ReflectGetPrototypeOf([][Symbol.iterator]()), false);
  record(ReflectGetPrototypeOf(''[Symbol.iterator]()), false);
  record(ReflectGetPrototypeOf(new Map()[Symbol.iterator]()), false);
  record(ReflectGetPrototypeOf(new Set()[Symbol.iterator]()), false);
  record(ReflectGetPrototypeOf(/x/[Symbol.matchAll]('')), false);
  // What this runner hands each test: its modules, and the prototypes of its objects.
  const modules = [fs, util, EventEmitter, require('stream'), require('console'), timers];
  for (let i = 0; i < modules.length; i++) recordModule(modules[i]);
  record(ReflectGetPrototypeOf(fsFstatSync(0)), false);
}

// Settings kept behind accessors, put back after every test.
const SETTINGS = [
  [EventEmitter, 'defaultMaxListeners', EventEmitter.defaultMaxListeners],
  [EventEmitter, 'captureRejections', EventEmitter.captureRejections],
];

function restoreSettings() {
  for (let i = 0; i < SETTINGS.length; i++) {
    const setting = SETTINGS[i];
    try {
      if (setting[0][setting[1]] !== setting[2]) setting[0][setting[1]] = setting[2];
    } catch {
      return false;
    }
  }
  return true;
}

function noop() {}

function sameDescriptor(now, was) {
  return (
    ObjectIs(now.value, was.value) &&
    now.get === was.get &&
    now.set === was.set &&
    now.writable === was.writable &&
    now.enumerable === was.enumerable &&
    now.configurable === was.configurable
  );
}

function changed(r) {
  const object = r.object;
  const keys = ReflectOwnKeys(object);
  if (keys.length !== r.keys.length) return true;
  if (ReflectGetPrototypeOf(object) !== r.proto) return true;
  if (ReflectIsExtensible(object) !== r.extensible) return true;
  const index = r.index;
  const descriptors = r.descriptors;
  for (let i = 0; i < keys.length; i++) {
    const j = index[keys[i]];
    if (j === undefined) return true;
    const now = ReflectGetOwnPropertyDescriptor(object, keys[i]);
    if (now === undefined || !sameDescriptor(now, descriptors[j])) return true;
  }
  return false;
}

// Put the object's recorded properties back; false if some could not be.
function restore(r) {
  const object = r.object;
  let ok = true;
  const keys = ReflectOwnKeys(object);
  for (let i = 0; i < keys.length; i++) {
    if (r.index[keys[i]] === undefined && !ReflectDeleteProperty(object, keys[i])) ok = false;
  }
  for (let j = 0; j < r.keys.length; j++) {
    const now = ReflectGetOwnPropertyDescriptor(object, r.keys[j]);
    if (now === undefined || !sameDescriptor(now, r.descriptors[j])) {
      if (!ReflectDefineProperty(object, r.keys[j], r.descriptors[j])) ok = false;
    }
  }
  if (ReflectGetPrototypeOf(object) !== r.proto && !ReflectSetPrototypeOf(object, r.proto)) {
    ok = false;
  }
  if (ReflectIsExtensible(object) !== r.extensible) ok = false;
  return ok;
}

// Compare every record (restoring what changed); false if something could not be restored.
function restoreRealm(full) {
  let ok = true;
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    if ((full || r.always) && changed(r) && !restore(r)) ok = false;
  }
  return ok;
}

// --- framing ----------------------------------------------------------------------------------

function writeAll(buffer) {
  let offset = 0;
  const length = TypedArrayLength(buffer);
  while (offset < length) {
    try {
      offset += fsWriteSync(REPLIES, buffer, offset, length - offset);
    } catch (err) {
      if (err && err.code === 'EAGAIN') continue;
      throw err;
    }
  }
}

function frame(header, blobs) {
  const body = BufferFrom(JSONStringify(header), 'utf8');
  const head = BufferAlloc(4);
  BufferPrototypeWriteUInt32BE(head, TypedArrayLength(body), 0);
  const parts = [head, body];
  for (let i = 0; i < blobs.length; i++) parts[parts.length] = blobs[i];
  return BufferConcat(parts);
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
let pending = BufferAlloc(0);

// Read until `pending` holds `n` bytes (blocking: nothing of a test runs between tests);
// false at the end of the requests.
function fill(n) {
  while (TypedArrayLength(pending) < n) {
    const chunk = BufferAlloc(MathMax(CHUNK, n - TypedArrayLength(pending)));
    let got;
    try {
      got = fsReadSync(REQUESTS, chunk, 0, TypedArrayLength(chunk), null);
    } catch (err) {
      if (err && err.code === 'EAGAIN') {
        AtomicsWait(sleeper, 0, 0, 1);
        continue;
      }
      throw err;
    }
    if (got === 0) return false;
    pending = BufferConcat([pending, TypedArrayPrototypeSubarray(chunk, 0, got)]);
  }
  return true;
}

function readRequest() {
  if (!fill(4)) return null;
  const size = BufferPrototypeReadUInt32BE(pending, 0);
  if (size > MAX_HEADER) realProcess.reallyExit(2);
  if (!fill(4 + size)) return null;
  const header = JSONParse(BufferPrototypeToString(pending, 'utf8', 4, 4 + size));
  const length = NumberCtor(header.stdin_bytes) || 0;
  if (!fill(4 + size + length)) return null;
  const input = BufferFrom(TypedArrayPrototypeSubarray(pending, 4 + size, 4 + size + length));
  pending = BufferFrom(TypedArrayPrototypeSubarray(pending, 4 + size + length));
  return { header, input };
}

// --- a test ----------------------------------------------------------------------------------

// What process.exit throws to unwind the program's stack (Node's never returns).
const EXIT = ObjectFreeze({ __proto__: null });
const STDIN_PATHS = ObjectFreeze({
  __proto__: null,
  '/dev/stdin': true,
  '/proc/self/fd/0': true,
  '/dev/fd/0': true,
});
// Builtins a test shares with the others: their state is recorded when first loaded and
// restored after each test. Any other builtin (or a file) is loaded for real and retires
// the runner after the test (the host sends programs that name them to a Node per test).
const SHARED = ObjectFreeze({
  __proto__: null,
  assert: true,
  'assert/strict': true,
  buffer: true,
  crypto: true,
  events: true,
  os: true,
  path: true,
  'path/posix': true,
  perf_hooks: true,
  querystring: true,
  readline: true,
  'readline/promises': true,
  stream: true,
  'stream/promises': true,
  'stream/web': true,
  string_decoder: true,
  url: true,
  util: true,
  'util/types': true,
  zlib: true,
});

let current = null; // the test running, until its reply
// The runner's own state when it became ready, which a test must leave as it found it.
const baseline = { resources: 0, cwd: '', rss: 0, listeners: '', uptime: 0 };

function newTest(header, input) {
  const test = {
    input,
    position: 0,
    cap: NumberCtor(header.max_output_bytes) || 1 << 20,
    out: [],
    outBytes: 0,
    err: [],
    errBytes: 0,
    exceeded: null,
    ended: false, // the process would have ended: nothing more of the program counts
    exiting: false,
    replied: false,
    status: 0,
    exitCode: undefined,
    timers: null,
    activity: 0,
    beforeExitAt: -1,
    idleAgain: null,
    retire: false,
    cpu: ReflectApply(processCpuUsage, realProcess, []),
    started: processUptime(),
    modules: { __proto__: null },
    process: null,
    console: null,
    stdout: null,
    stderr: null,
    stdin: null,
    fs: null,
  };
  test.stdin = makeStdin(test);
  test.stdout = makeOutput(test, 1);
  test.stderr = makeOutput(test, 2);
  test.console = new Console({ stdout: test.stdout, stderr: test.stderr });
  test.console.Console = Console;
  test.timers = makeTimers(test);
  test.process = makeProcess(test);
  test.fs = makeFs(test);
  return test;
}

// The test's output: counted as it is written; past the cap the test ends at once.
function emit(test, fd, chunk, encoding) {
  if (test.ended) return;
  let bytes;
  if (typeof chunk === 'string') {
    bytes = BufferFrom(chunk, typeof encoding === 'string' ? encoding : 'utf8');
  } else if (BufferIsBuffer(chunk)) {
    bytes = BufferFrom(chunk);
  } else {
    bytes = BufferFrom(viewOf(chunk));
  }
  const n = TypedArrayLength(bytes);
  if (fd === 1) {
    if (test.outBytes + n > test.cap) overflow(test, 'stdout', bytes);
    test.out[test.out.length] = bytes;
    test.outBytes += n;
  } else {
    if (test.errBytes + n > test.cap) overflow(test, 'stderr', bytes);
    test.err[test.err.length] = bytes;
    test.errBytes += n;
  }
}

// Over the output cap: the reply goes now (what fits of the output, and which stream went
// over), and the runner waits to be stopped (the supervisor retires it).
function overflow(test, which, bytes) {
  const room = test.cap - (which === 'stdout' ? test.outBytes : test.errBytes);
  const list = which === 'stdout' ? test.out : test.err;
  list[list.length] = TypedArrayPrototypeSubarray(bytes, 0, MathMax(0, room) + 1);
  test.exceeded = which;
  test.ended = true;
  reply(test, true);
  stop();
}

// After a reply that retires the runner: wait to be stopped (a runner that ended by itself
// while the supervisor still read its reply would read as a crash).
function stop() {
  for (;;) AtomicsWait(sleeper, 0, 0);
}

function makeOutput(test, fd) {
  const stream = new Writable({
    decodeStrings: false,
    write(chunk, encoding, callback) {
      emit(test, fd, chunk, encoding);
      callback();
    },
  });
  stream.fd = fd;
  stream._isStdio = true;
  return stream;
}

// process.stdin: the test's input in 64 KiB chunks, as Node reads a file on descriptor 0.
function makeStdin(test) {
  const stdin = new Readable({
    highWaterMark: CHUNK,
    read() {
      const input = test.input;
      const end = MathMin(TypedArrayLength(input), test.position + CHUNK);
      if (test.ended || test.position >= end) {
        this.push(null);
        return;
      }
      const chunk = BufferFrom(TypedArrayPrototypeSubarray(input, test.position, end));
      test.position = end;
      this.push(chunk);
    },
  });
  stdin.fd = 0;
  return stdin;
}

function takeInput(test) {
  const rest = BufferFrom(TypedArrayPrototypeSubarray(test.input, test.position));
  test.position = TypedArrayLength(test.input);
  return rest;
}

// A Buffer over the memory of a typed array or a DataView.
function viewOf(data) {
  return BufferFrom(TypedArrayBuffer(data), TypedArrayByteOffset(data), TypedArrayByteLength(data));
}

function makeTimers(test) {
  const timeouts = [];
  const immediates = [];
  const track = (list, timer) => {
    list[list.length] = timer;
    return timer;
  };
  const settled = () => {
    test.activity += 1;
  };
  function setTimeout(callback, after, ...args) {
    if (typeof callback !== 'function' || test.ended) {
      return dead(realSetTimeout, realClearTimeout, callback, after);
    }
    const timer = realSetTimeout(function fire() {
      settled();
      if (!test.ended) ReflectApply(callback, timer, args);
    }, after);
    return track(timeouts, timer);
  }
  function setInterval(callback, repeat, ...args) {
    if (typeof callback !== 'function' || test.ended) {
      return dead(realSetInterval, realClearInterval, callback, repeat);
    }
    const timer = realSetInterval(function fire() {
      settled();
      if (!test.ended) ReflectApply(callback, timer, args);
    }, repeat);
    return track(timeouts, timer);
  }
  function setImmediate(callback, ...args) {
    if (typeof callback !== 'function' || test.ended) {
      return dead(realSetImmediate, realClearImmediate, callback);
    }
    const immediate = realSetImmediate(function fire() {
      settled();
      if (!test.ended) ReflectApply(callback, immediate, args);
    });
    return track(immediates, immediate);
  }
  const promises = {
    setTimeout(after, value) {
      return new Promise((resolve) => setTimeout(resolve, after, value));
    },
    setImmediate(value) {
      return new Promise((resolve) => setImmediate(resolve, value));
    },
  };
  promises.scheduler = {
    wait: (after) => promises.setTimeout(after),
    yield: () => promises.setImmediate(),
  };
  setTimeout[promisifyCustom] = promises.setTimeout;
  setImmediate[promisifyCustom] = promises.setImmediate;
  const facade = {
    setTimeout,
    setInterval,
    setImmediate,
    clearTimeout: realClearTimeout,
    clearInterval: realClearInterval,
    clearImmediate: realClearImmediate,
    timeouts,
    immediates,
    promises,
  };
  return facade;
}

// A timer asked for after the test ended (or with Node's own argument errors): Node's own
// call, cleared at once.
function dead(set, clear, callback, after) {
  const timer = set(callback, after);
  clear(timer);
  return timer;
}

function clearTimers(test) {
  const { timeouts, immediates } = test.timers;
  for (let i = 0; i < timeouts.length; i++) realClearTimeout(timeouts[i]);
  for (let i = 0; i < immediates.length; i++) realClearImmediate(immediates[i]);
  if (test.idleAgain !== null) realClearImmediate(test.idleAgain);
}

function exitStatus(value) {
  return (value | 0) & 0xff;
}

function setExitCode(test, value) {
  // Node's own check of the value (it differs between versions), undone at once.
  try {
    realProcess.exitCode = value;
  } finally {
    realProcess.exitCode = undefined;
  }
  test.exitCode = value;
}

function makeProcess(test) {
  const facade = new EventEmitter();
  const values = {
    title: realProcess.title,
    version: realProcess.version,
    versions: { ...realProcess.versions },
    arch: realProcess.arch,
    platform: realProcess.platform,
    release: { ...realProcess.release },
    argv: [realProcess.execPath, solution],
    execArgv: copyArray(realProcess.execArgv),
    argv0: realProcess.argv0,
    execPath: realProcess.execPath,
    pid: realProcess.pid,
    ppid: realProcess.ppid,
    features: realProcess.features,
    config: realProcess.config,
    stdin: test.stdin,
    stdout: test.stdout,
    stderr: test.stderr,
    exit(code) {
      if (arguments.length !== 0) setExitCode(test, code);
      end(test, test.exitCode || 0);
      throw EXIT;
    },
    abort: realProcess.abort,
    kill: realProcess.kill,
    cwd: realProcess.cwd,
    hrtime: realProcess.hrtime,
    memoryUsage: realProcess.memoryUsage,
    cpuUsage: realProcess.cpuUsage,
    resourceUsage: realProcess.resourceUsage,
    emitWarning: realProcess.emitWarning,
    getuid: realProcess.getuid,
    geteuid: realProcess.geteuid,
    getgid: realProcess.getgid,
    getegid: realProcess.getegid,
    getgroups: realProcess.getgroups,
    uptime() {
      return processUptime() - test.started + baseline.uptime;
    },
    nextTick(callback, ...args) {
      if (typeof callback !== 'function' || test.ended) {
        return ReflectApply(processNextTick, realProcess, [test.ended ? noop : callback]);
      }
      return ReflectApply(processNextTick, realProcess, [
        () => {
          if (!test.ended) ReflectApply(callback, undefined, args);
        },
      ]);
    },
    openStdin() {
      test.stdin.resume();
      return test.stdin;
    },
  };
  withOwn(facade, values);
  // The environment: a copy of the runner's (the step's), made when first asked for.
  let env = null;
  ReflectDefineProperty(facade, 'env', {
    get() {
      if (env === null) {
        env = {};
        const real = realProcess.env;
        const names = ReflectOwnKeys(real);
        for (let i = 0; i < names.length; i++) env[names[i]] = real[names[i]];
      }
      return env;
    },
    set(value) {
      env = value;
    },
    enumerable: true,
    configurable: true,
  });
  ReflectDefineProperty(facade, 'exitCode', {
    get: () => test.exitCode,
    set: (value) => setExitCode(test, value),
    enumerable: true,
    configurable: false,
  });
  ReflectDefineProperty(facade, Symbol.toStringTag, { value: 'process', configurable: true });
  return facade;
}

function copyArray(list) {
  const copy = [];
  for (let i = 0; i < list.length; i++) copy[i] = list[i];
  return copy;
}

function isStdin(file) {
  if (file === 0) return true;
  if (typeof file !== 'string' && !BufferIsBuffer(file) && !(file instanceof URL)) return false;
  const name = typeof file === 'string' ? file : StringCtor(file);
  return STDIN_PATHS[name] === true;
}

// Descriptors 1 and 2 (their paths are not reopened here: the host sends programs that
// name them to a Node per test, where the sandbox decides).
function outputOf(file) {
  return file === 1 || file === 2 ? file : 0;
}

function encodingOf(options) {
  if (typeof options === 'string') return options;
  if (options && typeof options === 'object' && typeof options.encoding === 'string') {
    return options.encoding;
  }
  return null;
}

// The test's `fs`: descriptors 0, 1 and 2 and the standard streams' paths are its own.
function makeFs(test) {
  const facade = ObjectCreate(fs);
  const fullInput = () => BufferFrom(test.input);
  function readFileSync(file, options) {
    if (!isStdin(file)) return ReflectApply(fsReadFileSync, fs, arguments);
    // Descriptor 0 reads on from where the test is (a file's offset); a path opens the
    // input anew, from its start.
    const data = file === 0 ? takeInput(test) : fullInput();
    const encoding = encodingOf(options);
    return encoding ? BufferPrototypeToString(data, encoding) : data;
  }
  function readFile(file, options, callback) {
    if (!isStdin(file)) return ReflectApply(fsReadFile, fs, arguments);
    if (typeof options === 'function') {
      callback = options;
      options = undefined;
    }
    let data;
    try {
      data = readFileSync(file, options);
    } catch (err) {
      return void test.timers.setImmediate(callback, err);
    }
    test.timers.setImmediate(callback, null, data);
  }
  function readSync(fd, buffer, offset, length, position) {
    if (fd !== 0) return ReflectApply(fsReadSync, fs, arguments);
    if (offset !== null && typeof offset === 'object') {
      ({ offset = 0, length = TypedArrayByteLength(buffer) - offset, position = null } = offset);
    }
    offset = offset || 0;
    const size = TypedArrayByteLength(buffer);
    if (length === undefined) length = size - offset;
    if (!(offset >= 0 && length >= 0 && offset + length <= size)) {
      return ReflectApply(fsReadSync, fs, [fd, buffer, offset, length, position]); // its error
    }
    const input = test.input;
    const from = typeof position === 'number' && position >= 0 ? position : test.position;
    const n = MathMax(0, MathMin(length, TypedArrayLength(input) - from));
    const target = viewOf(buffer);
    BufferPrototypeCopy(input, target, offset, from, from + n);
    if (!(typeof position === 'number' && position >= 0)) test.position += n;
    return n;
  }
  function writeSync(fd, data, offset, length) {
    if (fd !== 1 && fd !== 2) return ReflectApply(fsWriteSync, fs, arguments);
    let chunk;
    if (typeof data === 'string') {
      chunk = BufferFrom(data, typeof length === 'string' ? length : 'utf8');
    } else if (ArrayBufferIsView(data)) {
      const view = viewOf(data);
      const start = typeof offset === 'number' ? offset : 0;
      const stop = typeof length === 'number' ? start + length : TypedArrayLength(view);
      chunk = TypedArrayPrototypeSubarray(view, start, stop);
    } else {
      return ReflectApply(fsWriteSync, fs, arguments); // Node's own error
    }
    emit(test, fd, chunk);
    return TypedArrayLength(chunk);
  }
  function writeFileSync(file, data, options) {
    const fd = outputOf(file);
    if (fd === 0) return ReflectApply(fsWriteFileSync, fs, arguments);
    if (typeof data === 'string') emit(test, fd, data, encodingOf(options) || 'utf8');
    else if (ArrayBufferIsView(data)) emit(test, fd, data);
    else return ReflectApply(fsWriteFileSync, fs, arguments);
  }
  function appendFileSync(file, data, options) {
    if (outputOf(file) === 0) return ReflectApply(fsAppendFileSync, fs, arguments);
    return writeFileSync(file, data, options);
  }
  function fstatSync(fd, options) {
    const stats = ReflectApply(fsFstatSync, fs, arguments);
    if (fd === 0 && stats && typeof stats === 'object') {
      const size = TypedArrayLength(test.input);
      try {
        stats.size = typeof stats.size === 'bigint' ? BigInt(size) : size;
        const blocks = (size + 511) >> 9;
        stats.blocks = typeof stats.blocks === 'bigint' ? BigInt(blocks) : blocks;
      } catch {}
    }
    return stats;
  }
  function closeSync(fd) {
    if (fd === 0 || fd === 1 || fd === 2) return undefined;
    return ReflectApply(fsCloseSync, fs, arguments);
  }
  withOwn(facade, {
    readFileSync,
    readFile,
    readSync,
    writeSync,
    writeFileSync,
    appendFileSync,
    fstatSync,
    closeSync,
  });
  let promises = null;
  ReflectDefineProperty(facade, 'promises', {
    get() {
      if (promises === null) {
        const real = fs.promises;
        promises = withOwn(ObjectCreate(real), {
          readFile(file, options) {
            if (!isStdin(file)) return ReflectApply(real.readFile, real, arguments);
            return new Promise((resolve, reject) => {
              let data;
              try {
                data = readFileSync(file, options);
              } catch (err) {
                test.timers.setImmediate(reject, err);
                return;
              }
              test.timers.setImmediate(resolve, data);
            });
          },
          writeFile(file, data, options) {
            if (outputOf(file) === 0) return ReflectApply(real.writeFile, real, arguments);
            return new Promise((resolve) => {
              writeFileSync(file, data, options);
              test.timers.setImmediate(resolve);
            });
          },
        });
      }
      return promises;
    },
    enumerable: true,
    configurable: true,
  });
  return facade;
}

function makeModule(test) {
  const module = new Module('.', null);
  module.filename = solution;
  module.paths = Module._nodeModulePaths(solutionDir);
  const require = makeRequire(test, module);
  module.require = require;
  return { module, require };
}

function makeRequire(test, module) {
  function require(id) {
    if (typeof id !== 'string' || id === '') return createRequire(id); // Node's own error
    const name = StringPrototypeStartsWith(id, 'node:') ? StringPrototypeSlice(id, 5) : id;
    switch (name) {
      case 'fs':
        return test.fs;
      case 'fs/promises':
        return test.fs.promises;
      case 'process':
        return test.process;
      case 'console':
        return test.console;
      case 'timers':
        return timersModule(test);
      case 'timers/promises':
        return timersModule(test).promises;
      default:
        break;
    }
    if (isBuiltin(id) && SHARED[name] === true) {
      const exports = realRequire(id);
      if (fullCheck && !WeakSetHas(recorded, exports)) recordModule(exports);
      return exports;
    }
    test.retire = true; // loaded for real: its state is not put back
    return createRequire(id);
  }
  require.main = module;
  require.resolve = function resolve(request, options) {
    if (typeof request === 'string' && isBuiltin(request)) return request;
    return createRequire.resolve(request, options);
  };
  require.resolve.paths = createRequire.resolve.paths;
  require.extensions = Module._extensions;
  ReflectDefineProperty(require, 'cache', {
    get() {
      test.retire = true;
      return Module._cache;
    },
    enumerable: true,
    configurable: true,
  });
  return require;
}

function timersModule(test) {
  if (test.modules.timers) return test.modules.timers;
  const t = test.timers;
  const real = realRequire('timers/promises');
  const promises = withOwn(ObjectCreate(real), {
    setTimeout(after, value, options) {
      if (options !== undefined) return ReflectApply(real.setTimeout, real, arguments);
      return t.promises.setTimeout(after, value);
    },
    setImmediate(value, options) {
      if (options !== undefined) return ReflectApply(real.setImmediate, real, arguments);
      return t.promises.setImmediate(value);
    },
    scheduler: t.promises.scheduler,
  });
  const facade = withOwn(ObjectCreate(timers), {
    setTimeout: t.setTimeout,
    setInterval: t.setInterval,
    setImmediate: t.setImmediate,
    clearTimeout: t.clearTimeout,
    clearInterval: t.clearInterval,
    clearImmediate: t.clearImmediate,
    promises,
  });
  test.modules.timers = facade;
  return facade;
}

// `object` with `values` as its own properties (over those it inherits, getters included).
function withOwn(object, values) {
  const keys = ReflectOwnKeys(values);
  for (let i = 0; i < keys.length; i++) {
    ReflectDefineProperty(object, keys[i], {
      value: values[keys[i]],
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return object;
}

// --- globals -------------------------------------------------------------------------------

const GLOBALS = [
  'process',
  'console',
  'setTimeout',
  'setInterval',
  'setImmediate',
  'clearTimeout',
  'clearInterval',
  'clearImmediate',
];
const savedGlobals = [];

function installGlobals(test) {
  for (let i = 0; i < GLOBALS.length; i++) {
    savedGlobals[i] = ReflectGetOwnPropertyDescriptor(globalThis, GLOBALS[i]);
  }
  const facade = test.process;
  ReflectDefineProperty(globalThis, 'process', {
    get: () => facade,
    set(value) {
      ReflectDefineProperty(globalThis, 'process', {
        value,
        writable: true,
        enumerable: false,
        configurable: true,
      });
    },
    enumerable: false,
    configurable: true,
  });
  const data = (name, value, enumerable) => {
    const descriptor = { value, writable: true, enumerable, configurable: true };
    ReflectDefineProperty(globalThis, name, descriptor);
  };
  data('console', test.console, false);
  const t = test.timers;
  data('setTimeout', t.setTimeout, true);
  data('setInterval', t.setInterval, true);
  data('setImmediate', t.setImmediate, true);
  data('clearTimeout', t.clearTimeout, true);
  data('clearInterval', t.clearInterval, true);
  data('clearImmediate', t.clearImmediate, true);
}

function restoreGlobals() {
  for (let i = 0; i < GLOBALS.length; i++) {
    ReflectDefineProperty(globalThis, GLOBALS[i], savedGlobals[i]);
  }
}

// --- the program -----------------------------------------------------------------------------

const PARAMETERS = ['exports', 'require', 'module', '__filename', '__dirname'];
let main = null;
let compileError = null;
try {
  main = vm.compileFunction(source, PARAMETERS, { filename: solution });
} catch (err) {
  compileError = err;
}

// Where the error happened in the solution, as Node shows it above an uncaught error.
function arrow(err) {
  let stack;
  try {
    stack = isNativeError(err) ? StringCtor(err.stack) : '';
  } catch {
    return '';
  }
  const lines = StringPrototypeSplit(stack, '\n');
  for (let i = 0; i < lines.length; i++) {
    const at = RegExpPrototypeExec(/\(?([^()\s]+):(\d+):(\d+)\)?$/, lines[i]);
    if (at === null || at[1] !== solution) continue;
    const line = NumberCtor(at[2]);
    const column = NumberCtor(at[3]);
    const text = sourceLines[line - 1];
    if (text === undefined) return '';
    const caret = `${StringPrototypeRepeat(' ', MathMax(0, column - 1))}^`;
    return `${solution}:${line}\n${text}\n${caret}\n\n`;
  }
  return '';
}

// What Node prints for an uncaught exception (or an unhandled rejection) before it exits.
function describe(err, fromPromise) {
  let text;
  try {
    if (fromPromise && !isNativeError(err)) {
      let reason;
      try {
        reason = StringCtor(err);
      } catch {
        reason = inspect(err);
      }
      text =
        'node:internal/process/promises\n\n' +
        'UnhandledPromiseRejection: This error originated either by throwing inside of an ' +
        'async function without a catch block, or by rejecting a promise which was not ' +
        `handled with .catch(). The promise rejected with the reason "${reason}".\n` +
        "{\n  code: 'ERR_UNHANDLED_REJECTION'\n}";
    } else if (isNativeError(err)) {
      text = arrow(err) + inspect(err);
    } else {
      text = `\n${solution}\n${inspect(err)}`;
      if (!isObject(err)) {
        text += '\n(Use `node --trace-uncaught ...` to show where the exception was thrown)';
      }
    }
  } catch {
    text = 'Uncaught exception';
  }
  return `${text}\n\nNode.js ${nodeVersion}\n`;
}

// An exception nothing caught: the test's 'uncaughtException' listeners get it, as they
// would, or the test ends with status 1 and the error on its stderr.
function uncaught(test, err, fromPromise) {
  if (err === EXIT || test.ended) return;
  const p = test.process;
  if (fromPromise && emitterListenerCount(p, 'unhandledRejection') > 0) {
    guarded(test, () => emitterEmit(p, 'unhandledRejection', err, fromPromise));
    return;
  }
  if (emitterListenerCount(p, 'uncaughtException') > 0) {
    const origin = fromPromise ? 'unhandledRejection' : 'uncaughtException';
    guarded(test, () => emitterEmit(p, 'uncaughtException', err, origin), 7);
    return;
  }
  emit(test, 2, describe(err, fromPromise));
  test.exitCode = 1;
  end(test, 1);
}

function guarded(test, fn, status) {
  try {
    fn();
  } catch (err) {
    if (err === EXIT || test.ended) return;
    emit(test, 2, describe(err, false));
    test.exitCode = status || 1;
    end(test, status || 1);
  }
}

// The process would end now: its 'exit' listeners get `code` (and may set exitCode, or
// call process.exit again), the status is process.exitCode's, and the test is over.
function end(test, code) {
  if (test.exiting) return;
  test.exiting = true;
  let status = null;
  try {
    emitterEmit(test.process, 'exit', code);
  } catch (err) {
    if (err !== EXIT) {
      emit(test, 2, describe(err, false));
      status = 1;
    }
  }
  if (status === null) status = exitStatus(test.exitCode === undefined ? code : test.exitCode);
  test.status = status;
  test.ended = true;
  realSetImmediate(completeNext, test);
}

// One turn of the loop later: Node queues an immediate of its own after an exception it
// handed to a listener (to run the ticks left), which is gone by then.
function completeNext(test) {
  realSetImmediate(complete, test);
}

// The runner's event loop is empty: so would the test's process be.
function idle() {
  const test = current;
  if (test === null || test.ended) return;
  const p = test.process;
  if (emitterListenerCount(p, 'beforeExit') > 0 && test.beforeExitAt !== test.activity) {
    test.beforeExitAt = test.activity;
    const code = test.exitCode === undefined ? 0 : test.exitCode;
    guarded(test, () => emitterEmit(p, 'beforeExit', code));
    test.idleAgain = realSetImmediate(idleAgain);
    return;
  }
  end(test, test.exitCode || 0);
}

function idleAgain() {
  if (current !== null) current.idleAgain = null;
  if (ReflectApply(getActiveResourcesInfo, realProcess, []).length <= baseline.resources) idle();
}

function runTest(header, input) {
  const test = newTest(header, input);
  current = test;
  installGlobals(test);
  if (compileError !== null) {
    emit(test, 2, `${StringCtor(compileError.stack)}\n\nNode.js ${nodeVersion}\n`);
    test.exitCode = 1;
    end(test, 1);
    return;
  }
  const { module, require } = makeModule(test);
  try {
    ReflectApply(main, module.exports, [module.exports, require, module, solution, solutionDir]);
    module.loaded = true;
  } catch (err) {
    uncaught(test, err, false);
  }
}

// After the test's last callback: put shared state back, reply, and serve the next test.
// A failure of the runner itself ends it (the test reads as the program's crash).
function complete(test) {
  if (test.replied) return;
  try {
    settle(test);
  } catch {
    realProcess.reallyExit(70);
  }
}

function settle(test) {
  restoreGlobals();
  clearTimers(test);
  if (!restoreRealm(fullCheck) || !restoreSettings()) test.retire = true;
  if (ReflectApply(getActiveResourcesInfo, realProcess, []).length > baseline.resources) {
    test.retire = true; // a handle, a request or a timer of its own making is still open
  }
  if (listenersOf() !== baseline.listeners) test.retire = true;
  try {
    if (ReflectApply(processCwd, realProcess, []) !== baseline.cwd) test.retire = true;
  } catch {
    test.retire = true;
  }
  const rss = ReflectApply(processRss, realProcess, []);
  if (memoryMb > 0 && (rss - baseline.rss) * 2 > memoryMb * 1024 * 1024) test.retire = true;
  reply(test, false);
  current = null;
  if (test.retire) stop();
  realSetImmediate(serve);
}

function reply(test, now) {
  test.replied = true;
  const used = ReflectApply(processCpuUsage, realProcess, [test.cpu]);
  const out = BufferConcat(test.out);
  const err = BufferConcat(test.err);
  const header = {
    exit_code: test.exceeded ? 1 : test.status,
    output_exceeded: test.exceeded,
    cpu_s: (used.user + used.system) / 1e6,
    stdout_bytes: TypedArrayLength(out),
    stderr_bytes: TypedArrayLength(err),
  };
  if (test.retire || now) header.retire = true;
  writeAll(frame(header, [out, err]));
}

function listenersOf() {
  const names = processEventNames(realProcess);
  let text = '';
  for (let i = 0; i < names.length; i++) {
    text += `${StringCtor(names[i])}:${processListenerCount(realProcess, names[i])};`;
  }
  return text;
}

function serve() {
  const request = readRequest();
  if (request === null) realProcess.reallyExit(0);
  runTest(request.header, request.input);
}

// --- start -----------------------------------------------------------------------------------

processOn(realProcess, 'uncaughtException', (err) => {
  if (current !== null) uncaught(current, err, false);
});
processOn(realProcess, 'unhandledRejection', (reason, promise) => {
  if (current !== null) uncaught(current, reason, promise);
});
processOn(realProcess, 'beforeExit', idle);

// What Node does once, on first use: a console's first line looks at the real stderr
// (opening it), the first Console and streams load their modules.
const warmup = new Writable({ write: (chunk, encoding, callback) => callback() });
new Console({ stdout: warmup, stderr: warmup }).log('%s %o', 'x', { a: [1] });
recordRealm();
baseline.resources = ReflectApply(getActiveResourcesInfo, realProcess, []).length;
baseline.cwd = ReflectApply(processCwd, realProcess, []);
baseline.rss = ReflectApply(processRss, realProcess, []);
baseline.listeners = listenersOf();
baseline.uptime = processUptime();
writeAll(frame({ ready: true }, []));
serve();
