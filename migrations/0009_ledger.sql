CREATE TABLE `idempotency_keys` (
	`commit_id` text PRIMARY KEY NOT NULL,
	`token_id` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`response` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `idempotency_keys_token_key` ON `idempotency_keys` (`token_id`,`key`);--> statement-breakpoint
-- Hand-written: the stored responses of live (and expired, not yet pruned) keys move out of the commit rows.
INSERT INTO `idempotency_keys` ("commit_id", "token_id", "key", "request_hash", "response", "created_at")
  SELECT "id", "token_id", "idempotency_key", "request_hash", "response", "created_at" FROM `commits`
  WHERE "idempotency_key" IS NOT NULL AND "request_hash" IS NOT NULL AND "response" IS NOT NULL;--> statement-breakpoint
CREATE TABLE `record_versions` (
	`pos` integer PRIMARY KEY NOT NULL,
	`collection` text NOT NULL,
	`id` text NOT NULL,
	`version` integer NOT NULL,
	`data` text,
	`deleted` integer NOT NULL,
	`data_digest` text,
	`commit_id` text,
	`at` integer NOT NULL,
	`erased_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `record_versions_key` ON `record_versions` (`collection`,`id`,`version`);--> statement-breakpoint
CREATE INDEX `record_versions_commit` ON `record_versions` (`commit_id`);--> statement-breakpoint
CREATE TABLE `__new_commits` (
	`id` text PRIMARY KEY NOT NULL,
	`token_id` text,
	`created_at` integer NOT NULL,
	`seq` integer,
	`hash` text,
	`token_name` text,
	`proposal_id` text,
	`record_count` integer,
	`event_count` integer
);
--> statement-breakpoint
INSERT INTO `__new_commits`("id", "token_id", "created_at") SELECT "id", "token_id", "created_at" FROM `commits`;--> statement-breakpoint
DROP TABLE `commits`;--> statement-breakpoint
ALTER TABLE `__new_commits` RENAME TO `commits`;--> statement-breakpoint
CREATE UNIQUE INDEX `commits_seq` ON `commits` (`seq`);--> statement-breakpoint
ALTER TABLE `events` ADD `payload_digest` text;--> statement-breakpoint
ALTER TABLE `events` ADD `erased_at` integer;--> statement-breakpoint
CREATE INDEX `events_commit` ON `events` (`commit_id`);--> statement-breakpoint
-- Hand-written: the ledger starts here (DESIGN §13). One history version per existing record, not
-- in any commit (commit_id null), and the genesis commit (seq 0) that lists them, when there are
-- any (on a new database the first commit is seq 0). Digests and the genesis hash need sha256 and
-- JCS: src/ledger/genesis.ts computes them right after migrating. (No `HAVING` without `GROUP BY`:
-- SQLite accepts it, a libSQL server's parser does not.)
INSERT INTO `record_versions` ("collection", "id", "version", "data", "deleted", "data_digest", "commit_id", "at")
  SELECT "collection", "id", "version", CASE WHEN "deleted" = 1 THEN NULL ELSE "data" END, "deleted", NULL, NULL, "updated_at"
  FROM `records` ORDER BY "collection", "id";--> statement-breakpoint
INSERT INTO `commits` ("id", "token_id", "created_at", "seq", "hash", "token_name", "proposal_id", "record_count", "event_count")
  SELECT 'cmt_genesis', NULL, 0, 0, NULL, NULL, NULL, (SELECT count(*) FROM `records`), 0
  WHERE EXISTS (SELECT 1 FROM `records`);
