// JavaScript test harness: the program's side and the judge's side of a test with test code.
//
//   node harness.js candidate <solution.js> <name,name,...>
//   node harness.js judge                  (the test code arrives on stdin, as JSON)
//
// The two run as separate processes, under separate users, and share nothing but the
// call channel (descriptors 5 in, 6 out on both sides). The program's process runs the
// solution and answers calls; it never holds the tests. The judge's process runs the tests
// with the program's top-level functions and classes bound to proxies that call over the
// channel, compares with its own untouched `console`, `assert` and `JSON`, and writes its
// verdict on descriptor 3, which only it holds. console.assert throws there (Node's only
// prints "Assertion failed").
//
// Values cross as plain data (tagged JSON: numbers with NaN, infinities and -0, bigints,
// undefined, strings, booleans, null, arrays, plain objects, Map, Set, Date, RegExp,
// typed arrays; shared and cyclic ones included). Objects of the program's classes and its
// functions stay in its process and arrive as handles: they can be called, their
// properties and elements read (each answer is data again), but they equal nothing and
// cannot be turned into a primitive. Callbacks the tests pass in are called back across the
// channel; arrays and objects the program changes in place are changed in the judge too.
//
// No conversion the judge makes runs the program's code: a value is data. A handle's
// valueOf, toString, toLocaleString, toJSON and Symbol.toPrimitive throw here, and so does a
// plain object's function under one of those names or `then` (a valueOf that answered each
// conversion anew could make a trusted sum come out 0, whatever the root it stood for).
'use strict';

const fs = require('fs');
const vm = require('vm');
const assert = require('assert');

const VERDICT = 3;
const CALLS_IN = 5;
const CALLS_OUT = 6;
const MAX_MESSAGE = 512 * 1024 * 1024;
const MAX_NODES = 5000000;
const MAX_DEPTH = 400;

class ChannelClosed extends Error {}

function send(message) {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  writeAll(Buffer.concat([head, body]));
}

function writeAll(buffer) {
  let offset = 0;
  while (offset < buffer.length) {
    try {
      offset += fs.writeSync(CALLS_OUT, buffer, offset, buffer.length - offset);
    } catch (err) {
      if (err.code === 'EAGAIN') continue;
      throw new ChannelClosed(String(err.message));
    }
  }
}

function readExact(n) {
  const buffer = Buffer.alloc(n);
  let offset = 0;
  while (offset < n) {
    let got;
    try {
      got = fs.readSync(CALLS_IN, buffer, offset, n - offset, null);
    } catch (err) {
      if (err.code === 'EAGAIN') continue;
      throw new ChannelClosed(String(err.message));
    }
    if (got <= 0) throw new ChannelClosed('end of the channel');
    offset += got;
  }
  return buffer;
}

function receive() {
  const size = readExact(4).readUInt32BE(0);
  if (size > MAX_MESSAGE) throw new ChannelClosed(`a message of ${size} bytes`);
  let message;
  try {
    message = JSON.parse(readExact(size).toString('utf8'));
  } catch (err) {
    if (err instanceof ChannelClosed) throw err;
    throw new ChannelClosed('a malformed message');
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    throw new ChannelClosed('a message that is not an object');
  }
  return message;
}

function emit(record) {
  try {
    fs.writeSync(VERDICT, JSON.stringify(record) + '\n');
  } catch (err) {
    // The channel is gone: nothing can be reported.
  }
}

// --- values ---------------------------------------------------------------------------------

const TYPED = [
  Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array,
  Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array,
];

// The names the language calls on an object by itself: converting it to a primitive or to a
// string (valueOf, toString), joining an array of it (toLocaleString), JSON.stringify
// (toJSON), awaiting it (then). Symbol.toPrimitive is one too, but symbol keys never cross.
const HOOKS = new Set(['valueOf', 'toString', 'toLocaleString', 'toJSON', 'then']);

