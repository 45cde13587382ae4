DROP INDEX `elicitations_owner_status_seq`;--> statement-breakpoint
CREATE INDEX `elicitations_owner_seq` ON `elicitations` (`owner_id`,`seq`);--> statement-breakpoint
CREATE INDEX `elicitations_owner_status_seq` ON `elicitations` (`owner_id`,`status`,`seq`,`expires_at`);