// The first step of `npm test`: checks that what the suite needs is there (PostgreSQL, Redis, Chromium) and, when
// something is missing, stops within seconds with one line per missing part naming the fix, instead of the suite
// failing minutes later with a launch error or a hook timeout.
import { Redis } from 'ioredis';
import pg from 'pg';
import { CHROMIUM_PATH, missingChromium } from '../test/support/chromium.js';
import { TEST_POSTGRES } from '../test/support/postgres.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TIMEOUT_MS = 3_000;

/** Without credentials: the line is printed. */
function shown(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = parsed.password ? '***' : '';
    return parsed.toString();
  } catch {
    return url;
  }
}

/** Undefined when PostgreSQL answers and may create the tests' databases; otherwise what is wrong and the fix. */
async function checkPostgres(): Promise<string | undefined> {
  const where = `PostgreSQL at ${shown(TEST_POSTGRES)}`;
  const fix =
    'start PostgreSQL there with a role that may create databases and a database named as in the URL ' +
    '(apt-get install postgresql, or docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust -e POSTGRES_DB=test postgres:16), ' +
    'or set TOOLGATE_TEST_POSTGRES to one';
  const client = new pg.Client({ connectionString: TEST_POSTGRES, connectionTimeoutMillis: TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ may: boolean }>(
      'SELECT rolcreatedb OR rolsuper AS may FROM pg_roles WHERE rolname = current_user',
    );
    if (!rows[0]?.may) return `${where}: its role may not create databases: ALTER ROLE ... CREATEDB, or ${fix}`;
    return undefined;
  } catch (error) {
    return `${where} cannot be used (${(error as Error).message}): ${fix}`;
  } finally {
    await client.end().catch(() => {});
  }
}

async function checkRedis(): Promise<string | undefined> {
  const redis = new Redis(REDIS_URL, {
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: TIMEOUT_MS,
  });
  // ioredis rejects with "Connection is closed."; the cause (refused, timed out) comes as an 'error' event.
  let cause: Error | undefined;
  redis.on('error', (error: Error) => (cause ??= error));
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (error) {
    return (
      `Redis at ${shown(REDIS_URL)} does not answer (${(cause ?? (error as Error)).message}): ` +
      'start Redis there (apt-get install redis-server, or docker run -d -p 6379:6379 redis:7), or set REDIS_URL to one'
    );
  } finally {
    redis.disconnect();
  }
}

const problems = (await Promise.all([checkPostgres(), checkRedis(), missingChromium()])).filter(
  (problem): problem is string => problem !== undefined,
);
if (problems.length > 0) {
  for (const problem of problems) console.error(`test preflight: ${problem}`);
  console.error('test preflight: npm test needs all three (docs/contributing.md, "Tests"); stopped before the suite.');
  process.exit(1);
}
console.log(`test preflight: PostgreSQL, Redis and Chromium (${CHROMIUM_PATH}) are there`);
