package dev.eddy.gateway.projects;

import dev.eddy.gateway.auth.AccessChanges;
import dev.eddy.gateway.auth.Principal;
import dev.eddy.gateway.db.Jsonb;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/** Projects a principal may see: those of organizations its user belongs to, narrowed by the key's project scope. */
public final class ProjectRepository {
    private static final String COLUMNS = "p.id, p.uuid, p.organization_id, p.name, p.api_token, p.timezone, "
            + "p.week_start_day, p.test_account_filters, p.created_at, p.updated_at";
    private static final String VISIBLE = " FROM projects p JOIN organization_memberships m "
            + "ON m.organization_id = p.organization_id AND m.user_id = $1 "
            + "WHERE ($2::bigint[] IS NULL OR p.id = ANY($2))";
    private static final String COUNT = "SELECT count(*)" + VISIBLE;
    private static final String PAGE = "SELECT " + COLUMNS + VISIBLE + " ORDER BY p.id LIMIT $3 OFFSET $4";
    private static final String ONE = "SELECT " + COLUMNS + VISIBLE + " AND p.id = $3";
    private static final String FIRST = "SELECT min(p.id)" + VISIBLE;
    private static final String BY_TOKEN = "SELECT id FROM projects WHERE api_token = $1";
    private static final String BY_ID = "SELECT " + COLUMNS + " FROM projects p WHERE p.id = $1";
    /** The caller's first organization (by join time) is where a new project goes, as in PostHog's current one. */
    private static final String INSERT = "INSERT INTO projects (uuid, organization_id, name, api_token, timezone, week_start_day, "
            + "test_account_filters) SELECT $2, m.organization_id, $3, $4, $5, $6, $7 FROM organization_memberships m "
            + "WHERE m.user_id = $1 ORDER BY m.joined_at, m.organization_id LIMIT 1 RETURNING id";

    /** What decides whether a principal sees a project: its user, its key's projects, the project. */
    private record Visible(long userId, List<Long> scoped, long projectId) {
    }

    private final Pool pool;
    private final AccessChanges changes;
    private final AccessChanges.Kept<Visible, Optional<Project>> kept;

    /** @param changes keeps the projects found while PostgreSQL announces every change of projects and members */
    public ProjectRepository(final Pool pool, final AccessChanges changes) {
        this.pool = pool;
        this.changes = changes;
        this.kept = changes.cache(Optional::isPresent);
    }

    /**
     * A page of visible projects.
     *
     * @param total    how many are visible in all
     * @param projects this page
     */
    public record Page(long total, List<Project> projects) {
    }

    public Future<Page> list(final Principal who, final int limit, final int offset) {
        final Long[] scoped = scopedProjects(who);
        return pool.preparedQuery(COUNT).execute(Tuple.tuple().addLong(who.userId()).addArrayOfLong(scoped))
                .compose(count -> pool.preparedQuery(PAGE).execute(Tuple.of(who.userId(), scoped, limit, offset))
                        .map(rows -> {
                            final List<Project> projects = new ArrayList<>(rows.size());
                            rows.forEach(row -> projects.add(toProject(row)));
                            return new Page(count.iterator().next().getLong(0), projects);
                        }));
    }

    /** The id of the first project (lowest id) the principal may see, if any: what {@code @current} names. */
    public Future<Optional<Long>> firstVisible(final Principal who) {
        return pool.preparedQuery(FIRST).execute(Tuple.tuple().addLong(who.userId()).addArrayOfLong(scopedProjects(who)))
                .map(rows -> Optional.ofNullable(rows.iterator().next().getLong(0)));
    }

