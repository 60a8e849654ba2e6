import type { Database } from 'better-sqlite3';

/**
 * WAL pages (4 KiB each) past which the writing connection checkpoints itself. A checkpoint from
 * another connection copies what it can and never blocks a write, but while writes keep coming it
 * never reaches the last frame, and only a checkpoint that does lets the next write start the WAL
 * from its beginning: under writes that never pause, the file would grow for ever. The writer's
 * own checkpoint reaches it, since nothing writes beside it.
 */
export const WAL_BOUND_PAGES = 4096;

/** What the WAL file is cut back to when it starts over (PRAGMA journal_size_limit). */
export const WAL_SIZE_LIMIT_BYTES = WAL_BOUND_PAGES * 4096;

/** A PASSIVE checkpoint of `db`'s file. Returns the frames in the WAL since it last started over. */
export function checkpointWal(db: Database): number {
  const [row] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
  return row?.log ?? 0;
}
