DROP INDEX `deliveries_due`;--> statement-breakpoint
ALTER TABLE `deliveries` ADD `is_head` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `deliveries_ready` ON `deliveries` (`next_attempt_at`) WHERE status = 'pending' AND is_head = 1;--> statement-breakpoint
-- Hand-written: mark the current heads of existing queues.
UPDATE `deliveries` SET `is_head` = 1 WHERE `status` = 'pending' AND NOT EXISTS (SELECT 1 FROM `deliveries` AS `p` WHERE `p`.`status` = 'pending' AND `p`.`endpoint_id` = `deliveries`.`endpoint_id` AND `p`.`aggregate` = `deliveries`.`aggregate` AND `p`.`sequence` < `deliveries`.`sequence`);
