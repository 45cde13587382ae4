// One database read per turn record, shared by everyone who resolves that record: a published turn reaches
// every subscriber as the same object, so 100 subscribers of one turnUpdated event read its messages once,
// not 100 times. Correct because a record is published only after its writes: any read made after the
// publish sees at least the state the event announces (a later change publishes a record of its own).
const reads = new WeakMap<object, Map<string, Promise<unknown>>>();

export function readOnce<T>(record: object, what: string, read: () => Promise<T>): Promise<T> {
  let ofRecord = reads.get(record);
  if (!ofRecord) reads.set(record, (ofRecord = new Map()));
  let pending = ofRecord.get(what) as Promise<T> | undefined;
  if (!pending) {
    pending = read();
    ofRecord.set(what, pending);
    // A failed read is not kept: the next resolver tries again.
    pending.catch(() => ofRecord.delete(what));
  }
  return pending;
}

/** Records what a read of `record` would return, already known (as just written): resolvers then need not read it. */
export function knownRead<T>(record: object, what: string, value: T): void {
  let ofRecord = reads.get(record);
  if (!ofRecord) reads.set(record, (ofRecord = new Map()));
  ofRecord.set(what, Promise.resolve(value));
}

/**
 * Key of a PAUSED turn's record under which a mutation that paused it leaves the pause's elicitations as just created
 * (knownRead): `pendingElicitations` then need not read them. Only that field: `elicitations` lists every pause's.
 */
export const PAUSED_WITH = 'pausedWith';
