-- What a gateway calculates for insights and the Query API, kept for every gateway and across restarts: the
-- background calculations' statuses (read by id from any gateway, cancelled from any) and the calculated results
-- (a result one gateway calculated answers another's cache lookup). Rows expire: statuses after
-- insights.async.status-retention once complete (a running one is read as interrupted once past its deadline),
-- results after insights.cache.expire-after.

CREATE TABLE query_statuses (
    project_id  bigint      NOT NULL REFERENCES projects (id),
    id          text        NOT NULL,
    complete    boolean     NOT NULL,
    -- PostHog's QueryStatus as the calculating gateway last wrote it.
    status      jsonb       NOT NULL,
    -- Running: when it can no longer be running (its start plus the query time limit and a margin). Complete: when
    -- it stops being shown.
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (project_id, id)
);
CREATE INDEX query_statuses_expiry ON query_statuses (expires_at);

CREATE TABLE insight_results (
    project_id   bigint      NOT NULL REFERENCES projects (id),
    -- SHA-256 of what the result depends on besides the data: the insight (if any) and its calculation.
    key          text        NOT NULL,
    result       jsonb       NOT NULL,
    last_refresh timestamptz NOT NULL,
    -- The project's calendar and test account filters it was calculated with.
    settings     text        NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (project_id, key)
);
CREATE INDEX insight_results_expiry ON insight_results (expires_at);