    /** The project if the principal may see it; a project found is kept while nothing changes projects or members. */
    public Future<Optional<Project>> find(final Principal who, final long projectId) {
        return kept.get(new Visible(who.userId(), who.scopedProjects().orElse(null), projectId),
                () -> pool.preparedQuery(ONE).execute(Tuple.of(who.userId(), scopedProjects(who), projectId))
                        .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(toProject(rows.iterator().next()))));
    }

    /** The project, or a failed future with a 404 when the principal may not see it (or it does not exist). */
    public Future<Project> require(final Principal who, final long projectId) {
        return find(who, projectId).compose(p -> p.isPresent() ? Future.succeededFuture(p.get())
                : Future.failedFuture(dev.eddy.gateway.http.ApiError.notFound("Not found.")));
    }

    /**
     * Creates a project with its own project API key in the caller's organization.
     *
     * @param fields its fields; those not given take their defaults (UTC, weeks from Sunday, no test account filters)
     */
    public Future<Project> create(final Principal who, final ProjectFields fields) {
        return pool.preparedQuery(INSERT).execute(Tuple.from(java.util.Arrays.asList(who.userId(), UUID.randomUUID(),
                        fields.name(), dev.eddy.gateway.auth.ApiKeys.newProjectToken(),
                        fields.timezone() == null ? "UTC" : fields.timezone(),
                        fields.weekStartDay() == null ? (short) 0 : fields.weekStartDay(),
                        fields.testAccountFilters() == null ? new io.vertx.core.json.JsonArray() : Jsonb.bind(fields.testAccountFilters()))))
                .compose(rows -> rows.size() == 0
                        ? Future.failedFuture(dev.eddy.gateway.http.ApiError.forbidden("permission_denied",
                                "You belong to no organization to create a project in."))
                        : require(who, rows.iterator().next().getLong("id")));
    }

    /** Updates the fields given of a project the principal may see; 404 otherwise. */
    public Future<Project> update(final Principal who, final long projectId, final ProjectFields fields) {
        final Map<String, Object> columns = new LinkedHashMap<>();
        if (fields.name() != null) {
            columns.put("name", fields.name());
        }
        if (fields.timezone() != null) {
            columns.put("timezone", fields.timezone());
        }
        if (fields.weekStartDay() != null) {
            columns.put("week_start_day", fields.weekStartDay());
        }
        if (fields.testAccountFilters() != null) {
            columns.put("test_account_filters", Jsonb.bind(fields.testAccountFilters()));
        }
        return require(who, projectId).compose(p -> {
            if (columns.isEmpty()) {
                return Future.succeededFuture(p);
            }
            final java.util.StringJoiner sets = new java.util.StringJoiner(", ");
            final List<Object> values = new ArrayList<>(List.of(projectId));
            columns.forEach((column, value) -> {
                values.add(value);
                sets.add(column + " = $" + values.size());
            });
            sets.add("updated_at = now()");
            return pool.preparedQuery("UPDATE projects SET " + sets + " WHERE id = $1").execute(Tuple.from(values))
                    .compose(v -> {
                        changes.changedHere();
                        return require(who, projectId);
                    });
        });
    }

    /**
     * A project by id, whoever asks: only for work a caller was authorised for already (a live dashboard's
     * recalculations, which outlive the request that opened them).
     */
    public Future<Optional<Project>> byId(final long projectId) {
        return pool.preparedQuery(BY_ID).execute(Tuple.of(projectId))
                .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(toProject(rows.iterator().next())));
    }

    /** The project a project API key belongs to. */
    public Future<Optional<Long>> idForToken(final String token) {
        return pool.preparedQuery(BY_TOKEN).execute(Tuple.of(token))
                .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(rows.iterator().next().getLong("id")));
    }

    private static Long[] scopedProjects(final Principal who) {
        return who.scopedProjects().map(p -> p.toArray(Long[]::new)).orElse(null);
    }

    private static Project toProject(final Row row) {
        return new Project(
                row.getLong("id"),
                row.getUUID("uuid"),
                row.getUUID("organization_id"),
                row.getString("name"),
                row.getString("api_token"),
                row.getString("timezone"),
                row.getInteger("week_start_day"),
                dev.eddy.gateway.db.Jsonb.read(row.getValue("test_account_filters")),
                row.getOffsetDateTime("created_at"),
                row.getOffsetDateTime("updated_at"));
    }
}
