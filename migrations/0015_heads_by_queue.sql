DROP INDEX `deliveries_queue`;--> statement-breakpoint
DROP INDEX `deliveries_deadline`;--> statement-breakpoint
CREATE INDEX `deliveries_heads` ON `deliveries` (`endpoint_id`,`aggregate`) WHERE status = 'pending' AND is_head = 1;--> statement-breakpoint
CREATE INDEX `deliveries_deadline` ON `deliveries` (`endpoint_id`,`deliver_by`) WHERE status = 'pending';