// The decision records the running loop writes (docs/receipts.md): a veto and a rule's refusal are recorded with the
// tool's definition digest, and a call whose ACCEPTED record was altered in the database between the answer and the
// run does not run: the model is told why, and the server logs it.
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { answerElicitation } from '../../src/app/answer-elicitation.js';
import { startTurn } from '../../src/app/start-turn.js';
import { toolDefinitionDigest, verifyRecords } from '../../src/domain/decision-records.js';
import { toolText } from '../../src/domain/gate/messages.js';
import { ALICE, callsWhatIsNamed, startApp, type AppScenario } from '../support/app.js';
import { pausedOn, toolTextsOf } from '../support/app-turns.js';
import { memoryLog } from '../support/log.js';
import { NOTE_SCHEMA, protectNotes } from '../support/notes.js';
import { TEST_BACKEND } from '../support/harness.js';

/** Runs one statement on the scenario's database, as someone with write access to it would. */
async function sql(database: string, statement: string): Promise<void> {
  if (TEST_BACKEND === 'postgres') {
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    await client.query(statement).finally(() => client.end());
    return;
  }
  const db = new Database(database);
  try {
    db.exec(statement);
  } finally {
    db.close();
  }
}

let s: AppScenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe('decision records of the running loop', () => {
  it('records a veto and a rule refusal with the tool definition the gate used', async () => {
    s = await startApp({
      tools: [{ name: 'edit_note', inputSchema: NOTE_SCHEMA }],
      script: [callsWhatIsNamed({ edit_note: { id: 'protected' } }), callsWhatIsNamed({ edit_note: { id: 'root' } })],
      listeners: [protectNotes()],
      agent: {
        toolConfirmation: {
          't:edit_note': {
            rules: [
              { match: { properties: { id: { const: 'root' } }, required: ['id'] }, mode: 'DENY', reason: 'no root' },
            ],
          },
        },
      },
    });
    await startTurn(s.app, ALICE, { agentId: 'tester', threadId: null, message: 't_edit_note', background: false });
    await startTurn(s.app, ALICE, { agentId: 'tester', threadId: null, message: 't_edit_note', background: false });
    const records = await s.core.storage.decisionRecords(null, null);
    const tool = (await s.core.services.tools.toolsFor((await s.app.store.getAgent('tester'))!)).find(
      (t) => t.id === 't:edit_note',
    )!;
    expect(records.map((r) => [r.kind, r.reason, r.toolDefinitionDigest])).toEqual([
      ['VETOED', 'protected notes are read-only', toolDefinitionDigest(tool)],
      ['REFUSED', 'no root', toolDefinitionDigest(tool)],
    ]);
    expect(s.tools.count('edit_note')).toBe(0);
  });

  it('does not run a call whose ACCEPTED record was altered between the answer and the run', async () => {
    const log = memoryLog('info');
    let database = '';
    s = await startApp({
      tools: [{ name: 'edit_note', inputSchema: NOTE_SCHEMA }],
      script: [callsWhatIsNamed({ edit_note: { id: 'n1' } })],
      logger: log.logger,
      // Someone with write access to the database changes the accept's digest once it is committed.
      checkpoint: async (point) => {
        if (point !== 'answerRecorded') return;
        await sql(
          database,
          `UPDATE decision_records SET record = replace(record, '"argsDigest":"', '"argsDigest":"00') WHERE kind = 'ACCEPTED'`,
        );
      },
    });
    database = s.database;
    const [request] = await pausedOn(s, ALICE, 't_edit_note');
    const answered = await answerElicitation(s.app, ALICE, { elicitationId: request!.id, action: 'ACCEPT' });
    expect(answered.ok).toBe(true);
    expect(s.tools.count('edit_note')).toBe(0);
    expect(await toolTextsOf(s, request!.turnId)).toEqual([toolText.acceptanceUnverified('edit_note')]);
    const [line] = log.find('tool refused: its accepting decision record does not verify');
    expect(line).toMatchObject({ level: 50, turnId: request!.turnId, problem: expect.stringContaining('altered') });
    const records = await s.core.storage.decisionRecords(null, null);
    expect(records.map((r) => r.kind)).toEqual(['ASKED', 'ACCEPTED']);
    expect(verifyRecords(records, s.core.storage.receiptKeys)).toMatchObject({
      seq: 2,
      problem: expect.stringContaining('altered'),
    });
  });

  it('records a call run unasked under a remembered approval with the grant, bound to the ACCEPTED that made it', async () => {
    s = await startApp({
      tools: [{ name: 'edit_note', inputSchema: NOTE_SCHEMA }],
      script: [callsWhatIsNamed({ edit_note: { id: 'n1' } })],
    });
    const [request] = await pausedOn(s, ALICE, 't_edit_note');
    const remember = { scope: 'AGENT' as const, ttlSeconds: 3600 };
    expect((await answerElicitation(s.app, ALICE, { elicitationId: request!.id, action: 'ACCEPT', remember })).ok).toBe(
      true,
    );
    await startTurn(s.app, ALICE, { agentId: 'tester', threadId: null, message: 't_edit_note', background: false });
    expect(s.tools.count('edit_note')).toBe(2);
    const records = await s.core.storage.decisionRecords(null, null);
    expect(records.map((r) => r.kind)).toEqual(['ASKED', 'ACCEPTED', 'RAN', 'RESULT', 'RAN', 'RESULT']);
    const [, accepted, , , underGrant] = records;
    expect(accepted!.grantId).toEqual(expect.any(String));
    expect(underGrant).toMatchObject({ grantId: accepted!.grantId, elicitationId: null, toolId: 't:edit_note' });
    expect(verifyRecords(records, s.core.storage.receiptKeys)).toBeNull();
  });
});
