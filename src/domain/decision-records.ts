// Decision records: one per gate outcome, hash-chained and signed, so that who approved exactly which arguments can be
// checked offline (docs/receipts.md). Pure rules over node:crypto: the stores append them, the CLI verifies them.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  sign,
  verify,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import { answerCounts, mayAnswer } from './approvers.js';
import { assertionProblem, type RecordedAssertion, type RecordedPasskey } from './passkey-challenge.js';
import { tallyAnswers } from './quorum.js';
import type { AnswerIdentity, ApproverAnswer, ElicitationApproval, JsonObject, ToolDefinition } from './records.js';

export type DecisionKind =
  | 'ASKED'
  /** One approver's ACCEPT under an approvers policy, counted or not; the one that completes it also yields ACCEPTED. */
  | 'APPROVED'
  | 'ACCEPTED'
  | 'DECLINED'
  | 'CANCELLED'
  | 'EXPIRED'
  /** A pre-execute listener vetoed the call. */
  | 'VETOED'
  /** A gating rule (an argument rule's DENY) refused the call. */
  | 'REFUSED'
  /** The call started (journaled before it runs). */
  | 'RAN'
  /** The call returned: the digest of its result, written with it. */
  | 'RESULT'
  /** A call started before a crash, found unfinished: it is reported interrupted, never run again. */
  | 'INTERRUPTED'
  /** A user registered a passkey for step-up: the credential and its public key, tied to the user. */
  | 'PASSKEY_REGISTERED';

/** Who a record names: the answer's identity (issuer and subject, or the static user), or the system (null). */
export interface DecisionActor {
  id: string;
  identity: AnswerIdentity | null;
}

/** What a script knows of a decision when it appends it. */
export interface DecisionDraft {
  kind: DecisionKind;
  turnId: string;
  toolCallId: string;
  elicitationId: string | null;
  agentId: string;
  toolId: string;
  /** SHA-256 (hex) of the canonical arguments that will run (or were asked about). */
  argsDigest: string;
  /** SHA-256 (hex) of the canonical approval policy the request was gated under; null: the requester alone. */
  policyDigest: string | null;
  actor: DecisionActor | null;
  at: string;
  // The fields below are absent from records written before they existed (their payload never had them).
  /** ASKED: the canonical approval policy itself (policyDigest is its digest), so a verifier can apply it. */
  policy?: ElicitationApproval | null;
  /** SHA-256 (hex) of the canonical definition of the tool the gate used (toolDefinitionDigest); null: not known. */
  toolDefinitionDigest?: string | null;
  /** ACCEPTED: the remembered approval it recorded; RAN: the one that let the call run unasked. */
  grantId?: string;
  /** RESULT: SHA-256 (hex) of the canonical result as kept (resultDigest). */
  resultDigest?: string;
  /** VETOED, REFUSED: why, as the model was told. */
  reason?: string;
  /** PASSKEY_REGISTERED: the credential the actor registered (its id and public key). */
  passkey?: RecordedPasskey;
  /** An ACCEPT under passkey step-up: the approver's WebAuthn assertion over the decision's challenge. */
  assertion?: RecordedAssertion;
}

/** A record as stored and exported (one JSON line each). */
export interface DecisionRecord extends DecisionDraft {
  /** Its position in the deployment's chain, from 1. */
  seq: number;
  /** The previous record's hash; the genesis value for the first. */
  prevHash: string;
  /** SHA-256 (hex) of the signed payload. */
  hash: string;
  keyId: string;
  /** Ed25519 over the payload, base64url. */
  signature: string;
}

export const GENESIS_HASH = '0'.repeat(64);

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The digest of arguments as JSON (object keys sorted, as canonicalJson writes them). */
export const argumentsDigest = (args: JsonObject): string => sha256Hex(canonicalJson(args));

/**
 * The digest of the definition of a tool as the gate saw it: its id, description, input schema and annotations (what
 * decides how it is gated); for a gateway's tool, the upstream server's definition.
 */
export const toolDefinitionDigest = (
  tool: Pick<ToolDefinition, 'id' | 'description' | 'inputSchema' | 'annotations'>,
): string =>
  sha256Hex(
    canonicalJson({
      id: tool.id,
      description: tool.description,
      inputSchema: tool.inputSchema,
      annotations: tool.annotations,
    }),
  );

