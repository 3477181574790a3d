CREATE TABLE `event_types` (
	`type` text PRIMARY KEY NOT NULL,
	`description` text,
	`schema` text,
	`deprecated_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `proposals` (
	`id` text PRIMARY KEY NOT NULL,
	`status` text NOT NULL,
	`summary` text NOT NULL,
	`commit` text NOT NULL,
	`proposed_by_token_id` text NOT NULL,
	`proposed_by_token_name` text NOT NULL,
	`idempotency_key` text,
	`request_hash` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`decided_at` integer,
	`decided_by_token_id` text,
	`decided_by_token_name` text,
	`reason` text,
	`result` text,
	`commit_id` text
);
--> statement-breakpoint
CREATE INDEX `proposals_status` ON `proposals` (`status`,`id`);--> statement-breakpoint
CREATE INDEX `proposals_pending_expiry` ON `proposals` (`expires_at`) WHERE status = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX `proposals_idempotency` ON `proposals` (`proposed_by_token_id`,`idempotency_key`) WHERE idempotency_key IS NOT NULL;