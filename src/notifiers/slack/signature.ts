// Slack's request signing (https://api.slack.com/authentication/verifying-requests-from-slack): `X-Slack-Signature` is
// `v0=` and the hex HMAC-SHA256, keyed with the app's signing secret, of `v0:{X-Slack-Request-Timestamp}:{raw body}`.
// A request older or newer than five minutes is refused, so a captured one cannot be replayed later; within the
// window the caller refuses a signature it has seen (notifier_replays).
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SLACK_SIGNATURE_WINDOW_SECONDS = 300;

export type SignatureCheck =
  { ok: true; timestamp: number; signature: string } | { ok: false; reason: 'MISSING' | 'STALE' | 'MISMATCH' };

export function slackSignature(signingSecret: string, timestamp: string, body: string | Buffer): string {
  const hmac = createHmac('sha256', signingSecret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(body);
  return `v0=${hmac.digest('hex')}`;
}

export function verifySlackSignature(
  signingSecret: string,
  headers: { timestamp: string | undefined; signature: string | undefined },
  body: Buffer,
  nowMs: number,
): SignatureCheck {
  const { timestamp, signature } = headers;
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'MISSING' };
  const seconds = Number(timestamp);
  if (Math.abs(nowMs / 1000 - seconds) > SLACK_SIGNATURE_WINDOW_SECONDS) return { ok: false, reason: 'STALE' };
  const expected = Buffer.from(slackSignature(signingSecret, timestamp, body));
  const given = Buffer.from(signature);
  // timingSafeEqual needs equal lengths; a length mismatch is a mismatch (the length of a valid one is public).
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'MISMATCH' };
  return { ok: true, timestamp: seconds, signature };
}
