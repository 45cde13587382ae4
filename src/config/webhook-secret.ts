// The Standard Webhooks secret format: "whsec_" and the base64 of the key, as the spec's libraries generate it
// (24 to 64 random bytes). Checked where the config is read, so that a bad one stops the start instead of every delivery.

export const WEBHOOK_SECRET_FORMAT =
  'a Standard Webhooks secret, "whsec_" followed by the base64 of 24 to 64 random bytes';

export function isWebhookSecret(value: string): boolean {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value);
  if (!match || match[1]!.length % 4 !== 0) return false;
  const bytes = Buffer.from(match[1]!, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}
