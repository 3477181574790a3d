ALTER TABLE `commits` ADD `event_pos` integer;--> statement-breakpoint
-- Hand-written: each chained commit that inserted events gets the position of its last one; its
-- events are the event_count rows ending there (a commit inserts its events one after another in
-- its transaction). Found through events_commit before it goes. Should some commit's events not
-- be contiguous, it keeps null and `outboxd verify` finds them by commit id (a scan).
UPDATE `commits` SET "event_pos" = (
    SELECT CASE WHEN max(e."pos") - min(e."pos") + 1 = count(*) THEN max(e."pos") END
    FROM `events` e WHERE e."commit_id" = `commits`."id")
  WHERE "seq" IS NOT NULL AND "event_count" > 0;--> statement-breakpoint
DROP INDEX `events_commit`;
