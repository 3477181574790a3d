CREATE TABLE `write_guards` (
	`held` integer NOT NULL,
	CONSTRAINT "write_guard_failed" CHECK("write_guards"."held" = 1)
);