/** The digest of a call's result as kept: its TOOL message's text and, for a gateway call, the result its client got. */
export const resultDigest = (text: string, result: JsonObject | null): string =>
  sha256Hex(canonicalJson({ text, result }));

/** The digest of the approval policy a request was gated under; null without one. */
export const policyDigest = (approval: ElicitationApproval | null): string | null =>
  approval === null ? null : sha256Hex(canonicalJson(approval));

/** The bytes a record's hash and signature cover: every field but the hash and signature, canonical. */
export function recordPayload(record: Omit<DecisionRecord, 'hash' | 'signature'>): string {
  const { seq, prevHash, keyId, ...draft } = record;
  return canonicalJson({ ...draftFields(draft), seq, prevHash, keyId });
}

const OPTIONAL_FIELDS = [
  'policy',
  'toolDefinitionDigest',
  'grantId',
  'resultDigest',
  'reason',
  'passkey',
  'assertion',
] as const;

function draftFields(d: DecisionDraft): DecisionDraft {
  const fields: DecisionDraft = {
    kind: d.kind,
    turnId: d.turnId,
    toolCallId: d.toolCallId,
    elicitationId: d.elicitationId,
    agentId: d.agentId,
    toolId: d.toolId,
    argsDigest: d.argsDigest,
    policyDigest: d.policyDigest,
    actor: d.actor,
    at: d.at,
  };
  // An optional field is in the payload only when the record has it, so records written before it still verify.
  for (const key of OPTIONAL_FIELDS) {
    if (d[key] !== undefined) (fields as unknown as Record<string, unknown>)[key] = d[key];
  }
  return fields;
}

/** The deployment's signing key: the first of its configured keys. */
export interface ReceiptSigner {
  keyId: string;
  privateKey: KeyObject;
}

/** The record that follows `head` (null: none yet), hashed and signed. */
export function sealRecord(
  draft: DecisionDraft,
  head: { seq: number; hash: string } | null,
  signer: ReceiptSigner,
): DecisionRecord {
  const unsigned = {
    ...draftFields(draft),
    seq: (head?.seq ?? 0) + 1,
    prevHash: head?.hash ?? GENESIS_HASH,
    keyId: signer.keyId,
  };
  // Its fields are the draft's already: canonical as they are.
  const payload = canonicalJson(unsigned);
  return {
    ...unsigned,
    hash: sha256Hex(payload),
    signature: sign(null, Buffer.from(payload), signer.privateKey).toString('base64url'),
  };
}

/** The id of the key a deployment without a configured one generates and keeps in its database. */
export const GENERATED_RECEIPT_KEY_ID = 'toolgate-generated-1';

/** A signer from a PKCS8 PEM or an OKP JWK (its text). */
export function signerFrom(keyId: string, secret: string): ReceiptSigner {
  const text = secret.trim();
  const privateKey = text.startsWith('{')
    ? createPrivateKey({ key: JSON.parse(text) as JsonWebKey, format: 'jwk' })
    : createPrivateKey(text);
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`receipt key ${keyId}: not an Ed25519 key`);
  return { keyId, privateKey };
}

export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

/** The public half of a signer as a JWK (what the well-known JWKS publishes). */
export function publicJwk(signer: ReceiptSigner): PublicJwk {
  const { x } = createPublicKey(signer.privateKey).export({ format: 'jwk' }) as { x: string };
  return { kty: 'OKP', crv: 'Ed25519', x, kid: signer.keyId, alg: 'EdDSA', use: 'sig' };
}

/** Published keys by key id, as checkSeal takes them. */
export function verifyingKeys(keys: readonly PublicJwk[]): Map<string, KeyObject> {
  return new Map(keys.map((k) => [k.kid, createPublicKey({ key: { ...k }, format: 'jwk' })]));
}

/**
 * Why the server must not run a call whose request was accepted: the records of the call (in chain order) must hold
 * its ASKED record, any approvals, and exactly one ACCEPTED record of `elicitationId`, each with a hash and signature
 * that hold under the deployment's keys, agreeing as an offline verifier requires (the same Bindings), and bound to
 * `argsDigest`, the arguments about to run. Null: it may run. A request asked before records were kept (no ASKED
 * record) has nothing to check.
 */
