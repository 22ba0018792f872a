// Sample transcripts made by the real JavaScript A2A SDK (@a2a-js/sdk 1.3.0, and 0.3.14 installed
// under the npm alias `a2a-js-03`).
//
// Server: the 1.3.0 SDK's Express handlers (agent card, JSON-RPC and HTTP+JSON REST, both with
// `legacyCompat: { enabled: true }`) around its DefaultRequestHandler and a scripted AgentExecutor,
// listening on 127.0.0.1 (an ephemeral port). Clients: the 1.3.0 ClientFactory (JSON-RPC and REST
// transports) and the 0.3.14 ClientFactory (v0.3 JSON-RPC and REST transports). A recording `fetch`
// keeps the exact request and response bytes, which are written to the files unchanged; the
// client's returned objects are written with JSON.stringify, one per line, as a Node service that
// logs its client's results stores them. The SQLite task store's schema is made by the SDK's own
// `a2a-db upgrade` command.
//
// Writes sample_transcripts/kestrel-mobility/ and the manifest fragment `js.json` (merged by
// merge_manifest.py). Nothing here parses the files it writes: the fragment is written from the
// scenarios below.
//
// Run by regenerate.sh after `npm ci` in this folder. Determinism: task ids (crypto.randomUUID,
// which the SDK calls for a new task), message, context and artifact ids, and every status
// timestamp are fixed here; JSON-RPC request ids are the SDK's counters; `a2a-db upgrade` runs with
// a fixed clock (fixed-clock.mjs) for its migration ledger. Re-runs write byte-identical files.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import express from 'express';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';

import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import { DefaultRequestHandler as DefaultRequestHandler03, InMemoryTaskStore as InMemoryTaskStore03 } from 'a2a-js-03/server';
import {
  agentCardHandler as agentCardHandler03,
  jsonRpcHandler as jsonRpcHandler03,
  restHandler as restHandler03,
  UserBuilder as UserBuilder03,
} from 'a2a-js-03/server/express';
import {
  ClientFactory as ClientFactory03,
  ClientFactoryOptions as ClientFactoryOptions03,
  JsonRpcTransportFactory as JsonRpcTransportFactory03,
  RestTransportFactory as RestTransportFactory03,
} from 'a2a-js-03/client';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.resolve(HERE, '..', '..'); // sample_transcripts/
const DIR = 'kestrel-mobility';
const FRAG_DIR = process.env.SAMPLES_FRAGMENTS || '/tmp/sample-transcripts-fragments';
const SDK = '@a2a-js/sdk 1.3.0';
const SDK03 = '@a2a-js/sdk 0.3.14';
const HOST = 'kestrel.test'; // the card's host; the recording fetch sends it to 127.0.0.1
const CIT_MT = 'application/vnd.upperhand.citations+json';
const EXT_URI = 'https://standards.upperhandai.com/ext/citations/v1';
const AGENT = 'Kestrel Mobility Agent';
const TS = { submitted: '2026-06-15T08:00:00.000Z', working: '2026-06-15T08:00:01.000Z', completed: '2026-06-15T08:00:03.000Z' };

// ---------------------------------------------------------------------------
// deterministic ids: the SDK names a new task with crypto.randomUUID()

const nextUuids = [];
let uuidCount = 0;
const fixedUuid = () => nextUuids.shift() ?? `00000000-0000-4000-8000-${String(++uuidCount).padStart(12, '0')}`;
Object.defineProperty(globalThis.crypto, 'randomUUID', { value: fixedUuid });
// the 0.3.14 server names a new task with the `uuid` package's v4(), which calls the randomUUID of
// its own module `native.js` (imported by file, past the package's exports map: the same module)
const uuidNative = await import(new URL('./node_modules/uuid/dist/esm/native.js', import.meta.url));
uuidNative.default.randomUUID = fixedUuid;

// ---------------------------------------------------------------------------
// citations and quantitative payloads

function citation(period, baseName, n, column, fn, { weight = 'trip_weight', warnings } = {}) {
  const c = { study: 'Kestrel Commuter Panel', period, fielded: '2026-05-04/2026-05-29' };
  c.base = { name: baseName, n };
  if (weight) c.weight = weight;
  c.source = { table: 'kcp_trips', column, function: fn };
  if (warnings) c.warnings = warnings;
  return c;
}

const W3 = 'Wave 3 (May 2026)';
const COMMUTERS = 'Commuters 18+, Lyon metropolitan area';
const CIT_MODES = citation(W3, COMMUTERS, 2380, 'mode_main', 'extractShare');
const CIT_MODES_W2 = citation('Wave 2 (February 2026)', COMMUTERS, 2291, 'mode_main', 'extractShare');
const CIT_DURATION = citation(W3, COMMUTERS, 2380, 'trip_minutes', 'extractMean', { warnings: ['Trips over 120 minutes trimmed'] });
const CIT_PARKING = citation(W3, 'Commuters who drive', 1120, 'park_ride', 'extractShare');
const CIT_NIGHT = citation(W3, 'Commuters travelling after 22:00', 640, 'night_trips', 'extractMean');
const CIT_CARGO = citation(W3, 'Cargo-bike owners, Villeurbanne', 22, 'cargo_use', 'extractShare', {
  weight: 'unweighted',
  warnings: ['Base under 30: indicative only'],
});
const CIT_DISTRICTS = citation(W3, COMMUTERS, 2380, 'district', 'extractShare');
const CIT_EBIKE_ZERO = citation(W3, 'E-bike commuters, new lanes', 0, 'ebike_km', 'extractMean', { weight: 'unweighted' });
const CIT_TRANSFERS = citation(W3, COMMUTERS, 2380, 'transfers', 'extractMean');

