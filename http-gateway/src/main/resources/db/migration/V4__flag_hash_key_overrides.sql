-- ensure_experience_continuity: the id a person's flags are hashed with, per flag, fixed the first time the person
-- asks with a $anon_distinct_id (the anonymous id they had before identifying), so identifying keeps the variant
-- they saw. As PostHog's posthog_featureflaghashkeyoverride; the first value written stays.

CREATE TABLE feature_flag_hash_key_overrides (
    project_id        bigint      NOT NULL REFERENCES projects (id),
    person_uuid       uuid        NOT NULL,
    feature_flag_key  text        NOT NULL,
    hash_key          text        NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, person_uuid, feature_flag_key)
);
