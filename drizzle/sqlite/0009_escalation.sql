ALTER TABLE `elicitations` ADD `escalation_due_at` text;--> statement-breakpoint
ALTER TABLE `elicitations` ADD `escalated_at` text;--> statement-breakpoint
CREATE INDEX `elicitations_escalation_due` ON `elicitations` (`escalation_due_at`) WHERE status = 'PENDING' AND escalated_at IS NULL AND escalation_due_at IS NOT NULL;--> statement-breakpoint
UPDATE `elicitations` SET `escalation_due_at` = json_extract(`approval`, '$.escalation.at') WHERE json_extract(`approval`, '$.escalation.at') IS NOT NULL;
