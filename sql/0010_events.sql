-- The event log (issue 13): one row per committed write, appended in the write's own
-- transaction. seq counts per organization; event_counters holds the last one, and the row
-- lock a writer takes on it lasts until its commit, so numbers become visible in order: a
-- reader that has seen seq N never later finds a new event numbered N or lower.
CREATE TABLE events (
  org_id BIGINT NOT NULL,
  seq BIGINT NOT NULL,
  kind VARCHAR(63) NOT NULL,
  name VARCHAR(1024) NOT NULL,
  op ENUM('put', 'delete') NOT NULL,
  revision VARCHAR(255) NULL,
  actor VARCHAR(255) NOT NULL,
  at DATETIME(6) NOT NULL,
  detail LONGTEXT NULL,
  PRIMARY KEY (org_id, seq),
  KEY events_kind (org_id, kind, seq),
  KEY events_at (at),
  CONSTRAINT events_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE event_counters (
  org_id BIGINT NOT NULL PRIMARY KEY,
  last_seq BIGINT NOT NULL,
  CONSTRAINT event_counters_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
