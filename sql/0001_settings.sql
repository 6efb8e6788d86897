-- Server-wide settings: one row per key (instance identity, feature switches).
CREATE TABLE settings (
  name VARCHAR(191) NOT NULL PRIMARY KEY,
  value TEXT NOT NULL,
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

INSERT INTO settings (name, value) VALUES ('instance_id', REPLACE(UUID(), '-', ''));