const Q_MODES = {
  modes: [
    { name: 'public_transport', share: 0.41 },
    { name: 'car', share: 0.33 },
    { name: 'bike', share: 0.15 },
    { name: 'walk', share: 0.11 },
  ],
  total: 2380,
};
const Q_MODES_W2 = { modes: [{ name: 'public_transport', share: 0.39 }, { name: 'car', share: 0.36 }], total: 2291 };
const Q_PEAK = { metric: 'peak_hour_share', hours: [{ hour: 8, share: 0.27 }, { hour: 18, share: 0.24 }] };
const Q_DURATION = { mean_minutes: 34.5, median_minutes: 29, total: 2380 };
const Q_PARKING = { share_park_ride: 0.18, total: 1120 };
const Q_NIGHT = { mean_night_trips_per_week: 1.6, total: 640 };
const Q_CARGO = { share_daily_use: 0.64, total: 22 };
const Q_DISTRICTS = [
  { district: 'Lyon 3e', share: 0.14 },
  { district: 'Villeurbanne', share: 0.12 },
  { district: 'Lyon 7e', share: 0.1 },
];
const Q_EBIKE = { mean_km_per_week: 41.3, total: 0 };
const Q_TRANSFERS = { mean_transfers: 1.4, total: 2380 };
const CIT_TRANSIT = citation(W3, 'Public-transport commuters', 980, 'wait_minutes', 'extractMean');
const CIT_LANES = citation(W3, 'Bike commuters', 357, 'lane_use', 'extractShare');
const CIT_WAIT_W1 = citation('Wave 1 (November 2025)', COMMUTERS, 2204, 'wait_minutes', 'extractMean');
const CIT_FARES_W1 = citation('Wave 1 (November 2025)', 'Public-transport commuters', 901, 'fare_type', 'extractShare');
const CIT_WALK_W1 = citation('Wave 1 (November 2025)', 'Commuters who walk', 262, 'walk_minutes', 'extractMean');
const Q_TRANSIT = { mean_wait_minutes: 6.2, share_over_10_minutes: 0.17, total: 980 };
const Q_LANES = [
  { lane: 'protected', share: 0.58 },
  { lane: 'painted', share: 0.29 },
  { lane: 'none', share: 0.13 },
];
const Q_WAIT_W1 = { mean_wait_minutes: 6.9, total: 2204 };
const Q_FARES_W1 = { fares: [{ type: 'monthly_pass', share: 0.62 }, { type: 'single_ticket', share: 0.38 }], total: 901 };
const Q_WALK_W1 = { mean_walk_minutes: 14.5, total: 262 };
const MODES_CSV = 'mode,share\npublic_transport,0.41\ncar,0.33\nbike,0.15\nwalk,0.11\n';

// ---------------------------------------------------------------------------
// parts (the SDK's in-memory shapes)

const P_text = (text) => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' });
const P_data = (value, mediaType = '', metadata = undefined) => ({
  content: { $case: 'data', value },
  metadata,
  filename: '',
  mediaType,
});
const P_cit = (c, metadata = undefined) => P_data(c, CIT_MT, metadata);
const P_url = (url, filename, mediaType) => ({ content: { $case: 'url', value: url }, metadata: undefined, filename, mediaType });
const P_raw = (bytes, filename, mediaType) => ({ content: { $case: 'raw', value: bytes }, metadata: undefined, filename, mediaType });

// ---------------------------------------------------------------------------
// scripted executor: one script per user messageId

const SCRIPTS = new Map();

function agentMessage(id, taskId, contextId, parts) {
  return { messageId: id, contextId, taskId, role: Role.ROLE_AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

function status(state, message, timestamp) {
  return { state, message, timestamp };
}

class ScriptedExecutor {
  async execute(ctx, bus) {
    const user = ctx.userMessage;
    const sc = SCRIPTS.get(user.messageId);
    const { taskId, contextId } = ctx;
    if (sc.kind === 'message') {
      bus.publish(AgentEvent.message(agentMessage(sc.replyId, '', contextId, sc.parts)));
      bus.finished();
      return;
    }
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: status(TaskState.TASK_STATE_SUBMITTED, undefined, TS.submitted),
        artifacts: [],
        history: [user],
        metadata: undefined,
      })
    );
    let n = 0;
    const msg = (parts) => agentMessage(`${taskId}-agent-msg-${++n}`, taskId, contextId, parts);
    for (const step of sc.steps) {
      if (step[0] === 'working') {
        const m = step[1] ? msg([P_text(step[1])]) : undefined;
        bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING, m, TS.working), metadata: undefined }));
      } else if (step[0] === 'artifact') {
        const [, artifactId, name, parts, append, lastChunk] = step;
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: { artifactId, name, description: '', parts, metadata: undefined, extensions: [] },
            append,
            lastChunk,
            metadata: undefined,
          })
        );
      } else if (step[0] === 'completed') {
        const m = step[1] ? msg(step[1]) : undefined;
        bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED, m, TS.completed), metadata: undefined }));
      }
    }
    bus.finished();
  }

  async cancelTask() {
    throw new Error('not cancelable');
  }
}

const artifact = (id, name, parts, append = false, last = true) => ['artifact', id, name, parts, append, last];

// ---------------------------------------------------------------------------
// the agent and its server