export function acceptanceProblem(
  callRecords: readonly DecisionRecord[],
  elicitationId: string,
  argsDigest: string,
  keys: ReadonlyMap<string, KeyObject>,
  sealedHere?: SealedHere,
): string | null {
  const ofRequest = callRecords.filter((r) => r.elicitationId === elicitationId);
  if (!ofRequest.some((r) => r.kind === 'ASKED')) return null;
  const bindings = new Bindings(false);
  for (const r of ofRequest) {
    if (r.kind !== 'ASKED' && r.kind !== 'APPROVED' && r.kind !== 'ACCEPTED') continue;
    const problem = checkSeal(r, keys, sealedHere) ?? bindings.add(r);
    if (problem) return `record ${r.seq} (${r.kind}): ${problem}`;
  }
  const accepted = ofRequest.filter((r) => r.kind === 'ACCEPTED');
  if (accepted.length !== 1) return `${accepted.length} ACCEPTED records of the request (expected 1)`;
  if (accepted[0]!.argsDigest !== argsDigest) {
    return `record ${accepted[0]!.seq} (ACCEPTED) accepted other arguments than those about to run`;
  }
  return null;
}

/** Why verification stopped: the first bad record and what is wrong with it. */
export interface VerifyFailure {
  seq: number | null;
  line: number;
  problem: string;
}

/**
 * Checks records in export order: each links to the one before (hash and seq), its hash and signature hold under a
 * published key, and what it says agrees with the records before it (bindings). The first failure, or null.
 * `startsChain`: the export starts at the chain's first record (else a range, whose first record may link to one
 * before it, and whose bindings to records before it are not checked); `lines`: each record's line in its file.
 */
export function verifyRecords(
  records: readonly DecisionRecord[],
  keys: readonly PublicJwk[],
  options: { startsChain?: boolean; lines?: readonly number[] } = {},
): VerifyFailure | null {
  const startsChain = options.startsChain ?? true;
  const byKid = verifyingKeys(keys);
  const bindings = new Bindings(startsChain);
  const passkeys = new Passkeys();
  let prev: DecisionRecord | null = null;
  for (const [index, record] of records.entries()) {
    const fail = (problem: string): VerifyFailure => ({
      seq: record.seq ?? null,
      line: options.lines?.[index] ?? index + 1,
      problem,
    });
    if (prev === null && startsChain && record.prevHash !== GENESIS_HASH) {
      return fail('the first record does not start the chain (a record before it is missing)');
    }
    if (prev !== null && record.seq !== prev.seq + 1) {
      return fail(`seq ${record.seq} follows ${prev.seq}: a record is missing or out of order`);
    }
    if (prev !== null && record.prevHash !== prev.hash) {
      return fail(`prevHash does not match record ${prev.seq}'s hash: a record is missing or out of order`);
    }
    const problem = checkSeal(record, byKid) ?? passkeys.add(record) ?? bindings.add(record);
    if (problem) return fail(problem);
    prev = record;
  }
  return null;
}

/**
 * The passkeys registered so far (PASSKEY_REGISTERED), and whether a record's assertion is by a passkey its actor
 * registered, over the challenge of what the record decides.
 */
class Passkeys {
  readonly #registered = new Map<string, { passkey: RecordedPasskey; userId: string | undefined }>();

  add(r: DecisionRecord): string | null {
    if (r.kind === 'PASSKEY_REGISTERED' && r.passkey) {
      this.#registered.set(r.passkey.credentialId, { passkey: r.passkey, userId: r.actor?.id });
    }
    if (!r.assertion) return null;
    const registered = this.#registered.get(r.assertion.credentialId);
    if (!registered) return 'its passkey assertion names a credential no earlier record registered';
    if (registered.userId !== r.actor?.id) return "its passkey assertion is by another user's credential";
    const subject = { elicitationId: r.elicitationId ?? '', argsDigest: r.argsDigest, policyDigest: r.policyDigest };
    const problem = assertionProblem(r.assertion, subject, registered.passkey);
    return problem ? `passkey assertion: ${problem}` : null;
  }
}

/**
 * The records this process signed lately, by hash: a record read back with a hash its payload has and the signature
 * this process gave those very bytes needs no second Ed25519 verification (the costlier half of a confirmed start's
 * check). Bounded: the oldest are forgotten, and are verified by their signature again.
 */
export class SealedHere {
  readonly #signatures = new Map<string, string>();

