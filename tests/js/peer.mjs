// The JavaScript A2A SDK (@a2a-js/sdk 1.3.0; its 0.3.14 client too) on either side of the recording proxy.
//   node peer.mjs serve PORT        an express server of the SDK's JSON-RPC and REST handlers (v0.3 compat on)
//   node peer.mjs converse URL OUT  the SDK's clients talk to the agent at URL; writes OUT (JSON): the results
//                                   they returned and the exact bytes of every exchange
// Every id and time the agent answers with is fixed, so two fresh servers answer alike.
import fs from 'node:fs';

import express from 'express';
import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import {
  ClientFactory as ClientFactory03,
  ClientFactoryOptions as ClientFactoryOptions03,
  JsonRpcTransportFactory as JsonRpcTransportFactory03,
  RestTransportFactory as RestTransportFactory03,
} from 'a2a-js-03/client';

let uuids = 0;
Object.defineProperty(globalThis.crypto, 'randomUUID', {
  value: () => `00000000-0000-4000-8000-${String(++uuids).padStart(12, '0')}`,
});

const CIT_MT = 'application/vnd.upperhand.citations+json';
const TS = { submitted: '2026-06-15T08:00:00.000Z', working: '2026-06-15T08:00:01.000Z', completed: '2026-06-15T08:00:03.000Z' };
const text = (value) => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' });
const data = (value, mediaType = '') => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType });
const CITATION = { study: 'Commuter panel', period: 'W3', base: { name: 'Commuters', n: 812 }, source: { table: 'trips', column: 'mode', function: 'share' } };

const message = (messageId, taskId, contextId, role, parts) => ({ messageId, contextId, taskId, role, parts, metadata: undefined, extensions: [], referenceTaskIds: [] });

class Scripted {
  async execute(ctx, bus) {
    const user = ctx.userMessage;
    const { taskId, contextId } = ctx;
    const word = user.parts[0].content.value;
    if (word === 'message') {
      bus.publish(AgentEvent.message(message(`reply-${user.messageId}`, '', contextId, Role.ROLE_AGENT, [text('Rail is 38%.'), data({ rail: 0.38 }), data(CITATION, CIT_MT)])));
      bus.finished();
      return;
    }
    const status = (state, m, timestamp) => ({ state, message: m, timestamp });
    bus.publish(AgentEvent.task({ id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED, undefined, TS.submitted), artifacts: [], history: [user], metadata: undefined }));
    const working = message(`${taskId}-msg-1`, taskId, contextId, Role.ROLE_AGENT, [text('working')]);
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING, working, TS.working), metadata: undefined }));
    for (let n = 0; n < 3; n++) {
      const artifact = { artifactId: 'answer', name: 'answer', description: '', parts: [data({ minutes: 31 + n }), data(CITATION, CIT_MT)], metadata: undefined, extensions: [] };
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: n > 0, lastChunk: n === 2, metadata: undefined }));
    }
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED, undefined, TS.completed), metadata: undefined }));
    bus.finished();
  }

  async cancelTask() {
    throw new Error('not cancelable');
  }
}

function card(base) {
  return {
    name: 'Kestrel test agent',
    description: 'A scripted agent for the recording proxy tests',
    supportedInterfaces: duplicateInterfacesForLegacy(
      [
        { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
        { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
      ],
      ['JSONRPC', 'HTTP+JSON']
    ),
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['application/json', CIT_MT],
    skills: [],
    signatures: [],
  };
}

async function serve(port) {
  const app = express();
  const requestHandler = new DefaultRequestHandler(card(`http://127.0.0.1:${port}`), new InMemoryTaskStore(), new Scripted());
  const userBuilder = UserBuilder.noAuthentication;
  const legacyCompat = { enabled: true };
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler, legacyCompat }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler, userBuilder, legacyCompat }));
  app.use('/a2a/rest', restHandler({ requestHandler, userBuilder, legacyCompat }));
  const server = app.listen(port, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  console.log('listening');
}

async function converse(base, out) {
  const wire = [];
  const results = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input, init = {}) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    const res = await realFetch(input, init);
    const entry = { method: init.method || 'GET', path: url.pathname, request: Buffer.from(init.body ?? '').toString('base64'), content_type: res.headers.get('content-type') || '' };
    entry.done = res.clone().arrayBuffer().then((bytes) => { entry.response = Buffer.from(bytes).toString('base64'); });
    wire.push(entry);
    return res;
  };
  results.push(await (await fetch(`${base}/${AGENT_CARD_PATH}`)).text());
  const agentCard = card(base); // the in-memory card (the fetched one is its JSON form)
  for (const binding of ['JSONRPC', 'HTTP+JSON']) {
    const transports = binding === 'JSONRPC' ? [new JsonRpcTransportFactory()] : [new RestTransportFactory()];
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports, preferredTransports: [binding] }));
    const client = await factory.createFromAgentCard(agentCard);
    for (const [n, word] of ['message', 'task'].entries()) {
      const request = (stream) => ({ tenant: '', message: message(`m-${binding}-${stream}-${n}`, '', `ctx-${binding}-${stream}-${n}`, Role.ROLE_USER, [text(word)]), configuration: undefined, metadata: undefined });
      results.push(JSON.stringify(await client.sendMessage(request(false))));
      for await (const event of client.sendMessageStream(request(true))) results.push(JSON.stringify(event));
    }
  }
  for (const binding of ['JSONRPC', 'HTTP+JSON']) {
    const transports = binding === 'JSONRPC' ? [new JsonRpcTransportFactory03()] : [new RestTransportFactory03()];
    const factory = new ClientFactory03(ClientFactoryOptions03.createFrom(ClientFactoryOptions03.default, { transports, preferredTransports: [binding] }));
    const client = await factory.createFromUrl(base);
    for (const stream of [false, true]) {
      const message = { kind: 'message', messageId: `m03-${binding}-${stream}`, contextId: `ctx03-${binding}-${stream}`, role: 'user', parts: [{ kind: 'text', text: 'task' }] };
      if (stream) for await (const event of client.sendMessageStream({ message })) results.push(JSON.stringify(event));
      else results.push(JSON.stringify(await client.sendMessage({ message })));
    }
  }
  await Promise.all(wire.map((entry) => entry.done));
  fs.writeFileSync(out, JSON.stringify({ results, wire: wire.map(({ done, ...entry }) => entry) }));
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'serve') await serve(Number(args[0]));
else await converse(args[0], args[1]);
