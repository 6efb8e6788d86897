-- The changes of credentials, memberships and grants, one row each (docs/operator/identity.md,
-- "When access ends"): every host's workers read the newest id at most once a second and empty their
-- authentication cache when it moved, so that a revocation made through one host, or with the
-- purser command, ends access on every host within a second. Only the newest rows are kept.
-- Re-runnable.
CREATE TABLE IF NOT EXISTS auth_changes (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    changed_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE = InnoDB;
