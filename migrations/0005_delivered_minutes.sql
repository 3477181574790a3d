CREATE TABLE `delivered_minutes` (
	`minute` integer NOT NULL,
	`endpoint_id` text NOT NULL,
	`latency_floor` integer NOT NULL,
	`count` integer NOT NULL,
	`max_latency_ms` integer NOT NULL,
	PRIMARY KEY(`minute`, `endpoint_id`, `latency_floor`)
);
