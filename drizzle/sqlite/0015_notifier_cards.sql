CREATE TABLE `notifier_cards` (
	`notifier` text NOT NULL,
	`elicitation_id` text NOT NULL,
	`target` text NOT NULL,
	`state` text NOT NULL,
	`message_ref` text,
	`shown` text,
	`lease_owner` text,
	`lease_until` text,
	`posting_since` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`notifier`, `elicitation_id`, `target`)
);
--> statement-breakpoint
CREATE TABLE `notifier_replays` (
	`notifier` text NOT NULL,
	`key` text NOT NULL,
	`seen_at` text NOT NULL,
	PRIMARY KEY(`notifier`, `key`)
);
--> statement-breakpoint
CREATE INDEX `notifier_replays_seen` ON `notifier_replays` (`seen_at`);