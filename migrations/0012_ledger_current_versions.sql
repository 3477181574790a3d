ALTER TABLE `commits` ADD `record_keys` text;--> statement-breakpoint
ALTER TABLE `records` ADD `commit_id` text;--> statement-breakpoint
ALTER TABLE `records` ADD `data_digest` text;--> statement-breakpoint
-- Hand-written: each commit of the chain lists the versions it wrote (the genesis commit those
-- with no commit), found through record_versions_commit before it goes. Their order does not
-- matter: the chain's content sorts them.
UPDATE `commits` SET "record_keys" = (
    SELECT json_group_array(json_array(v."collection", v."id", v."version")) FROM `record_versions` v
    WHERE v."commit_id" = `commits`."id")
  WHERE "seq" IS NOT NULL AND "id" <> 'cmt_genesis';--> statement-breakpoint
UPDATE `commits` SET "record_keys" = (
    SELECT json_group_array(json_array(v."collection", v."id", v."version")) FROM `record_versions` v
    WHERE v."commit_id" IS NULL)
  WHERE "id" = 'cmt_genesis';--> statement-breakpoint
-- Hand-written: each record's current version moves into its records row; record_versions keeps
-- the earlier ones.
UPDATE `records` SET "commit_id" = v."commit_id", "data_digest" = v."data_digest"
  FROM `record_versions` v
  WHERE v."collection" = `records`."collection" AND v."id" = `records`."id" AND v."version" = `records`."version";--> statement-breakpoint
DELETE FROM `record_versions` WHERE EXISTS (
  SELECT 1 FROM `records` r WHERE r."collection" = `record_versions`."collection"
    AND r."id" = `record_versions`."id" AND r."version" = `record_versions`."version");--> statement-breakpoint
DROP INDEX `record_versions_commit`;
