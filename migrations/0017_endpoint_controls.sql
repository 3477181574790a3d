CREATE TABLE `endpoint_buckets` (
	`endpoint_id` text PRIMARY KEY NOT NULL,
	`tokens` real NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `queue_tails` (
	`endpoint_id` text NOT NULL,
	`aggregate` text NOT NULL,
	`sequence` integer NOT NULL,
	PRIMARY KEY(`endpoint_id`, `aggregate`)
);
--> statement-breakpoint
ALTER TABLE `deliveries` ADD `previous_sequence` integer;--> statement-breakpoint
ALTER TABLE `endpoints` ADD `disabled_detail` text;--> statement-breakpoint
ALTER TABLE `endpoints` ADD `disabled_at` integer;--> statement-breakpoint
ALTER TABLE `endpoints` ADD `rate_limit` text;--> statement-breakpoint
ALTER TABLE `endpoints` ADD `retry_schedule` text;--> statement-breakpoint
ALTER TABLE `endpoints` ADD `filter` text;--> statement-breakpoint
ALTER TABLE `endpoints` ADD `disable_after` text DEFAULT 'never' NOT NULL;--> statement-breakpoint
ALTER TABLE `endpoints` ADD `failing_since` integer;--> statement-breakpoint
ALTER TABLE `endpoints` ADD `failures_since` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE `endpoints` SET `disabled_detail` = CASE WHEN `disabled` = 1 THEN `disabled_reason` END,
  `disabled_reason` = CASE WHEN `disabled` = 0 THEN NULL WHEN `disabled_reason` LIKE '%410%' THEN 'gone' ELSE 'operator' END,
  `disabled_at` = CASE WHEN `disabled` = 1 THEN `updated_at` END;--> statement-breakpoint
INSERT INTO `queue_tails` (`endpoint_id`, `aggregate`, `sequence`)
  SELECT `endpoint_id`, `aggregate`, max(`sequence`) FROM `deliveries` GROUP BY `endpoint_id`, `aggregate`;