function isPlainObject(v) {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

// A codec on one side: `keep` turns what cannot be sent into a handle tag, `remote` and
// `lookup` turn handle tags back into objects, `hook` (the judge's) stands in for a
// function a plain object holds under one of the HOOKS names.
class Codec {
  constructor(keep, remote, lookup, hook) {
    this.keep = keep;
    this.remote = remote;
    this.lookup = lookup;
    this.hook = hook || null;
  }

  encode(value, track, args) {
    const ids = new Map();
    const budget = { left: MAX_NODES };
    const shared = track ? null : sharedObjects(value);
    return this._encode(value, ids, shared, track || null, args || null, budget, 0);
  }

  _encode(v, ids, shared, track, args, budget, depth) {
    if (--budget.left < 0 || depth > MAX_DEPTH) {
      throw new RangeError('the value is too large or too deeply nested to send');
    }
    switch (typeof v) {
      case 'undefined':
        return { $undefined: 1 };
      case 'boolean':
      case 'string':
        return v;
      case 'number':
        if (Number.isNaN(v)) return { $number: 'NaN' };
        if (!Number.isFinite(v)) return { $number: v > 0 ? 'Infinity' : '-Infinity' };
        if (Object.is(v, -0)) return { $number: '-0' };
        return v;
      case 'bigint':
        return { $bigint: v.toString() };
      case 'symbol':
        return { $symbol: String(v.description || '') };
      default:
        break;
    }
    if (v === null) return null;
    if (ids.has(v)) return { $ref: ids.get(v) };
    if (depth > 0 && args && args.has(v)) return { $arg: args.get(v) };
    const each = (items) =>
      items.map((x) => this._encode(x, ids, shared, track, args, budget, depth + 1));
    const own = (tag, mutable) => {
      if ((track && mutable) || (shared && shared.has(v))) {
        const id = ids.size;
        ids.set(v, id);
        tag.$id = id;
        if (track) track.set(id, v);
      }
      return tag;
    };
    if (typeof v !== 'function') {
      if (Array.isArray(v) && Object.getPrototypeOf(v) === Array.prototype) {
        const tag = own({}, true);
        tag.$array = each(Array.from(v));
        return tag;
      }
      if (v instanceof Map && Object.getPrototypeOf(v) === Map.prototype) {
        const tag = own({}, true);
        tag.$map = each(Array.from(v.entries()).flat());
        return tag;
      }
      if (v instanceof Set && Object.getPrototypeOf(v) === Set.prototype) {
        const tag = own({}, true);
        tag.$set = each(Array.from(v.values()));
        return tag;
      }
      if (v instanceof Date && Object.getPrototypeOf(v) === Date.prototype) {
        return { $date: Date.prototype.getTime.call(v) };
      }
      if (v instanceof RegExp && Object.getPrototypeOf(v) === RegExp.prototype) {
        return { $regexp: [v.source, v.flags] };
      }
      for (const T of TYPED) {
        if (v instanceof T && Object.getPrototypeOf(v) === T.prototype) {
          return { $typed: T.name, items: each(Array.from(v)) };
        }
      }
      if (isPlainObject(v)) {
        const tag = own({}, true);
        const pairs = [];
        for (const key of Object.keys(v)) {
          const d = Object.getOwnPropertyDescriptor(v, key);
          if (d && 'value' in d) {
            pairs.push([key, this._encode(d.value, ids, shared, track, args, budget, depth + 1)]);
          }
        }
        tag.$object = pairs;
        return tag;
      }
    }
    const kept = this.keep(v);
    return kept || { $opaque: typeName(v) };
  }

  decode(data, track, known) {
    const ids = track || new Map();
    return this._decode(data, ids, known || new Map(), { left: MAX_NODES }, 0);
  }

  _decode(d, ids, known, budget, depth) {
    if (--budget.left < 0 || depth > MAX_DEPTH) throw new RangeError('a value too large');
    if (d === null || typeof d === 'boolean' || typeof d === 'string' || typeof d === 'number') {
      return d;
    }
    if (typeof d !== 'object' || Array.isArray(d)) throw new TypeError('a malformed value');
    const each = (items) => {
      if (!Array.isArray(items)) throw new TypeError('a malformed value');
      return items.map((x) => this._decode(x, ids, known, budget, depth + 1));
    };
    const register = (obj) => {
      if ('$id' in d) ids.set(d.$id, obj);
      return obj;
    };
    if ('$ref' in d) {
      if (!ids.has(d.$ref)) throw new TypeError('a reference to nothing');
      return ids.get(d.$ref);
    }
    if ('$arg' in d) {
      if (!known.has(d.$arg)) throw new TypeError('a reference to no argument');
      return known.get(d.$arg);
    }
    if ('$undefined' in d) return undefined;
    if ('$number' in d) return d.$number === '-0' ? -0 : Number(d.$number);
    if ('$bigint' in d) return BigInt(String(d.$bigint));
    if ('$symbol' in d) return Symbol(String(d.$symbol));
    if ('$array' in d) {
      const out = register([]);
      for (const x of each(d.$array)) out.push(x);
      return out;
    }
    if ('$map' in d) {
      const out = register(new Map());
      const flat = each(d.$map);
      for (let i = 0; i + 1 < flat.length; i += 2) out.set(flat[i], flat[i + 1]);
      return out;
    }
    if ('$set' in d) {
      const out = register(new Set());
      for (const x of each(d.$set)) out.add(x);
      return out;
    }
    if ('$date' in d) return new Date(Number(d.$date));
    if ('$regexp' in d) return new RegExp(String(d.$regexp[0]), String(d.$regexp[1]));
    if ('$typed' in d) {
      const T = TYPED.find((t) => t.name === d.$typed);
      if (!T) throw new TypeError('an unknown typed array');
      return T.from(each(d.items));
    }
    if ('$object' in d) {
      const out = register({});
      if (!Array.isArray(d.$object)) throw new TypeError('a malformed object');
      for (const pair of d.$object) {
        if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string') {
          throw new TypeError('a malformed object');
        }
        let value = this._decode(pair[1], ids, known, budget, depth + 1);
        if (this.hook && typeof value === 'function' && HOOKS.has(pair[0])) {
          value = this.hook(pair[0]);
        }
        Object.defineProperty(out, pair[0], {
          value,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      }
      return out;
    }
    if ('$handle' in d || '$callback' in d || '$name' in d) {
      return register(d.back ? this.lookup(d) : this.remote(d));
    }
    if ('$opaque' in d) return register(makeOpaque(String(d.$opaque)));
    throw new TypeError('an unknown tag in a value');
  }
}

function sharedObjects(value) {
  const seen = new Set();
  const twice = new Set();
  const stack = [value];
  let nodes = 0;
  while (stack.length) {
    const v = stack.pop();
    if (++nodes > MAX_NODES) throw new RangeError('the value is too large to send');
    if (v === null || typeof v !== 'object') continue;
    if (seen.has(v)) {
      twice.add(v);
      continue;
    }
    seen.add(v);
    if (Array.isArray(v)) stack.push(...v);
    else if (v instanceof Map) for (const [k, x] of v) stack.push(k, x);
    else if (v instanceof Set) for (const x of v) stack.push(x);
    else if (isPlainObject(v)) {
      for (const key of Object.keys(v)) {
        const d = Object.getOwnPropertyDescriptor(v, key);
        if (d && 'value' in d) stack.push(d.value);
      }
    }
  }
  return twice;
}

function typeName(v) {
  try {
    if (typeof v === 'function') return 'function';
    const proto = Object.getPrototypeOf(v);
    const ctor = proto && Object.getOwnPropertyDescriptor(proto, 'constructor');
    const name = ctor && typeof ctor.value === 'function' ? ctor.value.name : '';
    return String(name || 'object').slice(0, 200);
  } catch (err) {
    return 'object';
  }
}

// The conversion hooks an object or function of the program defines itself (not a builtin's),
// which the judge refuses to call: told to the judge as a sign of a hack (the program's side
// says so, so it is a report, never part of a verdict).
function programHooks(v) {
  const found = [];
  const own = (f) => {
    if (typeof f !== 'function') return false;
    try {
      return !/\{\s*\[native code\]\s*\}$/.test(Function.prototype.toString.call(f));
    } catch (err) {
      return true;
    }
  };
  try {
    if (own(v[Symbol.toPrimitive])) found.push('Symbol.toPrimitive');
    for (const name of HOOKS) if (name !== 'then' && own(v[name])) found.push(name);
  } catch (err) {
    found.push('a getter that throws');
  }
  return found;
}

function makeOpaque(name) {
  const o = Object.create(null);
  Object.defineProperty(o, Symbol.toPrimitive, {
    value: () => {
      throw new TypeError(`an object of the program (${name}) cannot be compared here`);
    },
  });
  Object.defineProperty(o, 'toString', { value: () => `[object ${name}]` });
  return Object.freeze(o);
}

function syncState(target, state) {
  if (Array.isArray(target) && Array.isArray(state)) {
    target.length = 0;
    for (const x of state) target.push(x);
  } else if (target instanceof Map && state instanceof Map) {
    target.clear();
    for (const [k, v] of state) target.set(k, v);
  } else if (target instanceof Set && state instanceof Set) {
    target.clear();
    for (const v of state) target.add(v);
  } else if (target && state && typeof target === 'object' && typeof state === 'object') {
    for (const key of Object.keys(target)) delete target[key];
    Object.assign(target, state);
  }
}

function describeError(err, codec) {
  const name = err && typeof err === 'object' ? String(err.name || 'Error') : typeof err;
  let message = '';
  try {
    message = String(err && typeof err === 'object' ? err.message : err).slice(0, 2000);
  } catch (e) {
    message = '<unprintable>';
  }
  let stack = '';
  try {
    stack = String((err && err.stack) || '').slice(0, 4000);
  } catch (e) {
    stack = '';
  }
  let value = null;
  if (!(err instanceof Error)) {
    try {
      value = codec.encode(err);
    } catch (e) {
      value = null;
    }
  }
  return { name, base: builtinBase(err), message, stack, value };
}

// The nearest built-in error class of a thrown error (a program's `class E extends
// RangeError` is a RangeError to the tests' `assert.throws` and `instanceof`).
const ERRORS = { TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError };

function builtinBase(err) {
  try {
    for (let p = Object.getPrototypeOf(err); p; p = Object.getPrototypeOf(p)) {
      const ctor = Object.getOwnPropertyDescriptor(p, 'constructor');
      const fn = ctor && ctor.value;
      for (const name of Object.keys(ERRORS)) if (fn === ERRORS[name]) return name;
      if (fn === Error) return 'Error';
    }
  } catch (e) {
    // a Proxy that throws: an Error it is
  }
  return 'Error';
}

// --- the program's side -----------------------------------------------------------------------

function candidateMain(solutionPath, names) {
  const handles = [];
  const handleOf = new Map();
  let codec;
  const keep = (v) => {
    if (typeof v === 'function' && v.__vfCallback !== undefined) {
      return { $callback: v.__vfCallback, back: true };
    }
    let key = handleOf.get(v);
    if (key === undefined) {
      key = handles.length;
      handles.push(v);
      handleOf.set(v, key);
    }
    const kind =
      typeof v === 'function'
        ? /^class[\s{]/.test(Function.prototype.toString.call(v))
          ? 'class'
          : 'function'
        : v && typeof v[Symbol.iterator] === 'function' && typeof v.next === 'function'
          ? 'iterator'
          : 'object';
    return {
      $handle: key,
      kind,
      type: typeName(v),
      name: typeof v === 'function' ? String(v.name || '').slice(0, 200) : '',
      hooks: programHooks(v),
    };
  };
  const lookup = (d) => {
    if ('$name' in d) return resolveName(String(d.$name));
    if (!(d.$handle in handles)) throw new TypeError('a handle to nothing');
    return handles[d.$handle];
  };
  const remote = (d) => {
    if (!('$callback' in d)) throw new TypeError('a handle the program does not hold');
    const key = d.$callback;
    const fn = function (...args) {
      send({ op: 'callback', id: key, args: codec.encode(args) });
      for (;;) {
        const reply = receive();
        if ('op' in reply) {
          serveOne(reply);
          continue;
        }
        if ('raise' in reply) throw new Error(String((reply.raise || {}).message || 'callback'));
        return codec.decode(reply.value);
      }
    };
    Object.defineProperty(fn, '__vfCallback', { value: key });
    return fn;
  };
  codec = new Codec(keep, remote, lookup);

  const known = new Set(names.filter((n) => /^[A-Za-z_$][\w$]*$/.test(n)));
  const scripts = new Map();
  function resolveName(name) {
    if (!known.has(name)) throw new ReferenceError(`${name} is not defined by the program`);
    let script = scripts.get(name);
    if (!script) {
      script = new vm.Script(name);
      scripts.set(name, script);
    }
    return script.runInThisContext();
  }

  function serveOne(message) {
    const track = new Map();
    let value;
    try {
      const ref = message.target || {};
      const target = '$handle' in ref ? lookup(ref) : resolveName(String(ref.name));
      switch (message.op) {
        case 'call': {
          const args = codec.decode(message.args || { $array: [] }, track);
          value = message.construct ? new target(...args) : target(...args);
          break;
        }
        case 'value':
          value = target;
          break;
        case 'get': {
          const found = target[String(message.name)];
          // A method keeps its object: the judge calls it as obj.method(...).
          value = typeof found === 'function' ? found.bind(target) : found;
          break;
        }
        case 'iter':
          value = target[Symbol.iterator]();
          break;
        default:
          throw new TypeError(`unknown request ${message.op}`);
      }
    } catch (err) {
      if (err instanceof ChannelClosed) throw err;
      send({ raise: describeError(err, codec), sync: syncOf(track) });
      return;
    }
    let encoded;
    try {
      encoded = codec.encode(value);
    } catch (err) {
      send({ raise: describeError(err, codec), sync: syncOf(track) });
      return;
    }
    send({ value: encoded, sync: syncOf(track) });
  }

  function syncOf(track) {
    if (!track.size) return [];
    const refs = new Map();
    for (const [id, obj] of track) refs.set(obj, id);
    const out = [];
    for (const [id, obj] of track) {
      try {
        out.push([id, codec.encode(obj, null, refs)]);
      } catch (err) {
        // Too large to send back: the judge keeps the argument as it was.
      }
    }
    return out;
  }

  globalThis.require = require;
  globalThis.module = { exports: {} };
  globalThis.exports = globalThis.module.exports;
  const source = fs.readFileSync(solutionPath, 'utf8');
  try {
    vm.runInThisContext(source, { filename: 'solution.js' });
  } catch (err) {
    emit({ event: 'error', stage: 'solution', ...describeError(err, codec) });
    process.stderr.write(String((err && err.stack) || err) + '\n');
    send({ hello: { error: describeError(err, codec) } });
    return 1;
  }
  const kinds = {};
  for (const name of known) {
    let kind;
    try {
      kind = vm.runInThisContext(`typeof ${name}`);
    } catch (err) {
      continue; // declared but not initialised (a TDZ binding), or never declared
    }
    if (kind === 'undefined') continue;
    const value = vm.runInThisContext(name);
    kinds[name] =
      kind === 'function'
        ? /^class[\s{]/.test(Function.prototype.toString.call(value))
          ? 'class'
          : 'function'
        : 'value';
  }
  send({ hello: { names: kinds } });
  try {
    for (;;) serveOne(receive());
  } catch (err) {
    if (!(err instanceof ChannelClosed)) throw err;
  }
  return 0;
}

// --- the judge's side -------------------------------------------------------------------------

class ProgramGone extends Error {}

const judge = {
  callbacks: [],
  callbackOf: new Map(),
  remotes: new Map(),
  gone: null,
  hack: '',
  // Answers to property reads since the tests last ran the program's code otherwise (a call,
  // an iteration): a read asked again gets the same answer, as reading plain data would. A
  // getter that answered each read anew made `r[0] + r[1] === s && r[0] * r[1] === p` hold.
  reads: new Map(),
  // The items of a program object's iteration, once one ran to its end: iterated again
  // before the program's code runs otherwise, it gives the same items (a stateful
  // `[Symbol.iterator]` cannot answer `[s]` to one loop and `[p]` to the next). Stepping an
  // iteration does not forget them (`stepping`).
  iterated: new Map(),
  stepping: 0,
  // For each request in flight, the first assertion of the tests that failed in a callback
  // it made: thrown again in the judge if the program let the error through, final if the
  // program answered as if nothing had failed (`failed`, which no pass outlives).
  pending: [],
  failed: null,
};

// The program's code runs: what its objects answered before may have changed.
function forget(iterations = true) {
  judge.reads.clear();
  if (iterations && judge.stepping === 0) judge.iterated.clear();
}

// A conversion the judge refused: the test fails (the program answered with no value of a
// primitive's kind), as it would on an object of the program's class compared in Python.
class ConversionRefused extends TypeError {}

// What a conversion the judge refuses throws. `hooks` are the program's own hooks of the value
// (a hack's sign, reported with a failed verdict); a handle without any is an honest object of
// the program's class that a test tried to convert.
function refuse(what, hooks) {
  if (hooks.length && !judge.hack) {
    judge.hack =
      'the program answered with a value that has a conversion hook of its own ' +
      `(${String(hooks[0]).slice(0, 40)}), ` +
      'which the judge never calls';
  }
  throw new ConversionRefused(
    `${what} is never converted here (to a number, a string, JSON or an awaited value): the ` +
      'judge does not run the program\'s code to convert a value (return plain data: numbers, ' +
      'strings, arrays, objects)',
  );
}

// What a plain object of the program holds in the judge instead of its function `name`.
function refusedHook(name) {
  const stand = {
    [name]() {
      return refuse(`a value of the program with its own ${name}`, [name]);
    },
  };
  return stand[name];
}

// Text of anything a test threw or asserted with, never by the program's code.
function safeText(v) {
  if (judge.remotes.has(v)) return '[an object of the program]';
  const hack = judge.hack;
  try {
    return String(v);
  } catch (err) {
    judge.hack = hack; // a refused hook here is the judge's own doing
    return Object.prototype.toString.call(v);
  }
}

function remoteError(info) {
  info = info && typeof info === 'object' ? info : {};
  if (info.value !== null && info.value !== undefined) {
    try {
      return judgeCodec.decode(info.value); // the program threw a value, not an Error
    } catch (err) {
      // fall through to an Error
    }
  }
  const name = String(info.name || 'Error');
  const base = Object.prototype.hasOwnProperty.call(ERRORS, info.base) ? info.base : name;
  const Base = Object.prototype.hasOwnProperty.call(ERRORS, base) ? ERRORS[base] : Error;
  const err = new Base(String(info.message || ''));
  if (name !== Base.name) {
    Object.defineProperty(err, 'name', { value: name, configurable: true, writable: true });
  }
  err.stack = String(info.stack || `${name}: ${info.message || ''}`);
  err.vfRemote = true;
  return err;
}

function request(message, track) {
  if (judge.gone) throw new ProgramGone(judge.gone);
  const read = message.op === 'get' ? JSON.stringify(message) : null;
  let reply = read === null ? undefined : judge.reads.get(read);
  let failed = null;
  if (reply === undefined) {
    if (read === null) forget();
    let served = false;
    judge.pending.push(null);
    try {
      send(message);
      for (;;) {
        reply = receive();
        if ('op' in reply) {
          served = true;
          serveCallback(reply);
          continue;
        }
        break;
      }
    } catch (err) {
      if (!(err instanceof ChannelClosed)) throw err;
      judge.gone = `the program ended before the test finished (${err.message})`;
      throw new ProgramGone(judge.gone);
    } finally {
      failed = judge.pending.pop();
    }
    if (served) {
      forget(); // the program's code ran around the callbacks
    } else if (read !== null && reply && typeof reply === 'object') {
      const kept = { ...reply };
      delete kept.sync; // its argument changes are applied once, below
      judge.reads.set(read, kept);
    }
  }
  if (failed !== null && reply && typeof reply === 'object' && 'raise' in reply) throw failed;
  if (failed !== null && judge.failed === null) {
    // The program caught the tests' failed assertion and answered otherwise.
    judge.failed = {
      event: 'fail',
      message: `an assertion of the tests failed in a callback: ${safeText(failed.message)}`.slice(
        0,
        2000,
      ),
    };
  }
  let error = null;
  try {
    for (const pair of reply.sync || []) {
      if (!Array.isArray(pair) || pair.length !== 2 || !track.has(pair[0])) {
        throw new TypeError('a malformed change of an argument');
      }
      syncState(track.get(pair[0]), judgeCodec.decode(pair[1], null, track));
    }
    if ('raise' in reply) error = remoteError(reply.raise);
    else return judgeCodec.decode(reply.value);
  } catch (err) {
    judge.gone = `the program sent a malformed answer (${err.message})`;
    throw new ProgramGone(judge.gone);
  }
  throw error;
}

// A callback the judge handed out, by its index: only an own element of the list (an id
// such as "constructor" or "__proto__" would otherwise reach the array's prototype).
function callbackAt(id) {
  if (!Number.isSafeInteger(id) || id < 0 || id >= judge.callbacks.length) return undefined;
  return judge.callbacks[id];
}

function serveCallback(message) {
  forget(); // the program's code ran up to this call
  try {
    const fn = callbackAt(message.id);
    if (typeof fn !== 'function') throw new TypeError('a callback that does not exist');
    const args = judgeCodec.decode(message.args);
    send({ value: judgeCodec.encode(fn(...args)) });
  } catch (err) {
    if (err instanceof ProgramGone || err instanceof ChannelClosed) throw err;
    const top = judge.pending.length - 1;
    if (isAssertion(err) && !(err && err.vfRemote) && top >= 0 && judge.pending[top] === null) {
      judge.pending[top] = err;
    }
    const name = safeText((err && err.name) || 'Error');
    send({ raise: { name, message: safeText(err && err.message) } });
  } finally {
    forget(); // the program's code runs on from here
  }
}

function call(target, op, fields) {
  const track = new Map();
  const message = { op, target };
  if ('args' in fields) message.args = judgeCodec.encode(fields.args, track);
  if ('name' in fields) message.name = fields.name;
  if (fields.construct) message.construct = true;
  return request(message, track);
}

// A function, class or object of the program, seen from the judge: calls and property reads
// are asked of the program; it is never equal to anything, nor a primitive.
function proxyFor(ref, kind, label, hooks) {
  const callable = kind === 'function' || kind === 'class';
  const target = callable ? function () {} : {};
  const refusal = () => refuse(`${label} of the program`, hooks || []);
  const handler = {
    apply: (_, thisArg, args) => call(ref, 'call', { args }),
    construct: (_, args) => call(ref, 'call', { args, construct: true }),
    get: (_, key) => {
      // Conversions never ask the program (its own valueOf could answer anything, anew).
      if (key === Symbol.toPrimitive || (HOOKS.has(key) && key !== 'then')) return refusal;
      if (key === Symbol.iterator && !callable) {
        return function* () {
          const key = JSON.stringify(ref);
          const done = judge.iterated.get(key);
          if (done !== undefined) {
            yield* done;
            return;
          }
          const items = [];
          const step = (f) => {
            judge.stepping += 1;
            try {
              return f();
            } finally {
              judge.stepping -= 1;
            }
          };
          const it = step(() => call(ref, 'iter', {}));
          for (;;) {
            const next = step(() => it.next());
            if (!next || next.done) break;
            items.push(next.value);
            yield next.value;
          }
          judge.iterated.set(key, items);
        };
      }
      if (typeof key === 'symbol') return undefined;
      if (key === 'then') return undefined; // not a promise
      if (callable) {
        if (key === 'name') return label;
        if (key === 'prototype') return undefined;
      }
      return call(ref, 'get', { name: String(key) });
    },
    set: () => {
      throw new TypeError('the tests cannot change the program\'s objects');
    },
    has: (_, key) => false,
    getPrototypeOf: () => null,
  };
  const proxy = new Proxy(target, handler);
  judge.remotes.set(proxy, ref);
  return proxy;
}

const judgeCodec = new Codec(
  (v) => {
    if (judge.remotes.has(v)) {
      const ref = judge.remotes.get(v);
      return '$handle' in ref ? { $handle: ref.$handle, back: true } : { $name: ref.name, back: true };
    }
    if (typeof v === 'function') {
      let key = judge.callbackOf.get(v);
      if (key === undefined) {
        key = judge.callbacks.length;
        judge.callbacks.push(v);
        judge.callbackOf.set(v, key);
      }
      return { $callback: key, name: String(v.name || 'callback').slice(0, 200) };
    }
    return null;
  },
  (d) => {
    if ('$callback' in d) throw new TypeError('a callback the judge does not hold');
    const key = d.$handle;
    for (const [proxy, ref] of judge.remotes) if (ref.$handle === key) return proxy;
    const hooks = Array.isArray(d.hooks) ? d.hooks.slice(0, 8) : [];
    const kind = String(d.kind || 'object');
    return proxyFor({ $handle: key }, kind, String(d.type || 'object'), hooks);
  },
  (d) => {
    if ('$callback' in d) {
      const fn = callbackAt(d.$callback);
      if (fn === undefined) throw new TypeError('no such callback');
      return fn;
    }
    throw new TypeError('a handle the judge does not hold');
  },
  refusedHook,
);

function strictConsoleAssert(value, ...message) {
  if (!value) {
    const detail = message.length ? ': ' + message.map(safeText).join(' ') : '';
    throw new assert.AssertionError({
      message: 'console.assert failed' + detail,
      actual: value,
      expected: true,
      operator: '==',
    });
  }
}

function isAssertion(err) {
  return err instanceof assert.AssertionError || (err && err.code === 'ERR_ASSERTION');
}

function judgeMain() {
  const input = JSON.parse(fs.readFileSync(0, 'utf8'));
  // The tests' CommonJS names, real and in place before any name of the program is bound
  // (a program's `require` must never stand in for the tests' own).
  globalThis.require = require;
  globalThis.module = { exports: {} };
  globalThis.exports = globalThis.module.exports;
  Object.defineProperty(console, 'assert', {
    value: strictConsoleAssert,
    writable: false,
    configurable: false,
    enumerable: true,
  });
  let finished = false;
  const verdict = (record) => {
    if (finished) return;
    finished = true;
    if (judge.gone && record.event === 'pass') {
      record = { event: 'ended', message: judge.gone };
    }
    if (judge.failed && (record.event === 'pass' || record.event === 'error')) {
      // An assertion of the tests failed first: caught by the program or not, it failed.
      record = judge.failed;
    }
    if (judge.hack && record.event !== 'pass') record.hack = judge.hack;
    emit(record);
  };
  const fail = (err, stage) => {
    if (err instanceof ProgramGone) return verdict({ event: 'ended', message: err.message });
    const field = (name) => {
      try {
        const holds = err && (typeof err === 'object' || typeof err === 'function');
        return holds ? err[name] : undefined;
      } catch (e) {
        return undefined;
      }
    };
    const record = {
      event: isAssertion(err) || err instanceof ConversionRefused ? 'fail' : 'error',
      stage,
      type: safeText(field('name') || typeof err),
      message: safeText(field('message') || err).slice(0, 2000),
      traceback: safeText(field('stack') || err).slice(0, 4000),
      remote: Boolean(field('vfRemote')),
    };
    verdict(record);
  };
  process.on('uncaughtException', (err) => {
    fail(err, 'async');
    process.exit(0);
  });
  process.on('unhandledRejection', (err) => {
    fail(err, 'async');
    process.exit(0);
  });
  let hello;
  try {
    hello = receive().hello;
  } catch (err) {
    return verdict({ event: 'ended', message: `the program ended before the test (${err.message})` });
  }
  if (!hello || typeof hello !== 'object') return verdict({ event: 'ended', message: 'no greeting' });
  if (hello.error) {
    const info = hello.error;
    const syntax = info.name === 'SyntaxError';
    return verdict({
      event: syntax ? 'syntax_error' : 'error',
      stage: 'solution',
      type: String(info.name || 'Error'),
      message: String(info.message || ''),
      traceback: String(info.stack || ''),
      remote: true,
    });
  }
  // The declaration's own helpers (HumanEval-X's encodeCyclic, poly) are trusted code: the
  // tests call this copy, never the program's.
  const trusted = new Set(Array.isArray(input.trusted) ? input.trusted.map(String) : []);
  if (input.helpers) {
    try {
      vm.runInThisContext(String(input.helpers), { filename: 'declaration.js' });
    } catch (err) {
      return fail(err, 'tests');
    }
  }
  const names = hello.names && typeof hello.names === 'object' ? hello.names : {};
  for (const name of Object.keys(names)) {
    // Never a builtin, nor a trusted helper.
    if (!/^[A-Za-z_$][\w$]*$/.test(name) || name in globalThis || trusted.has(name)) continue;
    const kind = String(names[name]);
    if (kind === 'value') {
      try {
        globalThis[name] = call({ name }, 'value', {});
      } catch (err) {
        if (err instanceof ProgramGone) return verdict({ event: 'ended', message: err.message });
      }
    } else {
      globalThis[name] = proxyFor({ name }, kind, name);
    }
  }
  try {
    vm.runInThisContext(String(input.test), { filename: 'tests.js' });
  } catch (err) {
    return fail(err, 'tests');
  }
  process.on('beforeExit', () => verdict({ event: 'pass' }));
  return undefined;
}

if (process.argv[2] === 'judge') {
  judgeMain();
} else {
  const names = (process.argv[4] || '').split(',').filter(Boolean);
  let code = 1;
  try {
    code = candidateMain(process.argv[3], names);
  } catch (err) {
    process.stderr.write(String((err && err.stack) || err) + '\n');
  }
  process.exitCode = code;
}
