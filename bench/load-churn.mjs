// The churn process of `npm run bench:load` (forked by bench/load.mjs, IPC only): it owns the skill tree. It writes
// the initial tree, then at a steady rate edits files, adds, removes, renames, breaks and fixes skills until told to
// stop. Every version of every file it ever puts at a path is reported to the parent (`wrote`, with the URI and the
// digest), so that a read's bytes can be told apart from bytes nobody wrote; every skill it removes, renames away or
// breaks is reported (`gone`), so that -32602 for its URIs counts as expected. Content is never repeated.
//
// Messages in:  { type: 'init', root, skills, seed } → { type: 'ready' }
//               { type: 'start', rate }  (operations per second)
//               { type: 'stop' }         → { type: 'done', ops, model }, then exit
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, promises as fsp, writeFileSync } from 'node:fs';
import path from 'node:path';

import { seededRandom as random } from './load-tracker.mjs';

const digest = (bytes) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const EMPTY = digest(Buffer.alloc(0));
/** Files above this size are written atomically (temp file + rename); smaller ones in place (empty, then full). */
const ATOMIC_FROM_BYTES = 32 * 1024;

let root;
let next;
let counter = 0;
/** name → { broken: boolean, files: Map<rel, Buffer> } */
const skills = new Map();
const ops = { edit: 0, add: 0, remove: 0, rename: 0, break: 0, fix: 0 };
let running = false;
let stopping = false;

const send = (message) => process.send?.(message);
const uriOf = (name, rel) => `skill://${name}/${rel}`;
const manifest = (name, description) =>
  Buffer.from(`---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nA skill of the load benchmark.\n`);
const broken = (name, id) => Buffer.from(`---\nname: ${name}\n---\n\nBroken by churn ${id}: no description.\n`);
const text = (name, rel, id, bytes) => {
  const line = `${name}/${rel} version ${id} `;
  return Buffer.from(line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes));
};

function freshFiles(name, id) {
  const files = new Map();
  files.set('SKILL.md', manifest(name, `Skill ${name}, written by churn ${id}.`));
  files.set('notes.md', text(name, 'notes.md', id, 1024 + Math.floor(next() * 3072)));
  files.set('refs/a.md', text(name, 'refs/a.md', id, 2048 + Math.floor(next() * 6144)));
  files.set('refs/b.md', text(name, 'refs/b.md', id, 2048 + Math.floor(next() * 6144)));
  if (next() < 0.1) files.set('assets/blob.bin', randomBytes(64 * 1024 + Math.floor(next() * 192 * 1024)));
  return files;
}

/** Writes one file the way the churn does, reporting every state a reader could see at that path. */
async function writeFile(name, rel, bytes) {
  const file = path.join(root, name, ...rel.split('/'));
  await fsp.mkdir(path.dirname(file), { recursive: true });
  if (bytes.length >= ATOMIC_FROM_BYTES) {
    const temp = path.join(path.dirname(file), `.${path.basename(file)}.tmp-${++counter}`);
    await fsp.writeFile(temp, bytes);
    send({ type: 'wrote', uri: uriOf(name, rel), digest: digest(bytes) });
    await fsp.rename(temp, file);
  } else {
    send({ type: 'wrote', uri: uriOf(name, rel), digest: EMPTY });
    send({ type: 'wrote', uri: uriOf(name, rel), digest: digest(bytes) });
    await fsp.writeFile(file, bytes);
  }
}

function init({ root: dir, skills: count, seed }) {
  root = dir;
  next = random(seed);
  for (let index = 0; index < count; index++) {
    const name = `k${String(index).padStart(5, '0')}`;
    const files = freshFiles(name, 0);
    skills.set(name, { broken: false, files });
    for (const [rel, bytes] of files) {
      const file = path.join(root, name, ...rel.split('/'));
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, bytes);
      send({ type: 'wrote', uri: uriOf(name, rel), digest: digest(bytes) });
    }
  }
  send({ type: 'ready' });
}

