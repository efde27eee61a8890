// An independent client through `bulwark gateway`: the official TypeScript
// SDK (the version server-everything pins in package-lock.json; it speaks
// 2025-11-25) starts the gateway over stdio in front of
// @modelcontextprotocol/server-everything and checks every feature the
// gateway relays: the capabilities and instructions, tools (a result
// enveloped), prompts (listed, got, enveloped, completed), resources
// (listed under bulwark://every/, read, a template expanded, the links of
// get-resource-links followed, a subscription), completions of a template
// variable, and tasks: simulate-research-query run as a task, confirmed
// first, polled to its result. 2026-07-28 is checked with the go-sdk (TestResourcesRelayed-
// FromServerEverything), the TypeScript SDK v1 does not speak it.
//
//   BULWARK_BIN=/path/to/bulwark node --test test/gateway/ts-gateway.mjs
//
// scripts/e2e-gateway builds bulwark and runs this.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const bin = process.env.BULWARK_BIN;
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'bulwark-ts-gateway-'));
const OPEN = '<untrusted-data source="mcp-upstream">';
const NS = 'bulwark://every/';
let client;

before(async () => {
  assert.ok(bin, 'set BULWARK_BIN to the bulwark binary');
  const cfg = join(dir, 'gateway.toml');
  writeFileSync(cfg, `[[upstream]]
name = "every"
command = ${JSON.stringify(join(here, 'node_modules/.bin/mcp-server-everything'))}
env = ["PATH"]
trust_annotations = true
confirm_tools = ["simulate-research-query"]
`);
  client = new Client({ name: 'bulwark-e2e-ts-gateway', version: '0.0.0' });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, () => {});
  await client.connect(new StdioClientTransport({
    command: bin, args: ['gateway', '--config', cfg], env: { ...process.env, XDG_DATA_HOME: join(dir, 'xdg') }, stderr: 'ignore',
  }));
});

