ALTER TABLE `elicitations` ADD `withdrawn` text;--> statement-breakpoint
ALTER TABLE `elicitations` ADD `caller_waiting_until` text;