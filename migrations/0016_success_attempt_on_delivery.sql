DROP INDEX `attempts_delivery`;--> statement-breakpoint
ALTER TABLE `attempts` ADD `on_delivery` integer;--> statement-breakpoint
CREATE INDEX `attempts_delivery` ON `attempts` (`delivery_id`,`pos`) WHERE on_delivery IS NULL;--> statement-breakpoint
ALTER TABLE `deliveries` ADD `delivered_attempt` integer;