function makeCard() {
  return {
    name: AGENT,
    description: 'Commuter mobility answers from the Kestrel Commuter Panel, with re-runnable citations.',
    supportedInterfaces: duplicateInterfacesForLegacy(
      [
        { url: `http://${HOST}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
        { url: `http://${HOST}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
      ],
      ['JSONRPC', 'HTTP+JSON']
    ),
    provider: { organization: 'Upperhand Research Ops', url: 'https://upperhand.example' },
    version: '3.1.0',
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extensions: [{ uri: EXT_URI, description: 'Citations v1: every quantitative answer carries a citation data Part', required: false, params: undefined }],
      extendedAgentCard: false,
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json', CIT_MT],
    skills: [
      {
        id: 'mobility-quant',
        name: 'Commuter mobility figures',
        description: 'Mode shares, trip durations and district splits with a re-runnable citation.',
        tags: ['survey', 'mobility'],
        examples: ['What share of commuters use public transport?'],
        inputModes: ['text/plain'],
        outputModes: ['application/json', CIT_MT],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

function mount(app, prefix, taskStore) {
  const requestHandler = new DefaultRequestHandler(makeCard(), taskStore, new ScriptedExecutor());
  const userBuilder = UserBuilder.noAuthentication;
  const legacyCompat = { enabled: true };
  app.use(`${prefix}/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler, legacyCompat }));
  app.use(`${prefix}/a2a/jsonrpc`, jsonRpcHandler({ requestHandler, userBuilder, legacyCompat }));
  app.use(`${prefix}/a2a/rest`, restHandler({ requestHandler, userBuilder, legacyCompat }));
}

// the same scripts told in v0.3 objects, for the 0.3.14 server

const v03Part = (p) => {
  const { $case, value } = p.content;
  const metadata = p.mediaType && $case === 'data' ? { ...(p.metadata || {}), mediaType: p.mediaType } : p.metadata;
  const part = $case === 'text' ? { kind: 'text', text: value } : { kind: 'data', data: value };
  return metadata ? { ...part, metadata } : part;
};

class ScriptedExecutor03 {
  async execute(ctx, bus) {
    const user = ctx.userMessage;
    const sc = SCRIPTS.get(user.messageId);
    const { taskId, contextId } = ctx;
    bus.publish({ kind: 'task', id: taskId, contextId, status: { state: 'submitted', timestamp: TS.submitted }, history: [user] });
    let n = 0;
    const msg = (parts) => ({ kind: 'message', messageId: `${taskId}-agent-msg-${++n}`, taskId, contextId, role: 'agent', parts: parts.map(v03Part) });
    for (const step of sc.steps) {
      if (step[0] === 'working') {
        const status = { state: 'working', timestamp: TS.working, ...(step[1] ? { message: msg([P_text(step[1])]) } : {}) };
        bus.publish({ kind: 'status-update', taskId, contextId, status, final: false });
      } else if (step[0] === 'artifact') {
        const [, artifactId, name, parts, append, lastChunk] = step;
        const artifact = { artifactId, ...(name ? { name } : {}), parts: parts.map(v03Part) };
        bus.publish({ kind: 'artifact-update', taskId, contextId, artifact, append, lastChunk });
      } else if (step[0] === 'completed') {
        const status = { state: 'completed', timestamp: TS.completed, ...(step[1] ? { message: msg(step[1]) } : {}) };
        bus.publish({ kind: 'status-update', taskId, contextId, status, final: true });
      }
    }
    bus.finished();
  }

  async cancelTask() {
    throw new Error('not cancelable');
  }
}

function makeCard03() {
  const card = makeCard();
  return {
    name: card.name,
    description: card.description,
    url: `http://${HOST}/a2a/jsonrpc`,
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [
      { url: `http://${HOST}/a2a/jsonrpc`, transport: 'JSONRPC' },
      { url: `http://${HOST}/a2a/rest`, transport: 'HTTP+JSON' },
    ],
    provider: card.provider,
    version: '2.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: card.capabilities.extensions.map(({ params, ...e }) => e) },
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map(({ securityRequirements, ...skill }) => skill),
  };
}

function mount03(app, prefix) {
  const requestHandler = new DefaultRequestHandler03(makeCard03(), new InMemoryTaskStore03(), new ScriptedExecutor03());
  const userBuilder = UserBuilder03.noAuthentication;
  app.use(`${prefix}/${AGENT_CARD_PATH}`, agentCardHandler03({ agentCardProvider: requestHandler }));
  app.use(`${prefix}/a2a/jsonrpc`, jsonRpcHandler03({ requestHandler, userBuilder }));
  app.use(`${prefix}/a2a/rest`, restHandler03({ requestHandler, userBuilder }));
}

// ---------------------------------------------------------------------------
// recording fetch: the exact bytes of every exchange

const realFetch = globalThis.fetch;
let base = '';
let hostPrefix = ''; // which mounted agent the card's host stands for
let wire = [];

globalThis.fetch = async (input, init = {}) => {
  const url = String(input instanceof Request ? input.url : input).replace(`http://${HOST}`, base + hostPrefix);
  const request = init.body === undefined ? Buffer.alloc(0) : Buffer.from(init.body);
  const res = await realFetch(url, init);
  const response = Buffer.from(await res.clone().arrayBuffer());
  wire.push({ method: init.method || 'GET', url, request, status: res.status, response });
  return res;
};

function take() {
  const out = wire;
  wire = [];
  return out;
}

// ---------------------------------------------------------------------------
// clients

async function client(binding, agentCard) {
  const transports = binding === 'JSONRPC' ? [new JsonRpcTransportFactory()] : [new RestTransportFactory()];
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports, preferredTransports: [binding] }));
  return factory.createFromAgentCard(agentCard);
}

async function client03(binding) {
  const transports = binding === 'JSONRPC' ? [new JsonRpcTransportFactory03()] : [new RestTransportFactory03()];
  const factory = new ClientFactory03(ClientFactoryOptions03.createFrom(ClientFactoryOptions03.default, { transports, preferredTransports: [binding] }));
  return factory.createFromUrl(`http://${HOST}`);
}

function userMessage(messageId, contextId, text) {
  return { messageId, contextId, taskId: '', role: Role.ROLE_USER, parts: [P_text(text)], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

function sendRequest(message, configuration = undefined) {
  return { tenant: '', message, configuration, metadata: undefined };
}

function plan(messageId, taskId, script) {
  SCRIPTS.set(messageId, script);
  if (taskId) nextUuids.push(taskId);
}

// ---------------------------------------------------------------------------
// writers and the manifest fragment

function write(rel, data) {
  const p = path.join(OUT, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, data);
}

function jsonl(records) {
  const lines = [];
  for (const r of records) {
    lines.push(r.request.toString('utf8').trim());
    lines.push(r.response.toString('utf8').trim());
  }
  return [lines.join('\n') + '\n', lines.length];
}

function objectLines(objects) {
  return [objects.map((o) => JSON.stringify(o)).join('\n') + '\n', objects.length];
}

function sseEvents(data) {
  return data
    .toString('utf8')
    .replace(/\r\n/g, '\n')
    .split('\n\n')
    .filter((block) => block.split('\n').some((line) => line.startsWith('data:'))).length;
}

function numericLeaves(v) {
  if (typeof v === 'number') return 1;
  if (Array.isArray(v)) return v.reduce((s, x) => s + numericLeaves(x), 0);
  if (v && typeof v === 'object') return Object.values(v).reduce((s, x) => s + numericLeaves(x), 0);
  return 0;
}

function citSummary(c, { valid = true, inferred = false } = {}) {
  return {
    study: c.study,
    period: c.period,
    column: c.source.column,
    table: c.source.table,
    function: c.source.function,
    base_n: c.base.n,
    valid,
    inferred,
  };
}

function copyEntry(p, state, terminal, citations, dataPayloads, textParts) {
  return {
    path: p,
    state,
    terminal,
    citations,
    claims: dataPayloads.reduce((s, d) => s + numericLeaves(d), 0),
    data_parts: dataPayloads.length,
    text_parts: textParts,
  };
}

const FR = { files: [], agents: [], results: new Map(), error_responses: [], planted: [] };

function file(p, container, dialects, madeBy, records, description) {
  FR.files.push({ path: p, container, gzip: false, dialects, made_by: madeBy, records, description });
}

function addCopy(key, copy, { taskId = null, contextId = null, messageId } = {}) {
  if (!FR.results.has(key)) {
    const r = { key, task_id: taskId, context_id: contextId };
    if (messageId !== undefined) r.message_id = messageId;
    r.agent = AGENT;
    r.copies = [];
    FR.results.set(key, r);
  }
  FR.results.get(key).copies.push(copy);
}

function plant(rule, severity, key, p, what) {
  FR.planted.push({ rule, severity, key, path: p, what });
}

// ---------------------------------------------------------------------------
// scenarios

async function main() {
  fs.rmSync(path.join(OUT, DIR), { recursive: true, force: true });
  fs.mkdirSync(path.join(OUT, DIR), { recursive: true });

  // the SQLite task store, its schema made by the SDK's own CLI
  const f_db = `${DIR}/task-store.sqlite`;
  const dbPath = path.join(OUT, f_db);
  const a2aDb = path.join(HERE, 'node_modules/@a2a-js/sdk/dist/cli/a2a_db.js');
  execFileSync(process.execPath, ['--import', './fixed-clock.mjs', a2aDb, 'upgrade', '--url', `sqlite:${dbPath}`], {
    cwd: HERE,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const sqlite = new Database(dbPath);
  const db = new Kysely({ dialect: new SqliteDialect({ database: sqlite }) });

  const app = express();
  mount(app, '', new InMemoryTaskStore());
  mount(app, '/stored', new DatabaseTaskStore(db));
  mount03(app, '/v03');
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${server.address().port}`;

  // ---- agent-card.json: the card as a 1.0 client is served it ----------------
  const f_card = `${DIR}/agent-card.json`;
  const cardRes = await fetch(`http://${HOST}/${AGENT_CARD_PATH}`, { headers: { 'A2A-Version': '1.0' } });
  const agentCard = await cardRes.json();
  write(f_card, take()[0].response);
  FR.agents.push({ name: AGENT, card: f_card, declares_extension: true, lists_media_type: true });

  const objects = []; // what the 1.3 client returned, for client-objects.jsonl
  const f_obj = `${DIR}/client-objects.jsonl`;

  // ---- rpc-v1.jsonl: 1.3 JSON-RPC client log ---------------------------------
  const f_rpc = `${DIR}/rpc-v1.jsonl`;
  let ctx = 'ctx-kst-rpc';
  const rpc = await client('JSONRPC', agentCard);
  plan('msg-kst-rpc-001', 'task-kst-rpc-modes', {
    kind: 'task',
    steps: [
      ['working', null],
      artifact('art-modes', 'modes', [
        P_text('Main commuting mode, Wave 3'),
        P_data(Q_MODES, 'application/json'),
        P_raw(Buffer.from(MODES_CSV), 'modes.csv', 'text/csv'),
        P_url('https://kestrel.example/charts/modes-w3.png', 'modes-w3.png', 'image/png'),
        P_cit(CIT_MODES),
      ]),
      ['completed', null],
    ],
  });
  objects.push(await rpc.sendMessage(sendRequest(userMessage('msg-kst-rpc-001', ctx, 'Main commuting mode, Wave 3?'))));
  plan('msg-kst-rpc-002', 'task-kst-rpc-peak', {
    kind: 'task',
    steps: [['working', null], artifact('art-peak', 'peak hours', [P_data(Q_PEAK)]), ['completed', null]],
  });
  await rpc.sendMessage(sendRequest(userMessage('msg-kst-rpc-002', ctx, 'Peak-hour shares?')));
  await rpc.getTask({ tenant: '', id: 'task-kst-rpc-modes', historyLength: undefined });
  await rpc.listTasks({ tenant: '', contextId: ctx, status: 0, pageToken: '', statusTimestampAfter: undefined, includeArtifacts: true });
  try {
    await rpc.getTask({ tenant: '', id: 'task-kst-does-not-exist', historyLength: undefined });
  } catch {
    // the error response is in the log
  }
  let [data, n] = jsonl(take());
  write(f_rpc, data);
  file(f_rpc, 'jsonl', ['1.0-jsonrpc'], `${SDK} JSON-RPC client and server on loopback`, n,
    'v1.0 JSON-RPC client log: SendMessage x2 ({"task":...}), GetTask, ListTasks (includeArtifacts) and a GetTask error '
    + '(task not found). The modes artifact also holds a raw (bytes) and a url file Part.');
  FR.error_responses.push({ path: f_rpc, count: 1 });
  addCopy('task:task-kst-rpc-modes', copyEntry(f_rpc, 'completed', true, [citSummary(CIT_MODES)], [Q_MODES], 1), { taskId: 'task-kst-rpc-modes', contextId: ctx });
  addCopy('task:task-kst-rpc-modes', copyEntry(f_obj, 'completed', true, [citSummary(CIT_MODES)], [Q_MODES], 1), { taskId: 'task-kst-rpc-modes', contextId: ctx });
  addCopy('task:task-kst-rpc-peak', copyEntry(f_rpc, 'completed', true, [], [Q_PEAK], 0), { taskId: 'task-kst-rpc-peak', contextId: ctx });
  plant('uncited-result', 'error', 'task:task-kst-rpc-peak', f_rpc, 'Task returns quantitative JSON (peak-hour shares, 4 numeric values) with no citation Part.');

  // ---- stream-v1.sse: SendStreamingMessage, citation in a later chunk ---------
  const f_sse = `${DIR}/stream-v1.sse`;
  ctx = 'ctx-kst-stream';
  plan('msg-kst-sse-001', 'task-kst-stream-duration', {
    kind: 'task',
    steps: [
      ['working', 'Querying kcp_trips (trip_minutes)'],
      artifact('art-duration', 'duration', [P_text('Commute duration, Wave 3'), P_data(Q_DURATION)], false, false),
      artifact('art-duration', '', [P_cit(CIT_DURATION)], true, true),
      ['completed', null],
    ],
  });
  for await (const event of rpc.sendMessageStream(sendRequest(userMessage('msg-kst-sse-001', ctx, 'Commute duration?')))) {
    objects.push(event);
  }
  let r = take()[0];
  write(f_sse, r.response);
  file(f_sse, 'sse', ['1.0-jsonrpc'], `${SDK} JSON-RPC SendStreamingMessage`, sseEvents(r.response),
    'v1.0 JSON-RPC SSE: Task snapshot, WORKING status with agent text, artifact chunk 1 (text + numbers), chunk 2 '
    + '(append, lastChunk) with the citation, COMPLETED.');
  for (const p of [f_sse, f_obj]) {
    addCopy('task:task-kst-stream-duration', copyEntry(p, 'completed', true, [citSummary(CIT_DURATION)], [Q_DURATION], 2), { taskId: 'task-kst-stream-duration', contextId: ctx });
  }

  // ---- rest-send.json: POST /message:send --------------------------------------
  const f_rs = `${DIR}/rest-send.json`;
  ctx = 'ctx-kst-rest';
  const rest = await client('HTTP+JSON', agentCard);
  plan('msg-kst-rest-001', 'task-kst-rest-parking', {
    kind: 'task',
    steps: [
      ['working', 'Querying kcp_trips (park_ride)'],
      artifact('art-parking', 'park and ride', [P_data(Q_PARKING), P_cit(CIT_PARKING)]),
      ['completed', null],
    ],
  });
  await rest.sendMessage(sendRequest(userMessage('msg-kst-rest-001', ctx, 'Park-and-ride share among drivers?')));
  r = take()[0];
  write(f_rs, r.response);
  file(f_rs, 'json', ['1.0-rest'], `${SDK} HTTP+JSON POST /message:send`, 1,
    'v1.0 REST SendMessage response document {"task":{...}}; its history holds the agent\'s WORKING text.');
  addCopy('task:task-kst-rest-parking', copyEntry(f_rs, 'completed', true, [citSummary(CIT_PARKING)], [Q_PARKING], 1), { taskId: 'task-kst-rest-parking', contextId: ctx });
  // the service logged the task as GetTask returned it with historyLength 0: the agent text is gone
  objects.push(await rest.getTask({ tenant: '', id: 'task-kst-rest-parking', historyLength: 0 }));
  take();
  addCopy('task:task-kst-rest-parking', copyEntry(f_obj, 'completed', true, [citSummary(CIT_PARKING)], [Q_PARKING], 0), { taskId: 'task-kst-rest-parking', contextId: ctx });
  plant('dropped-part', 'warning', 'task:task-kst-rest-parking', f_obj,
    'The logged GetTask result (historyLength 0) lacks the agent text Part of the WORKING status message that rest-send.json holds.');

  // ---- rest-stream-v1.sse: POST /message:stream; the logged ListTasks drops the citation ----
  const f_rss = `${DIR}/rest-stream-v1.sse`;
  ctx = 'ctx-kst-night';
  plan('msg-kst-rest-002', 'task-kst-rest-night', {
    kind: 'task',
    steps: [
      ['working', null],
      artifact('art-night-citation', 'citation', [P_cit(CIT_NIGHT)]),
      ['completed', [P_text('Night commuters make 1.6 trips a week after 22:00.'), P_data(Q_NIGHT)]],
    ],
  });
  for await (const _ of rest.sendMessageStream(sendRequest(userMessage('msg-kst-rest-002', ctx, 'Night trips per week?')))) {
    // the wire is the copy kept
  }
  r = take()[0];
  write(f_rss, r.response);
  file(f_rss, 'sse', ['1.0-rest'], `${SDK} HTTP+JSON POST /message:stream`, sseEvents(r.response),
    'v1.0 REST SSE (bare StreamResponse events): citation artifact, then the COMPLETED status whose agent message '
    + 'holds the text answer and the numbers.');
  addCopy('task:task-kst-rest-night', copyEntry(f_rss, 'completed', true, [citSummary(CIT_NIGHT)], [Q_NIGHT], 1), { taskId: 'task-kst-rest-night', contextId: ctx });
  objects.push(await rest.listTasks({ tenant: '', contextId: ctx, status: 0, pageToken: '', statusTimestampAfter: undefined }));
  take();
  addCopy('task:task-kst-rest-night', copyEntry(f_obj, 'completed', true, [], [Q_NIGHT], 1), { taskId: 'task-kst-rest-night', contextId: ctx });
  plant('dropped-part', 'error', 'task:task-kst-rest-night', f_obj,
    'The logged ListTasks result (no includeArtifacts) lacks the citation Part (artifact art-night-citation) that '
    + 'rest-stream-v1.sse holds.');

  // ---- a bare Message answer, logged only as the client returned it ------------
  ctx = 'ctx-kst-cargo';
  SCRIPTS.set('msg-kst-rpc-010', {
    kind: 'message',
    replyId: 'msg-kst-reply-010',
    parts: [P_text('64 % of cargo-bike owners ride daily.'), P_data(Q_CARGO), P_cit(CIT_CARGO)],
  });
  objects.push(await rpc.sendMessage(sendRequest(userMessage('msg-kst-rpc-010', ctx, 'Daily use of cargo bikes, Villeurbanne?'))));
  take();
  addCopy('message:msg-kst-reply-010', copyEntry(f_obj, null, true, [citSummary(CIT_CARGO)], [Q_CARGO], 1), { contextId: ctx, messageId: 'msg-kst-reply-010' });
  plant('small-base', 'warning', 'message:msg-kst-reply-010', f_obj, 'Valid citation with base.n = 22 (below 30).');

  // ---- client-objects.jsonl ------------------------------------------------------
  [data, n] = objectLines(objects);
  write(f_obj, data);
  file(f_obj, 'jsonl', ['1.0-client-objects'], `${SDK} client results written with JSON.stringify`, n,
    'What the 1.3 client returned, one JSON.stringify per line: a Task from sendMessage (raw Part as a Node Buffer), '
    + 'the StreamResponse objects of a stream ({"payload":{"$case":...,"value":...}}), a GetTask Task (historyLength 0), '
    + 'a ListTasksResponse (no artifacts) and a bare Message. Integer enums, "" defaults, $case/value oneofs.');

  // ---- compat-v03-rpc.jsonl: a 0.3.14 client against the 1.3 server -------------
  const f_cp = `${DIR}/compat-v03-rpc.jsonl`;
  ctx = 'ctx-kst-compat';
  const rpc03 = await client03('JSONRPC');
  take();
  plan('msg-kst-compat-001', 'task-kst-compat-modes', {
    kind: 'task',
    steps: [
      ['working', null],
      artifact('art-modes-w2', 'modes', [P_text('Main commuting mode, Wave 2'), P_data(Q_MODES_W2), P_cit(CIT_MODES_W2)]),
      ['completed', null],
    ],
  });
  await rpc03.sendMessage({
    message: { kind: 'message', messageId: 'msg-kst-compat-001', contextId: ctx, role: 'user', parts: [{ kind: 'text', text: 'Main commuting mode, Wave 2?' }] },
  });
  await rpc03.getTask({ id: 'task-kst-compat-modes' });
  [data, n] = jsonl(take());
  write(f_cp, data);
  file(f_cp, 'jsonl', ['0.3-jsonrpc'], `${SDK} server (legacyCompat); client: ${SDK03} JSON-RPC`, n,
    'v0.3 JSON-RPC log (message/send, tasks/get) answered by the 1.3 server\'s v0.3 layer, which drops the citation '
    + 'Part\'s mediaType.');
  addCopy('task:task-kst-compat-modes', copyEntry(f_cp, 'completed', true, [citSummary(CIT_MODES_W2, { inferred: true })], [Q_MODES_W2], 1), { taskId: 'task-kst-compat-modes', contextId: ctx });
  plant('citation-type-lost', 'error', 'task:task-kst-compat-modes', f_cp,
    'The 1.3 server\'s v0.3 JSON-RPC conversion stripped mediaType from the citation data Part.');

  // ---- compat-v03-rest.json: array data over v0.3 REST ------------------------------
  const f_cr = `${DIR}/compat-v03-rest.json`;
  ctx = 'ctx-kst-compat-rest';
  const rest03 = await client03('HTTP+JSON');
  take();
  plan('msg-kst-compat-002', 'task-kst-compat-districts', {
    kind: 'task',
    steps: [
      ['working', null],
      artifact('art-districts', 'districts', [P_data(Q_DISTRICTS), P_cit(CIT_DISTRICTS, { mediaType: CIT_MT })]),
      ['completed', null],
    ],
  });
  await rest03.sendMessage({
    message: { kind: 'message', messageId: 'msg-kst-compat-002', contextId: ctx, role: 'user', parts: [{ kind: 'text', text: 'Home district split?' }] },
  });
  r = take()[0];
  write(f_cr, r.response);
  file(f_cr, 'json', ['0.3-rest'], `${SDK} server (legacyCompat); client: ${SDK03} REST POST /v1/message:send`, 1,
    'v0.3 REST response document ({"data":{"data":...}} Parts): the array data Part is wrapped as {"value":[...]} '
    + 'without metadata.data_part_compat, and the citation loses both its mediaType and its metadata.mediaType.');
  addCopy('task:task-kst-compat-districts', copyEntry(f_cr, 'completed', true, [citSummary(CIT_DISTRICTS, { inferred: true })], [Q_DISTRICTS], 0), { taskId: 'task-kst-compat-districts', contextId: ctx });
  plant('citation-type-lost', 'error', 'task:task-kst-compat-districts', f_cr,
    'The 1.3 server\'s v0.3 REST conversion dropped the citation Part\'s mediaType and its metadata (which carried the type too).');
  // the same task as a 1.0 REST client reads it: the array unwrapped, the citation typed
  const f_rg = `${DIR}/rest-get-task.json`;
  await rest.getTask({ tenant: '', id: 'task-kst-compat-districts', historyLength: undefined });
  r = take()[0];
  write(f_rg, r.response);
  file(f_rg, 'json', ['1.0-rest'], `${SDK} HTTP+JSON GET /tasks/{id}`, 1,
    'v1.0 REST GetTask document (a bare Task) of the task compat-v03-rest.json holds: here the array data is bare and '
    + 'the citation keeps its mediaType. Same Parts by content as the v0.3 copy.');
  addCopy('task:task-kst-compat-districts', copyEntry(f_rg, 'completed', true, [citSummary(CIT_DISTRICTS)], [Q_DISTRICTS], 0), { taskId: 'task-kst-compat-districts', contextId: ctx });

  // ---- task-store.sqlite: the SDK's DatabaseTaskStore ------------------------------
  hostPrefix = '/stored';
  const stored = await client('JSONRPC', agentCard);
  ctx = 'ctx-kst-db';
  plan('msg-kst-db-001', 'task-kst-db-ebike', {
    kind: 'task',
    steps: [['working', null], artifact('art-ebike', 'e-bike', [P_data(Q_EBIKE), P_cit(CIT_EBIKE_ZERO)]), ['completed', null]],
  });
  await stored.sendMessage(sendRequest(userMessage('msg-kst-db-001', ctx, 'Weekly e-bike distance on the new lanes?')));
  plan('msg-kst-db-002', 'task-kst-db-transfers', {
    kind: 'task',
    steps: [
      ['working', null],
      artifact('art-transfers', 'transfers', [P_data(Q_TRANSFERS)]),
      artifact('art-transfers-citation', 'citation', [P_cit(CIT_TRANSFERS)]),
      ['completed', [P_text('Commuters change 1.4 times per trip on average.')]],
    ],
  });
  await stored.sendMessage(sendRequest(userMessage('msg-kst-db-002', ctx, 'Transfers per trip?')));
  take();
  hostPrefix = '';
  await db.destroy();
  const rows = new Database(dbPath, { readonly: true }).prepare('SELECT count(*) AS n FROM tasks').get().n;
  file(f_db, 'sqlite', ['1.0-store'], `${SDK} DatabaseTaskStore (kysely + better-sqlite3), schema by \`a2a-db upgrade\``, rows,
    'The SDK\'s task store: one row per task (tenant, owner, id, context_id, status_last_updated in epoch ms, '
    + 'status_state, status, artifacts, history, metadata, protocol_version \'1.0\').');
  addCopy('task:task-kst-db-ebike', copyEntry(f_db, 'completed', true, [citSummary(CIT_EBIKE_ZERO, { valid: false })], [Q_EBIKE], 0), { taskId: 'task-kst-db-ebike', contextId: ctx });
  plant('invalid-citation', 'error', 'task:task-kst-db-ebike', f_db, 'Citation base.n is 0, not a positive integer.');
  addCopy('task:task-kst-db-transfers', copyEntry(f_db, 'completed', true, [citSummary(CIT_TRANSFERS)], [Q_TRANSFERS], 1), { taskId: 'task-kst-db-transfers', contextId: ctx });

  // ---- compat-v03-stream.sse / compat-v03-rest-stream.sse: v0.3 streams from the 1.3 server ----
  const f_cs = `${DIR}/compat-v03-stream.sse`;
  ctx = 'ctx-kst-compat-stream';
  plan('msg-kst-compat-003', 'task-kst-compat-transit', {
    kind: 'task',
    steps: [
      ['working', 'Querying kcp_trips (wait_minutes)'],
      artifact('art-transit', 'waiting', [P_text('Waiting time at stops, Wave 3'), P_data(Q_TRANSIT)], false, false),
      artifact('art-transit', '', [P_cit(CIT_TRANSIT, { mediaType: CIT_MT })], true, true),
      ['completed', null],
    ],
  });
  for await (const _ of rpc03.sendMessageStream({
    message: { kind: 'message', messageId: 'msg-kst-compat-003', contextId: ctx, role: 'user', parts: [{ kind: 'text', text: 'Waiting time at stops?' }] },
  })) {
    // the wire is the copy kept
  }
  r = take()[0];
  write(f_cs, r.response);
  file(f_cs, 'sse', ['0.3-jsonrpc'], `${SDK} server (legacyCompat); client: ${SDK03} JSON-RPC message/stream`, sseEvents(r.response),
    'v0.3 JSON-RPC SSE from the 1.3 server\'s v0.3 layer: task, status-update working with agent text, artifact-update '
    + 'chunks (the citation appended in chunk 2), final status-update. The citation Part loses its mediaType, but '
    + 'its metadata.mediaType (set by the executor) survives, and with it the type.');
  addCopy('task:task-kst-compat-transit', copyEntry(f_cs, 'completed', true, [citSummary(CIT_TRANSIT)], [Q_TRANSIT], 2), { taskId: 'task-kst-compat-transit', contextId: ctx });

  const f_crs = `${DIR}/compat-v03-rest-stream.sse`;
  ctx = 'ctx-kst-compat-lanes';
  plan('msg-kst-compat-004', 'task-kst-compat-lanes', {
    kind: 'task',
    steps: [
      ['working', null],
      artifact('art-lanes', 'lanes', [P_data(Q_LANES)], false, false),
      artifact('art-lanes', '', [P_cit(CIT_LANES)], true, true),
      ['completed', null],
    ],
  });
  for await (const _ of rest03.sendMessageStream({
    message: { kind: 'message', messageId: 'msg-kst-compat-004', contextId: ctx, role: 'user', parts: [{ kind: 'text', text: 'Which lanes do bike commuters use?' }] },
  })) {
    // the wire is the copy kept
  }
  r = take()[0];
  write(f_crs, r.response);
  file(f_crs, 'sse', ['0.3-rest'], `${SDK} server (legacyCompat); client: ${SDK03} REST POST /v1/message:stream`, sseEvents(r.response),
    'v0.3 REST SSE from the 1.3 server\'s v0.3 layer: array data wrapped as {"value":[...]} without data_part_compat in '
    + 'chunk 1, the citation appended in chunk 2 without its mediaType.');
  addCopy('task:task-kst-compat-lanes', copyEntry(f_crs, 'completed', true, [citSummary(CIT_LANES, { inferred: true })], [Q_LANES], 0), { taskId: 'task-kst-compat-lanes', contextId: ctx });
  plant('citation-type-lost', 'error', 'task:task-kst-compat-lanes', f_crs,
    'The 1.3 server\'s v0.3 REST stream conversion dropped the citation Part\'s mediaType.');

  // ---- the 0.3.14 server and client (the agent before its upgrade) ---------------
  hostPrefix = '/v03';
  const objects03 = [];
  const f_obj03 = `${DIR}/client-objects-v03.jsonl`;
  const f_v3 = `${DIR}/v03-rpc.jsonl`;
  ctx = 'ctx-kst-v03';
  const old03 = await client03('JSONRPC');
  take();
  plan('msg-kst-v03-001', 'task-kst-v03-wait', {
    kind: 'task',
    steps: [['working', null], artifact('art-wait', 'waiting', [P_data(Q_WAIT_W1), P_cit(CIT_WAIT_W1)]), ['completed', null]],
  });
  objects03.push(await old03.sendMessage({
    message: { kind: 'message', messageId: 'msg-kst-v03-001', contextId: ctx, role: 'user', parts: [{ kind: 'text', text: 'Waiting time at stops, Wave 1?' }] },
  }));
  objects03.push(await old03.getTask({ id: 'task-kst-v03-wait' }));
  [data, n] = jsonl(take());
  write(f_v3, data);
  file(f_v3, 'jsonl', ['0.3-jsonrpc'], `${SDK03} JSON-RPC client and server`, n,
    'v0.3 JSON-RPC log of the 0.3.14 SDK: message/send (bare Task) and tasks/get. The citation\'s type is in metadata.mediaType.');
  for (const p of [f_v3, f_obj03]) {
    addCopy('task:task-kst-v03-wait', copyEntry(p, 'completed', true, [citSummary(CIT_WAIT_W1)], [Q_WAIT_W1], 0), { taskId: 'task-kst-v03-wait', contextId: ctx });
  }

  const f_v3s = `${DIR}/v03-stream.sse`;
  ctx = 'ctx-kst-v03-stream';
  plan('msg-kst-v03-002', 'task-kst-v03-fares', {
    kind: 'task',
    steps: [
      ['working', 'Querying kcp_trips (fare_type)'],
      artifact('art-fares', 'fares', [P_text('Fare types, Wave 1'), P_data(Q_FARES_W1)], false, false),
      artifact('art-fares', '', [P_cit(CIT_FARES_W1)], true, true),
      ['completed', null],
    ],
  });
  for await (const event of old03.sendMessageStream({
    message: { kind: 'message', messageId: 'msg-kst-v03-002', contextId: ctx, role: 'user', parts: [{ kind: 'text', text: 'Fare types, Wave 1?' }] },
  })) {
    objects03.push(event);
  }
  r = take()[0];
  write(f_v3s, r.response);
  file(f_v3s, 'sse', ['0.3-jsonrpc'], `${SDK03} JSON-RPC message/stream`, sseEvents(r.response),
    'v0.3 JSON-RPC SSE of the 0.3.14 SDK: task, status-update working with agent text, artifact-update chunks (citation '
    + 'appended in chunk 2), status-update final:true.');
  for (const p of [f_v3s, f_obj03]) {
    addCopy('task:task-kst-v03-fares', copyEntry(p, 'completed', true, [citSummary(CIT_FARES_W1)], [Q_FARES_W1], 2), { taskId: 'task-kst-v03-fares', contextId: ctx });
  }

  const f_v3r = `${DIR}/v03-rest-send.json`;
  ctx = 'ctx-kst-v03-rest';
  const old03rest = await client03('HTTP+JSON');
  take();
  plan('msg-kst-v03-003', 'task-kst-v03-walk', {
    kind: 'task',
    steps: [['working', null], artifact('art-walk', 'walking', [P_text('Walking time, Wave 1'), P_data(Q_WALK_W1), P_cit(CIT_WALK_W1)]), ['completed', null]],
  });
  objects03.push(await old03rest.sendMessage({
    message: { kind: 'message', messageId: 'msg-kst-v03-003', contextId: ctx, role: 'user', parts: [{ kind: 'text', text: 'Walking time, Wave 1?' }] },
  }));
  r = take()[0];
  write(f_v3r, r.response);
  file(f_v3r, 'json', ['0.3-rest'], `${SDK03} REST POST /v1/message:send (client and server)`, 1,
    'v0.3 REST response document of the 0.3.14 SDK ({"data":{"data":...}} Parts, message parts under "content"). Its '
    + 'REST conversion drops Part metadata, so the citation loses the metadata.mediaType that typed it.');
  for (const p of [f_v3r, f_obj03]) {
    addCopy('task:task-kst-v03-walk', copyEntry(p, 'completed', true, [citSummary(CIT_WALK_W1, { inferred: true })], [Q_WALK_W1], 1), { taskId: 'task-kst-v03-walk', contextId: ctx });
    plant('citation-type-lost', 'error', 'task:task-kst-v03-walk', p,
      'The 0.3.14 SDK\'s REST server dropped the citation Part\'s metadata (its only media type); the client\'s objects '
      + 'carry the loss on.');
  }
  hostPrefix = '';

  [data, n] = objectLines(objects03);
  write(f_obj03, data);
  file(f_obj03, 'jsonl', ['0.3-client-objects'], `${SDK03} client results written with JSON.stringify`, n,
    'What the 0.3.14 client returned, one JSON.stringify per line: v0.3 objects (a Task from message/send, tasks/get, '
    + 'the stream events, a REST send), the same shapes as its wire.');

  server.close();
  fs.mkdirSync(FRAG_DIR, { recursive: true });
  const doc = { ...FR, results: [...FR.results.values()] };
  fs.writeFileSync(path.join(FRAG_DIR, 'js.json'), JSON.stringify(doc, null, 1));
}

await main();