  constructor(private readonly capacity = 10_000) {}

  add(record: DecisionRecord): void {
    this.#signatures.set(record.hash, record.signature);
    if (this.#signatures.size > this.capacity) this.#signatures.delete(this.#signatures.keys().next().value!);
  }

  /** Whether this process signed the record as it reads (its hash already checked against its payload). */
  signed(record: DecisionRecord): boolean {
    return this.#signatures.get(record.hash) === record.signature;
  }
}

/** Whether a record's hash and signature hold under one of `keys` (by key id); the problem, or null. */
export function checkSeal(
  record: DecisionRecord,
  keys: ReadonlyMap<string, KeyObject>,
  sealedHere?: SealedHere,
): string | null {
  const payload = recordPayload(record);
  if (sha256Hex(payload) !== record.hash) return 'hash does not match its contents: the record was altered';
  if (sealedHere?.signed(record)) return null;
  const key = keys.get(record.keyId);
  if (!key) return `signed with an unknown key ${JSON.stringify(record.keyId)}`;
  if (!verify(null, Buffer.from(payload), key, Buffer.from(record.signature ?? '', 'base64url'))) {
    return 'signature does not verify';
  }
  return null;
}

/**
 * What the records read so far bind, and whether the next one agrees: every call that ran after being asked has
 * exactly one ACCEPTED record of its request, bound to the digest of the arguments that ran and to the policy it was
 * asked under, used by one RAN only, and given by someone that policy allowed (the same rules the server applies:
 * mayAnswer, tallyAnswers).
 */
class Bindings {
  readonly #asked = new Map<string, DecisionRecord>();
  readonly #askedCalls = new Map<string, DecisionRecord>();
  readonly #approvals = new Map<string, DecisionRecord[]>();
  readonly #accepted = new Map<string, DecisionRecord>();
  readonly #usedBy = new Map<string, DecisionRecord>();
  readonly #grants = new Map<string, DecisionRecord>();
  readonly #ran = new Set<string>();

  constructor(private readonly complete: boolean) {}

