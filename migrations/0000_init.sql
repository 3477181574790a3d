CREATE TABLE `aggregates` (
	`key` text PRIMARY KEY NOT NULL,
	`last_sequence` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `attempts` (
	`pos` integer PRIMARY KEY NOT NULL,
	`delivery_id` text NOT NULL,
	`started_at` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`status_code` integer,
	`error` text,
	`response_prefix` text
);
--> statement-breakpoint
CREATE INDEX `attempts_delivery` ON `attempts` (`delivery_id`,`pos`);--> statement-breakpoint
CREATE INDEX `attempts_started_at` ON `attempts` (`started_at`);--> statement-breakpoint
CREATE TABLE `commits` (
	`id` text PRIMARY KEY NOT NULL,
	`token_id` text NOT NULL,
	`idempotency_key` text,
	`request_hash` text,
	`response` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `commits_idempotency` ON `commits` (`token_id`,`idempotency_key`) WHERE idempotency_key IS NOT NULL;--> statement-breakpoint
CREATE INDEX `commits_created_at` ON `commits` (`created_at`);--> statement-breakpoint
CREATE TABLE `counters` (
	`name` text PRIMARY KEY NOT NULL,
	`value` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`event_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`aggregate` text NOT NULL,
	`sequence` integer NOT NULL,
	`event_type` text NOT NULL,
	`status` text NOT NULL,
	`attempt_count` integer DEFAULT 0 NOT NULL,
	`available_at` integer NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`deliver_by` integer NOT NULL,
	`lease_owner` text,
	`lease_expires_at` integer,
	`delivered_at` integer,
	`dead_at` integer,
	`dead_reason` text,
	`last_status_code` integer,
	`last_error` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `deliveries_due` ON `deliveries` (`next_attempt_at`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `deliveries_queue` ON `deliveries` (`endpoint_id`,`aggregate`,`sequence`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `deliveries_deadline` ON `deliveries` (`deliver_by`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `deliveries_event` ON `deliveries` (`event_id`);--> statement-breakpoint
CREATE INDEX `deliveries_status` ON `deliveries` (`status`,`id`);--> statement-breakpoint
CREATE INDEX `deliveries_endpoint_status` ON `deliveries` (`endpoint_id`,`status`,`id`);--> statement-breakpoint
CREATE INDEX `deliveries_delivered_at` ON `deliveries` (`delivered_at`) WHERE status = 'delivered';--> statement-breakpoint
CREATE TABLE `endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`event_types` text NOT NULL,
	`description` text,
	`secrets` text NOT NULL,
	`disabled` integer DEFAULT 0 NOT NULL,
	`disabled_reason` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`last_success_at` integer,
	`last_failure_at` integer
);
--> statement-breakpoint
CREATE TABLE `events` (
	`pos` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`type` text NOT NULL,
	`aggregate` text NOT NULL,
	`sequence` integer NOT NULL,
	`payload` text NOT NULL,
	`content_hash` text NOT NULL,
	`occurred_at` integer NOT NULL,
	`deliver_after` integer,
	`deliver_by` integer NOT NULL,
	`commit_id` text NOT NULL,
	`traceparent` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_id` ON `events` (`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `events_aggregate_sequence` ON `events` (`aggregate`,`sequence`);--> statement-breakpoint
CREATE INDEX `events_type` ON `events` (`type`,`pos`);--> statement-breakpoint
CREATE TABLE `records` (
	`collection` text NOT NULL,
	`id` text NOT NULL,
	`version` integer NOT NULL,
	`data` text NOT NULL,
	`deleted` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`collection`, `id`)
);
--> statement-breakpoint
CREATE TABLE `tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`hash` text NOT NULL,
	`scopes` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	`revoked_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tokens_hash` ON `tokens` (`hash`);