// Passkey step-up in the browser (docs/inbox.md#passkey-step-up): registering a passkey, and the assertion an Accept
// of a step-up request carries. @simplewebauthn/browser runs the WebAuthn ceremonies; the server verifies them.
import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
import type { Client } from '@urql/core';
import { describeRequestError, describeUserError } from './errors';
import { RegisterPasskeyMutation, StartPasskeyRegistrationMutation, StepUpQuery } from './operations';

type Options<F extends (arg: { optionsJSON: never }) => unknown> = Parameters<F>[0]['optionsJSON'];

/** Registers a passkey for the signed-in user: null when done, else what went wrong, in words. */
export async function registerPasskey(client: Client): Promise<string | null> {
  const started = await client.mutation(StartPasskeyRegistrationMutation, {}).toPromise();
  if (started.error) return describeRequestError(started.error);
  const payload = started.data!.startPasskeyRegistration;
  if (payload.userErrors.length > 0) return payload.userErrors.map(describeUserError).join(' ');
  let response: unknown;
  try {
    response = await startRegistration({ optionsJSON: payload.options as Options<typeof startRegistration> });
  } catch (error) {
    return `Your browser did not create a passkey: ${messageOf(error)}`;
  }
  const registered = await client.mutation(RegisterPasskeyMutation, { input: { response } }).toPromise();
  if (registered.error) return describeRequestError(registered.error);
  const errors = registered.data!.registerPasskey.userErrors;
  return errors.length > 0 ? errors.map(describeUserError).join(' ') : null;
}

/**
 * The assertion an Accept of this request needs, over the challenge of the arguments that will run (`edited`, or the
 * call's): `{ assertion: null }` when the request needs none, `{ error }` in words when it could not be made.
 */
export async function stepUpAssertion(
  client: Client,
  elicitationId: string,
  edited: unknown,
): Promise<{ assertion: unknown } | { error: string }> {
  const result = await client
    .query(StepUpQuery, { id: elicitationId, arguments: edited ?? null }, { requestPolicy: 'network-only' })
    .toPromise();
  if (result.error) return { error: describeRequestError(result.error) };
  const stepUp = result.data?.elicitation?.stepUp;
  if (!stepUp?.required) return { assertion: null };
  if (!stepUp.options) return { error: 'This request needs a passkey, but the server does not know its own address.' };
  try {
    return {
      assertion: await startAuthentication({ optionsJSON: stepUp.options as Options<typeof startAuthentication> }),
    };
  } catch (error) {
    return {
      error:
        `This request needs your passkey, and it did not approve: ${messageOf(error)} ` +
        'Nothing was answered. Register a passkey first if you have none.',
    };
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
