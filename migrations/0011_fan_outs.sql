CREATE TABLE `fan_outs` (
	`pos` integer PRIMARY KEY NOT NULL,
	`event_id` text NOT NULL,
	`aggregate` text NOT NULL,
	`sequence` integer NOT NULL,
	`event_type` text NOT NULL,
	`available_at` integer NOT NULL,
	`deliver_by` integer NOT NULL,
	`created_at` integer NOT NULL,
	`targets` text NOT NULL,
	`done` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `fan_outs_aggregate` ON `fan_outs` (`aggregate`);--> statement-breakpoint
CREATE INDEX `fan_outs_event` ON `fan_outs` (`event_id`);