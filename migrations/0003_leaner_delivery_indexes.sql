DROP INDEX `attempts_started_at`;--> statement-breakpoint
DROP INDEX `deliveries_status`;--> statement-breakpoint
DROP INDEX `deliveries_endpoint_status`;--> statement-breakpoint
CREATE INDEX `deliveries_dead` ON `deliveries` (`id`) WHERE status = 'dead';--> statement-breakpoint
CREATE INDEX `deliveries_dead_endpoint` ON `deliveries` (`endpoint_id`,`id`) WHERE status = 'dead';