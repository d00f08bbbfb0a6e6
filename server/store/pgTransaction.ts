/**
 * One transaction on a client taken from a node-postgres pool, for both PostgreSQL stores.
 *
 * While a client is checked out the pool removes its own `error` listener from it, so a
 * connection the database ends meanwhile (a failover, a network reset, an administrator's
 * pg_terminate_backend) would emit an error nobody hears, and Node would end the whole process
 * with every game in it. The client gets a listener of its own while it is out; the failure then
 * reaches the caller as the rejection of its next query, and a client that failed is destroyed on
 * release instead of going back to the pool.
 */
import type pg from 'pg';

export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failure: Error | undefined;
  const onError = (error: Error) => {
    failure = error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    if (!failure) await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.off('error', onError);
    client.release(failure);
  }
}