function pick(predicate = () => true) {
  const names = [...skills.keys()].filter((name) => predicate(skills.get(name)));
  return names.length === 0 ? undefined : names[Math.floor(next() * names.length)];
}

async function step() {
  const roll = next();
  const id = ++counter;
  if (roll < 0.5) {
    const name = pick();
    const skill = skills.get(name);
    const rels = [...skill.files.keys()].filter((rel) => rel !== 'SKILL.md');
    const rel = rels[Math.floor(next() * rels.length)];
    const old = skill.files.get(rel);
    const bytes = rel.endsWith('.bin')
      ? randomBytes(old.length)
      : text(name, rel, id, 1024 + Math.floor(next() * 6144));
    skill.files.set(rel, bytes);
    await writeFile(name, rel, bytes);
    ops.edit++;
  } else if (roll < 0.62 || skills.size < 20) {
    const name = `a${String(id).padStart(6, '0')}`;
    const files = freshFiles(name, id);
    skills.set(name, { broken: false, files });
    // The manifest last: the skill appears complete or not at all (its files may be seen as they come).
    for (const [rel, bytes] of [...files].filter(([rel]) => rel !== 'SKILL.md')) await writeFile(name, rel, bytes);
    await writeFile(name, 'SKILL.md', files.get('SKILL.md'));
    ops.add++;
  } else if (roll < 0.74) {
    const name = pick();
    skills.delete(name);
    send({ type: 'gone', skill: name });
    await fsp.rm(path.join(root, name), { recursive: true, force: true });
    ops.remove++;
  } else if (roll < 0.86) {
    const name = pick();
    const renamed = `r${String(id).padStart(6, '0')}`;
    const skill = skills.get(name);
    skills.delete(name);
    skills.set(renamed, skill);
    send({ type: 'gone', skill: name });
    // The files arrive at their new URIs with their old bytes; SKILL.md is then rewritten with the new name.
    for (const [rel, bytes] of skill.files) send({ type: 'wrote', uri: uriOf(renamed, rel), digest: digest(bytes) });
    send({ type: 'gone', skill: renamed });
    await fsp.rename(path.join(root, name), path.join(root, renamed));
    const bytes = skill.broken ? broken(renamed, id) : manifest(renamed, `Renamed from ${name} by churn ${id}.`);
    skill.files.set('SKILL.md', bytes);
    await writeFile(renamed, 'SKILL.md', bytes);
    ops.rename++;
  } else {
    // Break a valid skill, or fix a broken one.
    const name = next() < 0.5 ? (pick((skill) => skill.broken) ?? pick()) : pick((skill) => !skill.broken);
    const skill = skills.get(name);
    const bytes = skill.broken ? manifest(name, `Fixed by churn ${id}.`) : broken(name, id);
    if (!skill.broken) send({ type: 'gone', skill: name });
    skill.broken = !skill.broken;
    skill.files.set('SKILL.md', bytes);
    await writeFile(name, 'SKILL.md', bytes);
    ops[skill.broken ? 'break' : 'fix']++;
  }
}

async function run(rate) {
  running = true;
  const started = performance.now();
  let done = 0;
  while (!stopping) {
    await step();
    done++;
    // Paced: operation n starts no earlier than n / rate seconds into the run.
    const due = started + (done / rate) * 1000;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  running = false;
  finish();
}

function finish() {
  const model = [...skills]
    .filter(([, skill]) => !skill.broken)
    .map(([name, skill]) => ({
      uri: uriOf(name, 'SKILL.md'),
      resources: [...skill.files]
        .map(([rel, bytes]) => ({ uri: uriOf(name, rel), digest: digest(bytes), size: bytes.length }))
        .sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0)),
    }))
    .sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
  send({ type: 'done', ops, model });
  process.disconnect?.();
}

process.on('message', (message) => {
  if (message.type === 'init') init(message);
  else if (message.type === 'start') void run(message.rate);
  else if (message.type === 'stop') {
    stopping = true;
    if (!running) finish();
  }
});
process.on('disconnect', () => {
  stopping = true;
});