  add(r: DecisionRecord): string | null {
    const call = `${r.turnId}\u0000${r.toolCallId}`;
    const asked = r.elicitationId === null ? undefined : this.#asked.get(r.elicitationId);
    if (r.kind !== 'ASKED' && asked && r.policyDigest !== asked.policyDigest) {
      return `policyDigest differs from that of the request it answers (record ${asked.seq})`;
    }
    switch (r.kind) {
      case 'ASKED':
        if (r.policy !== undefined && r.policyDigest !== policyDigest(r.policy)) {
          return 'policyDigest is not the digest of its policy';
        }
        if (r.elicitationId !== null) this.#asked.set(r.elicitationId, r);
        this.#askedCalls.set(call, r);
        return null;
      case 'APPROVED':
        if (asked) {
          const refused = approverRefused(asked, r);
          if (refused) return refused;
        }
        this.#approvals.set(r.elicitationId!, [...(this.#approvals.get(r.elicitationId!) ?? []), r]);
        return null;
      case 'ACCEPTED': {
        const before = this.#accepted.get(r.elicitationId ?? '');
        if (before) return `a second ACCEPTED of request ${r.elicitationId} (record ${before.seq}): a replayed accept`;
        if (asked) {
          const refused = acceptRefused(asked, r, this.#approvals.get(asked.elicitationId!) ?? []);
          if (refused) return refused;
        }
        this.#accepted.set(r.elicitationId ?? '', r);
        if (r.grantId !== undefined) this.#grants.set(r.grantId, r);
        return null;
      }
      case 'RAN': {
        const problem = this.#ranProblem(r, call);
        this.#ran.add(call);
        return problem;
      }
      case 'RESULT':
      case 'INTERRUPTED':
        if (this.complete && !this.#ran.has(call)) return `a ${r.kind} of a call that no RAN record started`;
        return null;
      default:
        return null;
    }
  }

  #ranProblem(r: DecisionRecord, call: string): string | null {
    if (this.#ran.has(call)) return 'a second RAN of the same call: it ran twice';
    if (r.grantId !== undefined && this.complete && !this.#grants.has(r.grantId)) {
      return `ran under the remembered approval ${r.grantId}, which no ACCEPTED record recorded`;
    }
    const named = r.elicitationId === null ? undefined : this.#asked.get(r.elicitationId);
    if (named && `${named.turnId}\u0000${named.toolCallId}` !== call) {
      return `names request ${r.elicitationId}, which asked about another call (record ${named.seq})`;
    }
    const askedCall = this.#askedCalls.get(call);
    if (!askedCall) return null; // ran unasked (or asked before the export's range)
    if (r.elicitationId !== askedCall.elicitationId) {
      return `ran without naming the request that asked about it (record ${askedCall.seq})`;
    }
    const accepting = this.#accepted.get(askedCall.elicitationId ?? '');
    if (!accepting || accepting.argsDigest !== r.argsDigest) {
      return `ran with 0 accepting decisions bound to its argument digest (expected 1${accepting ? `: record ${accepting.seq} accepted other arguments` : ''})`;
    }
    const used = this.#usedBy.get(accepting.elicitationId!);
    if (used) return `a second RAN of the accept of record ${accepting.seq} (used by record ${used.seq}): used twice`;
    this.#usedBy.set(accepting.elicitationId!, r);
    return null;
  }
}

/** The roles an actor held as recorded, as the rules of approvers read them. */
const answererOf = (actor: DecisionActor) => ({ id: actor.id, isAdmin: false, roles: actor.identity?.roles ?? [] });

/** Why an APPROVED record's approver was not one the request's policy allowed; null when allowed. */
function approverRefused(asked: DecisionRecord, approval: DecisionRecord): string | null {
  if (!approval.actor) return 'an approval that names no approver';
  if (asked.policy === undefined || asked.actor === null) return null; // written before policies were recorded
  if (asked.policy === null) return 'an approval of a request that has no approvers policy';
  const standing = mayAnswer(
    { ownerId: asked.actor.id, approval: asked.policy },
    answererOf(approval.actor),
    'ACCEPT',
    approval.at,
  );
  if (standing.kind === 'allowed') return null;
  const why = standing.kind === 'refused' ? standing.reason : 'NOT_AN_APPROVER';
  return `approved by ${JSON.stringify(approval.actor.id)}, whom the policy does not allow (${why})`;
}

/**
 * Why an ACCEPTED record is not one its request's policy allows: the requester alone accepts a request without a
 * policy; under one, the approvals recorded before it must decide it (tallyAnswers: `required` distinct approvers of
 * these very arguments, the requester counted only where the policy says so), completed by its actor.
 */
function acceptRefused(asked: DecisionRecord, accept: DecisionRecord, approvals: DecisionRecord[]): string | null {
  if (asked.policy === undefined || asked.actor === null) return null; // written before policies were recorded
  if (!accept.actor) return 'an accept that names no one';
  if (asked.policy === null) {
    if (accept.actor.id === asked.actor.id) return null;
    return `accepted by ${JSON.stringify(accept.actor.id)}, not by the requester ${JSON.stringify(asked.actor.id)}`;
  }
  // Each approver's latest approval, in the order given (an approver whose approval an edit outdated approves anew).
  const latest = new Map<string, DecisionRecord>();
  for (const a of approvals) {
    latest.delete(a.actor!.id);
    latest.set(a.actor!.id, a);
  }
  const answers: ApproverAnswer[] = [...latest.values()].map((a, position) => ({
    elicitationId: a.elicitationId!,
    approverId: a.actor!.id,
    position,
    action: 'ACCEPT',
    content: null,
    // The digest stands for the arguments: approvals of the same arguments are approvals of the same digest.
    arguments: { argsDigest: a.argsDigest },
    remember: null,
    createdAt: a.at,
    identity: a.actor!.identity,
  }));
  const tally = tallyAnswers(asked.policy, answers, asked.actor.id);
  const counted = answers.filter(
    (a) => answerCounts(asked.policy!, a.approverId, asked.actor!.id) && a.arguments!.argsDigest === accept.argsDigest,
  ).length;
  if (tally.kind !== 'decided' || tally.answer.arguments?.argsDigest !== accept.argsDigest) {
    return `accepted with ${counted} distinct approvals of its arguments; the policy requires ${asked.policy.required}`;
  }
  if (tally.by !== accept.actor.id) {
    return `accepted by ${JSON.stringify(accept.actor.id)}, but the approval of ${JSON.stringify(tally.by)} completed it`;
  }
  return null;
}
