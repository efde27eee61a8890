// Consent by elicitation with an independent client: the official
// TypeScript SDK (v1, protocol 2025-11-25) starts `bulwark dns` over stdio
// (a session, so the server can ask), declares form elicitation, and answers
// delete_zone's question: decline first (the zone stays), then accept (the
// zone goes). No confirmToken is involved.
//
//   BULWARK_BIN=/path/to/bulwark node --test test/e2e/ts-elicit.mjs
//
// scripts/e2e builds bulwark and runs this.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const bin = process.env.BULWARK_BIN;
const zone = `consent-${process.pid}.example`;
const dir = mkdtempSync(join(tmpdir(), 'bulwark-elicit-'));
const asked = [];
let answer = 'decline';
let client;

before(async () => {
  assert.ok(bin, 'set BULWARK_BIN to the bulwark binary');
  client = new Client({ name: 'bulwark-e2e-ts-elicit', version: '0.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params);
    return answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: answer };
  });
  const env = { ...process.env, XDG_DATA_HOME: join(dir, 'xdg') };
  delete env.HETZNER_API_TOKEN;
  await client.connect(new StdioClientTransport({
    command: bin, args: ['dns', '--provider', 'local', '--dns-listen', 'off', '--data-dir', join(dir, 'zones')], env, stderr: 'ignore',
  }));
});

after(async () => {
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (name, args) => client.callTool({ name, arguments: args });

async function listed() {
  const res = await call('list_zones', {});
  assert.notEqual(res.isError, true, res.content?.[0]?.text);
  return res.content[0].text.includes(`"${zone}"`);
}

test('delete_zone asks the person; a decline leaves the zone, an accept deletes it', async () => {
  const created = await call('create_zone', { name: zone, mode: 'primary' });
  assert.notEqual(created.isError, true, created.content?.[0]?.text);
  assert.ok(await listed(), 'the zone exists');

  const declined = await call('delete_zone', { zone });
  assert.equal(asked.length, 1, 'the server asked once');
  const q = asked[0];
  assert.equal(q.mode ?? 'form', 'form');
  assert.ok(q.message.includes(zone) && /cannot be undone/.test(q.message), `the question names the zone and the loss: ${q.message}`);
  assert.equal(q.requestedSchema.properties.confirm.type, 'boolean');
  assert.equal(declined.isError, true, 'a decline is a tool error');
  assert.equal(declined.structuredContent?.error?.code, 'confirmation_declined');
  assert.equal(declined.structuredContent?.confirmToken, undefined, 'no token on this path');
  assert.ok(await listed(), 'a decline leaves the zone untouched');

  answer = 'cancel';
  const cancelled = await call('delete_zone', { zone });
  assert.equal(cancelled.structuredContent?.error?.code, 'confirmation_declined');
  assert.ok(await listed(), 'a cancel leaves the zone untouched');

  answer = 'accept';
  const done = await call('delete_zone', { zone });
  assert.notEqual(done.isError, true, done.content?.[0]?.text);
  assert.equal(asked.length, 3, 'asked once per call');
  assert.ok(!(await listed()), 'an accept deletes the zone');
});
