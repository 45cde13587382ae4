DROP INDEX `messages_id_unique`;--> statement-breakpoint
DROP INDEX `tool_executions_grant`;--> statement-breakpoint
CREATE INDEX `tool_executions_grant` ON `tool_executions` (`grant_id`) WHERE grant_id IS NOT NULL;