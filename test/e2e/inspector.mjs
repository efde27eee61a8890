// The MCP Inspector CLI (a third independent client) against
// `bulwark dns --http` (local provider): it lists the tools and calls one
// in the legacy era (2025-11-25), and walks delete_zone's confirmation gate
// over HTTP in the modern era (2026-07-28, pinned by a config file): refused
// without a token, refused with a wrong one, done with the fresh one.
//
//   BULWARK_URL=http://127.0.0.1:PORT/mcp node --test test/e2e/inspector.mjs
//
// Each run of `mcp-inspector --cli` connects, sends one request and exits:
// 0 on success, 5 on a tool error (isError), with one JSON object on stdout.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const url = process.env.BULWARK_URL;
const zone = `insp-${process.pid}.example`;
let config;

before(() => {
  assert.ok(url, 'set BULWARK_URL to the server\'s /mcp endpoint');
  config = join(mkdtempSync(join(tmpdir(), 'bulwark-inspector-')), 'servers.json');
  writeFileSync(config, JSON.stringify({
    mcpServers: { dns: { type: 'streamable-http', url, protocolEra: 'modern' } },
  }));
});

// inspector runs one CLI request; target is the legacy URL or the modern
// config. It returns the exit status and the parsed result.
function inspector(modern, ...args) {
  const target = modern ? ['--config', config, '--server', 'dns'] : [url, '--transport', 'http'];
  const r = spawnSync('mcp-inspector', ['--cli', ...target, ...args, '--format', 'json'], {
    encoding: 'utf8', timeout: 30_000,
    env: { ...process.env, MCP_INSPECTOR_SECRET_STORE: 'memory' },
  });
  let out;
  try { out = JSON.parse(r.stdout).result; } catch { out = undefined; }
  return { status: r.status, result: out, stderr: r.stderr };
}

const call = (modern, name, args) =>
  inspector(modern, '--method', 'tools/call', '--tool-name', name, '--tool-args-json', JSON.stringify(args));

test('legacy era: tools/list and a call', () => {
  const list = inspector(false, '--method', 'tools/list');
  assert.equal(list.status, 0, list.stderr);
  const names = list.result.tools.map((t) => t.name);
  for (const want of ['list_zones', 'create_zone', 'delete_zone']) assert.ok(names.includes(want), `no ${want}: ${names}`);
  const created = call(false, 'create_zone', { name: zone, mode: 'primary' });
  assert.equal(created.status, 0, created.stderr);
  assert.equal(created.result.structuredContent.zone.name, zone);
  assert.match(created.result.content[0].text, /^<untrusted-data source="local-zone-store">/);
});

test('modern era: delete_zone refused without a token, with a wrong one, done with the fresh one', () => {
  const refused = call(true, 'delete_zone', { zone });
  assert.equal(refused.status, 5, `the first call is a tool error: ${refused.stderr}`);
  assert.ok(refused.result._meta?.['io.modelcontextprotocol/serverInfo'], 'answered in the 2026-07-28 era');
  assert.equal(refused.result.structuredContent.error.code, 'confirmation_required');
  const token = refused.result.structuredContent.confirmToken;
  assert.equal(typeof token, 'string');

  const wrong = call(true, 'delete_zone', { zone, confirmToken: token + 'x' });
  assert.equal(wrong.status, 5, 'a wrong token is refused');
  assert.match(wrong.result.content[0].text, /does not confirm this exact call/);
  const fresh = wrong.result.structuredContent.confirmToken;
  assert.equal(typeof fresh, 'string', 'the refusal issues a fresh token');

  const done = call(true, 'delete_zone', { zone, confirmToken: fresh });
  assert.equal(done.status, 0, `confirmed: ${done.stderr}`);

  const replay = call(true, 'delete_zone', { zone, confirmToken: fresh });
  assert.equal(replay.status, 5, 'the token is spent and the zone gone');
  const zones = call(true, 'list_zones', {});
  assert.equal(zones.status, 0);
  assert.ok(!zones.result.content[0].text.includes(`"${zone}"`), 'the zone is no longer listed');
});
