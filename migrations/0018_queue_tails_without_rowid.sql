-- queue_tails as one b-tree (WITHOUT ROWID): every new delivery upserts its queue's row, and a
-- rowid table with a composite primary key wrote a table page and an index page for it.
CREATE TABLE `queue_tails_new` (
	`endpoint_id` text NOT NULL,
	`aggregate` text NOT NULL,
	`sequence` integer NOT NULL,
	PRIMARY KEY(`endpoint_id`, `aggregate`)
) WITHOUT ROWID;--> statement-breakpoint
INSERT INTO `queue_tails_new` (`endpoint_id`, `aggregate`, `sequence`)
  SELECT `endpoint_id`, `aggregate`, `sequence` FROM `queue_tails`;--> statement-breakpoint
DROP TABLE `queue_tails`;--> statement-breakpoint
ALTER TABLE `queue_tails_new` RENAME TO `queue_tails`;
