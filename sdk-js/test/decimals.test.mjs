// Decimals across the ABI: a number a double holds exactly arrives as a
// number, any other as a Decimal with its exact text, and a Decimal or a
// bigint goes back to the engine as that exact number.
// Run: npm test (after npm run build).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BadVariablesError, Decimal, Engine } from '../dist/index.js';
import { ModuleInstance } from '../dist/module.js';
import { exactNumber, parseJSON, stringifyJSON } from '../dist/numbers.js';
import { WorkerTransport } from '../dist/transport.js';

const decimalsBpmn = readFileSync(new URL('../../engine/testdata/decimals.bpmn', import.meta.url));

describe('numbers across the module boundary', () => {
  it('keep every digit through mappings, jobs, messages and a checkpoint', async () => {
    const e = await Engine.create();
    await e.deploy(decimalsBpmn, 'decimals.bpmn');
    const { instanceKey } = await e.start('decimals', { big: 12345678901234567890n });
    let vars = await e.variables(instanceKey);
    assert.equal(vars.sum, 0.3, '0.1 + 0.2 computed in a mapping arrives as 0.3 exactly');
    assert.equal(vars.scaled, 1005, '1.005 * 1000 = 1005');
    assert.ok(vars.third instanceof Decimal);
    assert.equal(vars.third.text, '0.3333333333333333333333333333333333');
    assert.equal(String(vars.next), '12345678901234567891');
    assert.equal(vars.next.toBigInt(), 12345678901234567891n);
    assert.deepEqual(vars.list, [new Decimal('12345678901234567890'), 2.5]);

    const [job] = await e.jobs({ type: 'work' });
    assert.equal(job.variables.bigIn.text, '12345678901234567890', "a job's variables keep every digit");
    // Sent back as it came: the engine holds the same number.
    await e.completeJob(job.key, { echoed: job.variables.bigIn, count: 2n ** 60n + 1n, paid: new Decimal('98765432109876543210.5') });
    vars = await e.variables(instanceKey);
    assert.deepEqual(vars.echoed, new Decimal('12345678901234567890'));
    assert.deepEqual(vars.count, new Decimal('1152921504606846977'));
    assert.deepEqual(vars.paid, new Decimal('98765432109876543210.5'));

    const doc = await e.checkpoint();
    const text = new TextDecoder().decode(doc);
    assert.match(text, /"count":1152921504606846977[,}]/, 'the document written here holds the digits as a JSON number');
    const again = await Engine.create({ state: doc });
    assert.equal(new TextDecoder().decode(await again.checkpoint()), text, 'a restore reads back every digit');

    await again.publishMessage({ name: 'paid', correlationKey: '12345678901234567891', variables: { fee: new Decimal('0.10000000000000000001') } });
    const info = await again.instance(instanceKey);
    assert.equal(info.state, 'completed', "the correlation key is next's full text");
    assert.deepEqual(info.variables.fee, new Decimal('0.10000000000000000001'));
    e.close();
    again.close();
  });

  it('refuses a Decimal that is no JSON number', () => {
    assert.throws(() => new Decimal('1e'), TypeError);
    assert.throws(() => new Decimal('0x10'), TypeError);
    assert.throws(() => new Decimal('NaN'), TypeError);
  });

  it('sends an integer above 2^53 as given, not as its nearest double', async () => {
    const e = await Engine.create();
    await e.deploy(decimalsBpmn, 'decimals.bpmn');
    const { instanceKey } = await e.start('decimals', { big: 9007199254740993n });
    const vars = await e.variables(instanceKey);
    assert.equal(String(vars.next), '9007199254740994');
    assert.equal(vars.next, 9007199254740994, 'a number a double holds is a number');
    await assert.rejects(e.start('decimals', { big: Number.NaN }), BadVariablesError);
    e.close();
  });
});

