/** The PostgreSQL backend, loaded only when a state location is a database URL (the driver stays out of every other command). */
import type { PgState } from './backend.js';

export async function pgState(location: string): Promise<PgState> {
  const { pgStateFor } = await import('./backend.js');
  return pgStateFor(location);
}
