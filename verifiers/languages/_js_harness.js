// JavaScript test harness: runs a program with its tests inside the sandbox.
// Usage: node harness.js <program.js>
//
// console.assert throws (Node's only prints "Assertion failed" and exits 0), and
// neither it nor the assert module nor JSON can be replaced by the program. The
// test passes only if the program and its tests ran to the end and the event loop
// drained without an error: then the harness echoes the nonce the sandbox offered
// on fd 4 (read, and the descriptor closed, before the program loads) as a pass
// record on fd 3. process.exit() before that never passes.
'use strict';

const fs = require('fs');
const assert = require('assert');

const CHANNEL = 3;
const NONCE = 4;

function emit(record) {
  try {
    fs.writeSync(CHANNEL, JSON.stringify(record) + '\n');
  } catch (err) {
    // The channel is gone: nothing can be reported.
  }
}

// The nonce is read before the program loads and its descriptor closed: the program
// can neither read it (to forge a pass record on fd 3) nor reach this closure.
const NONCE_VALUE = (() => {
  const buffer = Buffer.alloc(256);
  let size = 0;
  try {
    for (;;) {
      const got = fs.readSync(NONCE, buffer, size, buffer.length - size, null);
      if (got <= 0 || size + got >= buffer.length) {
        size += Math.max(got, 0);
        break;
      }
      size += got;
    }
  } catch (err) {
    // No nonce offered: a pass record cannot be proven.
  }
  try {
    fs.closeSync(NONCE);
  } catch (err) {
    // Already closed.
  }
  return buffer.toString('utf8', 0, size).trim();
})();

function strictConsoleAssert(value, ...message) {
  if (!value) {
    const detail = message.length ? ': ' + message.map(String).join(' ') : '';
    throw new assert.AssertionError({
      message: 'console.assert failed' + detail,
      actual: value,
      expected: true,
      operator: '==',
    });
  }
}

Object.defineProperty(console, 'assert', {
  value: strictConsoleAssert,
  writable: false,
  configurable: false,
  enumerable: true,
});
Object.freeze(assert);
Object.freeze(assert.strict);
Object.freeze(JSON);

let failed = false;
let done = false;

function isAssertion(err) {
  return err instanceof assert.AssertionError || (err && err.code === 'ERR_ASSERTION');
}

function report(err, stage) {
  failed = true;
  const stack = String((err && err.stack) || err);
  const record = {
    event: isAssertion(err) ? 'fail' : 'error',
    stage,
    type: (err && err.name) || typeof err,
    message: String((err && err.message) || err).slice(0, 2000),
    traceback: stack.slice(0, 4000),
  };
  emit(record);
  process.stderr.write(stack + '\n');
}

process.on('uncaughtException', (err) => {
  report(err, 'async');
  process.exit(1);
});
process.on('unhandledRejection', (err) => {
  report(err, 'async');
  process.exit(1);
});

let loaded = false;
try {
  require(process.argv[2]);
  loaded = true;
} catch (err) {
  report(err, 'tests');
  process.exitCode = 1;
}

process.on('beforeExit', () => {
  if (loaded && !failed && !done) {
    done = true;
    emit({ event: 'pass', nonce: NONCE_VALUE });
  }
});
