// Passkey step-up (docs/receipts.md#passkey-step-up): registering a passkey (options, then the browser's response)
// and, on each request, what an ACCEPT of it must carry. The use cases are src/app/passkeys.ts.
import { registerPasskey, startPasskeyRegistration, stepUpOf, type StepUp } from '../app/passkeys.js';
import type { PasskeyRecord } from '../domain/passkeys.js';
import type { JsonObject } from '../domain/records.js';
import { builder } from './builder.js';
import { ElicitationRef } from './refs.js';
import { passkeyError } from './refusals.js';
import { UserErrorRef, type UserError } from './user-errors.js';
import { ViewerRef } from './viewer.js';

const PasskeyRef = builder.objectRef<PasskeyRecord>('Passkey').implement({
  description: "A passkey the viewer registered: its approvals of step-up requests carry this credential's signature.",
  fields: (t) => ({
    credentialId: t.exposeString('credentialId', { description: 'The WebAuthn credential id, base64url.' }),
    rpId: t.exposeString('rpId', { description: 'The relying party (host name) it is bound to.' }),
    createdAt: t.field({ type: 'DateTime', resolve: (p) => p.createdAt }),
    lastUsedAt: t.field({ type: 'DateTime', nullable: true, resolve: (p) => p.lastUsedAt }),
  }),
});

const StepUpRef = builder.objectRef<StepUp>('ElicitationStepUp').implement({
  description:
    "What an ACCEPT of this request must carry: with required, the approver's WebAuthn assertion over challenge " +
    '(derived from the request, the arguments that will run and the policy), as resolveElicitation.passkeyAssertion.',
  fields: (t) => ({
    required: t.exposeBoolean('required'),
    challenge: t.string({
      nullable: true,
      description:
        'base64url(SHA-256(canonical JSON {elicitationId, argsDigest, policyDigest})); null when not required.',
      resolve: (s) => s.challenge,
    }),
    options: t.field({
      type: 'JSON',
      nullable: true,
      description:
        "PublicKeyCredentialRequestOptionsJSON for @simplewebauthn/browser's startAuthentication (the challenge, the " +
        "relying party, the viewer's passkeys); null when not required or no relying party is known.",
      resolve: (s) => s.options,
    }),
  }),
});

builder.objectField(ElicitationRef, 'stepUp', (t) =>
  t.field({
    type: StepUpRef,
    description:
      'Passkey step-up of an ACCEPT (the tool\'s stepUp: "passkey"). An edit changes the challenge: pass the arguments ' +
      'that will run.',
    args: {
      arguments: t.arg({ type: 'JSON', description: 'The edited arguments, when editing; default: the call’s.' }),
    },
    resolve: (e, args, ctx) =>
      stepUpOf(
        ctx.services,
        ctx.viewer,
        ctx.origin ?? null,
        e,
        isObject(args.arguments) ? (args.arguments as JsonObject) : null,
      ),
  }),
);

const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);

builder.objectField(ViewerRef, 'passkeys', (t) =>
  t.field({
    type: [PasskeyRef],
    description: 'The passkeys the viewer registered (docs/receipts.md#passkey-step-up).',
    resolve: (_viewer, _args, ctx) => ctx.services.store.listPasskeys(ctx.viewer.id),
  }),
);

interface StartResult {
  options: unknown;
  userErrors: UserError[];
}

const StartPasskeyRegistrationPayload = builder.objectRef<StartResult>('StartPasskeyRegistrationPayload').implement({
  fields: (t) => ({
    options: t.field({
      type: 'JSON',
      nullable: true,
      description: "PublicKeyCredentialCreationOptionsJSON for @simplewebauthn/browser's startRegistration.",
      resolve: (p) => p.options,
    }),
    userErrors: t.field({ type: [UserErrorRef], resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField('startPasskeyRegistration', (t) =>
  t.field({
    type: StartPasskeyRegistrationPayload,
    description:
      "Begins registering a passkey for the viewer: the options for the browser's startRegistration; then send its " +
      'result to registerPasskey within 5 minutes. The relying party is server.publicUrl, else the page calling.',
    resolve: async (_root, _args, ctx): Promise<StartResult> => {
      const outcome = await startPasskeyRegistration(ctx.services, ctx.viewer, ctx.origin ?? null);
      if (!outcome.ok) return { options: null, userErrors: [passkeyError(outcome)] };
      return { options: outcome.options, userErrors: [] };
    },
  }),
);

interface RegisterResult {
  passkey: PasskeyRecord | null;
  userErrors: UserError[];
}

const RegisterPasskeyPayload = builder.objectRef<RegisterResult>('RegisterPasskeyPayload').implement({
  fields: (t) => ({
    passkey: t.field({ type: PasskeyRef, nullable: true, resolve: (p) => p.passkey }),
    userErrors: t.field({ type: [UserErrorRef], resolve: (p) => p.userErrors }),
  }),
});

const RegisterPasskeyInput = builder.inputType('RegisterPasskeyInput', {
  fields: (t) => ({
    response: t.field({
      type: 'JSON',
      required: true,
      description: "@simplewebauthn/browser's startRegistration result (RegistrationResponseJSON).",
    }),
  }),
});

builder.mutationField('registerPasskey', (t) =>
  t.field({
    type: RegisterPasskeyPayload,
    description:
      "Verifies the browser's registration response against the viewer's pending registration and keeps the " +
      'passkey; a PASSKEY_REGISTERED decision record names the viewer, the credential id and its public key.',
    args: { input: t.arg({ type: RegisterPasskeyInput, required: true }) },
    resolve: async (_root, { input }, ctx): Promise<RegisterResult> => {
      const outcome = await registerPasskey(ctx.services, ctx.viewer, ctx.origin ?? null, input.response);
      if (!outcome.ok) return { passkey: null, userErrors: [passkeyError(outcome)] };
      return { passkey: outcome.passkey, userErrors: [] };
    },
  }),
);
