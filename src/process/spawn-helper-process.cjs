// The spawn helper: a small Node process that starts short-lived programs for the large worker
// (forking the worker itself costs tens of milliseconds). It runs what src/process/spawn-helper.ts
// asks over IPC and holds nothing of the worker's environment. Copied into dist/ by the build.
'use strict';
const { Buffer } = require('node:buffer');
const { spawn } = require('node:child_process');
const { clearTimeout, setTimeout } = require('node:timers');
const children = new Map();
let inFlight = 0;
const paused = new Set();
const send = (msg, child) => {
  inFlight++;
  // Backpressure: a test flooding its output must not pile up messages in this process.
  if (inFlight > 64 && child && !paused.has(child)) {
    paused.add(child);
    for (const stream of child.stdio.slice(1)) stream.pause();
  }
  process.send(msg, undefined, {}, () => {
    inFlight--;
    if (inFlight < 16)
      for (const c of paused) {
        for (const stream of c.stdio.slice(1)) stream.resume();
        paused.delete(c);
      }
  });
};
// Starts the asked program in a process group of its own (so a kill reaches its children); a
// program that cannot be started at all is answered with an error, and null returned.
const start = (msg, stdio) => {
  try {
    return spawn(msg.command, msg.args, { cwd: msg.cwd, env: msg.env, detached: true, stdio });
  } catch (err) {
    send({ type: 'error', id: msg.id, message: String((err && err.message) || err), code: err && err.code });
    return null;
  }
};
process.on('message', (msg) => {
  if (msg.type === 'spawn') {
    const { id } = msg;
    const child = start(msg, ['ignore', 'pipe', 'pipe', 'pipe']);
    if (!child) return;
    let started = false;
    child.once('spawn', () => {
      started = true;
      children.set(id, child);
      send({ type: 'spawned', id, pid: child.pid });
    });
    child.stdout.on('data', (data) => send({ type: 'data', id, data }, child));
    child.stderr.on('data', (data) => send({ type: 'data', id, data, fd: 2 }, child));
    child.stdio[3].on('data', (data) => send({ type: 'results', id, data }, child));
    child.on('error', (err) =>
      send({ type: started ? 'failed' : 'error', id, message: String(err.message), code: err.code }),
    );
    child.on('exit', (code, signal) => send({ type: 'exit', id, code, signal }));
    child.on('close', () => {
      children.delete(id);
      paused.delete(child);
      send({ type: 'close', id });
    });
  } else if (msg.type === 'run') {
    run(msg);
  } else if (msg.type === 'destroy-pipes') {
    const child = children.get(msg.id);
    if (child) for (const stream of child.stdio.slice(1)) stream.destroy();
  }
});
// A short command run to its end (git): output collected here, sent back in one message.
const run = (msg) => {
  const { id } = msg;
  const child = start(msg, [msg.input ? 'pipe' : 'ignore', 'pipe', 'pipe']);
  if (!child) return;
  const out = [];
  const errs = [];
  let size = 0;
  let timedOut = false;
  let overflowed = false;
  const kill = () => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      try {
        child.kill('SIGKILL');
      } catch {
        // Already gone.
      }
    }
  };
  const collect = (into) => (data) => {
    if (overflowed) return;
    size += data.length;
    if (size > msg.maxOutputBytes) {
      overflowed = true;
      kill();
      return;
    }
    into.push(data);
  };
  let started = false;
  let answered = false;
  child.once('spawn', () => {
    started = true;
    children.set(id, child);
  });
  child.stdout.on('data', collect(out));
  child.stderr.on('data', collect(errs));
  if (msg.input) {
    child.stdin.on('error', () => {});
    child.stdin.end(Buffer.from(msg.input));
  }
  const timer =
    msg.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          kill();
        }, msg.timeoutMs)
      : null;
  child.on('error', (err) => {
    if (started || answered) return;
    answered = true;
    if (timer) clearTimeout(timer);
    send({ type: 'error', id, message: String(err.message), code: err.code });
  });
  child.on('close', (code, signal) => {
    if (timer) clearTimeout(timer);
    children.delete(id);
    if (answered) return;
    answered = true;
    send({
      type: 'ran',
      id,
      stdout: Buffer.concat(out),
      stderr: Buffer.concat(errs),
      code,
      signal,
      timedOut,
      overflowed,
    });
  });
};
process.on('disconnect', () => {
  for (const child of children.values()) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  process.exit(0);
});
