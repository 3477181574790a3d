// Reads of business records (DESIGN §3 GET /v1/records).
import { all, get, type Op } from "../db/op.ts";
import { iso } from "../lib/time.ts";

interface RecordRow {
  collection: string;
  id: string;
  version: number;
  data: string;
  deleted: number;
  createdAt: number;
  updatedAt: number;
}

export interface RecordView {
  collection: string;
  id: string;
  version: number;
  data: unknown;
  createdAt: string;
  updatedAt: string;
}

const COLUMNS = "collection, id, version, data, deleted, created_at AS createdAt, updated_at AS updatedAt";

export function recordView(row: RecordRow): RecordView {
  return {
    collection: row.collection,
    id: row.id,
    version: row.version,
    data: JSON.parse(row.data),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

/** The record, a tombstone (deleted: true, with its version), or undefined if it never existed. */
export function* getRecord(
  collection: string,
  id: string,
): Op<{ deleted: true; version: number } | { deleted: false; record: RecordView } | undefined> {
  const row = yield* get<RecordRow>(
    `SELECT ${COLUMNS} FROM records WHERE collection = :collection AND id = :id`,
    {
      collection,
      id,
    },
  );
  if (!row) return undefined;
  if (row.deleted === 1) return { deleted: true, version: row.version };
  return { deleted: false, record: recordView(row) };
}

/** Live records of a collection ordered by id; `after` is the last id of the previous page. */
export function* listRecords(collection: string, limit: number, after: string | undefined): Op<RecordView[]> {
  const rows = yield* all<RecordRow>(
    `SELECT ${COLUMNS} FROM records WHERE collection = :collection AND deleted = 0 AND id > :after ORDER BY id LIMIT :limit`,
    { collection, after: after ?? "", limit },
  );
  return rows.map(recordView);
}