describe('exactNumber and the JSON codec', () => {
  const cases = [
    ['0.3', 0.3],
    ['1005', 1005],
    ['1e21', 1e21],
    ['1E+21', 1e21],
    ['-0', -0],
    ['9007199254740992', 9007199254740992],
    ['0.30000000000000004', 0.30000000000000004],
    ['5e-324', 5e-324],
    ['1.7976931348623157e308', 1.7976931348623157e308],
  ];
  for (const [text, want] of cases) {
    it(`${text} is the number ${want}`, () => assert.equal(exactNumber(text), want));
  }
  for (const text of ['9007199254740993', '0.1000000000000000000001', '1e400', '1.234567890123456789E+41', '-12345678901234567890']) {
    it(`${text} is a Decimal`, () => assert.deepEqual(exactNumber(text), new Decimal(text)));
  }
  it('parses like JSON.parse, with Decimals for what a double cannot hold', () => {
    const text = '{"a":[1,2.5,12345678901234567890,{"s":"x\\"y\\\\","__proto__":1}],"b":"1e5 \\u00e9","c":null,"d":true,"e":1e400}';
    const v = parseJSON(text);
    assert.deepEqual(v.a[0], 1);
    assert.deepEqual(v.a[2], new Decimal('12345678901234567890'));
    assert.equal(v.a[3].s, 'x"y\\');
    assert.ok(Object.hasOwn(v.a[3], '__proto__'), '__proto__ is an own key, as JSON.parse makes it');
    assert.equal(v.b, '1e5 é');
    assert.equal(v.c, null);
    assert.equal(v.d, true);
    assert.deepEqual(v.e, new Decimal('1e400'));
    assert.throws(() => parseJSON('[12345678901234567890,]'), SyntaxError);
    assert.throws(() => parseJSON('12345678901234567890 x'), SyntaxError);
  });
  it('writes Decimals and bigints as bare numbers, and strings as strings', () => {
    assert.equal(
      stringifyJSON({ d: new Decimal('0.10000000000000000001'), b: -(2n ** 64n), s: '12345678901234567890', n: [1.5] }),
      '{"d":0.10000000000000000001,"b":-18446744073709551616,"s":"12345678901234567890","n":[1.5]}',
    );
    assert.equal(JSON.stringify({ d: new Decimal('1.5') }), '{"d":"1.5"}', 'outside the SDK a Decimal is its text');
  });
});

// The worker transport carries JSON text, so Decimals survive the
// structured clone of postMessage both ways. The worker's side here is
// worker.ts's: instantiate, then callText each request.
describe('the worker transport', () => {
  it('keeps every digit across postMessage', async () => {
    const module = await WebAssembly.compile(readFileSync(new URL('../dist/flowtrack.wasm', import.meta.url)));
    let instance;
    const worker = {
      onmessage: null,
      onerror: null,
      terminate() {},
      postMessage(msg) {
        msg = structuredClone(msg);
        queueMicrotask(async () => {
          let reply;
          if (msg.kind === 'init') {
            instance = await ModuleInstance.instantiate(module);
            reply = { kind: 'ready' };
          } else {
            reply = { kind: 'reply', id: msg.id, envelope: instance.callText(msg.op, msg.request) };
          }
          this.onmessage({ data: structuredClone(reply) });
        });
      },
    };
    const t = await WorkerTransport.start(worker);
    const dep = await t.call('deploy', { name: 'decimals.bpmn', xmlBase64: decimalsBpmn.toString('base64') });
    assert.equal(dep.ok, true, JSON.stringify(dep.error));
    const started = await t.call('start', { processId: 'decimals', variables: { big: new Decimal('12345678901234567890') } });
    assert.equal(started.ok, true, JSON.stringify(started.error));
    const inst = await t.call('instance', { instanceKey: started.result.instanceKey });
    assert.deepEqual(inst.result.variables.next, new Decimal('12345678901234567891'));
    assert.ok(inst.result.variables.third instanceof Decimal, 'a Decimal, not the plain object a structured clone leaves');
    assert.equal(inst.result.variables.sum, 0.3);
    t.close();
  });
});
