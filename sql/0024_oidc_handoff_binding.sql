-- OpenID Connect sign-in (issue 52): a finished sign-in's handoff code is bound to who began
-- it, so a code sent to someone else's browser or listener is refused (login CSRF). Each
-- holds base64url(SHA-256(proof)): for the pages the proof is the browser's sign-in cookie,
-- for purserctl a verifier it made at the start and sent only the challenge of ('' for the
-- device grant, whose device_id is the binding).
-- Expand only, re-runnable.
ALTER TABLE oidc_logins ADD COLUMN IF NOT EXISTS handoff_challenge VARCHAR(64) NOT NULL DEFAULT '';
ALTER TABLE oidc_handoffs ADD COLUMN IF NOT EXISTS challenge VARCHAR(64) NOT NULL DEFAULT '';
