CREATE TABLE `delivered_minutes` (
	`endpoint_id` text NOT NULL,
	`minute` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`minute`, `endpoint_id`)
);
--> statement-breakpoint
-- Hand-written: count the last hour's deliveries made before this table existed.
INSERT INTO `delivered_minutes` (`endpoint_id`, `minute`, `count`) SELECT `endpoint_id`, `delivered_at` / 60000, count(*) FROM `deliveries` WHERE `status` = 'delivered' AND `delivered_at` >= (unixepoch() - 3600) * 1000 GROUP BY 1, 2;