after(async () => {
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('initialize: the capabilities say what is relayed, the instructions how', () => {
  const caps = client.getServerCapabilities();
  assert.ok(caps.tools, 'tools');
  assert.equal(caps.prompts?.listChanged, true, 'prompts.listChanged');
  assert.equal(caps.resources?.listChanged, true, 'resources.listChanged');
  assert.equal(caps.resources?.subscribe, true, 'resources.subscribe');
  assert.ok(caps.completions, 'completions');
  const ins = client.getInstructions();
  assert.match(ins, /Its prompts are relayed as every\.<prompt>/);
  assert.match(ins, /Its resources are relayed as bulwark:\/\/every\/<its URI>/);
});

test('tools: listed as every.<tool>, a result enveloped', async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  assert.ok(names.includes('every.echo'), `no every.echo in ${names}`);
  const res = await client.callTool({ name: 'every.echo', arguments: { message: 'hi' } });
  assert.notEqual(res.isError, true, res.content?.[0]?.text);
  assert.ok(res.content[0].text.startsWith(OPEN), res.content[0].text);
});

test('prompts: listed, got enveloped, an argument completed', async () => {
  const { prompts } = await client.listPrompts();
  const names = prompts.map((p) => p.name);
  assert.ok(names.includes('every.simple-prompt'), `no every.simple-prompt in ${names}`);
  for (const p of prompts) assert.match(p.description, /^\[relayed from the MCP server "every"/);
  const got = await client.getPrompt({ name: 'every.simple-prompt' });
  assert.ok(got.messages.length > 0);
  for (const m of got.messages) {
    if (m.content.type === 'text') assert.ok(m.content.text.startsWith(OPEN), m.content.text);
  }
  const c = await client.complete({ ref: { type: 'ref/prompt', name: 'every.completable-prompt' }, argument: { name: 'department', value: 'E' } });
  assert.deepEqual(c.completion.values, ['Engineering']);
});

test('resources: listed namespaced, read enveloped, a template expanded, a subscription', async () => {
  const { resources } = await client.listResources();
  assert.ok(resources.length > 0);
  for (const r of resources) assert.ok(r.uri.startsWith(NS), r.uri);
  const read = await client.readResource({ uri: resources[0].uri });
  assert.ok(read.contents[0].uri.startsWith(NS), read.contents[0].uri);
  assert.ok(read.contents[0].text.startsWith(OPEN), read.contents[0].text);
  const { resourceTemplates } = await client.listResourceTemplates();
  const text = resourceTemplates.find((t) => t.uriTemplate.includes('/dynamic/text/'));
  assert.ok(text, `no text template in ${resourceTemplates.map((t) => t.uriTemplate)}`);
  const uri = text.uriTemplate.replace(/\{[^}]*\}/, '3');
  const dyn = await client.readResource({ uri });
  assert.ok(dyn.contents[0].text.startsWith(OPEN), dyn.contents[0].text);
  const c = await client.complete({ ref: { type: 'ref/resource', uri: text.uriTemplate }, argument: { name: 'resourceId', value: '1' } });
  assert.ok(Array.isArray(c.completion.values));
  await client.subscribeResource({ uri: resources[0].uri });
  await client.unsubscribeResource({ uri: resources[0].uri });
  await assert.rejects(client.readResource({ uri: NS + 'demo://resource/dynamic/text/../../static/x' }), 'a template read whose canonical form leaves it');
});

test('resource links: kept as resource_link blocks to namespaced URIs that read through the gateway', async () => {
  const res = await client.callTool({ name: 'every.get-resource-links', arguments: { count: 2 } });
  const links = res.content.filter((b) => b.type === 'resource_link');
  assert.ok(links.length > 0, JSON.stringify(res.content).slice(0, 300));
  for (const l of links) {
    assert.ok(l.uri.startsWith(NS), l.uri);
    const r = await client.readResource({ uri: l.uri });
    assert.ok(r.contents.length > 0);
  }
});

// drain runs a callToolStream to its end and returns what it yielded.
async function drain(stream) {
  const out = [];
  for await (const m of stream) out.push(m);
  return out;
}

test('tasks (2025-11-25): simulate-research-query runs as a task through the gateway, confirmed first', async () => {
  const caps = client.getServerCapabilities();
  assert.ok(caps.tasks?.requests?.tools?.call, `tasks.requests.tools.call in ${JSON.stringify(caps)}`);
  assert.ok(caps.tasks?.list && caps.tasks?.cancel, 'tasks list and cancel');
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === 'every.simulate-research-query');
  assert.ok(tool, 'the task-only tool is listed to a 2025-11-25 client');
  assert.equal(tool.execution?.taskSupport, 'required');
  const args = { topic: 'tide pools' };
  // The tool is in confirm_tools: the gateway's confirmation gate refuses
  // the first call, as a task that failed before anything was sent, whose
  // result carries the token.
  const first = await drain(client.experimental.tasks.callToolStream({ name: tool.name, arguments: args }, CallToolResultSchema, { task: {} }));
  const created = first.find((m) => m.type === 'taskCreated');
  assert.ok(created, JSON.stringify(first));
  assert.match(created.task.taskId, /^every\./);
  const refusal = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
  assert.equal(refusal.isError, true);
  const token = refusal.structuredContent?.confirmToken;
  assert.ok(token, JSON.stringify(refusal));
  // Confirmed, it runs upstream as a task; the client polls it to the end.
  const run = await drain(client.experimental.tasks.callToolStream({ name: tool.name, arguments: { ...args, confirmToken: token } }, CallToolResultSchema, { task: {} }));
  const kinds = run.map((m) => m.type);
  assert.ok(kinds.includes('taskCreated') && kinds.includes('taskStatus'), kinds.join(','));
  const last = run[run.length - 1];
  assert.equal(last.type, 'result', JSON.stringify(last));
  assert.ok(last.result.content[0].text.startsWith(OPEN), last.result.content[0].text);
  assert.match(last.result.content[0].text, /Research Report: tide pools/);
  const { tasks } = await client.experimental.tasks.listTasks();
  const ids = tasks.map((t) => t.taskId);
  assert.ok(ids.includes(created.task.taskId), ids.join(','));
  for (const t of tasks) assert.match(t.taskId, /^every\./);
});
