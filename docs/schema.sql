-- The two tables memoryboard shares with the agent platform (MySQL / MariaDB DDL).
-- The migration memoryboard/migrations/0001_shared_tables.py produces exactly this shape;
-- tests/foundation/test_schema.py checks it against MariaDB. Pointing the dashboard at an
-- existing platform database: `manage.py migrate --fake-initial` skips creating these two.
-- (MariaDB stores JSON as LONGTEXT with a json_valid() check; MySQL as its JSON type.)

CREATE TABLE `ah_long_term_memory` (
  `id` VARCHAR(255) NOT NULL,
  `namespace` VARCHAR(512) NOT NULL,
  `key_name` VARCHAR(255) NOT NULL,
  `value_json` JSON NOT NULL,
  `created_at` DATETIME(6) NOT NULL,
  `updated_at` DATETIME(6) NOT NULL,
  `access_count` INT NOT NULL,
  `last_accessed_at` DATETIME(6) NULL,
  `relevance_score` DOUBLE NOT NULL,
  `archived` TINYINT(1) NOT NULL,
  `archived_at` DATETIME(6) NULL,
  `archived_reason` VARCHAR(32) NULL,
  PRIMARY KEY (`id`),
  KEY `idx_ltm_ns_archived` (`namespace`, `archived`),
  KEY `idx_ltm_archived_updated` (`archived`, `updated_at`),
  KEY `idx_ltm_updated` (`updated_at`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE `chat_message` (
  `id` BIGINT NOT NULL AUTO_INCREMENT,
  `conversation_id` VARCHAR(255) NOT NULL,
  `agent_id` VARCHAR(255) NOT NULL,
  `user_id` VARCHAR(255) NOT NULL,
  `role` VARCHAR(16) NOT NULL,
  `content` LONGTEXT NOT NULL,
  `metadata` JSON NULL,
  `created_at` DATETIME(6) NOT NULL,
  PRIMARY KEY (`id`),
  KEY `idx_chat_conv_id` (`conversation_id`, `id`),
  KEY `idx_chat_agent_user` (`agent_id`, `user_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
