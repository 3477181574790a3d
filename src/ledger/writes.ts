// The ledger's named writes (db/writer-ops.ts): the migrations (which seal the chain's genesis).
import { defineWrite } from "../db/writer-ops.ts";
import { migrateDatabase } from "./genesis.ts";

/** Applies the embedded migrations that are pending; answers their tags. */
export const migrateWrite = defineWrite("ledger.migrate", () => migrateDatabase(), { again: false });
